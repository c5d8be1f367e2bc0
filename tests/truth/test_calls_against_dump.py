"""call_hierarchy against the independent reader, on every function of the fixture, both
directions, at depths 1 to 3: the edges (level, caller, callee, site, dispatch, what the
site resolves to, via dispatch) expect_calls derives from the dump and the documented rules,
no more, no fewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bulk_truth import check_call_hierarchies
from tests.scoring import measured
from tests.truth.expect_calls import Calls, Edge
from tests.truth.store_dump import LiveIndex
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("depth", [1, 2, 3])
async def test_every_call_hierarchy_of_the_fixture_agrees_with_the_dump(
    canary_store: Path, canary_truth: LiveIndex, depth: int
) -> None:
    async with Engine() as engine:
        result = await check_call_hierarchies(engine, canary_store, depth=depth)
    measured(
        f"call_hierarchy vs dump, fixture, depth {depth}",
        f"{result.questions} questions, {result.edges} expected sites {dict(sorted(result.by_level.items()))}, "
        f"{len(result.cut)} cut, {len(result.discrepancies)} discrepancies, {result.seconds:.1f} s",
    )
    assert result.discrepancies == [], [
        (d.tool, d.usr, d.expected_only[:4], d.actual_only[:4]) for d in result.discrepancies[:6]
    ]
    assert result.cut == []
    assert max(result.by_level) == depth


def test_the_dump_says_what_the_fixture_was_written_to_show(canary_truth: LiveIndex) -> None:
    """Not vacuous: the expectations hold the cases the rules are about, as the dump states
    them (a static requirement called without `dynamic`, receivers that rule out an
    implementation, a protocol extension's static method)."""
    calls = Calls(canary_truth)
    doubling = next(u for u in canary_truth.symbols if "8DoublingO5scale" in u)
    tripling = next(u for u in canary_truth.symbols if "8TriplingO5scale" in u)
    incoming = calls.hierarchy(doubling, "incoming", 1)
    callers = {canary_truth.symbols[e.caller].name for e in incoming}
    # `T.scale` in scaled(_:_:) runs Doubling's; `Self.scale` in `extension Repeating` cannot.
    assert callers == {"scaled(_:_:)"}, incoming
    assert {e.dispatch for e in incoming} == {"dynamic"}
    assert {canary_truth.symbols[e.caller].name for e in calls.hierarchy(tripling, "incoming", 1)} == {
        "scaled(_:_:)",
        "repeated(_:)",
    }
    # Tripling.repeated(2) names a protocol extension's method: a static call.
    repeated = next(u for u in canary_truth.symbols if "9RepeatingPAAE8repeated" in u)
    assert {e.dispatch for e in calls.hierarchy(repeated, "incoming", 1)} == {"static"}
    assert all(isinstance(e, Edge) for e in incoming)
