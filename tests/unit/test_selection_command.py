"""command_for: the tests of one class share a pattern; too long a command names partly
selected classes whole one by one (those adding the fewest tests first), then modules."""

from __future__ import annotations

import time

from xcindex.indexstore.database import SymbolRow
from xcindex.tools.graph.selection import (
    ProjectTests,
    SelectedTest,
    TestCase,
    TestType,
    Via,
    command_for,
)


def project(sizes: list[int], module: str = "M") -> ProjectTests:
    """Classes C0, C1, … of XCTest tests t0, t1, …, `sizes[n]` in class n."""
    tests = ProjectTests()
    for n, size in enumerate(sizes):
        cases = [
            TestCase(1000 * (n + 1) + k, f"t{k}", f"/p/C{n}.swift", k, module, (f"C{n}",), "xctest")
            for k in range(size)
        ]
        tests.cases.update((case.symbol_id, case) for case in cases)
        tests.types[n] = TestType(
            n, f"/p/C{n}.swift", module, (f"C{n}",), "xctest", tuple(c.symbol_id for c in cases)
        )
    return tests


def chosen(tests: ProjectTests, picks: dict[int, int]) -> list[SelectedTest]:
    """The first `picks[n]` tests of class n."""
    return [
        SelectedTest(tests.cases[sid], SymbolRow(sid, f"s:{sid}", f"t{sid}", 16, 0, 2, 0), Via.DIRECT_CALL)
        for n, count in picks.items()
        for sid in tests.types[n].tests[:count]
    ]


def test_one_pattern_per_class_and_whole_classes() -> None:
    tests = project([3, 2])
    command = command_for(tests, chosen(tests, {0: 2, 1: 2}))
    assert command.text == r"swift test --filter '^M\.C0/(?:t0|t1)$|^M\.C1/'"
    assert [(t.name, t.tests, t.whole) for t in command.targets] == [("C0", 2, False), ("C1", 2, True)]
    assert command.runs_more is False


def test_too_long_names_the_class_adding_fewest_tests_whole_first() -> None:
    tests = project([3, 6])
    selected = chosen(tests, {0: 2, 1: 2})
    full = command_for(tests, selected)
    assert full.text == r"swift test --filter '^M\.C0/(?:t0|t1)$|^M\.C1/(?:t0|t1)$'"
    # One character short: C0 (one more test) is named whole, not C1 (four more).
    limit = len(full.text) - len("swift test --filter ''") - 1
    command = command_for(tests, selected, limit)
    assert command.text == r"swift test --filter '^M\.C0/|^M\.C1/(?:t0|t1)$'"
    assert command.runs_more is True
    # Shorter than any class-level command: the module.
    assert command_for(tests, selected, 5).text == r"swift test --filter '^M\.'"


def test_coarsening_thousands_of_classes_stays_linear() -> None:
    tests = project([3] * 3000)
    started = time.monotonic()
    command = command_for(tests, chosen(tests, dict.fromkeys(range(3000), 2)))
    assert time.monotonic() - started < 5.0
    assert command.text == r"swift test --filter '^M\.'"
    assert command.runs_more is True
