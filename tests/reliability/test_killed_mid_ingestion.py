"""Killed mid-ingestion: the next start recovers, and nothing half-ingested counts as done.

Two ways to die. The real server is SIGKILLed while a cold ingestion of a 600-file store is
under way (the moment is an event, the first progress notification for a written batch, not
a timer); the database it leaves must show a partial ingestion, and a restart must end with
exactly what a clean ingestion builds. And, deterministically, an ingestion is killed at
each step that commits, including the narrow window between writing units and deciding
which are live, on a cold and on an incremental refresh; the restarted server must answer
the hand-checked questions exactly.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, canary_source_count, load_expected
from tests.reliability.harness import (
    RawServer,
    database_integrity,
    interpreter_or,
    names,
    new_tag,
    result_text,
    server_env,
    tagged_processes,
    wait_for_no_tagged_processes,
)

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

COUNTED = ("units", "records", "symbols", "occurrences", "relations")


def table_counts(cache: Path) -> dict[str, int]:
    [database] = cache.glob("*.sqlite")
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        counts = {
            table: int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in COUNTED
        }
        counts["live"] = int(connection.execute("SELECT count(*) FROM units WHERE live = 1").fetchone()[0])
        return counts
    finally:
        connection.close()


def env_for(cache: Path, tag: str, project: Path) -> dict[str, str]:
    return server_env(cache, tag, {"CLAUDE_PROJECT_DIR": str(project)})


async def first_answer(cache: Path, project: Path, store: Path, symbol: str) -> dict[str, Any]:
    """Start a server on `cache`, ask find_symbol, then status; return both (server ends)."""
    async with RawServer(env_for(cache, new_tag(), project)) as server:
        await server.initialize()
        found = await server.call_tool("find_symbol", {"symbolName": symbol, "indexStorePath": str(store)})
        status = await server.call_tool("status", {"indexStorePath": str(store)})
    return {"found": found, "status": status}


async def test_sigkill_during_a_cold_ingestion_then_a_restart_recovers(
    bulk_store: Path, tmp_path: Path
) -> None:
    cache, tag = tmp_path / "cache", new_tag()
    async with RawServer(env_for(cache, tag, tmp_path)) as server:
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
        server.signal(signal.SIGKILL)
        assert server.process is not None
        await server.process.wait()
    # The workers notice their parent is gone (their stdin closes) and exit.
    assert await wait_for_no_tagged_processes(tag, within=20) == []

    killed = table_counts(cache)
    assert killed["units"] == 0, "units are written only after all of their records"
    assert killed["records"] > 0, "the kill landed after a batch of records was committed"
    assert set(database_integrity(cache).values()) == {"ok"}

    recovered = await first_answer(cache, tmp_path, bulk_store, "Node5")
    clean_cache = tmp_path / "clean-cache"
    clean = await first_answer(clean_cache, tmp_path, bulk_store, "Node5")
    assert (
        recovered["found"]["structuredContent"]["results"] == clean["found"]["structuredContent"]["results"]
    )
    [node] = recovered["found"]["structuredContent"]["results"]
    assert (Path(node["definitionPath"]).name, node["definitionLine"]) == ("Node5.swift", 1)
    assert recovered["status"]["structuredContent"]["completeness"] == "complete"
    assert recovered["status"]["structuredContent"]["unreadable"] == []
    assert table_counts(cache) == table_counts(clean_cache)
    assert killed["records"] < table_counts(clean_cache)["records"]


DIE_BEFORE = r"""
import os, signal, sys
import anyio
from xcindex.engine import Engine, EngineConfig
from xcindex.indexstore import database

store, step, project = sys.argv[1:4]
original = getattr(database.Database, step)

