"""The stdio MCP server: argument validation, rendering, the status resource, and nothing else.

Registration is thin: each tool names its argument model, the Engine method it calls,
and how its answer renders (within the response budget, `tools/budget.py`). Every failure
becomes a tool result with `isError: true` and a message that names the problem; a
traceback never reaches the client (it goes to the log instead). Every call is one
structured `tool_call` log event.

The index status is also a resource, `xcindex://status` (the server's own project) or
`xcindex://status?projectPath=…` / `?indexStorePath=…`, whose subscribers hear
`notifications/resources/updated` when the store changes (once per rebuild) or the
session's edited files change: through `resources/subscribe` on handshake-era
connections, through `subscriptions/listen` on 2026-07-28 ones.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from xcindex import __version__
from xcindex._log import get_logger
from xcindex.engine import Engine, EngineConfig, StatusVersion, current_progress_listener
from xcindex.ledger import project_directory
from xcindex.projects import find_projects
from xcindex.registry import BY_NAME, TOOLS, ToolDecl
from xcindex.tools.arguments import MAX_TEXT, ArgumentsError, ToolArgs
from xcindex.tools.budget import RESPONSE_BUDGET_CHARS, RESPONSE_BUDGET_TOKENS, estimated_tokens
from xcindex.warnings import XcindexError

log = get_logger(__name__)

INSTRUCTIONS = (
    "xcindex answers questions about Swift code from the compiler's index store: exact, not grep. "
    "Flow: find_symbol(name) → take the usr → find_references / find_definition / find_overrides / "
    "find_conformances. Every tool needs projectPath (a Swift package folder, Package.swift, "
    ".xcodeproj or .xcworkspace) or indexStorePath. Answers carry `completeness` and `staleFiles`: "
    "an empty list with completeness 'stale' means rebuild (swift build --build-tests), then "
    "wait_for_fresh(files) rather than sleeping, and ask again."
)
BUDGET = RESPONSE_BUDGET_CHARS
"""Every tool result (text and structured content together) is rendered within this."""


def input_schema(model: type[ToolArgs]) -> dict[str, Any]:
    """The model's JSON schema, compact (it is part of every agent's context): no titles, no
    `maxLength` guard on strings (still enforced), and an optional argument is its type (not
    `anyOf [type, null]` with `default: null`): being absent from `required` says it is optional."""
    schema = model.model_json_schema(by_alias=True)
    schema.pop("title", None)
    properties: dict[str, dict[str, Any]] = schema.get("properties", {})
    for name, prop in properties.items():
        prop.pop("title", None)
        _drop_length_guard(prop)
        variants = prop.get("anyOf")
        if prop.get("default", ...) is None and isinstance(variants, list) and {"type": "null"} in variants:
            others = [v for v in variants if v != {"type": "null"}]
            if len(others) == 1:
                properties[name] = {
                    **others[0],
                    **{k: v for k, v in prop.items() if k not in ("anyOf", "default")},
                }
    return schema


def _drop_length_guard(schema: dict[str, Any]) -> None:
    if schema.get("maxLength") == MAX_TEXT:
        del schema["maxLength"]
    for nested in [*schema.get("anyOf", []), schema.get("items")]:
        if isinstance(nested, dict) and nested:
            _drop_length_guard(nested)


def tool_listing(tool: ToolDecl) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=input_schema(tool.args),
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            idempotent_hint=tool.idempotent,
            open_world_hint=False,
        ),
    )


def error_result(message: str) -> types.CallToolResult:
    text = message if message.startswith("Error:") else f"Error: {message}"
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def summarize_arguments(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments as a log line shows them: short values whole, long ones cut, lists counted."""
    summary: dict[str, Any] = {}
    for key, value in (arguments or {}).items():
        if isinstance(value, str):
            summary[key] = value if len(value) <= 200 else value[:200] + "…"
        elif isinstance(value, list):
            summary[key] = f"[{len(value)} items]"
        elif value is None or isinstance(value, bool | int | float):
            summary[key] = value
        else:
            summary[key] = type(value).__name__
    return summary


