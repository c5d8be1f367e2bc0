"""The project's tests, and a selection of them at the level `swift test` accepts: one test
(XCTest `Module.Class/testMethod`, Swift Testing `Module.Suite/function(labels:)` or
`Module.function()`, a parameterised one included), a whole class or suite, a whole module.

A selection is made from a reach (tools/graph/reach.py: each reached symbol with how it was
reached) and becomes one `swift test --filter` command of anchored patterns, so `testFloat`
never runs `testFloat80`: `^M\\.C/testFloat$` for an XCTest method; `^M\\.S/f\\(\\)/` for a
Swift Testing function, whose identifier goes on with its source location
(`M.S/f()/File.swift:12:5`); `^M\\.C/` for every test of a class or suite, which is how a
class or suite all of whose tests are selected is named. When that is still longer than
COMMAND_PATTERN_LIMIT, the classes and suites partly selected are named whole, then the
modules: the command runs more than the selection, and says so (`commandRunsMore`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import overridden, written_occurrences
from xcindex.indexstore.model import Role
from xcindex.swift.source import source_line
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.graph.dispatch import CLASS_KIND, Dispatch
from xcindex.tools.shapes import SelectedTestJson, TestFilterJson, TestSelectionJson

COMMAND_PATTERN_LIMIT = 2000
"""Characters of `--filter` pattern at most before classes, then modules, are named whole."""
_SWIFT_TESTING_MACROS = {"Test": "s:7Testing4Test", "Suite": "s:7Testing5Suite"}
"""Swift Testing's macros by name, and the USR prefix that tells them from namesakes."""
_IMPLICIT = int(Role.IMPLICIT)
_CONTAINED_BY = int(Role.REL_CONTAINEDBY)
_INSTANCE_WIDE_KINDS = frozenset({22, 23})
"""constructor, destructor: a test type's run for each of its tests."""
_STORED = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+|\w+\s+)*(?:let|var)\s+\w+[^{]*=[^{]*$")
"""A stored property with an initial value (`let service = UserService()`), read on its line."""


class Via(enum.IntEnum):
    """How a test was reached, from the surest to the least sure: the order a test reached
    several ways is labelled by (the surest of them)."""

    DIRECT_CALL = 0
    """Its code calls or references the changed code (or something that does)."""
    DISPATCH = 1
    """Through an override or witness of the changed code: a call of the method or requirement
    it overrides or witnesses, whose receiver can be its type."""
    LIBRARY_DISPATCH = 2
    """Through library code (`==`, `hash(into:)`, `<`, `encode(to:)`, `description`) run on a
    value of the changed witness's type that the test, or code it calls, holds."""
    EXECUTABLE_BY_NAME = 3
    """It runs an executable the change reaches, by name (a string literal naming it)."""

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Via.DIRECT_CALL: "directCall",
    Via.DISPATCH: "dispatch",
    Via.LIBRARY_DISPATCH: "libraryDispatch",
    Via.EXECUTABLE_BY_NAME: "executableByName",
}


@dataclass(frozen=True)
class TestCase:
    """One test as the runner knows it."""

    __test__: ClassVar[bool] = False

    symbol_id: int
    name: str
    """The index's name: `testFetch()`, `greets(name:)`."""
    path: str
    line: int
    module: str
    suite: tuple[str, ...]
    """The test types it is declared in, outermost first (none for a global @Test function)."""
    kind: str  # "xctest" | "swift-testing"

    @property
    def id(self) -> str:
        """As `swift test list` prints it: `M.C/testFetch`, `M.S/greets(name:)`, `M.f()`."""
        name = self.name.split("(")[0] if self.kind == "xctest" else self.name
        return f"{self.module}." + "/".join((*self.suite, name))

    @property
    def pattern(self) -> str:
        """The anchored `--filter` pattern that selects exactly this test."""
        if self.kind == "xctest":
            return f"^{re.escape(self.id)}$"
        return f"^{re.escape(self.id)}/"


@dataclass(frozen=True)
class TestType:
    """An XCTestCase subclass or a Swift Testing suite, with every test under it."""

    __test__: ClassVar[bool] = False

    symbol_id: int
    path: str
    module: str
    suite: tuple[str, ...]
    """Its own name, after its enclosing suites'."""
    kind: str
    tests: tuple[int, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.module}." + "/".join(self.suite)


@dataclass
class ProjectTests:
    """Every test the index knows and the types that hold them."""

    cases: dict[int, TestCase] = field(default_factory=dict)
    types: dict[int, TestType] = field(default_factory=dict)

    def is_test_code(self, symbol_id: int, owner: int | None) -> bool:
        """A test function, a test type, or a member of one."""
        return (
            symbol_id in self.cases or symbol_id in self.types or (owner is not None and owner in self.types)
        )


def project_tests(db: Database) -> ProjectTests:
    """The project's tests, read once until the database changes."""
    return db.derived("selection.project_tests", lambda: _read_tests(db))


def _read_tests(db: Database) -> ProjectTests:
    modules = {path: module for path, _m, module, _t, _test in db.live_files()}
    dispatch = Dispatch(db)
    found = ProjectTests()
    xctest_classes: dict[int, tuple[str, str]] = {}
    xctest_methods: list[tuple[SymbolRow, str, int]] = []
    for path, symbol, line in db.test_symbols():
        if symbol.kind == CLASS_KIND:
            xctest_classes[symbol.id] = (symbol.name, path)
        elif symbol.name.startswith("test") and symbol.name.endswith("()"):
            xctest_methods.append((symbol, path, line))
    owners = dispatch.owners(symbol.id for symbol, _p, _l in xctest_methods)
    for symbol, path, line in xctest_methods:
        owner = owners.get(symbol.id)
        if owner is None or owner.type_id not in xctest_classes:
            continue
        found.cases[symbol.id] = TestCase(
            symbol.id,
            symbol.name,
            path,
            line,
            modules.get(path, ""),
            (xctest_classes[owner.type_id][0],),
            "xctest",
        )
    for class_id, (name, path) in xctest_classes.items():
        found.types[class_id] = TestType(class_id, path, modules.get(path, ""), (name,), "xctest")
    marked = swift_testing_marks(db)
    functions = {symbol.id: (symbol, occ) for occ, symbol, macro in marked if macro == "Test"}
    suites = {symbol.id for _occ, symbol, macro in marked if macro == "Suite"}
    chains = _suite_chains(db, dispatch, set(functions) | suites)
    for symbol_id, (symbol, occ) in functions.items():
        suite = tuple(name for _sid, name in chains.get(symbol_id, ()))
        found.cases[symbol_id] = TestCase(
            symbol_id, symbol.name, occ.path, occ.line, modules.get(occ.path, ""), suite, "swift-testing"
        )
        for depth, (type_id, _name) in enumerate(chains.get(symbol_id, ())):
            if type_id not in found.types:
                found.types[type_id] = TestType(
                    type_id, occ.path, modules.get(occ.path, ""), suite[: depth + 1], "swift-testing"
                )
    for suite_id in suites:
        chain = chains.get(suite_id, ())
        suite_symbol = db.symbols_by_ids([suite_id]).get(suite_id)
        if suite_symbol is not None and suite_id not in found.types:
            definition = canonical_occurrence(written_occurrences(db, [suite_id]).get(suite_id, []))
            path = definition.path if definition else ""
            names = (*(name for _sid, name in chain), suite_symbol.name)
            found.types[suite_id] = TestType(suite_id, path, modules.get(path, ""), names, "swift-testing")
    under: dict[int, list[int]] = {}
    for case_id, case in found.cases.items():
        for type_id, test_type in found.types.items():
            if test_type.module == case.module and case.suite[: len(test_type.suite)] == test_type.suite:
                under.setdefault(type_id, []).append(case_id)
    for type_id, test_type in list(found.types.items()):
        found.types[type_id] = TestType(
            test_type.symbol_id,
            test_type.path,
            test_type.module,
            test_type.suite,
            test_type.kind,
            tuple(sorted(under.get(type_id, []))),
        )
    return found


def _suite_chains(db: Database, dispatch: Dispatch, symbol_ids: set[int]) -> dict[int, list[tuple[int, str]]]:
    """symbol → the types it is declared in, outermost first (an extension's: the type)."""
    chains: dict[int, list[tuple[int, str]]] = {}
    for symbol_id in symbol_ids:
        chain: list[tuple[int, str]] = []
        current = symbol_id
        for _ in range(8):
            owner = dispatch.owners([current])[current]
            if owner is None:
                break
            name = db.symbols_by_ids([owner.type_id])[owner.type_id].name
            chain.insert(0, (owner.type_id, name))
            current = owner.type_id
        chains[symbol_id] = chain
    return chains


def swift_testing_marks(db: Database) -> list[tuple[OccurrenceRow, SymbolRow, str]]:
    """`@Test` / `@Suite` attributes written in the project, with the declaration each marks
    and the macro's name."""
    found: list[tuple[OccurrenceRow, SymbolRow, str]] = []
    for name, prefix in _SWIFT_TESTING_MACROS.items():
        macros = [
            s.id
            for s in (*db.symbols_by_name(name), *db.symbols_by_base_name(name))
            if s.usr.startswith(prefix)
        ]
        attributes = [
            occ for macro in macros for occ in db.occurrences_of(macro) if not occ.roles & _IMPLICIT
        ]
        relations = db.relations_of([occ.id for occ in attributes])
        marked = db.symbols_by_ids(
            sid for rels in relations.values() for roles, sid in rels if roles & _CONTAINED_BY
        )
        for occ in attributes:
            container = next(
                (
                    marked[sid]
                    for roles, sid in relations.get(occ.id, [])
                    if roles & _CONTAINED_BY and sid in marked
                ),
                None,
            )
            if container is not None:
                found.append((occ, container, name))
    return found


# --- from a reach to the tests it covers ---------------------------------------------------


@dataclass(frozen=True)
class SelectedTest:
    """A covering test: the test, the symbol that is it, and how it was reached."""

    __test__: ClassVar[bool] = False

    case: TestCase
    symbol: SymbolRow
    via: Via

    def to_json(self) -> SelectedTestJson:
        return {
            "usr": self.symbol.usr,
            "name": self.symbol.name,
            "id": self.case.id,
            "path": self.case.path,
            "line": self.case.line,
            "kind": self.case.kind,
            "filter": self.case.pattern,
            "reachedVia": self.via.label,
        }


def covering_tests(db: Database, reached: dict[int, Via]) -> list[SelectedTest]:
    """The tests among the reached symbols, and every test of a test type whose per-test
    code is reached (the type itself, its initializer, a stored property's initial value, a
    method the framework calls around each test: `setUp`, `tearDown`)."""
    tests = project_tests(db)
    via: dict[int, Via] = {}
    for symbol_id, how in reached.items():
        if symbol_id in tests.cases:
            via[symbol_id] = min(how, via.get(symbol_id, how))
    dispatch = Dispatch(db)
    candidates = [sid for sid in reached if sid not in tests.cases]
    owners = dispatch.owners(candidates)
    members = {
        sid: owner.type_id
        for sid, owner in owners.items()
        if owner is not None and owner.type_id in tests.types
    }
    wide = {sid: sid for sid in candidates if sid in tests.types}
    wide.update(
        {sid: type_id for sid, type_id in members.items() if runs_for_each_instance(db, dispatch, sid)}
    )
    for symbol_id, type_id in wide.items():
        for case_id in tests.types[type_id].tests:
            how = reached[symbol_id]
            via[case_id] = min(how, via.get(case_id, how))
    symbols = db.symbols_by_ids(via)
    selected = [
        SelectedTest(tests.cases[sid], symbols[sid], how) for sid, how in via.items() if sid in symbols
    ]
    return sorted(selected, key=lambda t: (t.case.path, t.case.line, t.case.id))


def runs_for_each_instance(db: Database, dispatch: Dispatch, symbol_id: int) -> bool:
    """A member that runs for each instance of its type (for a test type: each of its tests):
    an initializer, a stored property's initial value, a framework's method it overrides
    (`setUp`)."""
    if dispatch.kind(symbol_id) in _INSTANCE_WIDE_KINDS:
        return True
    bases = overridden(db, [symbol_id]).get(symbol_id, set())
    if bases and not written_occurrences(db, bases):
        return True  # setUp, tearDown, invokeTest: the framework's, called around each test
    if dispatch.kind(symbol_id) in (13, 19):
        definition = canonical_occurrence(written_occurrences(db, [symbol_id]).get(symbol_id, []))
        return definition is not None and bool(_STORED.match(source_line(definition.path, definition.line)))
    return False


# --- from a selection to one command -------------------------------------------------------


@dataclass(frozen=True)
class TestTarget:
    """One `--filter` pattern of a selection: one test, some tests of one class or suite,
    a whole class or suite, or a whole module."""

    __test__: ClassVar[bool] = False  # a value, not a pytest test class, wherever it is imported

    path: str
    module: str
    name: str
    """`C/testFetch`, `S/greets(name:)`, `f()` for one test; `C`, `S`, `Outer/Inner` for a
    type; `` for a module (or for some of its global Swift Testing functions)."""
    kind: str  # "xctest" | "swift-testing"
    tests: int = 1
    """How many selected tests it runs."""
    reached_via: tuple[str, ...] = ()
    """How its selected tests were reached (each label once, surest first)."""
    whole: bool = False
    """The type or module named whole: every test of it runs."""
    members: tuple[str, ...] = ()
    """The tests of the type (or the module's global functions) it names, when several."""

    @property
    def id(self) -> str:
        return f"{self.module}.{self.name}" if self.name else self.module

    @property
    def label(self) -> str:
        """For a person: the id, with the tests it names when it names some of a type's."""
        return f"{self.id} ({', '.join(self.members)})" if self.members else self.id

    @property
    def filter(self) -> str:
        """The anchored pattern."""
        head = f"^{re.escape(self.module)}\\." + (
            f"{re.escape(self.name)}/" if self.name and (self.whole or self.members) else ""
        )
        if self.whole:
            return head if self.name else f"^{re.escape(self.module)}\\."
        if self.members:
            names = "|".join(re.escape(member) for member in self.members)
            return f"{head}(?:{names})" + ("$" if self.kind == "xctest" else "/")
        if self.kind == "xctest":
            return f"^{re.escape(self.id)}$"
        return f"^{re.escape(self.id)}/"

    def to_json(self) -> TestFilterJson:
        return {
            "path": self.path,
            "kind": self.kind,
            "filter": self.filter,
            "id": self.id,
            "tests": self.tests,
            "reachedVia": list(self.reached_via),
        }


@dataclass(frozen=True)
class Command:
    targets: tuple[TestTarget, ...]
    text: str | None
    runs_more: bool
    """The command names whole classes or modules some of whose tests are not selected."""


def command_for(
    tests: ProjectTests, selected: Iterable[SelectedTest], limit: int = COMMAND_PATTERN_LIMIT
) -> Command:
    """The selection as `--filter` targets and one `swift test` command (module docstring);
    `tests` are the project's, which say which classes and suites are selected whole. The
    tests of one class or suite share one pattern (`^M\\.C/(?:testA|testB)$`); when that is
    still longer than `limit`, the partly selected classes that add the fewest tests are named
    whole, one by one, then modules."""
    chosen = list(selected)
    if not chosen:
        return Command((), None, False)
    by_id = {t.case.symbol_id: t for t in chosen}
    whole: list[TestType] = []
    named: set[int] = set()
    for test_type in sorted(tests.types.values(), key=lambda t: (len(t.suite), t.id)):
        if (
            test_type.tests
            and all(case in by_id for case in test_type.tests)
            and not named & set(test_type.tests)
        ):
            whole.append(test_type)
            named.update(test_type.tests)
    groups: dict[tuple[str, tuple[str, ...]], list[SelectedTest]] = {}
    for test in chosen:
        if test.case.symbol_id not in named:
            groups.setdefault((test.case.module, test.case.suite), []).append(test)
    types_by_key = {(t.module, t.suite): t for t in tests.types.values()}
    targets = [_group(t, [by_id[c] for c in t.tests]) for t in whole]
    partial = {key: _members(key, found) for key, found in groups.items()}
    # The pattern's length kept as a sum (each target's filter, shell-quoted, and its `|`),
    # and the classes to name whole ordered once: linear in the number of classes.
    length = sum(_width(t) for t in [*targets, *partial.values()]) - 1
    options = sorted(
        (len(types_by_key[key].tests) - target.tests, -len(target.filter), key)
        for key, target in partial.items()
        if key in types_by_key and key[1]
    )
    coarsened = False
    for _extra, _saving, key in options:
        if length <= limit:
            break
        named_whole = _group(types_by_key[key], groups[key])
        length += _width(named_whole) - _width(partial.pop(key))
        targets.append(named_whole)
        coarsened = True
    targets += partial.values()
    if length > limit:
        modules: dict[str, list[SelectedTest]] = {}
        for t in chosen:
            modules.setdefault(t.case.module, []).append(t)
        targets = [
            TestTarget(
                found[0].case.path, module, "", found[0].case.kind, len(found), _labels(found), whole=True
            )
            for module, found in sorted(modules.items())
        ]
        coarsened = True
    runs_more = coarsened and any(t.whole and t.tests < _size(tests, t) for t in targets)
    return Command(tuple(sorted(targets, key=lambda t: t.id)), _command(targets), runs_more)


def _members(key: tuple[str, tuple[str, ...]], found: list[SelectedTest]) -> TestTarget:
    """The selected tests of one class or suite (or one module's global functions) as one
    target; one test as itself."""
    first = found[0].case
    if len(found) == 1:
        return TestTarget(first.path, first.module, first.id.split(".", 1)[1], first.kind, 1, _labels(found))
    members = tuple(sorted(t.case.id.split(".", 1)[1].rsplit("/", 1)[-1] for t in found))
    return TestTarget(
        first.path, key[0], "/".join(key[1]), first.kind, len(found), _labels(found), members=members
    )


def _group(test_type: TestType, picked: list[SelectedTest]) -> TestTarget:
    return TestTarget(
        test_type.path,
        test_type.module,
        "/".join(test_type.suite),
        test_type.kind,
        len(picked),
        _labels(picked),
        whole=True,
    )


def _labels(picked: list[SelectedTest]) -> tuple[str, ...]:
    return tuple(via.label for via in sorted({t.via for t in picked}))


def _size(tests: ProjectTests, target: TestTarget) -> int:
    """How many tests a target named whole runs: its type's, or its module's."""
    if not target.name:
        return sum(1 for case in tests.cases.values() if case.module == target.module)
    for test_type in tests.types.values():
        if test_type.module == target.module and "/".join(test_type.suite) == target.name:
            return len(test_type.tests)
    return target.tests


def _width(target: TestTarget) -> int:
    """The characters a target adds to the command: its filter, shell-quoted, and a `|`."""
    return len(target.filter.replace("'", "'\\''")) + 1


def _command(targets: list[TestTarget]) -> str:
    """`swift test --filter '…'` (a quote in a name closed and escaped for the shell)."""
    pattern = "|".join(sorted(t.filter for t in targets))
    return "swift test --filter '" + pattern.replace("'", "'\\''") + "'"


@dataclass(frozen=True)
class TestSelection:
    """The covering tests of a reach, how each was reached, and the commands that run them."""

    __test__: ClassVar[bool] = False

    tests: tuple[SelectedTest, ...] = ()
    command: Command = Command((), None, False)
    likely: Command | None = None
    """The tests reached the surest way any was (a direct call; else requirement dispatch;
    else library dispatch), when some others were reached less surely."""
    executables: tuple[str, ...] = ()

    @property
    def likely_via(self) -> Via | None:
        """How the likely few were reached."""
        return min((t.via for t in self.tests), default=None) if self.likely is not None else None

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for test in sorted(self.tests, key=lambda t: t.via):
            found[test.via.label] = found.get(test.via.label, 0) + 1
        return found

    def to_json(self) -> TestSelectionJson:
        return {
            "reachedVia": self.counts(),
            "likelyTestCommand": self.likely.text if self.likely else None,
            "commandRunsMore": self.command.runs_more,
            "executables": list(self.executables),
        }


def select_tests(db: Database, reached: dict[int, Via], executables: Iterable[str] = ()) -> TestSelection:
    """The covering tests of a reach and their commands."""
    tests = covering_tests(db, reached)
    project = project_tests(db)
    best = min((t.via for t in tests), default=None)
    surest = [t for t in tests if t.via is best]
    likely = command_for(project, surest) if surest and len(surest) < len(tests) else None
    return TestSelection(tuple(tests), command_for(project, tests), likely, tuple(sorted(executables)))
