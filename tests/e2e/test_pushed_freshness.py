"""Pushed freshness through the real `xcindex serve`: the status resource tells its
subscribers when a rebuild lands (once) or the session's edits change, and wait_for_fresh
returns when the files an agent names are fresh, on both anyio backends.

Each test edits and rebuilds a private copy of the fixture (built once for the module).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import ResourceUpdatedNotification, TextResourceContents

from tests.conftest import CANARY, build_package, copy_package, swift_executable
from tests.reliability.harness import RawServer

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

XCINDEX = Path(sys.executable).parent / "xcindex"
SETTLE_S = 3.0
"""The server's quiet period before a store change counts (EngineConfig.watch_settle_s)."""
QUIET_S = SETTLE_S + 2
"""How long a test listens for an update that must not come: a second one would follow the
store's last change by the quiet period (no event marks an update that never comes)."""
EDITED = "Sources/CanaryCore/Greeter.swift"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = copy_package(CANARY, tmp_path_factory.mktemp("pushed") / "SwiftCanary")
    build_package(copy)
    return copy


@pytest.fixture
def session_tmp(tmp_path: Path) -> Path:
    """The TMPDIR of the server and of the hooks: where the session ledger lives."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def server(package: Path, session_tmp: Path, backend: str, *, overlay: bool = True) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", "--backend", backend],
        env={
            "XCINDEX_CACHE_DIR": os.environ["XCINDEX_CACHE_DIR"],
            "PATH": os.environ["PATH"],
            "CLAUDE_PROJECT_DIR": str(package),
            "TMPDIR": f"{session_tmp}/",
            "XCINDEX_OVERLAY": "1" if overlay else "0",
        },
    )


def raw_server(package: Path, session_tmp: Path, backend: str, *, overlay: bool) -> RawServer:
    """The same server, spoken to line by line (to know when it has read a request)."""
    parameters = server(package, session_tmp, backend, overlay=overlay)
    assert parameters.env is not None
    return RawServer(dict(parameters.env), ("--backend", backend), reply_within=300)


async def heard(event: anyio.Event, within: float, what: str) -> None:
    """Wait for `event`, failing clearly if `what` did not come within `within` seconds."""
    with anyio.move_on_after(within) as scope:
        await event.wait()
    if scope.cancelled_caught:
        pytest.fail(f"{what} did not come within {within:.0f} s")


def unit_times(package: Path) -> dict[str, int]:
    """The modification time of every unit file of the package's store."""
    units = next((package / ".build").glob("*-unknown-linux-gnu/debug/index/store")) / "v5" / "units"
    return {path.name: path.stat().st_mtime_ns for path in units.iterdir()}


def project_uri(package: Path) -> str:
    return "xcindex://status?projectPath=" + urllib.parse.quote(str(package), safe="/")


class Updates:
    """The resources/updated notifications a client received, with their arrival times."""

    def __init__(self) -> None:
        self.received: list[tuple[float, str]] = []
        self.first = anyio.Event()
        self.second = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.received.append((time.monotonic(), message.params.uri))
            self.first.set()
            if len(self.received) >= 2:
                self.second.set()

    def uris(self) -> list[str]:
        return [uri for _, uri in self.received]


@pytest.fixture
async def legacy_client(
    package: Path, session_tmp: Path, anyio_backend: str
) -> AsyncIterator[tuple[Client, Updates]]:
    """A client on the handshake-era protocol (what Claude Code speaks): resources/subscribe.
    The overlay is off: an edit then stays unindexed (each test says what it does)."""
    updates = Updates()
    async with Client(
        server(package, session_tmp, anyio_backend, overlay=False),
        mode="legacy",
        message_handler=updates,
        read_timeout_seconds=300,
    ) as client:
        yield client, updates


async def subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # removed in 2026-07-28, current before
        await client.session.subscribe_resource(uri)