async def call_tool(
    engine: Engine,
    name: str,
    arguments: dict[str, Any] | None,
    report_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
) -> types.CallToolResult:
    """Run one tool call and log it as one `tool_call` event (tool, arguments, outcome,
    duration, result size, completeness, warning codes)."""
    started = time.perf_counter()
    outcome, detail, result = await _call_tool(engine, name, arguments, report_progress)
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    structured = result.structured_content or {}
    tokens = estimated_tokens(text, structured) if structured else len(text) // 4
    warnings = structured.get("warnings", [])
    log.info(
        "tool_call",
        tool=name,
        args=summarize_arguments(arguments),
        outcome=outcome,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
        result_chars=len(text) + (len(json.dumps(structured, ensure_ascii=False)) if structured else 0),
        result_tokens=tokens,
        completeness=structured.get("completeness"),
        truncated=structured.get("truncated"),
        warning_codes=sorted({str(w.get("code")) for w in warnings if isinstance(w, dict)}),
        **({"error": detail} if detail else {}),
    )
    if tokens > RESPONSE_BUDGET_TOKENS:
        log.warning("response_over_budget", tool=name, result_tokens=tokens, budget=RESPONSE_BUDGET_TOKENS)
    return result


async def _call_tool(
    engine: Engine,
    name: str,
    arguments: dict[str, Any] | None,
    report_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None,
) -> tuple[str, str | None, types.CallToolResult]:
    """(outcome, error message, result); outcome is ok, invalid, error or crash."""
    tool = BY_NAME.get(name)
    if tool is None:
        message = f"unknown tool '{name}'. Known tools: {', '.join(BY_NAME)}."
        return "invalid", message, error_result(message)
    try:
        args = tool.args.from_mcp(arguments)
    except ArgumentsError as error:
        return "invalid", error.mcp_message, error_result(error.mcp_message)
    if report_progress is not None:

        async def listener(done: int, total: int) -> None:
            await report_progress(done, total or None, "xcindex: first ingestion of the index store")

        current_progress_listener.set(listener)
    try:
        answer = await engine.call(args)
        structured = tool.structured(answer, BUDGET)
        text = tool.text(answer, BUDGET)
    except XcindexError as error:
        return "error", str(error), error_result(str(error))
    except Exception as error:
        log.exception("tool_call_crashed", tool=name)
        return (
            "crash",
            f"{type(error).__name__}: {error}",
            error_result(
                f"{name} failed unexpectedly; the server log has the details. The server is still running."
            ),
        )
    return (
        "ok",
        None,
        types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured),
    )


# --- the status resource ---------------------------------------------------------------

STATUS_URI = "xcindex://status"
STATUS_TEMPLATE = "xcindex://status{?projectPath,indexStorePath}"
_STATUS_QUERY_KEYS = ("projectPath", "indexStorePath")
MAX_LISTED_RESOURCES = 20


@dataclass(frozen=True)
class StatusTarget:
    """A status resource: its URI (as the client wrote it) and the location it names."""

    uri: str
    project_path: str | None
    index_store_path: str | None


def status_uri(project_path: str | None, index_store_path: str | None) -> str:
    key, value = ("indexStorePath", index_store_path) if index_store_path else ("projectPath", project_path)
    return f"{STATUS_URI}?{urllib.parse.urlencode({key: value}, quote_via=urllib.parse.quote, safe='/')}"


def default_project() -> str | None:
    """The project of the server's session (CLAUDE_PROJECT_DIR, else the working
    directory), found as the hooks find it; None when there is none."""
    projects = find_projects(Path(project_directory()))
    return str(projects[0].path) if projects else None


