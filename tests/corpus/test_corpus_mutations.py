"""blast_radius on real code: every test a mutation breaks is among the tests it selects.

Mutants are generated the same way on every run (the first candidate lines of each source
and test file, in path order, for a handful of operators). Each is applied to the built
package, built incrementally and tested in full; a mutant that does not build, or that no
test notices, is not counted. For each killed mutant, the covering tests blast_radius gave
for the file (asked on the pristine index) are run alone with the mutant in place: every
test that failed in the full run must fail there too (recall 1.0). Precision is the share
of the selected tests that failed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.corpus.harness import build_and_test, ids_of, listed_tests, prepared, restore, run_tests
from tests.scoring import MEASURED
from xcindex.engine import Engine
from xcindex.tools.graph.blast_radius import BlastRadiusAnswer

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

KILLED_WANTED = 20
MAX_CANDIDATES = 48
PER_FILE = 4
OPERATORS = (
    (" == ", " != "),
    (" < ", " >= "),
    (" > ", " <= "),
    ("return true", "return false"),
    ("return false", "return true"),
    (" + 1", " + 2"),
    (" - 1", " - 2"),
    ("isEmpty", "!isEmpty"),
)
_SKIP = re.compile(r"^\s*(//|/\*|\*|#|import |@available)|func [=<>!+-]|operator")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Mutant:
    path: Path
    line: int
    old: str
    new: str

    def apply(self) -> None:
        lines = self.path.read_text(encoding="utf-8").split("\n")
        lines[self.line - 1] = lines[self.line - 1].replace(self.old, self.new, 1)
        self.path.write_text("\n".join(lines), encoding="utf-8")


def candidates(package: Path) -> list[Mutant]:
    """At most PER_FILE mutants per file (the first lines an operator applies to), round-robin
    over the files so that sources and tests of every target are reached."""
    per_file: list[list[Mutant]] = []
    for path in sorted([*(package / "Sources").rglob("*.swift"), *(package / "Tests").rglob("*.swift")]):
        found: list[Mutant] = []
        for number, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if _SKIP.search(text) or '"' in text:
                continue
            for old, new in OPERATORS:
                if old in text and (old != "isEmpty" or "!isEmpty" not in text):
                    found.append(Mutant(path, number, old, new))
                    break
            if len(found) == PER_FILE:
                break
        if found:
            per_file.append(found)
    ordered: list[Mutant] = []
    for index in range(PER_FILE):
        ordered.extend(found[index] for found in per_file if len(found) > index)
    return ordered[:MAX_CANDIDATES]


def selection_filter(answer: BlastRadiusAnswer) -> str | None:
    """The `--filter` of blast_radius's command; None when it covers the whole suite."""
    if answer.whole_suite:
        return None
    command = answer.swift_test_command
    if command is None:
        return "^$"  # no covering test: run nothing
    return command.split("--filter ", 1)[1].strip("'")


def selection(answer: BlastRadiusAnswer, ids: list[str]) -> set[str]:
    """The identifiers blast_radius's `swift test --filter` selects (all for the whole suite),
    matched the way `swift test` matches its filter."""
    pattern = selection_filter(answer)
    if pattern is None:
        return set(ids)
    return {i for i in ids if re.search(pattern, i)}


@pytest.mark.parametrize("package_name", ["swift-log", "yams"])
async def test_every_test_a_mutation_breaks_is_selected_by_blast_radius(package_name: str) -> None:
    started = time.monotonic()
    package = prepared(package_name)
    baseline = run_tests(package)
    assert baseline.passed, baseline.output
    assert not baseline.failed, baseline.output
    ids = listed_tests(package)
    for name in baseline.passed:
        assert ids_of(name, ids), f"{name} is not in `swift test list`: names cannot be matched"
    mutants = candidates(package)
    answers: dict[Path, BlastRadiusAnswer] = {}
    async with Engine() as engine:
        for mutant in mutants:
            if mutant.path not in answers:
                answers[mutant.path] = await engine.blast_radius(str(mutant.path), project_path=str(package))
    rows: list[str] = []
    misses: list[str] = []
    killed = 0
    selected_total = failed_total = 0
    for mutant in mutants:
        if killed >= KILLED_WANTED:
            break
        answer = answers[mutant.path]
        chosen = selection(answer, ids)
        try:
            mutant.apply()
            full = build_and_test(package)
            # A crashed test process does not say which test it died in (Swift Testing
            # runs them in parallel): the selection, run alone, must be killed too.
            alone = (
                run_tests(package, test_filter=selection_filter(answer))
                if full.killed and full.crashed
                else None
            )
        finally:
            restore(package)
        if not full.killed:
            continue
        killed += 1
        failing = {name: ids_of(name, ids) for name in full.failed}
        # Strict: a failing name that could be several tests needs all of them selected.
        missed = sorted(name for name, owners in failing.items() if not owners or not set(owners) <= chosen)
        if alone is not None and not alone.killed:
            missed.append("(the crash: the selection alone passes)")
        selected_total += len(chosen)
        failed_total += len(full.failed)
        where = (
            f"{mutant.path.relative_to(package)}:{mutant.line} `{mutant.old.strip()}`→`{mutant.new.strip()}`"
        )
        rows.append(
            f"{where}: {len(full.failed)} failing"
            + (" and the test process crashed" if full.crashed else "")
            + f", {len(chosen)} selected"
            + (" (whole suite)" if answer.whole_suite else "")
            + (f", MISSED {missed}" if missed else "")
        )
        if missed:
            misses.append(rows[-1])
    elapsed = time.monotonic() - started
    precision = failed_total / selected_total if selected_total else 0.0
    MEASURED.append(
        f"corpus mutations {package_name}: {killed} killed of {len(mutants)} candidates in {elapsed:.0f} s; "
        f"recall {'1.0' if not misses else 'below 1.0'}, precision {precision:.2f} (failing / selected tests)"
    )
    MEASURED.extend(f"  {row}" for row in rows)
    assert killed >= KILLED_WANTED, f"only {killed} mutants were killed: the harness proves too little"
    assert not misses, "\n".join(misses)
