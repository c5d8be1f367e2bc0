"""The stdio MCP server: argument validation, rendering, and nothing else.

Registration is thin: each tool names its argument model, the Engine method it calls,
and how its answer renders. Every failure becomes a tool result with `isError: true` and
a message that names the problem; a traceback never reaches the client (it goes to the
log instead).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from xcindex import __version__
from xcindex._log import get_logger
from xcindex.engine import Engine, current_progress_listener
from xcindex.tools.blast_radius import render_blast_radius
from xcindex.tools.conformances import render_conformances
from xcindex.tools.find_symbol import render_find_symbol
from xcindex.tools.plan_rename import DEFAULT_MAX_RANGES, MAX_RANGES, render_plan
from xcindex.tools.references import DEFAULT_MAX_RESULTS, MAX_RESULTS, render_definition, render_sites
from xcindex.tools.status import render_status
from xcindex.warnings import XcindexError

log = get_logger(__name__)

MAX_TEXT = 4096
Text = Annotated[StrictStr, Field(min_length=1, max_length=MAX_TEXT)]

INSTRUCTIONS = (
    "xcindex answers questions about Swift code from the compiler's index store: exact, not grep. "
    "Flow: find_symbol(name) → take the usr → find_references / find_definition / find_overrides / "
    "find_conformances. Every tool needs projectPath (a Swift package folder, Package.swift, "
    ".xcodeproj or .xcworkspace) or indexStorePath. Answers carry `completeness` and `staleFiles`: "
    "an empty list with completeness 'stale' means rebuild (swift build --build-tests) and ask again."
)

LOCATION_HELP = (
    "Give projectPath (absolute: a Swift package folder, its Package.swift, an .xcodeproj or "
    ".xcworkspace) or indexStorePath (absolute: the folder containing v5/, e.g. "
    ".build/<triple>/debug/index/store)."
)


class LocationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False)

    projectPath: Text | None = None
    indexStorePath: Text | None = None


class FindSymbolArgs(LocationArgs):
    symbolName: Text


class FindReferencesArgs(LocationArgs):
    symbolName: Text | None = None
    usr: Text | None = None
    maxResults: Annotated[StrictInt, Field(ge=1, le=MAX_RESULTS)] = DEFAULT_MAX_RESULTS

    @model_validator(mode="after")
    def _one_subject(self) -> FindReferencesArgs:
        if (self.symbolName is None) == (self.usr is None):
            raise ValueError("give exactly one of 'symbolName' or 'usr'")
        return self


class UsrArgs(LocationArgs):
    usr: Text


class BlastRadiusArgs(LocationArgs):
    filePath: Text


class StatusArgs(LocationArgs):
    pass


class PlanRenameArgs(LocationArgs):
    usr: Text
    newName: Annotated[StrictStr, Field(max_length=MAX_TEXT)]
    """May be empty: that is refused as invalid_identifier, in the plan, like any bad name."""
    maxRanges: Annotated[StrictInt, Field(ge=1, le=MAX_RANGES)] = DEFAULT_MAX_RANGES


@dataclass(frozen=True)
class Rendered:
    structured: dict[str, Any]
    text: str


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[LocationArgs]
    call: Callable[[Engine, Any], Awaitable[Rendered]]


async def _find_symbol(engine: Engine, args: FindSymbolArgs) -> Rendered:
    answer = await engine.find_symbol(
        args.symbolName, project_path=args.projectPath, index_store_path=args.indexStorePath
    )
    return Rendered(answer.to_json(), render_find_symbol(answer))


async def _find_references(engine: Engine, args: FindReferencesArgs) -> Rendered:
    answer = await engine.find_references(
        args.symbolName,
        usr=args.usr,
        max_results=args.maxResults,
        project_path=args.projectPath,
        index_store_path=args.indexStorePath,
    )
    return Rendered(answer.to_json(), render_sites(answer, "reference(s)"))


async def _find_definition(engine: Engine, args: UsrArgs) -> Rendered:
    answer = await engine.find_definition(
        args.usr, project_path=args.projectPath, index_store_path=args.indexStorePath
    )
    return Rendered(answer.to_json(), render_definition(answer))


async def _find_overrides(engine: Engine, args: UsrArgs) -> Rendered:
    answer = await engine.find_overrides(
        args.usr, project_path=args.projectPath, index_store_path=args.indexStorePath
    )
    return Rendered(answer.to_json(), render_sites(answer, "override(s)"))


async def _find_conformances(engine: Engine, args: UsrArgs) -> Rendered:
    answer = await engine.find_conformances(
        args.usr, project_path=args.projectPath, index_store_path=args.indexStorePath
    )
    return Rendered(answer.to_json(), render_conformances(answer))


async def _blast_radius(engine: Engine, args: BlastRadiusArgs) -> Rendered:
    answer = await engine.blast_radius(
        args.filePath, project_path=args.projectPath, index_store_path=args.indexStorePath
    )
    return Rendered(answer.to_json(), render_blast_radius(answer))


async def _status(engine: Engine, args: StatusArgs) -> Rendered:
    answer = await engine.status(project_path=args.projectPath, index_store_path=args.indexStorePath)
    return Rendered(answer.to_json(), render_status(answer))


async def _plan_rename(engine: Engine, args: PlanRenameArgs) -> Rendered:
    plan = await engine.plan_rename(
        args.usr,
        args.newName,
        max_ranges=args.maxRanges,
        project_path=args.projectPath,
        index_store_path=args.indexStorePath,
    )
    return Rendered(plan.to_json(), render_plan(plan))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "find_symbol",
        "Look up symbols by name: returns each candidate's usr, kind and definition site. Use first; the usr "
        "is the input for the other tools. Methods are named with labels (fetchUser(id:)); a bare name "
        "(fetchUser) lists the labelled candidates; Type.member(label:) narrows to one type. "
        + LOCATION_HELP,
        FindSymbolArgs,
        _find_symbol,
    ),
    ToolSpec(
        "find_references",
        "Every place a symbol is written: definitions, declarations, calls, reads, writes, type uses, "
        "with roles; deduplicated, sorted by path/line/column, capped by maxResults (default 100, max "
        "500; totalCount and truncated tell you if there is more). Prefer usr (from find_symbol) over "
        "symbolName. " + LOCATION_HELP,
        FindReferencesArgs,
        _find_references,
    ),
    ToolSpec(
        "find_definition",
        "The single canonical definition site of a usr (a declaration if there is no definition); null "
        "if the index has none. " + LOCATION_HELP,
        UsrArgs,
        _find_definition,
    ),
    ToolSpec(
        "find_overrides",
        "Every override of a method in subclasses (transitively) and every witness of a protocol "
        "requirement, including default implementations in protocol extensions. Use before changing "
        "a signature. " + LOCATION_HELP,
        UsrArgs,
        _find_overrides,
    ),
    ToolSpec(
        "find_conformances",
        "Every type that conforms to a protocol (usr), including marker protocols, conformers relying "
        "on default implementations, conformances declared in extensions (anchored at the extension) "
        "and conformers of refining protocols. " + LOCATION_HELP,
        UsrArgs,
        _find_conformances,
    ),
    ToolSpec(
        "blast_radius",
        "Given an absolute source file path: the files that depend on it directly and transitively, and "
        "the test files covering it (test targets, XCTestCase subclasses, Swift Testing @Test/@Suite), "
        "with a ready `swift test --filter` command. Use before editing a shared file. " + LOCATION_HELP,
        BlastRadiusArgs,
        _blast_radius,
    ),
    ToolSpec(
        "status",
        "Index health: store path, last write, stale files (changed since indexed), counts, unreadable "
        "units, ingestion progress. Call first in a session or when answers look stale. " + LOCATION_HELP,
        StatusArgs,
        _status,
    ),
    ToolSpec(
        "plan_rename",
        "A rename plan for a usr (from find_symbol): every range to edit, including overrides, protocol "
        "witnesses and default implementations, extensions, each with a tier. green-verified (index and "
        "sourcekit-lsp agree) and green-indexstore are safe to apply; yellow-* need a look; red-stale "
        "means rebuild first. Never edits files: apply the ranges yourself. Index columns are UTF-8 "
        "bytes; sourcekit-lsp-only ranges are UTF-16. maxRanges default 500, max 5000. projectPath is "
        "preferred (sourcekit-lsp needs the workspace root). " + LOCATION_HELP,
        PlanRenameArgs,
        _plan_rename,
    ),
)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def describe_validation_error(tool: str, error: ValidationError) -> str:
    problems: list[str] = []
    for item in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        kind = item["type"]
        if kind == "missing":
            problems.append(f"'{where}' is required")
        elif kind == "extra_forbidden":
            problems.append(f"'{where}' is not an argument of {tool}")
        elif kind == "value_error" and not item["loc"]:
            problems.append(str(item["msg"]).removeprefix("Value error, "))
        else:
            problems.append(f"'{where}': {item['msg']}")
    return f"Error: invalid arguments for {tool}: " + "; ".join(problems) + "."


def error_result(message: str) -> types.CallToolResult:
    text = message if message.startswith("Error:") else f"Error: {message}"
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


async def call_tool(
    engine: Engine,
    name: str,
    arguments: dict[str, Any] | None,
    report_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
) -> types.CallToolResult:
    tool = _BY_NAME.get(name)
    if tool is None:
        return error_result(f"unknown tool '{name}'. Known tools: {', '.join(_BY_NAME)}.")
    started = time.perf_counter()
    try:
        args = tool.arguments.model_validate(arguments or {})
    except ValidationError as error:
        return error_result(describe_validation_error(name, error))
    if args.projectPath is None and args.indexStorePath is None:
        return error_result("Either 'projectPath' or 'indexStorePath' must be provided.")
    if report_progress is not None:

        async def listener(done: int, total: int) -> None:
            await report_progress(done, total or None, "xcindex: first ingestion of the index store")

        current_progress_listener.set(listener)
    try:
        rendered = await tool.call(engine, args)
    except XcindexError as error:
        log.info("tool_call_failed", tool=name, error=str(error))
        return error_result(str(error))
    except Exception:
        log.exception("tool_call_crashed", tool=name)
        return error_result(
            f"{name} failed unexpectedly; the server log has the details. The server is still running."
        )
    text = json.dumps(rendered.structured, ensure_ascii=False)
    log.info(
        "tool_call",
        tool=name,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
        result_bytes=len(text),
    )
    return types.CallToolResult(
        content=[types.TextContent(text=rendered.text)], structured_content=rendered.structured
    )


def build_server(engine: Engine) -> Server[Any]:
    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=_schema(tool.arguments),
                    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                )
                for tool in TOOLS
            ]
        )

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(engine, params.name, params.arguments, ctx.session.report_progress)

    return Server(
        "xcindex",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def _cancel_on_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("server_signal", signal=signal.Signals(signum).name)
            scope.cancel()
            return


async def serve_stdio() -> None:
    """Serve until stdin closes or SIGTERM/SIGINT arrives; the Engine's children go with us."""
    async with Engine() as engine, anyio.create_task_group() as tg:
        tg.start_soon(_cancel_on_signals, tg.cancel_scope)
        server = build_server(engine)
        log.info("server_started", version=__version__)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        log.info("server_stdin_closed")
        tg.cancel_scope.cancel()
