"""blast_radius: which files, and which tests, a change to one file can reach.

Direct dependents are the files that mention a symbol the file declares (or override,
witness or extend one of them). Transitive dependents follow that relation to a fixed
point, bounded by a depth that is reported. The covering tests are those the reach
change_impact uses (tools/graph/reach.py) finds from every declaration of the file, as if
each changed: direct calls, dispatch, library dispatch narrowed by type, executables run by
name, each test labelled with how it was reached and selected at the level `swift test`
accepts (tools/graph/selection.py). Files holding reached code are affected too. The file
itself is never in its own radius.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pydantic import Field

from xcindex.errors import XcindexError
from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import written_occurrences
from xcindex.indexstore.model import Property, Role, is_generated_name
from xcindex.project.package import PackageDescription
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, file_is_stale, project_stale_files
from xcindex.tools.graph.reach import reach
from xcindex.tools.graph.selection import SelectedTest, TestSelection, TestTarget, project_tests, select_tests
from xcindex.tools.shapes import BlastRadiusJson
from xcindex.vocabulary import Completeness

PARAMETER_KIND = 25
MAX_DEPTH = 16
_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_IMPLICIT = int(Role.IMPLICIT)


@dataclass(frozen=True)
class BlastRadiusAnswer:
    file_path: str
    direct_dependents: tuple[str, ...]
    affected_files: tuple[str, ...]
    covering_tests: tuple[str, ...]
    """The files of the selected tests."""
    selection: TestSelection
    depth: int
    bounded: bool
    freshness: Freshness
    whole_suite: bool = False
    """Every test of the project is selected."""

    @property
    def tests(self) -> tuple[TestTarget, ...]:
        """The selection's `--filter` targets (tests, whole classes or suites, modules)."""
        return self.selection.command.targets

    @property
    def selected(self) -> tuple[SelectedTest, ...]:
        return self.selection.tests

    @property
    def via_executable(self) -> tuple[str, ...]:
        """Executables the change reaches whose tests run them by name."""
        return self.selection.executables

    @property
    def swift_test_command(self) -> str | None:
        """Runs every covering test (naming whole classes, then modules, when the list of
        tests would be too long)."""
        return self.selection.command.text

    def named_paths(self) -> set[str]:
        return {self.file_path, *self.affected_files}

    def shown(self, budget: int | None = None) -> BlastRadiusView:
        """The lists that fit a response budget: covering tests first, then direct
        dependents, then the rest, so that what is shown keeps coveringTests ⊆
        affectedFiles ⊇ directDependents. All of them without a budget."""
        if budget is None:
            return BlastRadiusView(
                self.affected_files, self.direct_dependents, self.covering_tests, self.tests, self.selected
            )
        direct, covering = set(self.direct_dependents), set(self.covering_tests)
        per_path: dict[str, int] = {}
        for target in self.tests:
            per_path[target.path] = per_path.get(target.path, 0) + item_cost(target.to_json())
        for test in self.selected:
            per_path[test.case.path] = per_path.get(test.case.path, 0) + item_cost(test.to_json())

        def rank(path: str) -> tuple[int, str]:
            return (0 if path in covering else 1 if path in direct else 2, path)

        def cost(path: str) -> int:
            lists = 1 + (path in direct) + (path in covering)
            return lists * item_cost(path) + per_path.get(path, 0)

        ordered = sorted(self.affected_files, key=rank)
        chosen = set(ordered[: fitting(ordered, cost, min(budget, LISTS_BUDGET_CHARS))])
        chosen.add(self.file_path)  # a changed test file covers its own tests
        return BlastRadiusView(
            affected_files=tuple(p for p in self.affected_files if p in chosen),
            direct_dependents=tuple(p for p in self.direct_dependents if p in chosen),
            covering_tests=tuple(p for p in self.covering_tests if p in chosen),
            tests=tuple(t for t in self.tests if t.path in chosen),
            selected=tuple(t for t in self.selected if t.case.path in chosen),
        )

    def to_json(self, budget: int | None = None) -> BlastRadiusJson:
        view = self.shown(budget)
        return {
            "affectedFiles": list(view.affected_files),
            "directDependents": list(view.direct_dependents),
            "coveringTests": list(view.covering_tests),
            "selectedTests": [t.to_json() for t in view.selected],
            "testFilters": [t.to_json() for t in view.tests],
            "swiftTestCommand": self.swift_test_command,
            "selection": self.selection.to_json(),
            "transitiveDepth": self.depth,
            "transitiveBounded": self.bounded,
            "affectedFileCount": len(self.affected_files),
            "directDependentCount": len(self.direct_dependents),
            "coveringTestCount": len(self.covering_tests),
            "selectedTestCount": len(self.selected),
            "truncated": len(view.affected_files) < len(self.affected_files)
            or len(view.selected) < len(self.selected),
            "coversWholeSuite": self.whole_suite,
            "viaExecutables": list(self.via_executable),
            **self.freshness.to_json(budget),
        }


