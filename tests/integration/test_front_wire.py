"""The front end of `xcindex serve` answers as the MCP SDK's server answers, byte for byte.

Each scenario is played twice over an in-memory connection with the same Engine: once to
the SDK server exactly as `xcindex serve` ran it before the front end existed (the SDK's own
`stdio_server` around `build_server`), once to `server_front.serve_connection`. The lines
that come back must be the same; the front end's log says whether it answered alone or
handed the connection over, so a scenario also proves which path it exercised.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from anyio.abc import TaskGroup
from mcp.server.stdio import stdio_server

from tests.conftest import CANARY
from xcindex.engine import Engine, EngineConfig
from xcindex.server.front import serve_connection
from xcindex.server.sdk import StatusFeed, build_server

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

SDK, FRONT = "sdk", "front"
HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "front-wire-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
WHERE = {"projectPath": str(CANARY)}
REPLY_WITHIN = 60.0


class Pipe:
    """One connection in memory. It is also the stdin and stdout the SDK's `stdio_server`
    takes (it iterates stdin's lines and awaits stdout's `write` and `flush`)."""

    def __init__(self) -> None:
        self._to_server, self.server_input = anyio.create_memory_object_stream[str](1000)
        self.server_output, self._from_server = anyio.create_memory_object_stream[str](1000)
        self.notifications: list[dict[str, Any]] = []
        self.other_answers: list[str] = []
        """Answers that came while `answer_to` waited for another."""
        self.sync = 0

    def __aiter__(self) -> AsyncIterator[str]:
        return self.server_input

    async def write(self, text: str) -> None:
        await self.server_output.send(text)

    async def flush(self) -> None:
        pass

    async def send(self, message: dict[str, Any] | str) -> None:
        await self._to_server.send(message if isinstance(message, str) else json.dumps(message) + "\n")

    async def answer_to(self, request_id: int | str) -> str:
        """The raw line answering `request_id`; notifications and other answers meanwhile are kept."""
        with anyio.fail_after(REPLY_WITHIN):
            async for line in self._from_server:
                message = json.loads(line)
                if "method" in message:
                    self.notifications.append(message)
                elif message.get("id") == request_id:
                    return line
                else:
                    self.other_answers.append(line)
        raise AssertionError(f"the server ended without answering {request_id!r}")

    async def read_up_to(self, modern: bool) -> None:
        """Return once the server has read every line sent so far: it reads its input in
        order and starts each call as it reads it, so a request answered at once (`ping`;
        `tools/list` on 2026-07-28) sent now is answered only after the lines before it
        were taken in (what answers them meanwhile is kept in `other_answers`)."""
        self.sync += 1
        await self.send(
            request(f"sync-{self.sync}", "ping" if not modern else "tools/list", modern=modern)[0]
        )
        await self.answer_to(f"sync-{self.sync}")

    def close(self) -> None:
        for stream in (self._to_server, self.server_input, self.server_output, self._from_server):
            stream.close()

    async def end(self) -> list[str]:
        """Close the client's side; every line the server still writes."""
        self._to_server.close()
        with anyio.fail_after(REPLY_WITHIN):
            return [line async for line in self._from_server]


async def _run(path: str, engine: Engine, tg: TaskGroup, pipe: Pipe) -> None:
    async with pipe.server_output:
        if path == SDK:
            server = build_server(engine, StatusFeed(engine, tg))
            connection = cast(Any, pipe)
            async with stdio_server(connection, connection) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        else:
            await serve_connection(engine, tg, pipe.server_input, pipe.server_output.send)


@asynccontextmanager
async def connection(path: str, engine: Engine) -> AsyncIterator[Pipe]:
    """A connection to the server on `path`; its status watches end with it."""
    pipe = Pipe()
    async with anyio.create_task_group() as tg:
        done = anyio.Event()

        async def run() -> None:
            try:
                await _run(path, engine, tg, pipe)
            finally:
                done.set()

        tg.start_soon(run)
        try:
            yield pipe
        finally:
            pipe._to_server.close()
            with anyio.fail_after(REPLY_WITHIN):
                await done.wait()
            pipe.close()
            tg.cancel_scope.cancel()


@dataclass
class Transcript:
    answers: list[str] = field(default_factory=list)
    at_end: list[str] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)


Step = tuple[dict[str, Any] | str, int | str | None]
"""A line to send (a message or raw text) and the id of the answer to wait for (None: none)."""


async def play(path: str, engine: Engine, steps: Sequence[Step]) -> Transcript:
    transcript = Transcript()
    async with connection(path, engine) as pipe:
        for message, answer_id in steps:
            await pipe.send(message)
            if answer_id is not None:
                transcript.answers.append(await pipe.answer_to(answer_id))
        transcript.at_end = await pipe.end()
        transcript.notifications = pipe.notifications
    return transcript


