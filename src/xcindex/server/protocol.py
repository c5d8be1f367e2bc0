"""The messages `server_front` answers without the MCP SDK, and the exact bytes of its answers.

The front end may answer a message only when the SDK server would give the same answer: so
every reader here is a *narrower* copy of the SDK's own validation (mcp 2.3.0: the JSON-RPC
envelope in `mcp_types.jsonrpc`, the per-version request shapes in `mcp_types.methods`, the
models the handlers receive, the runner's era rules in `mcp.server.runner`). A message that
is not plainly well formed reads as None, and the connection goes to the SDK, which then
answers (or drops) it exactly as before; `tests/unit/test_front_protocol.py` checks with
generated messages that everything read here is accepted by the SDK's validators.

The answers are built in the order the SDK's dump produces (its per-version wire models
list fields alphabetically; `_meta` is stamped last on 2026-07-28 results) and serialized
by pydantic-core's own JSON writer, as the SDK's `model_dump_json` does, so the bytes are
the same; `tests/integration/test_front_wire.py` compares them with the SDK server's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pydantic_core

from xcindex.engine.declaration import ToolDecl
from xcindex.engine.registry import TOOLS
from xcindex.server.calls import INSTRUCTIONS, SERVER_NAME, SERVER_VERSION, ToolResult, input_schema

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The versions an `initialize` can agree on (`mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`)."""
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
MODERN_VERSION = "2026-07-28"
"""The one per-request-envelope version (`MODERN_PROTOCOL_VERSIONS`)."""
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CONNECTION_CLOSED = -32000
"""What the SDK answers a request still running when the client closes its side."""

RequestId = int | str

# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any] | None


Message = Request | Notification

_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_NOTIFICATION_KEYS = frozenset({"jsonrpc", "method", "params"})


def parse_message(line: str) -> Message | None:
    """A request or notification exactly as the SDK's stdio transport reads `line`, or None
    when the front end cannot be sure of that reading.

    pydantic-core's parser is the one the SDK's `validate_json` uses (same handling of
    surrogates, duplicate keys and nesting); NaN and Infinity literals, which the SDK reads
    as numbers, are left to it. The envelope must be plain: no extra keys (which the SDK's
    union could read as another message kind), an id that is a string or a non-boolean
    integer (a float id makes the SDK read a notification), params an object if present.
    """
    try:
        raw = pydantic_core.from_json(line, allow_inf_nan=False)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0" or not isinstance(raw.get("method"), str):
        return None
    params = raw.get("params")
    if "params" in raw and not isinstance(params, dict):
        return None
    if "id" in raw:
        request_id = raw["id"]
        if raw.keys() - _REQUEST_KEYS or not _is_request_id(request_id):
            return None
        return Request(request_id, raw["method"], params)
    if raw.keys() - _NOTIFICATION_KEYS:
        return None
    return Notification(raw["method"], params)


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def correlation_key(request_id: object) -> RequestId | None:
    """The id as the SDK's dispatcher correlates cancellations (`as_request_id`, then
    `coerce_request_id`: the string "7" and the number 7 are one request)."""
    if not _is_request_id(request_id):
        return None
    assert isinstance(request_id, int | str)
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return request_id


def progress_token(params: Mapping[str, Any] | None) -> RequestId | None:
    """`params._meta.progressToken` as the SDK's dispatcher reads it (no booleans)."""
    meta = (params or {}).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if _is_request_id(token) else None


# --- what the SDK would accept ------------------------------------------------------------

Check = Callable[[Any], bool]


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _fields(fields: Mapping[str, Check]) -> Check:
    """An object whose listed fields (wire names) pass their checks; others are ignored, as
    every SDK model here ignores unknown keys."""
    return lambda value: (
        isinstance(value, dict)
        and all(name not in value or check(value[name]) for name, check in fields.items())
    )


def _map_of_objects(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, dict) for item in value.values())


_CAPABILITIES = _fields(
    {
        # The union of the 2025-11-25 and 2026-07-28 wire models and the SDK's own model,
        # each kept to the shape all of them accept.
        "experimental": _optional(_map_of_objects),
        "extensions": _optional(_map_of_objects),
        "roots": _optional(_fields({"listChanged": _optional(_is_bool)})),
        "sampling": _optional(_fields({"context": _optional(_is_object), "tools": _optional(_is_object)})),
        "elicitation": _optional(_fields({"form": _optional(_is_object), "url": _optional(_is_object)})),
        "tasks": _optional(
            _fields(
                {
                    "list": _optional(_is_object),
                    "cancel": _optional(_is_object),
                    "requests": _optional(
                        _fields(
                            {
                                "sampling": _optional(_fields({"createMessage": _optional(_is_object)})),
                                "elicitation": _optional(_fields({"create": _optional(_is_object)})),
                            }
                        )
                    ),
                }
            )
        ),
    }
)


