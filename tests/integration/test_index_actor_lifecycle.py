"""Index actors retire when idle or beyond the Engine's bound, and come back on demand.

Observed the way an operator would: whether the server process still holds the store's
database open (its file descriptors), and whether questions are still answered right.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from tests.conftest import canary_source_count, load_expected
from xcindex.engine import Engine, EngineConfig
from xcindex.indexstore.database import database_path_for

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

# Where UserService is defined (hand-checked), the answer each actor must give.
LINE = next(s["definitionLine"] for s in load_expected("symbols.json") if s["key"] == "UserService")


def database_open(store: Path) -> bool:
    """Whether this process has the store's SQLite database open."""
    database = os.path.realpath(database_path_for(store))
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == database:
                return True
        except OSError:
            continue
    return False


async def until(predicate: object, timeout: float = 20.0) -> None:
    assert callable(predicate)
    with anyio.fail_after(timeout):
        # The file table has no event to wait on: poll it.
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def a_definition_line(engine: Engine, store: Path) -> int:
    """Where UserService is defined, asked by name and then by USR (two real queries)."""
    found = await engine.find_symbol("UserService", index_store_path=str(store))
    usr = found.matches[0].symbol.usr
    answer = await engine.find_definition(usr, index_store_path=str(store))
    assert answer.site is not None
    return answer.site.occurrence.line


async def test_an_idle_index_actor_retires_and_answers_again(canary_store: Path, tmp_path: Path) -> None:
    config = EngineConfig(project_dir=str(tmp_path), index_idle_timeout_s=0.5)
    async with Engine(config) as engine:
        assert await a_definition_line(engine, canary_store) == LINE
        assert database_open(canary_store)
        await until(lambda: not database_open(canary_store))  # retired: its database closed
        assert await a_definition_line(engine, canary_store) == LINE  # started again, transparently
        assert database_open(canary_store)
        state = await engine.index_state(index_store_path=str(canary_store))
        assert state.ready
        assert state.counts is not None
        assert state.counts.live_units == canary_source_count()  # one unit per source file


async def test_beyond_the_bound_the_least_recently_used_index_actor_retires(
    canary_store: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other-store"
    shutil.copytree(canary_store, other)
    config = EngineConfig(project_dir=str(tmp_path), max_index_actors=1)
    async with Engine(config) as engine:
        assert await a_definition_line(engine, canary_store) == LINE
        assert database_open(canary_store)
        assert await a_definition_line(engine, other) == LINE
        assert database_open(other)
        assert not database_open(canary_store), "the least recently used actor retired"
        assert await a_definition_line(engine, canary_store) == LINE
        assert not database_open(other)


async def test_a_busy_index_actor_is_not_retired_for_the_bound(canary_store: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-store"
    shutil.copytree(canary_store, other)
    config = EngineConfig(project_dir=str(tmp_path), max_index_actors=1)
    async with Engine(config) as engine:
        await a_definition_line(engine, canary_store)
        async with engine._core.holding_index(index_store_path=str(canary_store)):
            await a_definition_line(engine, other)  # ingested: idle once answered
            assert database_open(canary_store), "busy: kept beyond the bound"
            assert database_open(other)
        # Idle again: the next actor started retires it.
        await engine.index_state(index_store_path=str(canary_store))
        assert database_open(canary_store)
        assert not database_open(other)