async def read_status(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    [content] = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "application/json"
    status: dict[str, Any] = json.loads(content.text)
    return status


async def ingested_status(client: Client, uri: str, within: float = 120.0) -> dict[str, Any]:
    """The status once the server's first ingestion of the store is over: a new server's
    status answers at once, `indexing`, while it runs (there is no event to wait on)."""
    with anyio.move_on_after(within):
        while (status := await read_status(client, uri))["completeness"] == "indexing":  # noqa: ASYNC110
            await anyio.sleep(0.2)
        return status
    pytest.fail(f"the first ingestion of {uri} did not end within {within:.0f} s")


async def edit_and_rebuild(package: Path) -> float:
    """Change a source file and rebuild; returns when the build ended (monotonic)."""
    with (package / EDITED).open("a", encoding="utf-8") as source:
        source.write(f"// edited at {time.time()}\n")
    await anyio.run_process(
        [swift_executable(), "build", "--build-tests", "--package-path", str(package)],
        check=True,
    )
    return time.monotonic()


async def test_a_rebuild_sends_exactly_one_update_and_the_status_then_shows_it(
    legacy_client: tuple[Client, Updates], package: Path
) -> None:
    client, updates = legacy_client
    uri = project_uri(package)
    before = await ingested_status(client, uri)
    assert before["completeness"] == "complete"
    await subscribe(client, uri)
    # The subscription is in place once answered (the server notes the status it reports
    # changes from before answering). Silence is the behaviour here: a spurious update
    # would come at the watch's first look (it polls every 0.5 s), so 1.5 s of nothing.
    await anyio.sleep(1.5)
    assert updates.uris() == [], "nothing changed, nothing to say"

    units_before = unit_times(package)
    built = await edit_and_rebuild(package)
    rewritten = sum(1 for name, mtime in unit_times(package).items() if units_before.get(name) != mtime)
    await heard(updates.first, SETTLE_S + 15, "the update for the rebuild")
    await anyio.sleep(QUIET_S)  # a second update, if there were one, would come by now
    assert updates.uris() == [uri]
    assert updates.received[0][0] - built < SETTLE_S + 5

    after = await read_status(client, uri)
    assert after["completeness"] == "complete"
    assert after["indexMtime"] >= before["indexMtime"]
    # The rebuild was taken in: every unit file it rewrote (those whose time changed on disk)
    # read again, or (a comment changes no index data) found alike and given its new time.
    assert rewritten > 0
    assert after["lastRefresh"]["unitsRead"] + after["lastRefresh"]["unitsUnchanged"] == rewritten


async def test_a_listen_stream_hears_the_rebuild_once_on_the_2026_protocol(
    package: Path, session_tmp: Path, anyio_backend: str
) -> None:
    uri = project_uri(package)
    overlay_off = server(package, session_tmp, anyio_backend, overlay=False)
    async with Client(overlay_off, read_timeout_seconds=300) as client:
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri]
            events: list[Any] = []
            first = anyio.Event()

            async def collect() -> None:
                async for event in subscription:
                    events.append(event)
                    first.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(collect)
                await edit_and_rebuild(package)
                await heard(first, SETTLE_S + 15, "the event for the rebuild")
                await anyio.sleep(QUIET_S)  # a second event, if there were one, would come by now
                tg.cancel_scope.cancel()
        assert [event.uri for event in events] == [uri]
        assert (await read_status(client, uri))["completeness"] == "complete"


async def test_an_edit_recorded_by_the_hook_is_an_update_of_the_projects_status(
    legacy_client: tuple[Client, Updates], package: Path, session_tmp: Path
) -> None:
    client, updates = legacy_client
    await subscribe(client, "xcindex://status")  # in place once answered
    edited = package / "Sources/CanaryCore/Box.swift"
    # The edit itself (newer than its unit, with other content; the overlay is off, so it
    # stays unindexed).
    indexed, content = edited.stat(), edited.read_bytes()
    edited.write_bytes(content + b"\n// an edit\n")
    os.utime(edited, ns=(indexed.st_atime_ns, time.time_ns()))
    try:
        await _recorded_edit_updates_status(client, updates, package, session_tmp, edited)
    finally:
        edited.write_bytes(content)
        os.utime(edited, ns=(indexed.st_atime_ns, indexed.st_mtime_ns))


