"""The plugin's first-start front answers as the real server does, from its catalogue.

Before xcindex is installed, `xcindex.plugin.front` (stdlib only) answers the handshake,
`server/discover`, `ping` and `tools/list`. The truth here is the real server's own answer
builders (`xcindex.server.protocol`, which tests/integration/test_front_wire.py holds equal to
the MCP SDK's server byte for byte); a tool call before the set-up is done is answered, once
its wait is over, in the shape of the real server's error results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xcindex.plugin.front import FirstStartFront, load_catalogue
from xcindex.plugin.setup import Plugin, SetupState
from xcindex.server import catalogue as catalogue_module
from xcindex.server.calls import ToolResult
from xcindex.server.front import Handover
from xcindex.server.protocol import (
    HANDSHAKE_VERSIONS,
    call_result,
    discover_result,
    initialize_result,
    response_line,
    tools_list_result,
)

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}
CLIENT = {"capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2.1.332"}}
WAIT_S = 20.0


class Wire:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, data: bytes) -> None:
        self.lines.extend(line + "\n" for line in data.decode().splitlines())

    def take(self) -> list[str]:
        taken, self.lines = self.lines, []
        return taken


def front_for(tmp_path: Path, state: SetupState | None = None) -> tuple[FirstStartFront, Wire]:
    plugin = Plugin(tmp_path / "plugin", "0.1.0", tmp_path / "data", tmp_path / "fallback")
    wire = Wire()

    def refuse_exec(program: Path, args: list[str], descriptor: int) -> None:
        raise AssertionError("nothing is installed in these tests")

    front = FirstStartFront(
        plugin, ["serve"], load_catalogue(), write=wire.write, call_wait_s=WAIT_S, exec_server=refuse_exec
    )
    front.state = state or SetupState("installing", step="installing with pip (step 3 of 3)", seconds=12.4)
    return front, wire


def line(message: dict[str, Any]) -> str:
    return json.dumps(message) + "\n"


def test_the_committed_catalogue_is_what_the_server_answers_now() -> None:
    committed = catalogue_module.PATH.read_text(encoding="utf-8")
    assert committed == catalogue_module.text(), (
        "src/xcindex/plugin/catalogue.json is stale: run `python -m xcindex.server.catalogue`"
    )


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2099-01-01"])
def test_the_handshake_and_the_tool_list_are_the_real_servers_bytes(tmp_path: Path, version: str) -> None:
    front, wire = front_for(tmp_path)
    initialize = {"protocolVersion": version, **CLIENT}
    front.feed(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "id": "p", "method": "ping"}), 0.0)
    assert wire.take() == [
        response_line(0, initialize_result(initialize)),
        response_line(1, tools_list_result(False)),
        response_line("p", {}),
    ]
    assert front.handover.initialize == initialize
    assert front.handover.initialized == [line({"jsonrpc": "2.0", "method": "notifications/initialized"})]


def test_a_2026_client_gets_discover_and_the_tool_list_as_the_real_server_writes_them(tmp_path: Path) -> None:
    front, wire = front_for(tmp_path)
    params = {"_meta": {**ENVELOPE, "progressToken": 7}}
    front.feed(line({"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": params}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": ENVELOPE}}), 0.0)
    assert wire.take() == [
        response_line("probe", discover_result()),
        response_line(1, tools_list_result(True)),
    ]
    assert front.handover.modern_meta == ENVELOPE, "the progress token is not part of the envelope"


def test_a_listen_stream_is_acknowledged_now_and_kept_for_the_real_server(tmp_path: Path) -> None:
    front, wire = front_for(tmp_path)
    listen = line(
        {
            "jsonrpc": "2.0",
            "id": "listen:0",
            "method": "subscriptions/listen",
            "params": {
                "_meta": ENVELOPE,
                "notifications": {"toolsListChanged": True, "resourcesListChanged": True},
            },
        }
    )
    front.feed(listen, 0.0)
    # What Claude Code 2.1.332 received from the real server (its SDK) for this request.
    assert wire.take() == [
        '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":'
        '{"io.modelcontextprotocol/subscriptionId":"listen:0"},"notifications":'
        '{"toolsListChanged":true,"resourcesListChanged":true}}}\n'
    ]
    front.tick(WAIT_S * 10)
    assert wire.take() == [], "a listen stream never times out: it is the real server's"
    assert front.handover.acknowledged == ["listen:0"]
    assert [entry.line for entry in front.waiting] == [listen]


@pytest.mark.parametrize("modern", [False, True])
def test_a_tool_call_waits_then_says_how_far_the_set_up_is(tmp_path: Path, modern: bool) -> None:
    front, wire = front_for(tmp_path)
    if modern:
        meta: dict[str, Any] = {**ENVELOPE, "progressToken": "t"}
    else:
        front.feed(
            line(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", **CLIENT},
                }
            ),
            0.0,
        )
        wire.take()
        meta = {"progressToken": "t"}
    call = {"name": "find_symbol", "arguments": {"symbolName": "UserService"}, "_meta": meta}
    front.feed(line({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}), 100.0)
    front.tick(100.0 + WAIT_S / 2)
    text = (
        "Error: xcindex is still setting itself up (the plugin's first start installs it into a private "
        "environment, once): installing with pip (step 3 of 3), 12 s so far. Ask again in about 30 s; "
        "this server answers as soon as the set-up is done (/xcindex-setup shows its progress)."
    )
    (progress,) = [json.loads(sent) for sent in wire.take()]
    assert progress == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 10, "message": text.removeprefix("Error: ")},
    }
    front.tick(100.0 + WAIT_S / 2 + 4.9)
    assert wire.take() == [], "progress every 5 s, not more often"
    front.tick(100.0 + WAIT_S)
    assert wire.take() == [response_line(5, call_result(ToolResult(text, None, True), modern))]
    assert front.waiting == []


def test_a_failed_set_up_is_said_at_once(tmp_path: Path) -> None:
    reason = (
        "pip install failed (exit 1; its output is above, or in /d/install.log for a background set-up): "
        "check the network and the disk space."
    )
    front, wire = front_for(tmp_path, SetupState("failed", reason=reason))
    front.feed(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", **CLIENT},
            }
        ),
        0.0,
    )
    front.feed(
        line(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "status", "arguments": {}}}
        ),
        0.0,
    )
    text = (
        f"Error: xcindex could not set itself up: {reason} /xcindex-setup tries again "
        f"(log: {tmp_path / 'data' / 'install.log'})."
    )
    assert wire.take()[1:] == [response_line(1, call_result(ToolResult(text, None, True), False))]


def test_an_unwritable_data_folder_is_named_in_every_answer(tmp_path: Path) -> None:
    front, wire = front_for(tmp_path)
    front.problem = (
        f"its data folder {tmp_path / 'data'} cannot be written (Permission denied). "
        "Make it writable (or free some space), then run /xcindex-setup."
    )
    front.feed(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", **CLIENT},
            }
        ),
        0.0,
    )
    front.feed(line({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}), 0.0)
    assert json.loads(wire.take()[1]) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32603,
            "message": f"xcindex cannot set itself up: its data folder {tmp_path / 'data'} cannot be written "
            "(Permission denied). Make it writable (or free some space), then run /xcindex-setup.",
        },
    }


def test_a_cancelled_call_is_never_answered(tmp_path: Path) -> None:
    front, wire = front_for(tmp_path)
    front.feed(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", **CLIENT},
            }
        ),
        0.0,
    )
    wire.take()
    front.feed(line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status"}}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}), 1.0)
    front.tick(WAIT_S * 2)
    assert wire.take() == []
    assert front.waiting == []


def test_the_handover_carries_what_the_real_server_needs(tmp_path: Path) -> None:
    """The real server reads exactly what the front wrote (and from an open descriptor)."""
    front, _ = front_for(tmp_path)
    initialize = {"protocolVersion": "2025-06-18", **CLIENT}
    front.feed(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}), 0.0)
    front.feed(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0.0)
    call = line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "status"}})
    front.feed(call, 0.0)
    received: list[Handover] = []

    def exec_server(program: Path, args: list[str], descriptor: int) -> None:
        assert args == ["serve", "--handover", str(descriptor)]
        received.append(Handover.read(descriptor))

    front.exec_server = exec_server
    front.hand_over(tmp_path / "venv" / "bin" / "xcindex")
    assert received == [
        Handover(
            initialize=initialize,
            initialized=(line({"jsonrpc": "2.0", "method": "notifications/initialized"}),),
            pending=(call,),
        )
    ]
