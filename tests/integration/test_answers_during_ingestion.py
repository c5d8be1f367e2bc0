"""Answers during a first ingestion: a call does not wait for the end of a long first
ingestion; it answers from the files ingested so far, says `indexing` with honest progress,
and never names a site the complete answer would not; once the ingestion ends, answers are
complete and equal to a cold cache's.

The store is the benchmark's S package (real build, real libIndexStore). Its ingestion is
held open by the fakes here, `XCINDEX_TEST_SLOW_INGEST_S` (the worker sleeps before each
batch of records) and a finish held open (the end of the ingestion, after its records, waits
before making the units live): a store big enough to take that long on its own takes many
minutes to build on a small machine. One worker, so batches land one after another.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import anyio
import pytest

from bench.build import BuiltPackage, bench_dir, prepare_package
from tests.scoring import measured
from xcindex import Engine, EngineConfig, FindSymbolAnswer, SitesAnswer
from xcindex.indexstore.worker import SLOW_INGEST_ENV
from xcindex.indexstore.writer import WriteSide
from xcindex.vocabulary import Completeness, WarningCode

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

SLOW_BATCH_S = 1.5
BOUND_S = 0.3
PROGRESS = re.compile(
    r"\((?:(\d+) of (\d+) records ingested(, finishing)?|reading its units); (\d+) source files answerable"
)


@pytest.fixture(scope="module")
def s_package() -> BuiltPackage:
    return prepare_package("S", bench_dir() / "tests")


def sites(answer: SitesAnswer) -> set[tuple[str, int, int]]:
    return {(s.occurrence.path, s.occurrence.line, s.occurrence.column) for s in answer.sites}


def progress_of(answer: SitesAnswer | FindSymbolAnswer) -> tuple[int, int, int]:
    [warning] = [w for w in answer.freshness.warnings if w.code is WarningCode.INDEX_FIRST_INGESTION_RUNNING]
    match = PROGRESS.search(warning.message)
    assert match is not None, warning.message
    done, total, finishing, files = match.groups()
    # Every record in, the ingestion still running (its indexes being built) says so.
    assert (finishing is not None) == (done is not None and done == total), warning.message
    return int(done or 0), int(total or 0), int(files)


async def test_calls_during_a_first_ingestion_answer_early_with_an_exact_subset(
    s_package: BuiltPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(s_package.store)
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold-reference"))
    async with Engine(EngineConfig(reconcile=False)) as engine:
        [hub] = (await engine.find_symbol("Base0", index_store_path=store)).matches
        reference = await engine.find_references(usr=hub.symbol.usr, max_results=500, index_store_path=store)
        reference_symbol = await engine.find_symbol("Base0", index_store_path=store)
    assert reference.freshness.completeness is Completeness.COMPLETE
    assert reference.total > 5, "the base class is used across files and modules"
    assert not reference.truncated, reference.total

    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold-slow"))
    monkeypatch.setenv(SLOW_INGEST_ENV, str(SLOW_BATCH_S))
    config = EngineConfig(reconcile=False, ingest_workers=1, first_answer_wait_s=BOUND_S)
    during: list[tuple[SitesAnswer, float]] = []
    async with Engine(config) as engine:
        started = anyio.current_time()
        while True:
            asked = anyio.current_time()
            answer = await engine.find_references(usr=hub.symbol.usr, max_results=500, index_store_path=store)
            waited = anyio.current_time() - asked
            if answer.freshness.completeness is not Completeness.INDEXING:
                break
            if not during:  # at the bound, seconds before the end; later ones may come just before it
                state = await engine.index_state(index_store_path=store)
                assert state.ingesting, "the first answer did not come during the ingestion"
            during.append((answer, waited))
            await anyio.sleep(0.2)
        ended = anyio.current_time() - started
        final = answer
        empty_name = await engine.find_symbol("Base0", index_store_path=store)
        status = await engine.status(index_store_path=store)

    report = status.to_json()["lastRefresh"]
    assert report is not None
    assert report["durationMs"] / 1000 > 2 * SLOW_BATCH_S, "the ingestion was not held open"
    assert len(during) >= 3, f"only {len(during)} answers came during a {ended:.1f} s ingestion"
    for answer, waited in during:
        assert waited < SLOW_BATCH_S, f"a call waited {waited:.2f} s during the ingestion"
        assert sites(answer) <= sites(reference), (
            "an answer during indexing named a site the full one does not"
        )
        assert answer.total == len(answer.sites)
        done, total, _ = progress_of(answer)
        # total 0: the units were still being read, the records not counted yet; done ==
        # total: every record is in and the ingestion is finishing (checked in progress_of).
        assert total == 0 or 0 <= done <= total == report["recordsRead"]
    progress = [progress_of(answer) for answer, _ in during]
    assert progress == sorted(progress), "progress went backwards"
    counts = [len(answer.sites) for answer, _ in during]
    measured(
        "answers during a held-open first ingestion of S (sites, (records done, of, files live), wait s)",
        f"{[(len(a.sites), progress_of(a), round(w, 2)) for a, w in during]} of {reference.total} sites",
    )
    assert counts[0] < reference.total, "the first early answer was already complete"
    assert any(0 < c < reference.total for c in counts), f"no answer saw part of the store: {counts}"
    assert counts == sorted(counts), "live files only grow"

    assert final.freshness.completeness is Completeness.COMPLETE
    assert not final.freshness.warnings
    assert sites(final) == sites(reference)
    assert final.total == reference.total
    assert empty_name.to_json() == reference_symbol.to_json()


async def test_an_empty_answer_during_a_first_ingestion_says_indexing(
    s_package: BuiltPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold"))
    monkeypatch.setenv(SLOW_INGEST_ENV, str(SLOW_BATCH_S))
    config = EngineConfig(reconcile=False, ingest_workers=1, first_answer_wait_s=0.0)
    async with Engine(config) as engine:
        found = await engine.find_symbol("BenchLog", index_store_path=str(s_package.store))
        state = await engine.index_state(index_store_path=str(s_package.store))
    assert state.ingesting
    assert found.matches == ()
    assert found.freshness.completeness is Completeness.INDEXING
    done, _, files = progress_of(found)
    assert (done, files) == (0, 0)
    assert found.to_json()["completeness"] == "indexing"


FINISH_BOUND_S = 2.0


async def _ask_during_a_held_finish(
    store: str, monkeypatch: pytest.MonkeyPatch, hold_bounds: float
) -> tuple[FindSymbolAnswer, float, float]:
    """find_symbol asked as a first ingestion starts, its finish held until `hold_bounds`
    bounds after the question: (the answer, seconds waited, when the finish began)."""
    asked = time.monotonic()
    entered: list[float] = []
    original = WriteSide.recompute_live_units

    def held(self: WriteSide) -> None:  # the fake: the finish of XL's 6,006 records takes 2 s
        entered.append(time.monotonic() - asked)
        time.sleep(max(0.0, asked + hold_bounds * FINISH_BOUND_S - time.monotonic()))
        original(self)

    monkeypatch.setattr(WriteSide, "recompute_live_units", held)
    async with Engine(EngineConfig(reconcile=False, first_answer_wait_s=FINISH_BOUND_S)) as engine:
        asked = time.monotonic()
        found = await engine.find_symbol("Base0", index_store_path=store)
        waited = time.monotonic() - asked
    assert entered, "the ingestion never finished"
    assert entered[0] < FINISH_BOUND_S, (
        f"the records took {entered[0]:.1f} s: the bound ended before the finish"
    )
    return found, waited, entered[0]


async def test_a_bound_ending_while_the_ingestion_finishes_waits_for_the_complete_answer(
    s_package: BuiltPackage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every record in, the bound over: the complete answer is a finish away, and an early
    one would cover no file. It waits once more as long, then answers early after all."""
    store = str(s_package.store)
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "reference"))
    async with Engine(EngineConfig(reconcile=False)) as engine:
        reference = await engine.find_symbol("Base0", index_store_path=store)
    assert reference.matches
    assert reference.freshness.completeness is Completeness.COMPLETE

    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "held-finish"))
    found, waited, _ = await _ask_during_a_held_finish(store, monkeypatch, 1.5)
    assert found.freshness.completeness is Completeness.COMPLETE, found.to_json()
    assert found.to_json() == reference.to_json()
    assert FINISH_BOUND_S < waited < 2 * FINISH_BOUND_S

    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "long-finish"))
    found, waited, _ = await _ask_during_a_held_finish(store, monkeypatch, 3.0)
    assert found.freshness.completeness is Completeness.INDEXING
    done, total, _ = progress_of(found)
    assert 0 < done == total, "the early answer says it came while finishing"
    assert 2 * FINISH_BOUND_S <= waited < 3 * FINISH_BOUND_S