async def _recorded_edit_updates_status(
    client: Client, updates: Updates, package: Path, session_tmp: Path, edited: Path
) -> None:
    payload = json.dumps(
        {"tool_name": "Edit", "tool_input": {"file_path": str(edited)}, "cwd": str(package)}
    ).encode()
    hook = await anyio.run_process(
        [str(XCINDEX), "hook", "post-tool-use"],
        input=payload,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(package), "TMPDIR": f"{session_tmp}/"},
        check=True,
    )
    assert b"was edited" in hook.stdout
    recorded = time.monotonic()
    await heard(updates.first, 10, "the update for the recorded edit")
    assert updates.uris() == ["xcindex://status"]
    assert updates.received[0][0] - recorded < SETTLE_S  # at once, not after a quiet period
    status = await read_status(client, "xcindex://status")
    assert status["sessionEditedFiles"] == [str(edited.resolve())]
    assert status["indexStorePath"].startswith(str(package))


async def test_resources_name_the_status_of_the_project_and_refuse_what_is_not_one(
    legacy_client: tuple[Client, Updates], package: Path, tmp_path: Path
) -> None:
    client, _ = legacy_client
    listed = await client.list_resources()
    assert [r.uri for r in listed.resources] == ["xcindex://status"]
    templates = await client.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "xcindex://status{?projectPath,indexStorePath}"
    ]
    await client.call_tool("status", {"projectPath": str(package)})
    listed = await client.list_resources()
    assert [r.uri for r in listed.resources] == ["xcindex://status", project_uri(package)]

    (tmp_path / "Package.swift").write_text("// swift-tools-version:5.9\n", encoding="utf-8")
    unbuilt = "xcindex://status?projectPath=" + urllib.parse.quote(str(tmp_path))
    for uri, message in [
        (unbuilt, "Build it first: swift build --build-tests"),
        ("xcindex://elsewhere", "xcindex offers xcindex://status"),
        ("xcindex://status?project=/x", "Unknown parameter 'project'"),
    ]:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri)
        assert message in raised.value.error.message, uri


async def test_wait_for_fresh_returns_when_the_rebuild_covers_the_files(
    package: Path, session_tmp: Path, anyio_backend: str
) -> None:
    # Without the freshness overlay, which would make the edited file fresh at once (the
    # next test): here only the rebuild can. Spoken to line by line, so that the rebuild
    # starts only once the server has read the waiting call.
    async with raw_server(package, session_tmp, anyio_backend, overlay=False) as client:
        await client.initialize()
        await _wait_for_the_rebuild(client, package)


async def _wait_for_the_rebuild(client: RawServer, package: Path) -> None:
    edited = str(package / EDITED)
    where = {"projectPath": str(package)}
    with (package / EDITED).open("a", encoding="utf-8") as source:
        source.write(f"// edited at {time.time()}\n")

    early = await client.call_tool("wait_for_fresh", {"files": [edited], "timeoutSeconds": 1, **where})
    assert not early.get("isError")
    assert early["structuredContent"]["timedOut"] is True
    assert early["structuredContent"]["files"] == [{"path": edited, "state": "stale", "sessionEdited": False}]
    [text] = early["content"]
    assert text["type"] == "text"
    assert text["text"].startswith("Timed out after 1.")

    waiting = await client.start_tool_call(
        "wait_for_fresh", {"files": [edited], "timeoutSeconds": 300, **where}
    )
    started = time.monotonic()
    # The server reads its input in order and starts each call as it reads it: once the
    # ping after it is answered, the waiting call is in.
    await client.send({"jsonrpc": "2.0", "id": "in", "method": "ping"})
    while (message := await client.receive()).get("id") != "in" or "method" in message:
        assert message.get("id") != waiting, f"wait_for_fresh answered before the rebuild: {message}"
    await anyio.run_process(
        [swift_executable(), "build", "--build-tests", "--package-path", str(package)], check=True
    )
    answer = (await client.response_to(waiting))["result"]["structuredContent"]
    waited = time.monotonic() - started
    assert answer["fresh"] is True
    assert answer["timedOut"] is False
    assert waited < 120

    missing = str(package / "Sources/CanaryCore/NotThere.swift")
    new = package / "Sources/CanaryCore/BrandNew.swift"
    new.write_text("public let brandNew = 1\n", encoding="utf-8")
    mixed = await client.call_tool(
        "wait_for_fresh", {"files": [missing, str(new)], "timeoutSeconds": 0, **where}
    )
    states = {f["path"]: f["state"] for f in mixed["structuredContent"]["files"]}
    assert states == {missing: "missing", str(new): "not_indexed"}
    new.unlink()

    relative = await client.call_tool("wait_for_fresh", {"files": ["Sources/A.swift"], **where})
    assert relative["isError"] is True
    assert relative["content"][0]["text"] == "Error: 'files' must be absolute paths; got 'Sources/A.swift'."


