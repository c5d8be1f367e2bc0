"""What a Claude Code hook is told: the JSON on stdin (or the older `CLAUDE_TOOL_INPUT`).

Import-light (stdlib only): the hooks run on every edit an agent makes.
"""

from __future__ import annotations

import os
import select
import sys
import time

from xcindex._record import Record
from xcindex.hooks import output as hook_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TOOL_INPUT_ENV = "CLAUDE_TOOL_INPUT"
"""The older protocol: the tool's input as JSON in the environment."""
_STDIN_TIMEOUT_S = 5.0
_MAX_INPUT_BYTES = 64 << 20


class HookInputError(ValueError):
    """The hook's input could not be understood; the message says why, briefly."""


class ToolCall(Record):
    """What a PreToolUse/PostToolUse hook is told about the tool call. `tool_name` is None
    when the input came without one (the older protocol)."""

    __slots__ = ("cwd", "tool_input", "tool_name")
    _fields = ("tool_name", "tool_input", "cwd")
    tool_name: str | None
    tool_input: Mapping[str, object]
    cwd: str | None

    def __init__(self, tool_name: str | None, tool_input: Mapping[str, object], cwd: str | None) -> None:
        super().__init__(tool_name, tool_input, cwd)


def read_stdin(timeout: float = _STDIN_TIMEOUT_S) -> bytes:
    """Everything on stdin, or what arrived before `timeout` (never hangs on an idle pipe)."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return b""
    try:
        if stream.isatty():
            return b""
        fd = stream.fileno()
    except (OSError, ValueError):
        return b""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while size < _MAX_INPUT_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                break
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def json_object(raw: bytes | str, what: str) -> dict[str, object]:
    try:
        value = hook_json.loads(raw)
    except (ValueError, RecursionError):
        raise HookInputError(f"{what} is not valid JSON") from None
    if not isinstance(value, dict):
        raise HookInputError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def parse_tool_call(stdin: bytes, environ: Mapping[str, str]) -> ToolCall:
    """The tool call from stdin (current protocol), else from `CLAUDE_TOOL_INPUT`.

    Stdin carries `{"tool_name", "tool_input", "cwd", ...}`; a bare tool input (the
    older protocol, or a hand-written test) is accepted as well.
    """
    problem: HookInputError | None = None
    if stdin.strip():
        try:
            return _tool_call(json_object(stdin, "the hook input on stdin"))
        except HookInputError as error:
            problem = error
    if fallback := environ.get(TOOL_INPUT_ENV, "").strip():
        try:
            return _tool_call({"tool_input": json_object(fallback, TOOL_INPUT_ENV)})
        except HookInputError as error:
            problem = problem or error
    raise problem or HookInputError(f"no hook input (stdin was empty and {TOOL_INPUT_ENV} is unset)")


def _tool_call(payload: dict[str, object]) -> ToolCall:
    tool_name = payload.get("tool_name")
    if tool_name is not None and not isinstance(tool_name, str):
        raise HookInputError("tool_name is not a string")
    if "tool_input" in payload:
        tool_input = payload["tool_input"]
        if not isinstance(tool_input, dict):
            raise HookInputError("tool_input is not an object")
    else:
        tool_input = payload
    cwd = payload.get("cwd")
    return ToolCall(tool_name, tool_input, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)


def optional_text(tool_input: Mapping[str, object], key: str) -> str:
    value = tool_input.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise HookInputError(f"{key} is not a string (got {type(value).__name__})")
    return value