@dataclass(frozen=True)
class BlastRadiusView:
    """What one rendering of a blast radius lists."""

    affected_files: tuple[str, ...]
    direct_dependents: tuple[str, ...]
    covering_tests: tuple[str, ...]
    tests: tuple[TestTarget, ...]
    selected: tuple[SelectedTest, ...]


def dependents_of(db: Database, paths: set[str]) -> set[str]:
    graph = db.file_dependents()
    found: set[str] = set()
    for path in paths:
        found |= graph.get(path, frozenset())
    return found - paths


def declared_in(db: Database, path: str) -> set[int]:
    """The symbols the file declares in its source (not parameters, locals or a macro's helpers)."""
    occurrences = [
        occ for occ in db.occurrences_in_file(path) if occ.roles & _WRITTEN and not occ.roles & _IMPLICIT
    ]
    symbols = db.symbols_by_ids(occ.symbol_id for occ in occurrences)
    return {
        sid
        for sid, symbol in symbols.items()
        if symbol.kind != PARAMETER_KIND
        and not symbol.properties & Property.LOCAL
        and not is_generated_name(symbol.name)
    }


def blast_radius(
    db: Database, file_path: str, *, max_depth: int = MAX_DEPTH, package: PackageDescription | None = None
) -> BlastRadiusAnswer:
    """`package` (SwiftPM's own description, when the project is a package) says which
    executables there are, and which test targets' code may run them by name."""
    if not file_path or "\x00" in file_path:
        raise XcindexError("'filePath' must be a non-empty path without NUL characters.")
    target = os.path.realpath(file_path)
    known = {path: mtime for path, mtime, _module, _target, _test in db.live_files()}
    if target not in known:
        candidates = [p for p in known if os.path.realpath(p) == target]
        if not candidates:
            raise XcindexError(
                f"'{file_path}' is not a source file of this index (no live unit compiles it). "
                "Check the path, or rebuild if the file is new."
            )
        target = candidates[0]
    direct = dependents_of(db, {target})
    affected = set(direct)
    frontier = set(direct)
    depth = 1
    bounded = False
    while frontier:
        if depth >= max_depth:
            bounded = True
            break
        following = dependents_of(db, frontier) - affected - {target}
        if not following:
            break
        affected |= following
        frontier = following
        depth += 1

    # Every declaration of the file as if it changed: the reach change_impact uses.
    reached = reach(db, declared_in(db, target), package=package, changed_paths=[target])
    selection = select_tests(db, reached.covering(), reached.executables)
    covering = sorted({test.case.path for test in selection.tests})
    holding = {occ.path for occs in written_occurrences(db, reached.via).values() for occ in occs}
    affected |= (holding | set(covering)) & known.keys()
    affected.discard(target)
    everything = set(project_tests(db).cases)
    whole_suite = bool(everything) and everything <= {test.case.symbol_id for test in selection.tests}

    named = sorted(affected | {target})
    stale = [p for p in named if p in known and file_is_stale(db, p, known[p])]
    if not affected and not stale:
        stale = project_stale_files(db)
    freshness = Freshness(
        completeness=Completeness.STALE if stale else Completeness.COMPLETE, stale_files=tuple(stale)
    )
    return BlastRadiusAnswer(
        file_path=target,
        direct_dependents=tuple(sorted(direct)),
        affected_files=tuple(sorted(affected)),
        covering_tests=tuple(covering),
        selection=selection,
        depth=depth,
        bounded=bounded,
        freshness=freshness,
        whole_suite=whole_suite,
    )


class BlastRadiusArgs(LocationArgs):
    tool = "blast_radius"

    file_path: Text = Field(description="Absolute path of the source file you plan to change.")


def query_blast_radius(
    db: Database, args: BlastRadiusArgs, package: PackageDescription | None
) -> BlastRadiusAnswer:
    """`package`: SwiftPM's description of the project, which the Engine reads before asking."""
    return blast_radius(db, args.file_path, package=package)