def handovers(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    events = [record.msg for record in caplog.records if isinstance(record.msg, dict)]
    found = [event for event in events if event.get("event") == "server_handover"]
    caplog.clear()
    return found


async def both(
    engine: Engine, steps: Sequence[Step], caplog: pytest.LogCaptureFixture
) -> list[dict[str, Any]]:
    """Play `steps` to both servers, assert the same lines came back, and return the front
    end's handover events."""
    caplog.set_level(logging.INFO, logger="xcindex.server")
    expected = await play(SDK, engine, steps)
    handovers(caplog)
    got = await play(FRONT, engine, steps)
    assert got.answers == expected.answers
    assert got.at_end == expected.at_end
    assert got.notifications == expected.notifications
    return handovers(caplog)


def initialize(request_id: int, version: str = "2025-06-18", **extra: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {**params, **extra}}


INITIALIZED: Step = ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)


def request(
    request_id: int | str, method: str, params: dict[str, Any] | None = None, *, modern: bool = False
) -> Step:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None or modern:
        message["params"] = dict(params or {})
        if modern:
            message["params"]["_meta"] = {**message["params"].get("_meta", {}), **ENVELOPE}
    return message, request_id


def call(request_id: int | str, tool: str, arguments: dict[str, Any] | None, *, modern: bool = False) -> Step:
    params: dict[str, Any] = {"name": tool}
    if arguments is not None:
        params["arguments"] = arguments
    return request(request_id, "tools/call", params, modern=modern)


def opening(modern: bool) -> list[Step]:
    if modern:
        return [request(1, "server/discover", modern=True)]
    return [(initialize(1), 1), INITIALIZED]