def _client_info(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
        and value.get("icons") is None
        and all(_optional(_is_str)(value.get(key)) for key in ("title", "description", "websiteUrl"))
    )


def _plain_meta(meta: Any, *, modern: bool) -> bool:
    """`_meta` as both the wire model and the SDK's open `RequestParamsMeta` take it: a
    progress token, if any, is a string or an integer. On a handshake-era connection a
    2026-07-28 envelope key makes the SDK refuse the request; on a 2026-07-28 one a log
    level would open the SDK's per-request log gate, so both go to the SDK."""
    if not isinstance(meta, dict):
        return False
    if "progressToken" in meta and not _is_request_id(meta["progressToken"]):
        return False
    if modern:
        return "io.modelcontextprotocol/logLevel" not in meta
    return PROTOCOL_VERSION_KEY not in meta


def _only(params: Mapping[str, Any], keys: frozenset[str]) -> bool:
    return not params.keys() - keys


_TOOLS_LIST_KEYS = frozenset({"_meta", "cursor"})
_TOOLS_CALL_KEYS = frozenset({"_meta", "name", "arguments"})


def _request_body_ok(method: str, params: Mapping[str, Any]) -> bool:
    """tools/list and tools/call params beyond `_meta`, in either era. Keys the handler
    would not read but the SDK might validate (task, inputResponses, requestState) go to it."""
    if method == "tools/list":
        return _only(params, _TOOLS_LIST_KEYS) and _optional(_is_str)(params.get("cursor"))
    if method == "tools/call":
        return (
            _only(params, _TOOLS_CALL_KEYS)
            and isinstance(params.get("name"), str)
            and _optional(_is_object)(params.get("arguments"))
        )
    return _only(params, frozenset({"_meta"}))


def accepts_initialize(params: dict[str, Any] | None) -> bool:
    """An `initialize` the SDK accepts: its params are required and checked against the
    2025-11-25 request and the SDK's own `InitializeRequestParams`."""
    return (
        params is not None
        and isinstance(params.get("protocolVersion"), str)
        and _CAPABILITIES(params.get("capabilities"))
        and _client_info(params.get("clientInfo"))
        and ("_meta" not in params or params["_meta"] is None or _plain_meta(params["_meta"], modern=False))
    )


HANDSHAKE_METHODS = frozenset({"ping", "tools/list", "tools/call"})
MODERN_METHODS = frozenset({"server/discover", "tools/list", "tools/call"})


def accepts_handshake_request(request: Request) -> bool:
    """ping, tools/list or tools/call after an `initialize`, plainly well formed."""
    if request.method not in HANDSHAKE_METHODS:
        return False
    params = request.params
    if params is None:
        return request.method != "tools/call"
    meta = params.get("_meta")
    return (meta is None or _plain_meta(meta, modern=False)) and _request_body_ok(request.method, params)


def modern_envelope(params: Mapping[str, Any] | None) -> bool:
    """Whether the SDK routes a request to the 2026-07-28 era (`_has_modern_envelope`)."""
    meta = (params or {}).get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def accepts_modern_request(request: Request) -> bool:
    """server/discover, tools/list or tools/call carrying a complete 2026-07-28 envelope at
    the version this SDK serves, plainly well formed."""
    if request.method not in MODERN_METHODS or request.params is None:
        return False
    meta = request.params.get("_meta")
    return (
        isinstance(meta, dict)
        and _plain_meta(meta, modern=True)
        and meta.get(PROTOCOL_VERSION_KEY) == MODERN_VERSION
        and _CAPABILITIES(meta.get(CLIENT_CAPABILITIES_KEY))
        and (CLIENT_INFO_KEY not in meta or _optional(_client_info)(meta[CLIENT_INFO_KEY]))
        and _request_body_ok(request.method, request.params)
    )


def accepts_initialized(notification: Notification) -> bool:
    params = notification.params
    return params is None or ("_meta" not in params or _optional(_is_object)(params["_meta"]))


def accepts_cancelled(notification: Notification, *, modern: bool) -> bool:
    """A `notifications/cancelled` the SDK validates without a warning."""
    params = notification.params
    if params is None:
        return False
    request_id = params.get("requestId")
    return (
        (_is_request_id(request_id) if modern else request_id is None or _is_request_id(request_id))
        and _optional(_is_str)(params.get("reason"))
        and _optional(_is_object)(params.get("_meta"))
    )


