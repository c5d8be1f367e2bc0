"""Shutdown: stdin EOF, SIGTERM and SIGINT each end the server, and every child with it.

The children are found in the process table by the tag in their environment (they run in
sessions of their own, so a process group would miss them, and once orphaned their parent
is no longer the server): the ingestion workers, sourcekit-lsp and whatever it started
(swift-build, swift-frontend). Each way out is tried on both backends with the server at
rest (idle workers and a sourcekit-lsp child alive), and on asyncio in the middle of a cold
ingestion of the 600-file store (EOF and SIGTERM: SIGINT takes SIGTERM's path). The only
clock here is the generous bound on the exit.
"""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import pytest

from tests.conftest import CANARY, load_expected
from tests.reliability.harness import (
    RawServer,
    descendants_of,
    describe,
    interpreter_or,
    names,
    new_tag,
    server_env,
    tagged_processes,
    untagged_among,
)

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

EXIT_WITHIN = 20.0
"""Seconds: the server's own stop sequence waits at most a few seconds per child."""

WAYS_OUT = ["stdin-eof", "sigterm", "sigint"]


def cold_cache_with_warm_lsp(tmp_path: Path, warm_cache: Path) -> Path:
    """A cache whose database is cold (so ingestion workers start) but whose sourcekit-lsp
    scratch build is the session's warm one (so a plan_rename takes seconds, not a build)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (warm_cache / "sourcekit-lsp").mkdir(exist_ok=True)
    (cache / "sourcekit-lsp").symlink_to(warm_cache / "sourcekit-lsp")
    return cache


async def end(server: RawServer, how: str) -> int:
    """End the server the given way; returns its exit status (fails past the bound)."""
    if how == "stdin-eof":
        await server.close_stdin()
    else:
        server.signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
    assert server.process is not None
    with anyio.fail_after(EXIT_WITHIN):
        return await server.process.wait()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("how", WAYS_OUT)
async def test_a_server_at_rest_ends_with_all_its_children(
    canary_store: Path, warm_cache: Path, tmp_path: Path, how: str, backend: str
) -> None:
    tag = new_tag()
    env = server_env(
        cold_cache_with_warm_lsp(tmp_path, warm_cache), tag, {"CLAUDE_PROJECT_DIR": str(tmp_path)}
    )
    async with RawServer(env, ("--backend", backend), log_file=tmp_path / "server.log") as server:
        await server.initialize()
        found = await server.call_tool(
            "find_symbol", {"symbolName": "UserService", "projectPath": str(CANARY)}
        )
        [symbol] = found["structuredContent"]["results"]
        plan = await server.call_tool(
            "plan_rename", {"usr": symbol["usr"], "newName": "AccountService", "projectPath": str(CANARY)}
        )
        renamed = load_expected("rename.json")["UserService"]  # AccountService, hand-checked
        assert plan["structuredContent"]["summary"]["green_verified"] == len(renamed["ranges"]), plan[
            "structuredContent"
        ]["warnings"]
        children = descendants_of(server.pid)
        assert {"python", "sourcekit-lsp"} <= {interpreter_or(p.comm) for p in children}, names(children)
        untagged = untagged_among(children, tag)
        assert untagged == [], (
            f"every child carries the tag the survivors are found by:\n{describe(untagged)}"
        )

        status = await end(server, how)

        assert status == 0, f"{how}: exit status {status}\n{(tmp_path / 'server.log').read_text()[-3000:]}"
        survivors = tagged_processes(tag)
        assert survivors == [], f"{how} on {backend}: survived the server: {names(survivors)}"


@pytest.mark.parametrize("how", ["stdin-eof", "sigterm"])
async def test_a_server_in_the_middle_of_a_cold_ingestion_ends_with_all_its_children(
    bulk_store: Path, tmp_path: Path, how: str
) -> None:
    tag = new_tag()
    env = server_env(tmp_path / "cache", tag, {"CLAUDE_PROJECT_DIR": str(tmp_path)})
    async with RawServer(env, log_file=tmp_path / "server.log") as server:
        await server.initialize()
        request = await server.start_tool_call(
            "find_symbol", {"symbolName": "Node5", "indexStorePath": str(bulk_store)}, progress_token="cold"
        )
        while True:
            message = await server.receive()
            assert message.get("id") != request, "the ingestion finished before a progress notification"
            params = message.get("params", {})
            if message.get("method") == "notifications/progress" and 0 < params["progress"] < (
                params["total"] or 0
            ):
                break
        workers = [p for p in descendants_of(server.pid) if interpreter_or(p.comm) == "python"]
        assert workers, "the ingestion workers are running"

        status = await end(server, how)

        assert status == 0, f"{how}: exit status {status}\n{(tmp_path / 'server.log').read_text()[-3000:]}"
        survivors = tagged_processes(tag)
        assert survivors == [], f"{how} during an ingestion: survived the server: {names(survivors)}"
