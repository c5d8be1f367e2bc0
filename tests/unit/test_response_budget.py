"""Every tool result fits the response budget (~20k tokens, text and structured content
together), however large the answer, and says what it left out and how to get the rest.

Answers are built directly (the renderers are pure functions of them) at sizes the
fixture cannot reach: thousands of sites with long paths and long USRs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from xcindex.indexstore.database import OccurrenceRow, SymbolRow
from xcindex.indexstore.ingest import Unreadable
from xcindex.indexstore.state import IndexState
from xcindex.presentation.text import (
    render_blast_radius,
    render_conformances,
    render_find_symbol,
    render_sites,
    render_status,
    render_wait_for_fresh,
)
from xcindex.tools.budget import RESPONSE_BUDGET_CHARS, estimated_tokens
from xcindex.tools.common import Freshness
from xcindex.tools.conformances import Conformance, ConformancesAnswer
from xcindex.tools.find_symbol import FindSymbolAnswer, SymbolMatch
from xcindex.tools.graph.blast_radius import BlastRadiusAnswer
from xcindex.tools.graph.selection import (
    ProjectTests,
    SelectedTest,
    TestCase,
    TestSelection,
    TestType,
    Via,
    command_for,
)
from xcindex.tools.references import Site, SitesAnswer
from xcindex.tools.status import StatusAnswer
from xcindex.tools.wait_for_fresh import FileFreshness, FileState, FreshWaitAnswer
from xcindex.vocabulary import Completeness, FailureKind, MatchedBy

BUDGET = RESPONSE_BUDGET_CHARS
ROOT = "/Users/someone/Developer/a-company/a-very-large-application-monorepo/Packages/FeatureModules"
"""A long but real-looking prefix: paths here are ~160 characters."""


def path(index: int) -> str:
    return f"{ROOT}/Feature{index % 97:02d}/Sources/Feature{index % 97:02d}/Subfolder/SomeLongTypeName{index}.swift"


def symbol(index: int) -> SymbolRow:
    usr = f"s:14FeatureModule{index:04d}22SomeQuiteLongTypeNameC8someMethod4with3andySS_SiSbtF{index}"
    return SymbolRow(index, usr, f"someMethod(with:and:){index}", 16, 0, 2, 0)


def occurrence(index: int, symbol_id: int = 1) -> OccurrenceRow:
    return OccurrenceRow(index, symbol_id, 0x1C, path(index), 1000 + index, 40, "FeatureModule", 1)


def stale_verdict(count: int) -> Freshness:
    """The largest verdict: `count` stale files and as many edited this session."""
    files = tuple(path(i) for i in range(count))
    return Freshness(Completeness.STALE, stale_files=files, session_edited_files=files)


def size(text: str, structured: Mapping[str, Any]) -> int:
    return len(text) + len(json.dumps(structured, ensure_ascii=False))


def assert_within_budget(text: str, structured: Mapping[str, Any]) -> None:
    assert size(text, structured) <= BUDGET, f"{size(text, structured)} characters > {BUDGET}"
    assert estimated_tokens(text, structured) <= 20_000


def test_thousands_of_candidates_are_cut_with_a_count_and_a_way_to_the_rest() -> None:
    matches = tuple(SymbolMatch(symbol(i), occurrence(i, i)) for i in range(5000))
    answer = FindSymbolAnswer("someMethod", matches, MatchedBy.BASE_NAME, stale_verdict(3000))
    text, structured = render_find_symbol(answer, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    assert structured["totalCount"] == 5000
    assert structured["truncated"] is True
    assert 50 < len(structured["results"]) < 5000
    assert len(structured["staleFiles"]) == 20
    assert structured["staleFileCount"] == 3000
    assert text.startswith("5000 symbol(s) named 'someMethod'")
    assert "xcindex symbol 'someMethod' --project <projectPath> --json" in text
    assert f"ask again with offset {len(structured['results'])}" in text
    assert structured["nextOffset"] == len(structured["results"])
    assert "and 2980 more" in text
    # Without a budget (the embedding API, the CLI) nothing is cut.
    full = answer.to_json()
    assert len(full["results"]) == 5000
    assert len(full["staleFiles"]) == 3000
    assert full["truncated"] is False


@pytest.mark.parametrize(
    ("what", "command"), [("reference(s)", "xcindex refs --usr"), ("override(s)", "xcindex overrides")]
)
def test_five_hundred_long_sites_fit_and_say_how_to_list_them_all(what: str, command: str) -> None:
    sites = tuple(Site(symbol(1), occurrence(i)) for i in range(500))
    answer = SitesAnswer("s:usr", (symbol(1),), sites, total=2000, truncated=True, freshness=Freshness())
    text, structured = render_sites(answer, what, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    shown = len(structured["results"])
    assert 50 < shown < 500
    assert structured["totalCount"] == 2000
    assert structured["truncated"] is True
    assert f"(showing {shown} of 2000: that is what fits the response budget" in text
    assert f"Ask again with offset {shown} for the next page" in text
    assert structured["nextOffset"] == shown
    assert command in text
    # One line per site, grouped by file: every shown site is in the text.
    assert len(re.findall(r"^  \d+:\d+ ", text, re.M)) == shown


def test_a_list_cut_only_by_max_results_says_to_raise_it() -> None:
    sites = tuple(Site(symbol(1), occurrence(i)) for i in range(100))
    short = SitesAnswer("Foo", (symbol(1),), sites[:3], total=100, truncated=True, freshness=Freshness())
    text = render_sites(short, "reference(s)", BUDGET)
    assert (
        "(showing 1-3 of 100; ask again with offset 3 for the next page, or with a larger maxResults" in text
    )
    assert short.to_json(BUDGET)["nextOffset"] == 3
    assert short.to_json(BUDGET)["results"] == [s.to_json() for s in sites[:3]]


def test_conformances_are_cut_by_path_with_a_count() -> None:
    conformances = tuple(Conformance(symbol(i), occurrence(i), i % 2 == 0, None) for i in range(3000))
    answer = ConformancesAnswer("s:P", symbol(0), conformances, Freshness())
    text, structured = render_conformances(answer, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    assert structured["totalCount"] == 3000
    assert structured["truncated"] is True
    assert "xcindex conformances s:P --project <projectPath> --json" in text


def test_a_huge_blast_radius_keeps_covering_tests_first_and_the_invariants() -> None:
    affected = tuple(sorted(path(i) for i in range(6000)))
    direct = tuple(p for i, p in enumerate(affected) if i % 2 == 0)
    covering = tuple(p for i, p in enumerate(affected) if i % 10 == 5)
    # Two test methods per covering file, each class with a third test that is not selected:
    # no class is selected whole, and naming 1,200 tests one by one is far too long.
    project = ProjectTests()
    selected: list[SelectedTest] = []
    for n, p in enumerate(covering):
        module, name = f"Module{n % 7}Tests", f"SomeTestCase{n}"
        cases = [
            TestCase(10_000 * (n + 1) + k, f"testSomething{k}()", p, 10 + k, module, (name,), "xctest")
            for k in range(3)
        ]
        project.cases.update((case.symbol_id, case) for case in cases)
        project.types[n] = TestType(n, p, module, (name,), "xctest", tuple(c.symbol_id for c in cases))
        selected += [SelectedTest(case, symbol(case.symbol_id), Via.DIRECT_CALL) for case in cases[:2]]
    selection = TestSelection(tuple(selected), command_for(project, selected))
    answer = BlastRadiusAnswer(
        path(99999), direct, affected, covering, selection, 3, False, stale_verdict(500)
    )
    text, structured = render_blast_radius(answer, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    shown = structured["affectedFiles"]
    assert structured["affectedFileCount"] == 6000
    assert structured["coveringTestCount"] == len(covering)
    assert structured["truncated"] is True
    assert set(structured["coveringTests"]) <= set(shown)
    assert set(structured["directDependents"]) <= set(shown)
    # Covering tests are what an agent acts on: they come first.
    assert structured["coveringTests"] == list(covering[: len(structured["coveringTests"])])
    assert len(structured["coveringTests"]) == min(len(covering), len(shown))
    # The command runs every covering test, listed or not: by test module when naming each
    # test, then each class, would be too long; and it says it runs more than the selection.
    command = structured["swiftTestCommand"]
    assert command == answer.swift_test_command
    assert command is not None
    assert command == "swift test --filter '" + "|".join(f"^Module{m}Tests\\." for m in range(7)) + "'"
    assert structured["selection"]["commandRunsMore"] is True
    assert structured["selectedTestCount"] == 2 * len(covering)
    assert len(structured["selectedTests"]) < structured["selectedTestCount"]
    assert "xcindex blast" in text
    assert "covering tests and direct dependents first" in text


def test_status_with_thousands_of_stale_files_lists_a_bounded_number() -> None:
    state = IndexState(
        store_path=Path("/store"),
        database_path=Path("/db.sqlite"),
        ready=True,
        ingesting=False,
        progress=(0, 0),
        last_refresh=None,
        counts=None,
        failures=tuple(Unreadable(FailureKind.RECORD, f"record-{i}", "corrupt " * 20) for i in range(2000)),
    )
    answer = StatusAnswer(
        state,
        1,
        tuple(path(i) for i in range(20_000)),
        session_edited_files=tuple(path(i) for i in range(3000)),
    )
    text, structured = render_status(answer, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    assert structured["staleFileCount"] == 20_000
    assert len(structured["staleFiles"]) == 50
    assert structured["sessionEditedFileCount"] == 3000
    assert structured["unreadableCount"] == 2000
    assert len(structured["unreadable"]) == 50
    assert "and 19990 more" in text
    assert len(answer.to_json()["staleFiles"]) == 20_000


def test_waiting_for_many_files_lists_the_unsettled_first() -> None:
    files = tuple(FileFreshness(path(i), FileState.FRESH if i % 3 else FileState.STALE) for i in range(200))
    answer = FreshWaitAnswer(files, waited_s=60.0, timed_out=True)
    text, structured = render_wait_for_fresh(answer, BUDGET), answer.to_json(BUDGET)
    assert_within_budget(text, structured)
    listed = structured["files"]
    assert listed[0]["state"] == "stale"
    assert text.startswith("Timed out after 60.0 s: ")
