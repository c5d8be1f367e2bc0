"""Every index tool on every USR of the fixture against the independent reader: 0
discrepancies (tests/bulk_truth.py; the rules in tests/truth/expect.py). The corpus packages
get the same in tests/corpus/test_corpus_truth.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bulk_truth import check_store
from tests.truth import expect
from tests.truth.store_dump import LiveIndex
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_every_tool_on_every_fixture_usr_agrees_with_the_dump(
    canary_store: Path, canary_truth: LiveIndex
) -> None:
    async with Engine() as engine:
        result = await check_store(engine, canary_store)
    assert result.discrepancies == [], result.discrepancies[:5]
    assert result.usrs == len(canary_truth.occurrences) > 700
    assert result.checks["conformances"] >= 20
    # Not vacuous: the dump's own answers include witnesses recorded only at conformances,
    # one of them an SDK member anchored there (ImplicitCases.swift:26, `extension Double`).
    witnessed = [
        o for usr in canary_truth.occurrences for o in expect.overrides(canary_truth, usr) if o.conformances
    ]
    assert any(o.anchor in {where for where, _type in o.conformances} for o in witnessed)
    assert len(witnessed) >= 4
