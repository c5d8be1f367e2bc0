"""blast_radius: which files, and which tests, a change to one file can reach.

Direct dependents are the files that mention a symbol the file declares (or override,
witness or extend one of them). Transitive dependents follow that relation to a fixed
point, bounded by a depth that is reported. Covering tests are found semantically: files
of test targets (units that import XCTest or Testing), `XCTestCase` subclasses (the
UNITTEST property) and Swift Testing `@Test`/`@Suite` declarations, each also given as a
runnable `swift test --filter` expression. The file itself is never in its own radius.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from xcindex.indexstore.database import Database, OccurrenceRow
from xcindex.indexstore.model import Role
from xcindex.project.package import PackageDescription
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, file_is_stale, project_stale_files
from xcindex.tools.shapes import BlastRadiusJson, TestFilterJson
from xcindex.vocabulary import Completeness, XcindexError

PARAMETER_KIND = 25
CLASS_KIND = 7
MAX_DEPTH = 16
COMMAND_PATTERN_LIMIT = 2000
"""Beyond this many characters of test names, `swift test --filter` selects test modules."""
_SWIFT_TESTING_MACROS = {"Test": "s:7Testing4Test", "Suite": "s:7Testing5Suite"}
"""Swift Testing's macros by name, and the USR prefix that tells them from namesakes."""
_IMPLICIT = int(Role.IMPLICIT)
_CONTAINED_BY = int(Role.REL_CONTAINEDBY)


@dataclass(frozen=True)
class TestTarget:
    __test__: ClassVar[bool] = False  # a value, not a pytest test class, wherever it is imported

    path: str
    module: str
    name: str
    kind: str  # "xctest" | "swift-testing"

    @property
    def filter(self) -> str:
        return f"{self.module}.{self.name}"

    def to_json(self) -> TestFilterJson:
        return {"path": self.path, "kind": self.kind, "filter": self.filter}


