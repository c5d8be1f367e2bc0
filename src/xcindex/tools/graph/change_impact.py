"""change_impact: which symbols a git diff changes, what uses them, and which tests reach them.

The diff comes from read-only git (`git diff -U0 <base>`, plus untracked Swift files);
each hunk, on its old side and its new side, is mapped to the innermost declaration
whose extent holds it (extents from swift/declarations.py: approximate, and the answer says
so).
The declarations are matched to the index's symbols by their definition line on the side
the index was built from, and across sides by their place and name; each change is
classified body, signature, added, removed or moved. Tests are found by the reach
blast_radius shares (tools/graph/reach.py: direct calls, dispatch, library dispatch
narrowed by type, executables run by name), each labelled with how it was reached, and
selected at the level `swift test` accepts (tools/graph/selection.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pydantic import Field

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import written_occurrences
from xcindex.indexstore.model import Property, Role, is_generated_name, kind_name
from xcindex.project.git import FileDiff, GitChanges
from xcindex.project.package import PackageDescription
from xcindex.swift.declarations import (
    Decl,
    innermost,
    is_blank_code,
    scan_declarations,
    shares_its_lines,
    signature_and_body,
)
from xcindex.swift.lexer import mask, split_lines
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, file_is_stale, occurrence_json
from xcindex.tools.graph.reach import reach
from xcindex.tools.graph.selection import SelectedTest, TestSelection, TestTarget, select_tests
from xcindex.tools.references import source_occurrences
from xcindex.tools.shapes import ChangedSymbolJson, ChangeImpactJson
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
class ChangeImpactAnswer:
    base: str
    changed_files: tuple[str, ...]
    changed: tuple[ChangedSymbol, ...]
    references: tuple[tuple[SymbolRow, OccurrenceRow], ...]
    reference_count: int
    dependent_files: tuple[str, ...]
    selection: TestSelection
    git_ms: float
    freshness: Freshness

    @property
    def tests(self) -> tuple[SelectedTest, ...]:
        return self.selection.tests

    @property
    def filters(self) -> tuple[TestTarget, ...]:
        return self.selection.command.targets

    @property
    def swift_test_command(self) -> str | None:
        return self.selection.command.text

    def named_paths(self) -> set[str]:
        return set(self.changed_files) | {occ.path for _, occ in self.references}

    def shown_references(self, budget: int | None) -> int:
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS) // 2
        return fitting(self.references, lambda ref: item_cost(occurrence_json(*ref)), lists_budget)

    def shown_tests(self, budget: int | None) -> tuple[SelectedTest, ...]:
        """The covering tests that fit a quarter of the lists' budget (the command runs all)."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS) // 4
        return self.tests[: fitting(self.tests, lambda t: item_cost(t.to_json()), lists_budget)]

    def to_json(self, budget: int | None = None) -> ChangeImpactJson:
        shown = self.shown_references(budget)
        tests = self.shown_tests(budget)
        return {
            "base": self.base,
            "changedFiles": list(self.changed_files),
            "changedSymbols": [c.to_json() for c in self.changed],
            "references": [occurrence_json(s, o) for s, o in self.references[:shown]],
            "referenceCount": self.reference_count,
            "dependentFiles": list(self.dependent_files),
            "coveringTests": [t.to_json() for t in tests],
            "coveringTestCount": len(self.tests),
            "testFilters": [t.to_json() for t in self.filters],
            "swiftTestCommand": self.swift_test_command,
            "selection": self.selection.to_json(),
            "rangesApproximate": True,
            "rangeMethod": RANGE_METHOD,
            "gitMs": round(self.git_ms, 1),
            "truncated": shown < len(self.references)
            or self.reference_count > len(self.references)
            or len(tests) < len(self.tests),
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
            if change == "moved" and (
                shares_its_lines(before, old.masked) or shares_its_lines(after, new.masked)
            ):
                continue  # its line changed elsewhere (`init() {}; func area() -> Int { 4 }`)
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


# --- the tool ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeInputs:
    """What change_impact reads before the query, outside the index: git's changes, and
    SwiftPM's description of the package (its tests and executables; None for no package)."""

    changes: GitChanges
    package: PackageDescription | None = None


def change_impact(
    db: Database, changes: GitChanges, package: PackageDescription | None = None
) -> ChangeImpactAnswer:
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
    reached = reach(db, seeds, package=package, changed_paths=changed_files)
    defined_in = {occ.path for written in written_occurrences(db, reached.via).values() for occ in written}
    dependent = sorted(defined_in - set(changed_files))
    selection = select_tests(db, reached.covering(), reached.executables)
    stale = sorted(p for p in changed_files if p in live and file_is_stale(db, p, live[p]))
    # A changed file no unit compiles is stale until a build compiles it: one in a target's
    # folder will be; one outside every target never is, and is named, not waited for.
    missing = [
        p
        for p in changed_files
        if p not in live and os.path.exists(p) and (package is None or package.in_a_target_folder(p))
    ]
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
        selection=selection,
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


def query_change_impact(db: Database, args: ChangeImpactArgs, inputs: ChangeInputs) -> ChangeImpactAnswer:
    """`inputs`: what git says changed and what SwiftPM says the package is, which the Engine
    reads before asking (never under the database: git and SwiftPM may take seconds)."""
    return change_impact(db, inputs.changes, inputs.package)