async def test_an_edit_is_fresh_without_a_build_and_its_overlay_is_an_update(
    package: Path, session_tmp: Path, anyio_backend: str
) -> None:
    updates = Updates()
    params = server(package, session_tmp, anyio_backend, overlay=True)
    async with Client(params, mode="legacy", message_handler=updates, read_timeout_seconds=300) as client:
        await _edit_recorded_then_reindexed(client, updates, package, session_tmp)


async def _edit_recorded_then_reindexed(
    client: Client, updates: Updates, package: Path, session_tmp: Path
) -> None:
    where = {"projectPath": str(package)}
    uri = project_uri(package)
    assert (await ingested_status(client, uri))["completeness"] == "complete"
    await subscribe(client, uri)  # in place once answered
    edited = package / "Sources/CanaryCore/Box.swift"
    original = edited.read_text(encoding="utf-8")
    try:
        edited.write_text("// moved down a line\n" + original, encoding="utf-8")
        payload = json.dumps(
            {"tool_name": "Edit", "tool_input": {"file_path": str(edited)}, "cwd": str(package)}
        ).encode()
        await anyio.run_process(
            [str(XCINDEX), "hook", "post-tool-use"],
            input=payload,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(package), "TMPDIR": f"{session_tmp}/"},
            check=True,
        )
        # The ledger's edit is one update at once; the overlay landing in the background
        # (after its quiet period) is another, with nobody asking.
        await heard(updates.second, 60, "the second update (the overlay landing)")
        assert updates.uris() == [uri, uri]
        status = await read_status(client, uri)
        assert status["overlayFiles"] == [str(edited)]
        assert status["completeness"] == "complete"
        fresh = await client.call_tool(
            "wait_for_fresh", {"files": [str(edited)], "timeoutSeconds": 0, **where}
        )
        assert fresh.structured_content is not None
        assert fresh.structured_content["fresh"] is True
    finally:
        edited.write_text(original, encoding="utf-8")
        # The next tests (the other backend) start from a fresh index.
        await anyio.run_process(
            [swift_executable(), "build", "--build-tests", "--package-path", str(package)], check=True
        )


async def test_a_file_edited_from_a_shell_is_one_update_once_it_is_reindexed(
    package: Path, session_tmp: Path, anyio_backend: str
) -> None:
    """No hook, no ledger: the project's watch sees the edit, the overlay re-indexes the file
    in the background, and that is one update of the project's status."""
    uri = project_uri(package)
    edited = package / "Sources/CanaryCore/Box.swift"
    original = edited.read_bytes()
    updates = Updates()
    params = server(package, session_tmp, anyio_backend, overlay=True)
    try:
        async with Client(params, mode="legacy", message_handler=updates, read_timeout_seconds=300) as client:
            await ingested_status(client, uri)
            await subscribe(client, uri)
            edited.write_bytes(original + b"// edited from a shell\n")
            await heard(updates.first, 30, "the update for the file re-indexed on its own")
            await anyio.sleep(QUIET_S)  # a second update, if there were one, would come by now
            assert updates.uris() == [uri]
            status = await read_status(client, uri)
            assert status["completeness"] == "complete", status["summary"]
            assert status["overlayFiles"] == [str(edited)]
    finally:
        edited.write_bytes(original)
        await anyio.run_process(
            [swift_executable(), "build", "--build-tests", "--package-path", str(package)]
        )
