"""Tests that run an executable as a process, by name (docs/tools.md, "Reach").

SwiftPM builds every executable of a package before its tests, and a test can run one from
the products folder (`products.appendingPathComponent("canary-tool")`, or a helper given
`"calc add 1 2"`) without declaring a dependency on it or referencing any of its symbols: no
relation in the index leads from the test to the tool. So the tests are found by name: the
string literals of the test targets' files that name an executable (its target's name, or an
executable product made of it, as a word: `canary-tool`, `calc add 1 2`, `.build/debug/calc`)
are read with the one lexer, and the declaration each lies in (a test, a helper, a property)
is the symbol that runs the tool. A change reaches an executable when it reaches code
declared in the executable's sources or used in them (`main.swift`'s top-level code is in no
function), or changes one of its files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import written_occurrences
from xcindex.indexstore.model import Role
from xcindex.project.package import PackageDescription, PackageTarget
from xcindex.swift.declarations import innermost, scan_declarations
from xcindex.swift.lexer import Kind, spans
from xcindex.swift.source import source_lines

_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_IMPLICIT = int(Role.IMPLICIT)


class Executables:
    """A package's executables, and which code runs each by name; read as asked, kept for one
    question."""

    def __init__(self, db: Database, package: PackageDescription | None) -> None:
        self.db = db
        self.package = package
        targets = [t for t in package.targets if t.kind == "executable"] if package else []
        self.targets: dict[str, PackageTarget] = {t.name: t for t in targets}
        self.owner_of: dict[str, str] = {path: t.name for t in targets for path in t.sources}
        self._used_in: dict[str, frozenset[int]] = {}
        self._runners: dict[str, frozenset[int]] = {}

    def in_paths(self, paths: Iterable[str]) -> set[str]:
        """The executables (target names) these files belong to."""
        return {self.owner_of[p] for p in paths if p in self.owner_of}

    def reached_by(self, symbol_ids: set[int]) -> set[str]:
        """The executables whose sources declare or use one of these symbols."""
        if not self.targets or not symbol_ids:
            return set()
        found = {
            self.owner_of[occ.path]
            for occs in written_occurrences(self.db, symbol_ids).values()
            for occ in occs
            if occ.path in self.owner_of
        }
        for path, name in self.owner_of.items():
            if name not in found and self._uses(path) & symbol_ids:
                found.add(name)
        return found

    def runners(self, names: Iterable[str]) -> set[int]:
        """The symbols of test targets whose code names one of these executables."""
        found: set[int] = set()
        for name in names:
            if name not in self._runners:
                self._runners[name] = frozenset(self._find_runners(name))
            found |= self._runners[name]
        return found

    def _uses(self, path: str) -> frozenset[int]:
        if path not in self._used_in:
            self._used_in[path] = frozenset(
                occ.symbol_id for occ in self.db.occurrences_in_file(path) if not occ.roles & _WRITTEN
            )
        return self._used_in[path]

    def _find_runners(self, target: str) -> set[int]:
        if self.package is None:
            return set()
        names = self.package.executable_names(target)
        pattern = re.compile(
            "|".join(
                rf"(?<![\w-]){re.escape(name)}(?![\w-])" for name in sorted(names, key=len, reverse=True)
            )
        )
        found: set[int] = set()
        for test_target in self.package.targets:
            if test_target.kind != "test":
                continue
            for path in test_target.sources:
                lines = [
                    line for line, text in literals("\n".join(source_lines(path))) if pattern.search(text)
                ]
                if lines:
                    found |= self._holders(path, lines)
        return found

    def _holders(self, path: str, lines: list[int]) -> set[int]:
        """The index's symbols declared by the innermost declarations holding these lines."""
        decls = scan_declarations("\n".join(source_lines(path)))
        defined: dict[tuple[int, str], int] = {}
        occurrences = self.db.occurrences_in_file(path)
        symbols = self.db.symbols_by_ids(occ.symbol_id for occ in occurrences)
        for occ in occurrences:
            if occ.roles & _WRITTEN and not occ.roles & _IMPLICIT and occ.symbol_id in symbols:
                defined.setdefault((occ.line, symbols[occ.symbol_id].name.split("(")[0]), occ.symbol_id)
        found: set[int] = set()
        for line in lines:
            for decl in innermost(decls, line):
                for holder in (decl, *decl.ancestors()):
                    symbol = defined.get((holder.name_line, holder.name))
                    if symbol is not None:
                        found.add(symbol)
                        break
        return found


def literals(text: str) -> list[tuple[int, str]]:
    """Each string literal's text with the line it starts on."""
    return list(_literals(text))


@lru_cache(maxsize=256)
def _literals(text: str) -> tuple[tuple[int, str], ...]:
    found: list[tuple[int, str]] = []
    line, counted = 1, 0
    for span in spans(text):
        if span.kind is Kind.STRING:
            line += text.count("\n", counted, span.start)
            counted = span.start
            found.append((line, text[span.start : span.end]))
    return tuple(found)