@dataclass(frozen=True)
class BlastRadiusAnswer:
    file_path: str
    direct_dependents: tuple[str, ...]
    affected_files: tuple[str, ...]
    covering_tests: tuple[str, ...]
    tests: tuple[TestTarget, ...]
    depth: int
    bounded: bool
    freshness: Freshness
    whole_suite: bool = False
    """Every test file of the project covers the change."""
    via_executable: tuple[str, ...] = ()
    """Executable targets the change reaches whose tests run them (cover without a reference)."""

    @property
    def swift_test_command(self) -> str | None:
        """Runs every covering test; by test module when naming each test would be too long."""
        if not self.tests:
            return None
        pattern = "|".join(sorted({re.escape(t.filter) for t in self.tests}))
        if len(pattern) > COMMAND_PATTERN_LIMIT:
            pattern = "|".join(sorted({re.escape(t.module) + r"\." for t in self.tests}))
        return f"swift test --filter '{pattern}'"

    def named_paths(self) -> set[str]:
        return {self.file_path, *self.affected_files}

    def shown(self, budget: int | None = None) -> BlastRadiusView:
        """The lists that fit a response budget: covering tests first, then direct
        dependents, then the rest, so that what is shown keeps coveringTests ⊆
        affectedFiles ⊇ directDependents. All of them without a budget."""
        if budget is None:
            return BlastRadiusView(
                self.affected_files, self.direct_dependents, self.covering_tests, self.tests
            )
        direct, covering = set(self.direct_dependents), set(self.covering_tests)
        tests_of: dict[str, list[TestTarget]] = {}
        for test in self.tests:
            tests_of.setdefault(test.path, []).append(test)

        def rank(path: str) -> tuple[int, str]:
            return (0 if path in covering else 1 if path in direct else 2, path)

        def cost(path: str) -> int:
            lists = 1 + (path in direct) + (path in covering)
            return lists * item_cost(path) + sum(item_cost(t.to_json()) for t in tests_of.get(path, []))

        ordered = sorted(self.affected_files, key=rank)
        chosen = set(ordered[: fitting(ordered, cost, min(budget, LISTS_BUDGET_CHARS))])
        chosen.add(self.file_path)  # a changed test file covers its own tests
        return BlastRadiusView(
            affected_files=tuple(p for p in self.affected_files if p in chosen),
            direct_dependents=tuple(p for p in self.direct_dependents if p in chosen),
            covering_tests=tuple(p for p in self.covering_tests if p in chosen),
            tests=tuple(t for t in self.tests if t.path in chosen),
        )

    def to_json(self, budget: int | None = None) -> BlastRadiusJson:
        view = self.shown(budget)
        return {
            "affectedFiles": list(view.affected_files),
            "directDependents": list(view.direct_dependents),
            "coveringTests": list(view.covering_tests),
            "testFilters": [t.to_json() for t in view.tests],
            "swiftTestCommand": self.swift_test_command,
            "transitiveDepth": self.depth,
            "transitiveBounded": self.bounded,
            "affectedFileCount": len(self.affected_files),
            "directDependentCount": len(self.direct_dependents),
            "coveringTestCount": len(self.covering_tests),
            "truncated": len(view.affected_files) < len(self.affected_files),
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


def dependents_of(db: Database, paths: set[str]) -> set[str]:
    graph = db.file_dependents()
    found: set[str] = set()
    for path in paths:
        found |= graph.get(path, frozenset())
    return found - paths


def tests_in_files(db: Database, paths: set[str], modules: dict[str, str]) -> dict[str, list[TestTarget]]:
    """The tests declared in each file: XCTestCase subclasses (UNITTEST classes) and Swift
    Testing `@Test` functions and `@Suite` types, found through the macros' own symbols
    rather than by loading every occurrence of every file. The project's tests are read
    once until the database changes: a hub file reaches most test files."""
    declared = db.derived("blast_radius.declared_tests", lambda: _declared_tests(db))
    return {
        path: [TestTarget(path, modules.get(path, ""), name, kind) for name, kind in declared[path]]
        for path in paths
        if path in declared
    }


def _declared_tests(db: Database) -> dict[str, list[tuple[str, str]]]:
    """Every test file's tests: (name, kind), XCTest classes first, each name once."""
    tests: dict[str, list[tuple[str, str]]] = {}
    for path, symbol, _line in db.test_symbols():
        if symbol.kind == CLASS_KIND:
            tests.setdefault(path, []).append((symbol.name, "xctest"))
    suites: dict[str, set[str]] = {}
    attributes = _swift_testing_attributes(db, None)
    parents = _parent_type_names(db, [container for _, container in attributes if container is not None])
    for occ, container in attributes:
        if container is None:
            continue
        parent = parents.get(container.id)
        if parent is not None:
            suites.setdefault(occ.path, set()).add(parent)
        else:
            tests.setdefault(occ.path, []).append((container.name.split("(")[0], "swift-testing"))
    for path, names in suites.items():
        tests.setdefault(path, []).extend((suite, "swift-testing") for suite in sorted(names))
    unique: dict[str, list[tuple[str, str]]] = {}
    for path, found in tests.items():
        seen: dict[str, tuple[str, str]] = {}
        for test in found:
            seen.setdefault(test[0], test)
        unique[path] = list(seen.values())
    return unique


def _swift_testing_attributes(db: Database, paths: set[str] | None) -> list[tuple[OccurrenceRow, Any]]:
    """`@Test` / `@Suite` attributes written in the files (None: in any file), with the
    declaration each marks."""
    attributes = [
        occ
        for macro in _swift_testing_macros(db)
        for occ in db.occurrences_of(macro)
        if (paths is None or occ.path in paths) and not occ.roles & _IMPLICIT
    ]
    relations = db.relations_of([occ.id for occ in attributes])
    containers = db.symbols_by_ids(sid for rels in relations.values() for _, sid in rels)
    found: list[tuple[OccurrenceRow, Any]] = []
    for occ in attributes:
        container = next(
            (containers[sid] for roles, sid in relations.get(occ.id, []) if roles & _CONTAINED_BY),
            None,
        )
        found.append((occ, container))
    return found


def _swift_testing_macros(db: Database) -> list[int]:
    return [
        symbol.id
        for name, prefix in _SWIFT_TESTING_MACROS.items()
        for symbol in (*db.symbols_by_name(name), *db.symbols_by_base_name(name))
        if symbol.usr.startswith(prefix)
    ]


def _parent_type_names(db: Database, symbols: list[Any]) -> dict[int, str]:
    """For test functions inside a type (an XCTestCase or a @Suite), that type's name."""
    parents = db.related_symbol_ids([symbol.id for symbol in symbols], Role.REL_CHILDOF)
    names = db.symbols_by_ids({parent for ids in parents.values() for parent in ids})
    return {symbol_id: names[min(ids)].name for symbol_id, ids in parents.items() if min(ids) in names}


def blast_radius(
    db: Database, file_path: str, *, max_depth: int = MAX_DEPTH, package: PackageDescription | None = None
) -> BlastRadiusAnswer:
    """`package` (SwiftPM's own description, when the project is a package) decides which
    files are tests and which executables tests run; without it, units importing a test
    framework count as tests."""
    if not file_path or "\x00" in file_path:
        raise XcindexError("'filePath' must be a non-empty path without NUL characters.")
    target = os.path.realpath(file_path)
    known = {path: (mtime, module, is_test) for path, mtime, module, _target, is_test in db.live_files()}
    if package is not None:
        known = {path: (m, mod, package.is_test_file(path)) for path, (m, mod, _t) in known.items()}
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
        reached = dependents_of(db, frontier) - affected - {target}
        if not reached:
            break
        affected |= reached
        frontier = reached
        depth += 1

    tests: list[TestTarget] = []
    covering: list[str] = []
    # A changed test file covers its own tests; tests that run an executable the change
    # reaches cover it without referencing a symbol of it.
    pool = set(affected)
    if known.get(target, (0, "", False))[2]:
        pool.add(target)
    executables: list[str] = []
    if package is not None:
        for reached_path in sorted({target, *affected}):
            owner = package.target_of(reached_path)
            if owner is not None and owner.kind == "executable" and owner.name not in executables:
                executables.append(owner.name)
        for name in executables:
            for dependent in package.dependents(name):
                owner_target = next(t for t in package.targets if t.name == dependent)
                if owner_target.kind == "test":
                    running = {p for p in known if package.target_of(p) is owner_target} - {target}
                    pool |= running
                    affected |= running
    modules = {path: known[path][1] for path in pool if path in known}
    found_tests = tests_in_files(db, pool, modules)
    is_test = {path for path, (_m, _mod, test) in known.items() if test}
    for path in sorted(pool):
        found = found_tests.get(path, [])
        if path in is_test or (package is None and found):
            covering.append(path)
            tests.extend(found)
    whole_suite = bool(is_test) and is_test <= set(covering)

    named = sorted(affected | {target})
    stale = [p for p in named if p in known and file_is_stale(p, known[p][0])]
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
        tests=tuple(tests),
        depth=depth,
        bounded=bounded,
        freshness=freshness,
        whole_suite=whole_suite,
        via_executable=tuple(executables),
    )


class BlastRadiusArgs(LocationArgs):
    tool = "blast_radius"

    file_path: Text = Field(description="Absolute path of the source file you plan to change.")


def query_blast_radius(
    db: Database, args: BlastRadiusArgs, package: PackageDescription | None
) -> BlastRadiusAnswer:
    """`package`: SwiftPM's description of the project, which the Engine reads before asking."""
    return blast_radius(db, args.file_path, package=package)
