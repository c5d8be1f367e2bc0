"""plan_rename's sourcekit-lsp reads the package's own build (its index store and modules,
through a view in xcindex's cache: lsp/build_view.py) instead of indexing the package again,
and is never taken at its word, read from that store, on a file changed since the build."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import build_package, index_store_of, load_expected
from xcindex.engine import Engine
from xcindex.indexstore.cache import cache_dir
from xcindex.vocabulary import Tier

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

FETCH_USER = "UserService.fetchUser(id:)"
FEATURE_TESTS = "Tests/CanaryCoreTests/FeatureTests.swift"
CALL = "    let name = service.fetchUser(id: 7)\n"
IN_A_STRING = '    let name = "legacy.fetchUser(id: 7)"\n'
"""The call turned into a string: `fetchUser` stays at the column where the build indexed the
call (24), so the build's store, read as it is, points at the name's bytes in the string."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    async with Engine() as running:
        yield running


def rel(path: str, root: Path) -> str:
    return str(Path(path).relative_to(root))


async def usr_of(engine: Engine, root: Path) -> str:
    found = await engine.find_symbol(FETCH_USER, project_path=str(root))
    assert found.resolved is not None
    return found.resolved.symbol.usr


async def test_reconciliation_reads_the_build_and_keeps_what_it_writes_in_the_cache(
    engine: Engine, canary_copy: Path
) -> None:
    build_package(canary_copy)
    plan = await engine.plan_rename(
        await usr_of(engine, canary_copy), "loadUser", project_path=str(canary_copy)
    )
    expected = load_expected("rename.json")[FETCH_USER]["ranges"]
    assert plan.summary()["green_verified"] == len(expected)
    assert plan.warnings == ()
    # sourcekit-lsp read the build's store through a view in the cache and keeps its database
    # there; it indexed nothing itself (its own index would be a store folder of its own).
    scratch = cache_dir() / "sourcekit-lsp"
    stores = list(scratch.glob("*/*/debug/index/store"))
    read = [s for s in stores if s.resolve() == index_store_of(canary_copy).resolve()]
    assert len(read) == 1
    assert read[0].is_symlink()
    assert list((read[0].parent / "db").iterdir()), "sourcekit-lsp opened its database in the view"
    assert [s for s in stores if not s.is_symlink()] == []


async def test_a_file_changed_since_the_build_is_not_confirmed_from_the_builds_store(
    engine: Engine, canary_copy: Path
) -> None:
    build_package(canary_copy)
    usr = await usr_of(engine, canary_copy)
    changed = canary_copy / FEATURE_TESTS
    text = changed.read_text(encoding="utf-8")
    assert CALL in text
    # Edited from a shell after the build: the overlay re-indexes the file as it is now (no
    # reference left in it), while the build's store still has the call at line 7, column 24.
    changed.write_text(text.replace(CALL, IN_A_STRING), encoding="utf-8")

    plan = await engine.plan_rename(usr, "loadUser", project_path=str(canary_copy))

    expected = load_expected("rename.json")[FETCH_USER]["ranges"]
    want = {(r["path"], r["line"], r["column"]) for r in expected if r["path"] != FEATURE_TESTS}
    assert {(rel(r.path, canary_copy), r.line, r.column) for r in plan.ranges} == want
    assert {r.tier for r in plan.ranges} == {Tier.GREEN_VERIFIED}
    assert plan.warnings == ()
    # The string is a text mention for a person to look at, never a range to edit.
    assert [(rel(m.path, canary_copy), m.line) for m in plan.text_mentions] == [(FEATURE_TESTS, 7)]