@pytest.fixture
async def engine(canary_store: Path) -> AsyncIterator[Engine]:
    async with Engine(EngineConfig(reconcile=False, first_answer_wait_s=5.0)) as running:
        yield running


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2026-07-28", "1999-01-01"])
async def test_the_handshake_and_the_tool_listing_are_the_sdk_servers(
    engine: Engine, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    steps = [
        (initialize(1, version), 1),
        INITIALIZED,
        request(2, "tools/list"),
        request(3, "ping"),
        request("four", "tools/list", {"_meta": {"progressToken": 7}, "cursor": "x"}),
    ]
    assert await both(engine, steps, caplog) == [], "the front end answered alone"


async def test_discover_and_the_2026_tool_listing_are_the_sdk_servers(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    steps = [request(1, "server/discover", modern=True), request(2, "tools/list", modern=True)]
    assert await both(engine, steps, caplog) == []


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
async def test_tool_calls_are_answered_alike(
    engine: Engine, modern: bool, caplog: pytest.LogCaptureFixture
) -> None:
    steps = [
        *opening(modern),
        call(10, "find_symbol", {"symbolName": "UserService", **WHERE}, modern=modern),
        call(11, "find_references", {"symbolName": "UserService", "usr": "both", **WHERE}, modern=modern),
        call(12, "no_such_tool", {}, modern=modern),
        call(13, "blast_radius", {"filePath": "/nowhere/File.swift", **WHERE}, modern=modern),
        call(14, "find_symbol", None, modern=modern),
        call("15", "find_conformances", {"usr": "s:11CanaryCore9AuditableP", **WHERE}, modern=modern),
        call(16, "find_symbol", {"symbolName": "fetchUser(id:)", "maxResults": 1, **WHERE}, modern=modern),
    ]
    assert await both(engine, steps, caplog) == []


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
async def test_a_cancelled_call_is_never_answered(
    engine: Engine, modern: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The index is held busy, so the call waits; the client cancels it (by the number's
    string, which the SDK correlates with the number) and hears nothing of it, then the
    next request is answered."""
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "5"}}
    for path in (SDK, FRONT):
        async with engine._core.holding_index(project_path=str(CANARY)), connection(path, engine) as pipe:
            for message, answer_id in opening(modern):
                await pipe.send(message)
                if answer_id is not None:
                    await pipe.answer_to(answer_id)
            await pipe.send(call(5, "find_symbol", {"symbolName": "UserService", **WHERE}, modern=modern)[0])
            await pipe.read_up_to(modern)
            await pipe.send(cancel)
            await pipe.send(request(6, "tools/list", modern=modern)[0])
            assert json.loads(await pipe.answer_to(6))["result"]["tools"]
            rest = [*pipe.other_answers, *await pipe.end()]
        assert all(str(json.loads(line).get("id")) != "5" for line in rest), (path, rest)
    assert handovers(caplog) == []


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
async def test_a_call_running_at_eof_is_answered_connection_closed(
    engine: Engine, modern: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="xcindex.server")
    ends: dict[str, list[str]] = {}
    for path in (SDK, FRONT):
        async with engine._core.holding_index(project_path=str(CANARY)), connection(path, engine) as pipe:
            for message, answer_id in opening(modern):
                await pipe.send(message)
                if answer_id is not None:
                    await pipe.answer_to(answer_id)
            await pipe.send(call(5, "find_symbol", {"symbolName": "UserService", **WHERE}, modern=modern)[0])
            await pipe.read_up_to(modern)
            ends[path] = await pipe.end()
    assert (
        ends[FRONT]
        == ends[SDK]
        == ['{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"Connection closed"}}\n']
    )
    assert handovers(caplog) == []


UNANSWERABLE = [
    "this is not JSON\n",
    "\n",
    "\x00\x01\x02\ufffd\n",
    '{"jsonrpc":"2.0","id":201,"method":"tools/call","params":{"name":"find_symbol","arguments":{"symbolName":"raw\x00nul"}}}\n',
    '{"jsonrpc":"2.0","id":202,"method":"tools/call","params":{"name":"find_symbol","arguments":{"symbolName":"\\udcff"}}}\n',
    '{"jsonrpc":"2.0","id":203,"method":"tools/call","params":{"name":"status","arguments":{}}\n',
    "[" * 10_000 + "]" * 10_000 + "\n",
    '{"jsonrpc":"1.0","id":204,"method":"tools/call"}\n',
    "[1,2,3]\n",
    # Read by the SDK as other kinds of message than they look like.
    '{"jsonrpc":"2.0","id":205.0,"method":"tools/list"}\n',
    '{"jsonrpc":"2.0","id":true,"method":"tools/list"}\n',
    '{"jsonrpc":"2.0","id":206,"method":"tools/list","result":{}}\n',
    '{"jsonrpc":"2.0","id":207,"result":{}}\n',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5},"extra":1}\n',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n',
]
"""Lines the SDK drops, or reads as something other than a request the front end answers."""

ANSWERED_BY_THE_SDK = [
    request(301, "tools/call", {"name": "find_symbol", "arguments": "x"}),
    request(302, "tools/call", {"name": 42}),
    request(303, "no/such/method"),
    request(
        304, "tools/call", {"name": "find_symbol", "arguments": {"symbolName": "x", **WHERE}, "task": {}}
    ),
    request(305, "tools/list", {"cursor": 5}),
    request(306, "ping", {"_meta": {"progressToken": True}}),
    request(307, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    request(308, "resources/templates/list"),
    request(309, "logging/setLevel", {"level": "debug"}),
    request(310, "server/discover"),
    request(
        311, "tools/list", {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}
    ),
    ('{"jsonrpc":"2.0","id":312,"method":"tools/list","params":null}\n', 312),
    request(
        313,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": "yes"}},
            "clientInfo": {"name": "t", "version": "0"},
        },
    ),
    request(
        314, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    ),
]
"""Requests the front end leaves to the SDK (malformed for the SDK, or not among the methods
the front end answers): the SDK's own answer must reach the client."""


@pytest.mark.parametrize("line", UNANSWERABLE, ids=range(len(UNANSWERABLE)))
async def test_an_unreadable_line_is_handled_as_the_sdk_handles_it(
    engine: Engine, line: str, caplog: pytest.LogCaptureFixture
) -> None:
    steps = [
        (initialize(1), 1),
        INITIALIZED,
        call(2, "find_symbol", {"symbolName": "UserService", **WHERE}),
        (line, None),
        call(3, "find_symbol", {"symbolName": "Greeter", **WHERE}),
    ]
    assert len(await both(engine, steps, caplog)) == 1, "the front end left the line to the SDK"


@pytest.mark.parametrize("step", ANSWERED_BY_THE_SDK, ids=[str(step[1]) for step in ANSWERED_BY_THE_SDK])
@pytest.mark.parametrize("first", [False, True], ids=["after-handshake", "as-first-message"])
async def test_what_the_front_end_does_not_answer_the_sdk_answers(
    engine: Engine, step: Step, first: bool, caplog: pytest.LogCaptureFixture
) -> None:
    opened = [] if first else [(initialize(1), 1), INITIALIZED]
    steps = [*opened, step, request(2, "ping")]
    assert len(await both(engine, steps, caplog)) == 1


async def test_a_second_initialize_is_left_to_the_sdk(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    steps = [(initialize(1), 1), INITIALIZED, (initialize(2, "2024-11-05"), 2), request(3, "tools/list")]
    [handover] = await both(engine, steps, caplog)
    assert handover["trigger"] == "initialize"


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
@pytest.mark.parametrize("cancelled", [False, True], ids=["finishes", "cancelled"])
async def test_a_call_in_flight_at_the_handover_finishes_on_its_own_or_hears_its_cancellation(
    engine: Engine, modern: bool, cancelled: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The index is held busy while call 5 waits; resources/list hands the connection over;
    then the client cancels call 5 (the SDK side reads the cancellation and passes it on)
    or the index is released and call 5 is answered, once, with what the SDK would say."""
    caplog.set_level(logging.INFO, logger="xcindex.server")
    question = call(5, "find_symbol", {"symbolName": "UserService", **WHERE}, modern=modern)[0]
    seen: dict[str, list[str]] = {}
    for path in (SDK, FRONT):
        async with connection(path, engine) as pipe:
            for message, answer_id in opening(modern):
                await pipe.send(message)
                if answer_id is not None:
                    await pipe.answer_to(answer_id)
            async with engine._core.holding_index(project_path=str(CANARY)):
                await pipe.send(question)
                await pipe.read_up_to(modern)
                await pipe.send(request(6, "resources/list", modern=modern)[0])
                listed = await pipe.answer_to(6)
                if cancelled:
                    await pipe.send(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
                    )
                    await pipe.send(request(7, "ping" if not modern else "tools/list", modern=modern)[0])
                    await pipe.answer_to(7)
            answers = [listed] if cancelled else [listed, await pipe.answer_to(5)]
            rest = [*pipe.other_answers, *await pipe.end()]
        assert all(str(json.loads(line).get("id")) != "5" for line in rest), (path, rest)
        seen[path] = answers
    assert seen[FRONT] == seen[SDK]
    [handover] = handovers(caplog)
    assert (handover["trigger"], handover["calls_in_flight"]) == ("resources/list", 1)


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
async def test_a_session_handed_over_mid_way_answers_as_the_sdk_throughout(
    engine: Engine, modern: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Fast-path calls first (whose locations the status resources then list), then the
    resources (the handover), then calls again, now on the SDK."""
    steps = [
        *opening(modern),
        call(2, "find_symbol", {"symbolName": "UserService", **WHERE}, modern=modern),
        call(3, "status", {"indexStorePath": "relative/store"}, modern=modern),
        request(4, "resources/list", modern=modern),
        request(5, "resources/templates/list", modern=modern),
        call(6, "find_symbol", {"symbolName": "Greeter", **WHERE}, modern=modern),
        request(7, "tools/list", modern=modern),
    ]
    [handover] = await both(engine, steps, caplog)
    assert handover["trigger"] == "resources/list"
    assert handover["era"] == ("modern" if modern else "handshake")


async def test_progress_of_a_first_ingestion_is_reported_alike(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A cold cache for each path: the call streams progress to its token on both, in the
    same shape (the figures depend on timing), and ends with the same answer."""
    steps = [
        (initialize(1), 1),
        INITIALIZED,
        request(
            2,
            "tools/call",
            {
                "name": "find_symbol",
                "arguments": {"symbolName": "UserService", **WHERE},
                "_meta": {"progressToken": "cold"},
            },
        ),
    ]
    transcripts: dict[str, Transcript] = {}
    for path in (SDK, FRONT):
        monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / path))
        async with Engine(EngineConfig(reconcile=False, first_answer_wait_s=5.0)) as cold:
            transcripts[path] = await play(path, cold, steps)
    sdk, front = transcripts[SDK], transcripts[FRONT]
    assert front.answers == sdk.answers
    for notifications in (sdk.notifications, front.notifications):
        assert notifications, "a first ingestion reports its progress"

    def shapes(notifications: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
        return {
            (n["method"], tuple(n["params"]), n["params"]["progressToken"], n["params"].get("message"))
            for n in notifications
        }

    counted = ("notifications/progress", ("progressToken", "progress", "total", "message"))
    uncounted = ("notifications/progress", ("progressToken", "progress", "message"))  # total not known yet
    allowed = {
        (*kind, "cold", "xcindex: reading the index store's new records") for kind in (counted, uncounted)
    }
    for notifications in (sdk.notifications, front.notifications):
        assert shapes(notifications) <= allowed
        assert any(tuple(n["params"]) == counted[1] for n in notifications)
    for n in front.notifications:
        assert all(isinstance(n["params"].get(key, 0), int) for key in ("progress", "total"))
    assert handovers(caplog) == []


def test_the_front_end_imports_no_part_of_the_sdk() -> None:
    code = (
        "import sys, xcindex.server.front, xcindex.cli.main\n"
        "sdk = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))\n"
        "print(sdk)\n"
        "sys.exit(1 if sdk else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
