"""The front end of the real `xcindex serve`, over real pipes.

A session that starts on the fast path and later needs the MCP SDK server, spoken to by the
SDK's own client: tool calls are answered by the front end (no SDK imported), then a
subscription to the status resource hands the connection over mid-session, on the
handshake-era protocol (`resources/subscribe`, what Claude Code speaks) and on 2026-07-28
(`subscriptions/listen`, after the client's `server/discover`). The subscriber must hear
about an edit the hook records, and the session must go on answering; the server's log
says where the handover happened. And a client that writes all its requests before
reading any answer is served, as by the SDK: the front end never stops reading while an
answer waits for the pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import ResourceUpdatedNotification

from tests.conftest import CANARY

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

XCINDEX = Path(sys.executable).parent / "xcindex"
STATUS = "xcindex://status"
HEARD_WITHIN = 10.0


def server(session_tmp: Path, log_file: Path, backend: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", "--backend", backend, "--log-file", str(log_file)],
        env={
            "XCINDEX_CACHE_DIR": os.environ["XCINDEX_CACHE_DIR"],
            "PATH": os.environ["PATH"],
            "CLAUDE_PROJECT_DIR": str(CANARY),
            "TMPDIR": f"{session_tmp}/",
        },
    )


async def record_edit(session_tmp: Path, relative: str) -> None:
    """What the post-tool-use hook does when the agent edits a file (the file is untouched)."""
    payload = {"tool_name": "Edit", "tool_input": {"file_path": str(CANARY / relative)}, "cwd": str(CANARY)}
    await anyio.run_process(
        [str(XCINDEX), "hook", "post-tool-use"],
        input=json.dumps(payload).encode(),
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(CANARY), "TMPDIR": f"{session_tmp}/"},
        check=True,
    )


async def heard(event: anyio.Event, what: str) -> None:
    """Wait for `event`, failing clearly if `what` did not come within HEARD_WITHIN."""
    with anyio.move_on_after(HEARD_WITHIN) as scope:
        await event.wait()
    if scope.cancelled_caught:
        pytest.fail(f"{what} did not come within {HEARD_WITHIN:.0f} s")


def events(log_file: Path) -> list[dict[str, Any]]:
    lines = log_file.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def handover_after_a_fast_path_call(log_file: Path) -> dict[str, Any]:
    logged = events(log_file)
    names = [event["event"] for event in logged]
    [handover] = [event for event in logged if event["event"] == "server_handover"]
    assert "tool_call" in names[: names.index("server_handover")], "a call was answered before the handover"
    assert "tool_call" in names[names.index("server_handover") :], "and one after it"
    return handover


async def test_a_handshake_era_session_subscribes_mid_way_and_hears_the_edit(
    canary_store: Path, tmp_path: Path, anyio_backend: str
) -> None:
    updates: list[str] = []
    first = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updates.append(message.params.uri)
            first.set()

    log_file = tmp_path / "server.log"
    async with Client(
        server(tmp_path, log_file, anyio_backend),
        mode="legacy",
        message_handler=on_message,
        read_timeout_seconds=300,
    ) as client:
        found = await client.call_tool(
            "find_symbol", {"symbolName": "UserService", "projectPath": str(CANARY)}
        )
        assert not found.is_error
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # removed in 2026-07-28, current before
            # In place once answered: the server notes the status it reports changes from
            # before it answers.
            await client.session.subscribe_resource(STATUS)
        edited = time.monotonic()
        await record_edit(tmp_path, "Sources/CanaryCore/Box.swift")
        await heard(first, "the update for the recorded edit")
        assert updates == [STATUS]
        assert time.monotonic() - edited < HEARD_WITHIN
        again = await client.call_tool("find_symbol", {"symbolName": "Greeter", "projectPath": str(CANARY)})
        assert not again.is_error
    handover = handover_after_a_fast_path_call(log_file)
    assert (handover["trigger"], handover["era"]) == ("resources/subscribe", "handshake")


async def test_a_2026_session_listens_mid_way_and_hears_the_edit(
    canary_store: Path, tmp_path: Path, anyio_backend: str
) -> None:
    """The SDK client's default (`mode="auto"`): `server/discover`, answered by the front end,
    so the session speaks 2026-07-28 from the start, as it did with the SDK alone."""
    log_file = tmp_path / "server.log"
    async with Client(server(tmp_path, log_file, anyio_backend), read_timeout_seconds=300) as client:
        assert client.protocol_version == "2026-07-28"
        tools = await client.list_tools()
        assert "find_symbol" in {tool.name for tool in tools.tools}
        found = await client.call_tool(
            "find_symbol", {"symbolName": "UserService", "projectPath": str(CANARY)}
        )
        assert not found.is_error
        received: list[Any] = []
        first = anyio.Event()
        # Entered once the server has acknowledged the stream, its watch in place; an event
        # that comes before `collect` asks for it waits in the subscription.
        async with client.listen(resource_subscriptions=[STATUS]) as subscription:
            assert subscription.honored.resource_subscriptions == [STATUS]

            async def collect() -> None:
                async for event in subscription:
                    received.append(event)
                    first.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(collect)
                await record_edit(tmp_path, "Sources/CanaryCore/Box.swift")
                await heard(first, "the event for the recorded edit")
                tg.cancel_scope.cancel()
        assert [event.uri for event in received] == [STATUS]
        again = await client.call_tool("find_symbol", {"symbolName": "Greeter", "projectPath": str(CANARY)})
        assert not again.is_error
    handover = handover_after_a_fast_path_call(log_file)
    assert (handover["trigger"], handover["era"]) == ("subscriptions/listen", "modern")


def test_a_client_that_reads_no_answer_before_it_has_written_every_request_is_served(
    canary_store: Path, tmp_path: Path
) -> None:
    """About 110 kB of requests (more than a pipe holds) written by a blocking client before
    it reads anything, while their answers, 12 kB each, fill the server's output long
    before the last request is read: the server must go on reading."""
    count = 2000
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    lines = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in range(1, count + 1)]
    payload = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    assert len(payload) > 64 * 1024
    with subprocess.Popen(
        [str(XCINDEX), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(tmp_path), "TMPDIR": f"{tmp_path}/"},
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        stuck = threading.Timer(60, process.kill)  # a deadlock fails the test instead of hanging it
        stuck.start()
        try:
            process.stdin.write(payload)
            process.stdin.flush()
            answered = {json.loads(process.stdout.readline())["id"] for _ in range(count + 1)}
            process.stdin.close()
            assert process.wait(60) == 0
        finally:
            stuck.cancel()
            process.kill()
    assert answered == set(range(count + 1))