def parse_status_uri(uri: str) -> StatusTarget:
    """`xcindex://status` (the server's project) or `xcindex://status?projectPath=…` /
    `?indexStorePath=…` (percent-encoded absolute paths)."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "xcindex" or parts.netloc != "status" or parts.path not in ("", "/") or parts.fragment:
        raise XcindexError(
            f"Unknown resource '{uri}': xcindex offers {STATUS_URI}, {STATUS_URI}?projectPath=<absolute path> "
            f"and {STATUS_URI}?indexStorePath=<absolute path>."
        )
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - set(_STATUS_QUERY_KEYS))
    if unknown:
        raise XcindexError(f"Unknown parameter '{unknown[0]}' in '{uri}': use projectPath or indexStorePath.")
    project = query.get("projectPath", [None])[-1]
    store = query.get("indexStorePath", [None])[-1]
    return StatusTarget(uri, project or None, store or None)


@dataclass
class _Watch:
    target: StatusTarget
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    sessions: set[ServerSession] = field(default_factory=set)
    listeners: int = 0


class StatusFeed:
    """Tells the subscribers of a status resource when it changes.

    One watch task per subscribed URI, shared by its subscribers: sessions that sent
    `resources/subscribe` (handshake-era protocol) and open `subscriptions/listen` streams
    (2026-07-28). A watch waits on `Engine.wait_status_change` (one change per rebuild,
    once the index has taken it in; at once for the session's edited files) and ends when
    its last subscriber leaves.
    """

    def __init__(self, engine: Engine, task_group: TaskGroup) -> None:
        self.engine = engine
        self.task_group = task_group
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self.known: dict[str, StatusTarget] = {}
        """Status resources of the locations tool calls have named, newest last (listed)."""
        self._watches: dict[str, _Watch] = {}

    async def resolve(self, uri: str) -> StatusTarget:
        target = parse_status_uri(uri)
        if target.project_path is None and target.index_store_path is None:
            project = await anyio.to_thread.run_sync(default_project)
            if project is None:
                raise XcindexError(
                    f"No Swift package or Xcode project in {project_directory()}: read "
                    f"{STATUS_URI}?projectPath=<absolute path> instead."
                )
            target = StatusTarget(uri, project, None)
        return target

    def remember(self, project_path: str | None, index_store_path: str | None) -> None:
        uri = status_uri(project_path, index_store_path)
        self.known.pop(uri, None)
        self.known[uri] = StatusTarget(uri, project_path, index_store_path)
        while len(self.known) > MAX_LISTED_RESOURCES:
            del self.known[next(iter(self.known))]

    async def subscribe(self, uri: str, session: ServerSession | None) -> None:
        """Start telling `session` (None: the listen streams) about changes of `uri`."""
        watch = self._watches.get(uri)
        if watch is None:
            target = await self.resolve(uri)
            since = await self.engine.status_version(
                project_path=target.project_path, index_store_path=target.index_store_path
            )
            watch = self._watches.setdefault(uri, _Watch(target))
            self.task_group.start_soon(self._watch, watch, since)
            log.info("status_watch_started", uri=uri)
        if session is None:
            watch.listeners += 1
        else:
            watch.sessions.add(session)

    def unsubscribe(self, uri: str, session: ServerSession | None) -> None:
        watch = self._watches.get(uri)
        if watch is None:
            return
        if session is None:
            watch.listeners = max(watch.listeners - 1, 0)
        else:
            watch.sessions.discard(session)
        if not watch.sessions and not watch.listeners:
            watch.scope.cancel()
            del self._watches[uri]
            log.info("status_watch_stopped", uri=uri)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve `subscriptions/listen`: watch the status URIs it names for as long as it lasts."""
        watched: list[str] = []
        try:
            for uri in params.notifications.resource_subscriptions or ():
                try:
                    await self.subscribe(uri, None)
                except XcindexError as error:
                    log.info("status_subscription_refused", uri=uri, error=str(error))
                    continue
                watched.append(uri)
            return await self.listen_handler(ctx, params)
        finally:
            for uri in watched:
                self.unsubscribe(uri, None)

    async def _watch(self, watch: _Watch, since: StatusVersion) -> None:
        target = watch.target
        with watch.scope:
            while True:
                try:
                    since = await self.engine.wait_status_change(
                        since, project_path=target.project_path, index_store_path=target.index_store_path
                    )
                except XcindexError as error:
                    # The store may be gone for a moment (a clean build): look again later.
                    log.info("status_watch_waiting", uri=target.uri, error=str(error))
                    await anyio.sleep(self.engine.config.watch_settle_s)
                    continue
                except Exception:
                    # A watch must never take the server down with it.
                    log.exception("status_watch_failed", uri=target.uri)
                    await anyio.sleep(self.engine.config.watch_settle_s)
                    continue
                await self._publish(watch)

    async def _publish(self, watch: _Watch) -> None:
        uri = watch.target.uri
        log.info("resource_updated", uri=uri, sessions=len(watch.sessions), listen_streams=watch.listeners)
        if watch.listeners:
            await self.bus.publish(ResourceUpdated(uri=uri))
        for session in list(watch.sessions):
            try:
                await session.send_resource_updated(uri)
            except Exception as error:
                log.info("resource_update_undelivered", uri=uri, error=repr(error))
                watch.sessions.discard(session)

    async def read(self, uri: str) -> types.ReadResourceResult:
        target = await self.resolve(uri)
        answer = await self.engine.status(
            project_path=target.project_path, index_store_path=target.index_store_path
        )
        text = json.dumps(answer.to_json(BUDGET), ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    def resources(self) -> list[types.Resource]:
        described = "Index status (the status tool's answer as JSON); subscribe to hear when it changes."
        listed = [
            types.Resource(uri=STATUS_URI, name="status", description=described, mime_type="application/json")
        ]
        for target in reversed(self.known.values()):
            where = target.index_store_path or target.project_path or ""
            listed.append(
                types.Resource(
                    uri=target.uri,
                    name=f"status of {os.path.basename(where.rstrip('/'))}",
                    mime_type="application/json",
                )
            )
        return listed


def _invalid(error: XcindexError) -> MCPError:
    return MCPError(types.INVALID_PARAMS, str(error))


def build_server(engine: Engine, feed: StatusFeed | None = None) -> Server[Any]:
    """The MCP server over `engine`; with a `feed`, also the status resource."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_listing(tool) for tool in TOOLS])

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await call_tool(engine, params.name, params.arguments, ctx.session.report_progress)
        arguments = params.arguments or {}
        if feed is not None and not result.is_error:
            project, store = arguments.get("projectPath"), arguments.get("indexStorePath")
            feed.remember(
                project if isinstance(project, str) else None, store if isinstance(store, str) else None
            )
        return result

    if feed is None:
        return Server(
            "xcindex",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )
    status_feed = feed

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=status_feed.resources())

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=STATUS_TEMPLATE,
                    name="status",
                    description="Index status of a project (absolute projectPath) or an index store "
                    "(indexStorePath), as JSON; subscribe to hear when it changes.",
                    mime_type="application/json",
                )
            ]
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            return await status_feed.read(params.uri)
        except XcindexError as error:
            raise _invalid(error) from None

    async def on_subscribe_resource(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        try:
            await status_feed.subscribe(params.uri, ctx.session)
        except XcindexError as error:
            raise _invalid(error) from None
        return types.EmptyResult()

    async def on_unsubscribe_resource(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        status_feed.unsubscribe(params.uri, ctx.session)
        return types.EmptyResult()

    return Server(
        "xcindex",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_subscribe_resource=on_subscribe_resource,
        on_unsubscribe_resource=on_unsubscribe_resource,
        on_subscriptions_listen=status_feed.listen,
    )


async def _stop_on_signals(scope: anyio.CancelScope, engine: Engine) -> None:
    """SIGTERM/SIGINT: cancel the calls in flight, stop every child, and leave.

    The MCP SDK reads stdin in a worker thread that cannot be abandoned, so unwinding would
    wait for the client's next line or for EOF, which a client that signals may never send.
    Once the children are gone there is nothing left to clean up: the database is SQLite
    in WAL mode and the ledger is appended whole lines at a time.
    """
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("server_signal", signal=signal.Signals(signum).name)
            scope.cancel()
            await engine.close_children()
            log.info("server_stopped", reason=signal.Signals(signum).name)
            logging.shutdown()
            os._exit(0)


FIRST_ANSWER_WAIT_S = 5.0
"""How long an index tool call waits for a store's first ingestion before answering from
what is ingested so far (`indexing`, with the progress): the call streams progress
notifications meanwhile, and an agent should get something useful within seconds, not
wait minutes on a large project (EngineConfig.first_answer_wait_s)."""


async def serve_stdio() -> None:
    """Serve until stdin closes or SIGTERM/SIGINT arrives; the Engine's children go with us."""
    async with (
        Engine(EngineConfig(first_answer_wait_s=FIRST_ANSWER_WAIT_S)) as engine,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_stop_on_signals, tg.cancel_scope, engine)
        server = build_server(engine, StatusFeed(engine, tg))
        log.info("server_started", version=__version__)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        log.info("server_stdin_closed")
        tg.cancel_scope.cancel()
