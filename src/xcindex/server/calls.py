"""What both MCP paths share, without the MCP SDK: the instructions, the tool listing's
schemas, and running one tool call into a plain result.

`xcindex serve` answers a session's first messages in `server_front` without importing
the SDK (about a second of imports), and hands the connection to the SDK server in
`server` when a message needs more. Both paths run tool calls through `call_tool` here, so
a call is validated, answered, rendered within the budget and logged the same way
whichever path carries it; each path only puts the result into its own wire shape.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from xcindex import __version__
from xcindex._log import get_logger
from xcindex.engine import Engine, current_progress_listener
from xcindex.engine.registry import BY_NAME
from xcindex.errors import XcindexError
from xcindex.tools.arguments import MAX_TEXT, ArgumentsError, ToolArgs
from xcindex.tools.budget import RESPONSE_BUDGET_CHARS, RESPONSE_BUDGET_TOKENS, estimated_tokens

log = get_logger("xcindex.server")
"""The logger docs/troubleshooting.md names for `tool_call` events, whichever path ran the call."""

SERVER_NAME = "xcindex"
SERVER_VERSION = __version__
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

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]
"""`(progress, total, message)`: what a path does with a call's progress (a notification
to the client's progress token, or nothing)."""


@dataclass(frozen=True)
class ToolResult:
    """A tool call's outcome before either path shapes it: the text block, the structured
    content (None for an error) and whether it is an error result."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False


def called_location(
    arguments: dict[str, Any] | None, result: ToolResult
) -> tuple[str | None, str | None] | None:
    """(projectPath, indexStorePath) of a call that succeeded, which the status resources
    then list (`StatusFeed.remember`); None for a failed call."""
    if result.is_error:
        return None
    project, store = (arguments or {}).get("projectPath"), (arguments or {}).get("indexStorePath")
    return (project if isinstance(project, str) else None, store if isinstance(store, str) else None)


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


def error_result(message: str) -> ToolResult:
    return ToolResult(message if message.startswith("Error:") else f"Error: {message}", is_error=True)


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
    report_progress: ProgressReporter | None = None,
) -> ToolResult:
    """Run one tool call and log it as one `tool_call` event (tool, arguments, outcome,
    duration, result size, completeness, warning codes)."""
    started = time.perf_counter()
    outcome, detail, result = await _call_tool(engine, name, arguments, report_progress)
    structured = result.structured or {}
    tokens = estimated_tokens(result.text, structured) if structured else len(result.text) // 4
    warnings = structured.get("warnings", [])
    log.info(
        "tool_call",
        tool=name,
        args=summarize_arguments(arguments),
        outcome=outcome,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
        result_chars=len(result.text)
        + (len(json.dumps(structured, ensure_ascii=False)) if structured else 0),
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
    report_progress: ProgressReporter | None,
) -> tuple[str, str | None, ToolResult]:
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
        reporter = report_progress

        async def listener(done: int, total: int) -> None:
            await reporter(done, total or None, "xcindex: reading the index store's new records")

        current_progress_listener.set(listener)
    try:
        answer = await engine.call(tool, args)
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
    return "ok", None, ToolResult(text, structured)