def die(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

setattr(database.Database, step, die)

async def main():
    async with Engine(EngineConfig(project_dir=project)) as engine:
        await engine.find_symbol("UserService", index_store_path=store)

anyio.run(main)
sys.exit(3)
"""


def ingest_and_die_before(step: str, store: Path, cache: Path, project: Path) -> None:
    """Run an ingestion (the Engine the server runs) that SIGKILLs itself just before `step`."""
    env = {**os.environ, "XCINDEX_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", DIE_BEFORE, str(store), step, str(project)],
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, f"{step} was never reached: {done.stderr.decode()[-2000:]}"


async def hand_checked_answers_hold(cache: Path, project: Path, store: Path) -> None:
    """A fresh server on `cache` answers every hand-checked reference question exactly."""
    symbols = {entry["key"]: entry for entry in load_expected("symbols.json")}
    async with RawServer(env_for(cache, new_tag(), project)) as server:
        await server.initialize()
        for key, expected in load_expected("references.json").items():
            entry = symbols[key]
            found = await server.call_tool(
                "find_symbol", {"symbolName": entry["name"], "indexStorePath": str(store)}
            )
            [usr] = [
                r["usr"]
                for r in found["structuredContent"]["results"]
                # SDK symbols the project uses are candidates too, with no source here.
                if r["definitionPath"] is not None
                and (Path(r["definitionPath"]).name, r["definitionLine"])
                == (Path(entry["definitionPath"]).name, entry["definitionLine"])
            ]
            refs = await server.call_tool(
                "find_references", {"usr": usr, "maxResults": 500, "indexStorePath": str(store)}
            )
            assert not refs.get("isError"), result_text(refs)
            got = {
                (str(Path(r["path"]).relative_to(CANARY.resolve())), r["line"], r["column"])
                for r in refs["structuredContent"]["results"]
            }
            assert got == {(e["path"], e["line"], e["column"]) for e in expected}, key
        status = await server.call_tool("status", {"indexStorePath": str(store)})
        assert status["structuredContent"]["completeness"] == "complete"
        assert status["structuredContent"]["counts"]["liveUnits"] == canary_source_count()


@pytest.mark.parametrize("step", ["replace_units", "recompute_live_units", "collect_garbage"])
async def test_a_cold_ingestion_killed_before_each_commit_recovers(
    canary_store: Path, tmp_path: Path, step: str
) -> None:
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    ingest_and_die_before(step, store, tmp_path / "cache", tmp_path)
    assert set(database_integrity(tmp_path / "cache").values()) == {"ok"}
    await hand_checked_answers_hold(tmp_path / "cache", tmp_path, store)


@pytest.mark.parametrize("step", ["replace_units", "recompute_live_units"])
async def test_an_incremental_refresh_killed_before_each_commit_recovers(
    canary_store: Path, tmp_path: Path, step: str
) -> None:
    """A file's unit appears (as a build writes it) and the refresh taking it in is killed."""
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    held = tmp_path / "held"
    held.mkdir()
    for unit in (store / "v5" / "units").glob("Greeter.swift.o-*"):
        unit.rename(held / unit.name)
    cache = tmp_path / "cache"
    before = await first_answer(cache, tmp_path, store, "Greeter")
    assert before["found"]["structuredContent"]["results"] == []
    for unit in held.iterdir():
        unit.rename(store / "v5" / "units" / unit.name)
    os.utime(store / "v5" / "units")
    ingest_and_die_before(step, store, cache, tmp_path)
    await hand_checked_answers_hold(cache, tmp_path, store)


async def test_no_child_outlives_a_sigkilled_server(
    canary_store: Path, warm_cache: Path, tmp_path: Path
) -> None:
    """SIGKILL leaves no chance to clean up: the children must notice on their own (their
    stdin closes) and go, sourcekit-lsp with the helpers it started."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (warm_cache / "sourcekit-lsp").mkdir(exist_ok=True)
    (cache / "sourcekit-lsp").symlink_to(warm_cache / "sourcekit-lsp")
    tag = new_tag()
    async with RawServer(env_for(cache, tag, tmp_path)) as server:
        await server.initialize()
        found = await server.call_tool(
            "find_symbol", {"symbolName": "UserService", "projectPath": str(CANARY)}
        )
        usr = found["structuredContent"]["results"][0]["usr"]
        await server.call_tool("plan_rename", {"usr": usr, "newName": "Renamed", "projectPath": str(CANARY)})
        assert {"python", "sourcekit-lsp"} <= {interpreter_or(p.comm) for p in tagged_processes(tag)}
        server.signal(signal.SIGKILL)
        assert server.process is not None
        await server.process.wait()
    survivors = await wait_for_no_tagged_processes(tag, within=20)
    assert survivors == [], names(survivors)
