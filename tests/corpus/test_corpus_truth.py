"""Every index tool on every USR of each corpus package against the independent reader
(tests/truth): find_references, find_definition and find_overrides for every USR the store
holds live occurrences of, find_conformances for every protocol, type_hierarchy one level
up and down for every class, struct, enum and protocol. The expected answers come from the
dump alone (tests/truth/expect.py); the actual ones from the tools' functions on the
Engine's database, in one query per package (tests/bulk_truth.py). 0 discrepancies."""

from __future__ import annotations

import pytest

from tests.bulk_truth import check_call_hierarchies, check_store
from tests.corpus.harness import PACKAGES, prepared, store_of
from tests.scoring import measured
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("name", [*PACKAGES, "swift-atomics"])
async def test_every_tool_on_every_usr_agrees_with_the_independent_dump(name: str) -> None:
    store = store_of(prepared(name))
    async with Engine() as engine:
        result = await check_store(engine, store)
    measured(
        f"truth {name}",
        f"{result.usrs} USRs, {result.sites} reference sites, checks {result.checks}, "
        f"{len(result.discrepancies)} discrepancies, {result.seconds:.1f} s (ingestion included)",
    )
    assert result.discrepancies == [], [
        (d.tool, d.usr, d.expected_only[:3], d.actual_only[:3]) for d in result.discrepancies[:10]
    ]
    assert result.usrs > 1000


@pytest.mark.parametrize("name", [*PACKAGES, "swift-atomics"])
async def test_every_call_hierarchy_agrees_with_the_independent_dump(name: str) -> None:
    """call_hierarchy incoming and outgoing at depth 3 (so levels 1 to 3) for every function,
    method, initializer and accessor each package writes, against tests/truth/expect_calls.py:
    the documented rules written again over the dump. 0 discrepancies; an answer cut at 500
    groups is compared in full at level 1 and on what it lists deeper, a paged one (over 100
    level-1 groups) on what it lists."""
    store = store_of(prepared(name))
    async with Engine() as engine:
        result = await check_call_hierarchies(engine, store, depth=3)
    measured(
        f"call_hierarchy vs dump {name}",
        f"{result.questions} questions, {result.edges} expected sites by level "
        f"{dict(sorted(result.by_level.items()))}, {len(result.cut)} cut at 500 groups, "
        f"{len(result.paged)} paged, "
        f"{len(result.discrepancies)} discrepancies, {result.seconds:.1f} s",
    )
    assert result.discrepancies == [], [
        (d.tool, d.usr, d.expected_only[:3], d.actual_only[:3]) for d in result.discrepancies[:10]
    ]
    assert result.by_level.get(3, 0) > 0
