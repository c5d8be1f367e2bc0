"""The front end reads a message only when the MCP SDK reads it the same way and accepts it.

`server_front_protocol` keeps narrower copies of the SDK's validation; generated messages,
well formed and not, check that every one it accepts passes the SDK's own checks (the
per-version request shapes, the models its handlers receive, the 2026-07-28 envelope
ladder), and that it reads the same id, method and params as the SDK's parser. Messages
real clients send are checked to be accepted, so the fast path is the common one.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server.runner import _has_modern_envelope
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from xcindex.server import protocol as front

SETTINGS = settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.sampled_from(["", "x", "7"])
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
)
DELETE = object()


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path inside nested objects."""
    found: list[tuple[str, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*prefix, key))
            found += _paths(item, (*prefix, key))
    return found


def _replaced(value: Any, path: tuple[str, ...], new: Any) -> Any:
    head, *rest = path
    copy = dict(value)
    if rest:
        copy[head] = _replaced(copy[head], tuple(rest), new)
    elif new is DELETE:
        del copy[head]
    else:
        copy[head] = new
    return copy


def mutated(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A valid value, or one with a single field replaced by anything or removed: the edge
    where a narrower copy of a validator could be wrong."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        value = draw(valid)
        paths = _paths(value)
        if not paths or draw(st.booleans()):
            return value
        return _replaced(value, draw(st.sampled_from(paths)), draw(st.one_of(st.just(DELETE), anything)))

    return build()


def objects(
    fields: dict[str, st.SearchStrategy[Any]], required: dict[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(required or {}, optional=fields)


some_object = st.dictionaries(st.sampled_from(["k", "v"]), anything, max_size=2)
capabilities = objects(
    {
        "roots": objects({"listChanged": st.booleans()}),
        "sampling": objects({"context": some_object, "tools": some_object}),
        "elicitation": objects({"form": some_object, "url": some_object}),
        "experimental": st.dictionaries(st.sampled_from(["x", "y"]), some_object, max_size=2),
        "extensions": st.dictionaries(st.sampled_from(["io.x/y"]), some_object, max_size=2),
        "tasks": objects(
            {
                "list": some_object,
                "cancel": some_object,
                "requests": objects(
                    {
                        "sampling": objects({"createMessage": some_object}),
                        "elicitation": objects({"create": some_object}),
                    }
                ),
            }
        ),
        "unknown": anything,
    }
)
client_info = objects(
    {
        "title": st.text(max_size=3),
        "description": st.text(max_size=3),
        "websiteUrl": st.just("https://example.com"),
        "icons": st.lists(st.fixed_dictionaries({"src": st.just("x")}), max_size=1),
    },
    required={
        "name": st.sampled_from(["claude-code", "mcp"]),
        "version": st.sampled_from(["2.1.0", "0.1.0"]),
    },
)
progress_tokens = st.one_of(st.integers(-2, 2), st.sampled_from(["t", "7"]))
plain_meta = objects({"progressToken": progress_tokens, "claudecode/toolUseId": st.just("toolu_1")})
envelope = objects(
    {
        "io.modelcontextprotocol/clientInfo": client_info,
        "io.modelcontextprotocol/logLevel": st.just("debug"),
        "progressToken": progress_tokens,
        "traceparent": st.just("00-1-2-01"),
    },
    required={
        "io.modelcontextprotocol/protocolVersion": st.just("2026-07-28"),
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    },
)
initialize_params = mutated(
    objects(
        {"_meta": plain_meta, "extra": anything},
        required={
            "protocolVersion": st.sampled_from([*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"]),
            "capabilities": capabilities,
            "clientInfo": client_info,
        },
    )
)


def request_params(method: str, meta: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Params of `method` (and, now and then, keys the front end leaves to the SDK)."""
    rare = {"task": some_object, "requestState": st.just("s"), "cursor": st.just("c")}
    if method == "tools/call":
        arguments = st.dictionaries(st.sampled_from(["symbolName", "projectPath"]), anything, max_size=2)
        body = objects({"arguments": arguments, **rare}, {"name": st.sampled_from(["find_symbol", "nope"])})
    elif method == "tools/list":
        body = objects(rare)
    else:
        body = objects({"task": some_object})
    return mutated(st.builds(lambda fields, m: {**fields, "_meta": m}, body, meta))


def requests(methods_: list[str], meta: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(methods_).flatmap(
        lambda method: st.tuples(st.just(method), st.one_of(st.none(), request_params(method, meta)))
    )


def sdk_accepts_request(method: str, version: str, params: Any) -> bool:
    """The SDK's checks between reading a request and calling its handler."""
    monolith: dict[str, type[Any]] = {
        "initialize": types.InitializeRequestParams,
        "ping": types.RequestParams,
        "server/discover": types.RequestParams,
        "tools/list": types.PaginatedRequestParams,
        "tools/call": types.CallToolRequestParams,
    }
    try:
        methods.validate_client_request(method, version, params)
        monolith[method].model_validate({} if params is None else params, by_name=False)
    except Exception:
        return False
    return True


@SETTINGS
@given(params=initialize_params)
def test_an_accepted_initialize_is_one_the_sdk_accepts(params: Any) -> None:
    if isinstance(params, dict) and front.accepts_initialize(params):
        assert sdk_accepts_request("initialize", LATEST_HANDSHAKE_VERSION, params)


@SETTINGS
@given(
    request=requests(["ping", "tools/list", "tools/call", "resources/list"], st.one_of(plain_meta, envelope)),
    version=st.sampled_from(HANDSHAKE_PROTOCOL_VERSIONS),
)
def test_an_accepted_handshake_era_request_is_one_the_sdk_serves(
    request: tuple[str, Any], version: str
) -> None:
    method, params = request
    if not isinstance(params, dict | None):
        return
    if front.accepts_handshake_request(front.Request(1, method, params)):
        assert not _has_modern_envelope(params), "the handshake-era loop refuses an enveloped request"
        assert sdk_accepts_request(method, version, params)


@SETTINGS
@given(
    request=requests(
        ["server/discover", "tools/list", "tools/call", "ping", "subscriptions/listen"], envelope
    )
)
def test_an_accepted_2026_request_is_one_the_sdk_serves(request: tuple[str, Any]) -> None:
    method, params = request
    if not isinstance(params, dict | None):
        return
    if front.accepts_modern_request(front.Request(1, method, params)):
        assert front.modern_envelope(params)
        assert _has_modern_envelope(params)
        route = classify_inbound_request({"method": method, "params": params})
        assert isinstance(route, InboundModernRoute)
        [version] = MODERN_PROTOCOL_VERSIONS
        assert route.protocol_version == version
        assert sdk_accepts_request(method, version, params)


@SETTINGS
@given(
    params=st.one_of(
        st.none(),
        mutated(objects({"reason": st.just("r"), "_meta": some_object}, {"requestId": progress_tokens})),
    ),
    modern=st.booleans(),
)
def test_an_accepted_cancellation_is_one_the_sdk_validates(params: Any, modern: bool) -> None:
    if not isinstance(params, dict | None):
        return
    version = MODERN_PROTOCOL_VERSIONS[0] if modern else LATEST_HANDSHAKE_VERSION
    if front.accepts_cancelled(front.Notification("notifications/cancelled", params), modern=modern):
        methods.validate_client_notification("notifications/cancelled", version, params)


@SETTINGS
@given(params=st.one_of(st.none(), mutated(objects({"_meta": some_object, "x": anything}))))
def test_an_accepted_initialized_is_one_the_sdk_validates(params: Any) -> None:
    if not isinstance(params, dict | None):
        return
    if front.accepts_initialized(front.Notification("notifications/initialized", params)):
        methods.validate_client_notification("notifications/initialized", LATEST_HANDSHAKE_VERSION, params)
        types.NotificationParams.model_validate({} if params is None else params, by_name=False)


envelopes = mutated(
    objects(
        {
            "id": st.one_of(st.integers(-2, 2), st.sampled_from(["a", "7"])),
            "params": st.dictionaries(st.sampled_from(["a", "_meta"]), anything, max_size=2),
            "result": anything,
            "error": anything,
        },
        required={
            "jsonrpc": st.just("2.0"),
            "method": st.sampled_from(["tools/list", "notifications/cancelled"]),
        },
    )
)


@SETTINGS
@given(message=envelopes, padding=st.sampled_from(["", " ", "\n", "\t "]))
def test_a_line_is_read_as_the_sdk_reads_it(message: dict[str, Any], padding: str) -> None:
    line = padding + json.dumps(message) + padding
    read = front.parse_message(line)
    if read is None:
        return
    sdk = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    if isinstance(read, front.Request):
        assert isinstance(sdk, types.JSONRPCRequest)
        assert (sdk.id, sdk.method, sdk.params) == (read.id, read.method, read.params)
    else:
        assert isinstance(sdk, types.JSONRPCNotification)
        assert (sdk.method, sdk.params) == (read.method, read.params)


def test_lines_the_sdk_cannot_read_are_not_read() -> None:
    for line in [
        "",
        "not json",
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\udcff"}}',
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}',
        '{"jsonrpc":"2.0","id":1,"method":"x"} trailing',
        "[" * 5000 + "]" * 5000,
    ]:
        assert front.parse_message(line) is None, line


@given(value=st.one_of(st.integers(), st.text(max_size=4), st.booleans(), st.none(), st.floats()))
def test_ids_correlate_as_in_the_sdks_dispatcher(value: Any) -> None:
    narrowed = as_request_id(value)
    assert front.correlation_key(value) == (None if narrowed is None else coerce_request_id(narrowed))


@given(meta=st.one_of(anything, mutated(st.fixed_dictionaries({"progressToken": progress_tokens}))))
def test_progress_tokens_are_read_as_in_the_sdks_dispatcher(meta: Any) -> None:
    params = {"_meta": meta}
    assert front.progress_token(params) == progress_token_from_params(params)


def test_what_real_clients_send_is_answered_here() -> None:
    """Claude Code's handshake (its capabilities as seen on the wire), the Python SDK's
    client in both modes, and a tools/call with a progress token and a client's own
    `_meta` key."""
    handshakes: list[dict[str, Any]] = [
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}, "elicitation": {}},
            "clientInfo": {"name": "claude-code", "version": "2.1.0"},
        },
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp", "version": "0.1.0"},
        },
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
            "clientInfo": {"name": "x", "version": "1", "title": "X"},
        },
    ]
    for params in handshakes:
        assert front.accepts_initialize(params), params
    call: dict[str, Any] = {
        "name": "find_symbol",
        "arguments": {"symbolName": "X"},
        "_meta": {"progressToken": 3, "claudecode/toolUseId": "toolu_1"},
    }
    assert front.accepts_handshake_request(front.Request(2, "tools/call", call))
    assert front.accepts_handshake_request(front.Request(3, "tools/list", None))
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    requests: list[tuple[str, dict[str, Any]]] = [
        ("server/discover", {"_meta": meta}),
        ("tools/list", {"_meta": meta}),
        ("tools/call", {**call, "_meta": {**meta, "progressToken": "p"}}),
    ]
    for method, params in requests:
        assert front.accepts_modern_request(front.Request(4, method, params)), method
