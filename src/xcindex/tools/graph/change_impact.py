"""change_impact: which symbols a git diff changes, what uses them, and which tests reach them.

The diff comes from read-only git (`git diff -U0 <base>`, plus untracked Swift files);
each hunk, on its old side and its new side, is mapped to the innermost declaration
whose extent holds it (extents from swift/declarations.py: approximate, and the answer says
so).
The declarations are matched to the index's symbols by their definition line on the side
the index was built from, and across sides by their place and name; each change is
classified body, signature, added, removed or moved. Tests are found by reachability: a
symbol reaches a changed one when its body references it, calls it, or calls something
it overrides or witnesses dynamically (dispatch can run the changed code), to a fixed
point; the test methods reached (XCTest methods, Swift Testing functions) cover it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pydantic import Field

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import (
    extended_types,
    members_of,
    related_through,
    users_of,
    written_occurrences,
)
from xcindex.indexstore.model import Property, Role, is_generated_name, kind_name
from xcindex.project.git import FileDiff, GitChanges
from xcindex.swift.declarations import (
    Decl,
    innermost,
    is_blank_code,
    scan_declarations,
    signature_and_body,
)
from xcindex.swift.lexer import mask, split_lines
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, file_is_stale, occurrence_json
from xcindex.tools.graph.blast_radius import COMMAND_PATTERN_LIMIT, TestTarget, tests_in_files
from xcindex.tools.graph.call_graph import overridden_closures
from xcindex.tools.graph.type_hierarchy import EXTENSION_KIND
from xcindex.tools.references import source_occurrences
from xcindex.tools.shapes import ChangedSymbolJson, ChangeImpactJson, CoveringTestJson
from xcindex.vocabulary import Completeness

MAX_REFERENCES = 500
MAX_FILES = 200
RANGE_METHOD = (
    "declaration extents from the source text (braces and statements, comments and strings skipped), "
    "matched to the index's definition sites: not the compiler's own ranges (they agreed with "
    "sourcekit-lsp's documentSymbol on every declaration of swift-log and Yams)"
)
_IMPLICIT = int(Role.IMPLICIT)
_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_USE = int(Role.REFERENCE | Role.CALL)
_DYNAMIC = int(Role.DYNAMIC)
_PARAMETER_KIND, _ACCESSOR_SUBKINDS = 25, frozenset({3, 4, 1000, 1001, 1002, 1003, 1014, 1015, 1016})
_CONTAINER = int(Role.REL_CALLEDBY | Role.REL_CONTAINEDBY)


@dataclass(frozen=True)
class ChangedSymbol:
    usr: str | None
    name: str
    kind: str
    path: str
    line: int
    change: str
    matched_by: str  # "definition" | "name"

    def to_json(self) -> ChangedSymbolJson:
        return {
            "usr": self.usr,
            "name": self.name,
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "change": self.change,
            "matchedBy": self.matched_by,
        }


@dataclass(frozen=True)
class CoveringTest:
    symbol: SymbolRow
    path: str
    line: int
    target: TestTarget

    def to_json(self) -> CoveringTestJson:
        return {
            "usr": self.symbol.usr,
            "name": self.symbol.name,
            "path": self.path,
            "line": self.line,
            "kind": self.target.kind,
            "filter": self.target.filter,
        }


@dataclass(frozen=True)
class ChangeImpactAnswer:
    base: str
    changed_files: tuple[str, ...]
    changed: tuple[ChangedSymbol, ...]
    references: tuple[tuple[SymbolRow, OccurrenceRow], ...]
    reference_count: int
    dependent_files: tuple[str, ...]
    tests: tuple[CoveringTest, ...]
    git_ms: float
    freshness: Freshness

    @property
    def filters(self) -> tuple[TestTarget, ...]:
        unique: dict[str, TestTarget] = {}
        for test in self.tests:
            unique.setdefault(test.target.filter, test.target)
        return tuple(unique[key] for key in sorted(unique))

    @property
    def swift_test_command(self) -> str | None:
        filters = self.filters
        if not filters:
            return None
        pattern = "|".join(re.escape(t.filter) for t in filters)
        if len(pattern) > COMMAND_PATTERN_LIMIT:
            pattern = "|".join(sorted({re.escape(t.module) + r"\." for t in filters}))
        return f"swift test --filter '{pattern}'"

    def named_paths(self) -> set[str]:
        return set(self.changed_files) | {occ.path for _, occ in self.references}

    def shown_references(self, budget: int | None) -> int:
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS) // 2
        return fitting(self.references, lambda ref: item_cost(occurrence_json(*ref)), lists_budget)

    def to_json(self, budget: int | None = None) -> ChangeImpactJson:
        shown = self.shown_references(budget)
        return {
            "base": self.base,
            "changedFiles": list(self.changed_files),
            "changedSymbols": [c.to_json() for c in self.changed],
            "references": [occurrence_json(s, o) for s, o in self.references[:shown]],
            "referenceCount": self.reference_count,
            "dependentFiles": list(self.dependent_files),
            "coveringTests": [t.to_json() for t in self.tests],
            "testFilters": [t.to_json() for t in self.filters],
            "swiftTestCommand": self.swift_test_command,
            "rangesApproximate": True,
            "rangeMethod": RANGE_METHOD,
            "gitMs": round(self.git_ms, 1),
            "truncated": shown < len(self.references) or self.reference_count > len(self.references),
            **self.freshness.to_json(budget),
        }


# --- hunks → declarations → symbols --------------------------------------------------------


@dataclass
class _Side:
    text_lines: list[str]
    masked: list[str]
    decls: list[Decl]

    @classmethod
    def of(cls, text: str) -> _Side:
        return cls(split_lines(text), mask(text), scan_declarations(text))


def _index_definitions(db: Database, path: str) -> list[tuple[OccurrenceRow, SymbolRow]]:
    occs = [o for o in db.occurrences_in_file(path) if o.roles & _WRITTEN and not o.roles & _IMPLICIT]
    symbols = db.symbols_by_ids(o.symbol_id for o in occs)
    return [
        (o, symbols[o.symbol_id])
        for o in occs
        if symbols[o.symbol_id].kind != _PARAMETER_KIND
        and symbols[o.symbol_id].subkind not in _ACCESSOR_SUBKINDS
        and not symbols[o.symbol_id].properties & Property.LOCAL
        and not is_generated_name(symbols[o.symbol_id].name)
    ]


def _base_name(symbol: SymbolRow) -> str:
    return symbol.name.split("(")[0]


def _match(decls: list[Decl], defs: list[tuple[OccurrenceRow, SymbolRow]]) -> dict[int, list[SymbolRow]]:
    """Declaration (by id) → the index symbols defined on its name line under its name."""
    found: dict[int, list[SymbolRow]] = {}
    for decl in decls:
        last = decl.body_line or decl.name_line
        for occ, symbol in defs:
            if decl.name_line <= occ.line <= last and _base_name(symbol) == decl.name:
                found.setdefault(id(decl), []).append(symbol)
    return found


def _touched(side: _Side, lines: list[int]) -> list[Decl]:
    found: dict[int, Decl] = {}
    for line in lines:
        if is_blank_code(side.masked, line):
            continue
        for decl in innermost(side.decls, line):
            found[id(decl)] = decl
    return list(found.values())


@dataclass
class _FileChanges:
    changed: list[ChangedSymbol]
    seeds: set[int]
    new_changed_lines: set[int]


def _file_changes(
    db: Database, path: str, old_text: str | None, new_text: str | None, diff: FileDiff
) -> _FileChanges:
    old = _Side.of(old_text or "")
    new = _Side.of(new_text or "")
    defs = _index_definitions(db, path)
    on_new, on_old = _match(new.decls, defs), _match(old.decls, defs)
    index_is_new = sum(map(len, on_new.values())) >= sum(map(len, on_old.values()))
    if diff.hunks:
        old_lines = [n for h in diff.hunks for n in h.old_lines()]
        new_lines = [n for h in diff.hunks for n in h.new_lines()]
    else:  # a whole file added or removed
        old_lines = list(range(1, len(old.text_lines) + 1)) if old_text else []
        new_lines = list(range(1, len(new.text_lines) + 1)) if new_text else []
    old_by_key = {d.key: d for d in old.decls}
    new_by_key = {d.key: d for d in new.decls}
    symbols_of: dict[tuple[str, ...], list[SymbolRow]] = {}
    indexed = new if index_is_new else old
    matches = on_new if index_is_new else on_old
    for indexed_decl in indexed.decls:
        if id(indexed_decl) in matches:
            symbols_of[indexed_decl.key] = matches[id(indexed_decl)]
    result = _FileChanges([], set(), set(new_lines))
    keys: dict[tuple[str, ...], None] = {}
    for touched in _touched(old, old_lines) + _touched(new, new_lines):
        keys.setdefault(touched.key, None)
    for key in keys:
        before, after = old_by_key.get(key), new_by_key.get(key)
        if before is not None and after is not None:
            old_sig, old_body = signature_and_body(before, old.text_lines)
            new_sig, new_body = signature_and_body(after, new.text_lines)
            change = "signature" if old_sig != new_sig else "body" if old_body != new_body else "moved"
        else:
            change = "added" if after is not None else "removed"
        decl = after if after is not None else before
        assert decl is not None
        symbols = symbols_of.get(key, [])
        matched_by = "definition" if symbols and (decl is after) == index_is_new else "name"
        if not symbols:
            symbols = _by_name_in_supertypes(db, decl, symbols_of)
            for symbol in symbols:
                result.seeds.add(symbol.id)
            result.changed.append(
                ChangedSymbol(None, decl.name, decl.keyword, path, decl.name_line, change, "name")
            )
            continue
        for symbol in symbols:
            result.seeds.add(symbol.id)
            result.changed.append(
                ChangedSymbol(
                    symbol.usr, symbol.name, kind_name(symbol.kind), path, decl.name_line, change, matched_by
                )
            )
    return result


def _by_name_in_supertypes(
    db: Database, decl: Decl, symbols_of: dict[tuple[str, ...], list[SymbolRow]]
) -> list[SymbolRow]:
    """For a declaration the index does not have (added since the build, or removed): the
    same-named members its type inherits, whose callers dispatch can now route differently."""
    if decl.parent is None:
        return []
    found: list[SymbolRow] = []
    from xcindex.tools.graph.type_hierarchy import supertypes_of

    frontier = [s.id for s in symbols_of.get(decl.parent.key, [])]
    seen = set(frontier)
    while frontier:
        following: list[int] = []
        for type_id in frontier:
            for super_id, _occ, _ext in supertypes_of(db, type_id):
                if super_id in seen:
                    continue
                seen.add(super_id)
                following.append(super_id)
                for relation in db.related_occurrences(super_id, Role.REL_CHILDOF):
                    member = db.symbols_by_ids([relation.occurrence.symbol_id])[relation.occurrence.symbol_id]
                    if _base_name(member) == decl.name and not relation.occurrence.roles & _IMPLICIT:
                        found.append(member)
        frontier = following
    return found


# --- reach ---------------------------------------------------------------------------------


def reaching(db: Database, seeds: set[int]) -> set[int]:
    """Every symbol whose code can run (or use) a seed: containers of references and calls,
    callers through dynamic dispatch of what a symbol overrides or witnesses, the property
    an accessor belongs to, subtypes of a type, and the type of a witness library code
    calls; to a fixed point, a handful of batched queries per step."""
    reached = set(seeds)
    frontier = set(seeds)
    while frontier:
        bases = overridden_closures(db, frontier)
        every_base = {base for found in bases.values() for base in found}
        following = users_of(db, frontier) | users_of(db, every_base, dynamic_only=True)
        following |= _types_library_code_dispatches_to(db, bases)
        for properties in related_through(db, frontier, Role.REL_ACCESSOROF).values():
            following |= properties
        following |= _subtypes(db, frontier)
        frontier = following - reached
        reached |= frontier
    return reached


def _subtypes(db: Database, type_ids: set[int]) -> set[int]:
    """The types that name one of these in their inheritance clause (an extension's: the type
    it extends)."""
    declaring = {
        other
        for found in related_through(db, type_ids, Role.REL_BASEOF, explicit_only=True).values()
        for other in found
    }
    kinds = db.symbols_by_ids(declaring)
    extensions = {sid for sid, symbol in kinds.items() if symbol.kind == EXTENSION_KIND}
    return (declaring - extensions) | set(extended_types(db, extensions).values())


def _types_library_code_dispatches_to(db: Database, bases: dict[int, set[int]]) -> set[int]:
    """A witness of a requirement declared outside the index (`Equatable.==`, `hash(into:)`,
    `encode(to:)`, `description`) is called by library code the index does not see
    (`XCTAssertEqual` calls `==`, `JSONEncoder` calls `encode(to:)`): any code that hands a
    value of its type to a library can run it. So its type is reached, and with it every
    use of the type."""
    every_base = {base for found in bases.values() for base in found}
    defined = set(written_occurrences(db, every_base))
    witnesses = {sid for sid, found in bases.items() if found - defined}
    if not witnesses:
        return set()
    parents = {
        p
        for found in related_through(db, witnesses, Role.REL_CHILDOF, explicit_only=True).values()
        for p in found
    }
    kinds = db.symbols_by_ids(parents)
    extensions = {sid for sid, symbol in kinds.items() if symbol.kind == EXTENSION_KIND}
    return (parents - extensions) | set(extended_types(db, extensions).values())


def covering_tests(db: Database, reached: set[int]) -> list[CoveringTest]:
    """The test functions among (or inside a test type among) the reached symbols."""
    live = {path: (module, is_test) for path, _m, module, _t, is_test in db.live_files()}
    symbols = db.symbols_by_ids(reached)
    where: dict[int, OccurrenceRow] = {}
    for symbol_id, written in written_occurrences(db, reached).items():
        in_tests = [occ for occ in written if live.get(occ.path, ("", False))[1]]
        if in_tests:
            where[symbol_id] = min(in_tests, key=lambda occ: (occ.path, occ.line, occ.column))
    paths = {occ.path for occ in where.values()}
    targets = tests_in_files(db, paths, {p: live[p][0] for p in paths})
    found: dict[tuple[str, int], CoveringTest] = {}
    for symbol_id, occ in where.items():
        symbol = symbols[symbol_id]
        parent = _parent(db, occ)
        for target in targets.get(occ.path, []):
            if parent is not None and target.name == parent.name:
                if symbol.name.startswith("test") or target.kind == "swift-testing":
                    method = symbol.name.split("(")[0]
                    sub = TestTarget(target.path, target.module, f"{target.name}/{method}", target.kind)
                    if _is_test_function(db, symbol, target):
                        found[(occ.path, occ.line)] = CoveringTest(symbol, occ.path, occ.line, sub)
                        continue
                for test_symbol, test_occ in _tests_of_type(db, parent, target):
                    sub = TestTarget(
                        target.path,
                        target.module,
                        f"{target.name}/{test_symbol.name.split('(')[0]}",
                        target.kind,
                    )
                    found[(test_occ.path, test_occ.line)] = CoveringTest(
                        test_symbol, test_occ.path, test_occ.line, sub
                    )
            elif parent is None and target.name == symbol.name.split("(")[0]:
                found[(occ.path, occ.line)] = CoveringTest(symbol, occ.path, occ.line, target)
    return [found[key] for key in sorted(found)]


def _parent(db: Database, occ: OccurrenceRow) -> SymbolRow | None:
    for roles, symbol_id in db.relations_of([occ.id]).get(occ.id, []):
        if roles & Role.REL_CHILDOF:
            return db.symbols_by_ids([symbol_id]).get(symbol_id)
    return None


def _members(db: Database, type_symbol: SymbolRow) -> list[tuple[SymbolRow, OccurrenceRow]]:
    occurrences = members_of(db, type_symbol.id)
    symbols = db.symbols_by_ids(occ.symbol_id for occ in occurrences)
    return [(symbols[occ.symbol_id], occ) for occ in occurrences if occ.symbol_id in symbols]


def _is_test_function(db: Database, symbol: SymbolRow, target: TestTarget) -> bool:
    if target.kind == "xctest":
        return symbol.name.startswith("test") and symbol.name.endswith("()") and symbol.kind == 16
    return any(s.id == symbol.id for s, _ in _tests_of_type(db, None, target, only=symbol))


def _tests_of_type(
    db: Database, type_symbol: SymbolRow | None, target: TestTarget, only: SymbolRow | None = None
) -> list[tuple[SymbolRow, OccurrenceRow]]:
    """The test functions of an XCTestCase subclass (test…() methods) or of a Swift Testing
    suite (functions marked @Test)."""
    if target.kind == "xctest" and type_symbol is not None:
        return [
            (s, o)
            for s, o in _members(db, type_symbol)
            if s.name.startswith("test") and s.name.endswith("()") and s.kind == 16
        ]
    from xcindex.tools.graph.blast_radius import _swift_testing_attributes

    marked = {c.id for _occ, c in _swift_testing_attributes(db, {target.path}) if c is not None}
    if only is not None:
        return [
            (only, o) for o in db.occurrences_of(only.id) if only.id in marked and o.roles & Role.DEFINITION
        ][:1]
    if type_symbol is None:
        return []
    return [(s, o) for s, o in _members(db, type_symbol) if s.id in marked]


# --- the tool ------------------------------------------------------------------------------


def change_impact(db: Database, changes: GitChanges) -> ChangeImpactAnswer:
    """What the changes git reported (read before the query, outside the index) reach."""
    root, revision, diffs, old_texts, git_ms = (
        changes.root,
        changes.base,
        changes.diffs,
        changes.old_texts,
        changes.git_ms,
    )
    live = {path: mtime for path, mtime, *_ in db.live_files()}
    changed: list[ChangedSymbol] = []
    seeds: set[int] = set()
    changed_lines: dict[str, set[int]] = {}
    changed_files: list[str] = []
    for diff in diffs:
        rel = diff.new_path or diff.old_path or ""
        absolute = os.path.realpath(os.path.join(root, rel))
        path = _index_spelling(absolute, live)
        new_text = _read(absolute) if diff.new_path is not None else None
        old_text = old_texts.get(diff.old_path) if diff.old_path is not None else None
        file_changes = _file_changes(db, path, old_text, new_text, diff)
        changed_files.append(path)
        changed += file_changes.changed
        seeds |= file_changes.seeds
        changed_lines[path] = file_changes.new_changed_lines
    references: list[tuple[SymbolRow, OccurrenceRow]] = []
    symbols = db.symbols_by_ids(seeds)
    for symbol_id in sorted(seeds):
        # As find_references counts them: written uses, and a property wrapper's attribute
        # (`@Wrapper(...) var x`), the implicit call of the initializer it names.
        for occ in source_occurrences(db, symbols[symbol_id]):
            if occ.roles & _WRITTEN or not occ.roles & _USE:
                continue
            if occ.line in changed_lines.get(occ.path, set()):
                continue
            references.append((symbols[symbol_id], occ))
    references.sort(key=lambda ref: (ref[1].path, ref[1].line, ref[1].column))
    reached = reaching(db, seeds)
    defined_in = {occ.path for written in written_occurrences(db, reached).values() for occ in written}
    dependent = sorted(defined_in - set(changed_files))
    tests = covering_tests(db, reached)
    stale = sorted(p for p in changed_files if p in live and file_is_stale(p, live[p]))
    missing = [p for p in changed_files if p not in live and os.path.exists(p)]
    freshness = Freshness(
        completeness=Completeness.STALE if stale or missing else Completeness.COMPLETE,
        stale_files=tuple(stale + missing),
    )
    return ChangeImpactAnswer(
        base=revision,
        changed_files=tuple(changed_files),
        changed=tuple(changed),
        references=tuple(references[:MAX_REFERENCES]),
        reference_count=len(references),
        dependent_files=tuple(dependent[:MAX_FILES]),
        tests=tuple(tests),
        git_ms=git_ms,
        freshness=freshness,
    )


def _index_spelling(absolute: str, live: dict[str, int]) -> str:
    """The index's path for a file git names (its real path): the same string, or a live
    path of the same name that resolves to it (a symlinked checkout). Only same-named
    files are resolved: a project has thousands."""
    if absolute in live:
        return absolute
    name = os.path.basename(absolute)
    for path in live:
        if os.path.basename(path) == name and os.path.realpath(path) == absolute:
            return path
    return absolute


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


class ChangeImpactArgs(LocationArgs):
    tool = "change_impact"

    base: Text | None = Field(
        None,
        description="The git revision to compare with (default HEAD: the working tree, staged changes "
        "included, against the last commit).",
    )
    files: list[Text] = Field(
        default_factory=list,
        max_length=MAX_FILES,
        description="Absolute paths to limit the diff to (default: every Swift file).",
    )


def query_change_impact(db: Database, args: ChangeImpactArgs, changes: GitChanges) -> ChangeImpactAnswer:
    """`changes`: what git says changed, which the Engine reads before asking (never under the
    database: git may take seconds)."""
    return change_impact(db, changes)
