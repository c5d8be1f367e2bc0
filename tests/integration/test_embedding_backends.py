"""The Engine embedded in a plain asyncio program and in a plain trio program."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.conftest import canary_path, load_expected
from xcindex.engine import Engine

pytestmark = pytest.mark.toolchain


async def ask(store: Path) -> list[dict[str, Any]]:
    async with Engine() as engine:
        symbol = await engine.find_symbol("fetchUser(id:)", index_store_path=str(store))
        refs = await engine.find_references(usr=symbol.matches[0].symbol.usr, index_store_path=str(store))
        return [dict(symbol.to_json()), dict(refs.to_json())]


def test_asyncio_run_and_trio_run_give_the_same_answer(canary_store: Path) -> None:
    from_asyncio = asyncio.run(ask(canary_store))
    from_trio = trio.run(ask, canary_store)
    assert from_asyncio == from_trio
    assert from_asyncio[0]["results"][0]["name"] == "fetchUser(id:)"
    want = [
        (canary_path(site["path"]), site["line"], site["column"])
        for site in load_expected("references.json")["UserService.fetchUser(id:)"]
    ]
    got = [(site["path"], site["line"], site["column"]) for site in from_asyncio[1]["results"]]
    assert (from_asyncio[1]["totalCount"], sorted(got)) == (len(want), sorted(want))


def test_an_error_inside_the_engine_block_reaches_the_caller_unwrapped(canary_store: Path) -> None:
    async def fail() -> None:
        async with Engine() as engine:
            await engine.find_symbol("UserService", index_store_path=str(canary_store))
            raise KeyError("the host's own error")

    with pytest.raises(KeyError, match="the host's own error"):
        asyncio.run(fail())
    with pytest.raises(KeyError, match="the host's own error"):
        trio.run(fail)