# --- answers --------------------------------------------------------------------------------


def _json(message: dict[str, Any]) -> str:
    """One wire line, written as the SDK's `model_dump_json` writes it."""
    return pydantic_core.to_json(message, inf_nan_mode="null").decode() + "\n"


def response_line(request_id: RequestId, result: dict[str, Any]) -> str:
    return _json({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_line(request_id: RequestId, code: int, message: str) -> str:
    return _json({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def progress_line(token: RequestId, progress: float, total: float | None, message: str | None) -> str:
    params: dict[str, Any] = {"progressToken": token, "progress": progress}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return _json({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


def _stamped(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result: the server's identity stamped last, as the SDK's runner does."""
    return {**result, "_meta": {SERVER_INFO_KEY: {"name": SERVER_NAME, "version": SERVER_VERSION}}}


def initialize_result(params: Mapping[str, Any]) -> dict[str, Any]:
    """The handshake answer: the client's version when the SDK speaks it, else the latest."""
    requested = params["protocolVersion"]
    return {
        "capabilities": {
            "resources": {"listChanged": False, "subscribe": True},
            "tools": {"listChanged": False},
        },
        "instructions": INSTRUCTIONS,
        "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
    }


def discover_result() -> dict[str, Any]:
    """`server/discover`: on 2026-07-28 change notifications ride `subscriptions/listen`,
    which the server serves, hence `listChanged` and `subscribe`."""
    return _stamped(
        {
            "cacheScope": "private",
            "capabilities": {
                "resources": {"listChanged": True, "subscribe": True},
                "tools": {"listChanged": True},
            },
            "instructions": INSTRUCTIONS,
            "resultType": "complete",
            "supportedVersions": [MODERN_VERSION],
            "ttlMs": 0,
        }
    )


def _declared_first(schema: dict[str, Any], declared: tuple[str, ...]) -> dict[str, Any]:
    """A schema as a wire model with `extra="allow"` dumps it: its declared fields first, in
    declaration order, then the rest as they came."""
    ordered = {key: schema[key] for key in declared if schema.get(key) is not None}
    ordered.update((key, value) for key, value in schema.items() if key not in ordered)
    return ordered


def _tool_json(tool: ToolDecl[Any, Any], modern: bool) -> dict[str, Any]:
    inputs, outputs = input_schema(tool.args), tool.output_schema
    return {
        "annotations": {
            "idempotentHint": tool.idempotent,
            "openWorldHint": False,
            "readOnlyHint": tool.read_only,
            "title": tool.title,
        },
        "description": tool.description,
        "inputSchema": _declared_first(
            inputs, ("$schema", "type") if modern else ("$schema", "properties", "required", "type")
        ),
        "name": tool.name,
        "outputSchema": _declared_first(
            outputs, ("$schema",) if modern else ("$schema", "properties", "required", "type")
        ),
        "title": tool.title,
    }


CATALOGUE = Path(__file__).resolve().parents[1] / "plugin" / "catalogue.json"
"""The tools/list answers made from the registry, committed (`python -m
xcindex.server.catalogue`; a test fails while it differs from `made_tools_list`)."""


@cache
def tools_list_result(modern: bool) -> dict[str, Any]:
    """The tools/list answer; it never changes within a process (callers must not mutate it).

    Read from the committed catalogue when it is this version's: making it loads every tool's
    module and has pydantic generate 24 JSON schemas (0.1-0.3 s), which a session's first
    `tools/list` would otherwise pay before its first answer. Made from the registry when the
    catalogue is missing or another version's."""
    try:
        catalogue = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        catalogue = None
    if isinstance(catalogue, dict) and catalogue.get("version") == SERVER_VERSION:
        listed: dict[str, Any] = catalogue["toolsModern" if modern else "toolsHandshake"]
        return listed
    return made_tools_list(modern)


def made_tools_list(modern: bool) -> dict[str, Any]:
    """The tools/list answer, from the registry (what the catalogue holds)."""
    tools = [_tool_json(tool, modern) for tool in TOOLS]
    if modern:
        return _stamped({"cacheScope": "private", "resultType": "complete", "tools": tools, "ttlMs": 0})
    return {"tools": tools}


def call_result(result: ToolResult, modern: bool) -> dict[str, Any]:
    """A CallToolResult in the field order of the era's wire model."""
    shaped: dict[str, Any] = {"content": [{"text": result.text, "type": "text"}], "isError": result.is_error}
    if modern:
        shaped["resultType"] = "complete"
    if result.structured is not None:
        shaped["structuredContent"] = result.structured
    return _stamped(shaped) if modern else shaped
