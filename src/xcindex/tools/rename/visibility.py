"""Which files can see a renamed symbol: the safety net lists an unproven site only there.

A Swift name is visible from a file when its access level lets it in: `private` and
`fileprivate` (and a member of a type that is) only in its own file; `internal` in its own
module, and in a file that `@testable import`s that module; `package`, `public` and `open`
in its module and in every module that imports it, as the target graph the units record
says (a unit's module dependencies, followed transitively: a re-export counts), or as the
file's own `import` lines say (read under every `#if`: a `-D` flag or a trait may compile
one in). The access level is read from the declaration's text (`public`, `open`, `package`,
`internal`, `fileprivate`, `private`; not `private(set)`), defaulting as Swift does (a member
of an extension to the extension's level, a requirement or an enum case to its type's), and
bounded by every enclosing type's. What cannot be judged is visible: a file the index does
not know (a target not built, a nested package), a C symbol, a declaration with no text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.swift.lexer import blank_bytes
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.rename.structure import EXTENSION_KIND, PROTOCOL_KIND, extended_type, parent_of
from xcindex.tools.resolve import declaration_text

FILE, INTERNAL, PACKAGE, PUBLIC = 1, 2, 3, 4
_LEVELS = {"private": FILE, "fileprivate": FILE, "internal": INTERNAL, "package": PACKAGE, "public": PUBLIC}
_LEVELS["open"] = PUBLIC
_MODIFIER = re.compile(r"\b(open|public|package|internal|fileprivate|private)\b(?!\s*\(\s*set\s*\))")
_KEYWORD = re.compile(
    r"\b(func|var|let|struct|enum|protocol|actor|extension|typealias|init|subscript|case|"
    r"associatedtype|macro|operator)\b|\bclass\b(?!\s+(?:func|var|let)\b)"
)
_IMPORT = re.compile(
    rb"^[ \t]*(@testable[ \t]+)?(?:@[\w.]+(?:\([^)\n]*\))?[ \t]+)*import[ \t]+(?:\w+[ \t]+)?(\w+)", re.M
)
_ENUM_CASE_KIND = 15
_SWIFT = 100


def explicit_level(text: str) -> int | None:
    """The access modifier written before the declaration's keyword, if any."""
    keyword = _KEYWORD.search(text)
    head = text[: keyword.start()] if keyword else text
    found = _MODIFIER.findall(head)
    return _LEVELS[found[-1]] if found else None


@dataclass(frozen=True)
class Declared:
    """A renamed symbol as visibility sees it: its module, its file and its access level."""

    module: str
    real_path: str
    level: int


class _Levels:
    """Access levels of symbols and their enclosing types, read once per plan."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._known: dict[int, int] = {}

    def definition(self, symbol: SymbolRow) -> OccurrenceRow | None:
        return canonical_occurrence(
            o for o in self.db.occurrences_of(symbol.id) if not o.roles & Role.IMPLICIT
        )

    def level(self, symbol: SymbolRow, depth: int = 0) -> int:
        if symbol.id in self._known:
            return self._known[symbol.id]
        definition = self.definition(symbol)
        if definition is None or depth > 16:
            return PUBLIC  # an SDK type (`extension Double`), or a chain too deep to judge
        own = explicit_level(declaration_text(definition))
        parent = parent_of(self.db, self.db.occurrences_of(symbol.id))
        enclosing: SymbolRow | None = parent
        if parent is not None and parent.kind == EXTENSION_KIND:
            extension = self.definition(parent)
            if own is None and extension is not None:
                own = explicit_level(declaration_text(extension))
            enclosing = extended_type(self.db, parent)
        elif (
            parent is not None
            and own is None
            and (parent.kind == PROTOCOL_KIND or symbol.kind == _ENUM_CASE_KIND)
        ):
            own = self.level(parent, depth + 1)
        level = own if own is not None else INTERNAL
        if enclosing is not None:
            level = min(level, self.level(enclosing, depth + 1))
        self._known[symbol.id] = level
        return level


@lru_cache(maxsize=4096)
def _imports(real_path: str, mtime_ns: int) -> dict[str, bool]:
    """Module → whether some `import` line of the file imports it `@testable`, every `#if`
    branch alike (comments and literals blanked first)."""
    try:
        data = Path(real_path).read_bytes()
    except OSError:
        return {}
    found: dict[str, bool] = {}
    for match in _IMPORT.finditer(blank_bytes(data)):
        module = match.group(2).decode()
        found[module] = found.get(module, False) or bool(match.group(1))
    return found


def file_imports(real_path: str) -> dict[str, bool]:
    try:
        mtime = os.stat(real_path).st_mtime_ns
    except OSError:
        return {}
    return _imports(real_path, mtime)


class Visibility:
    """Whether a file can see any of the renamed symbols (see the module docstring)."""

    def __init__(self, db: Database, renamed: Iterable[SymbolRow]) -> None:
        levels = _Levels(db)
        self.declared: list[Declared] = []
        self.judged = True
        for symbol in renamed:
            definition = levels.definition(symbol)
            if symbol.language != _SWIFT or definition is None:
                self.judged = False  # a C symbol, or one with no text: visible everywhere
                continue
            self.declared.append(
                Declared(definition.module, os.path.realpath(definition.path), levels.level(symbol))
            )
        self.modules: dict[str, str] = {}
        for path, _mtime, module, _target, _test in db.live_files():
            self.modules.setdefault(os.path.realpath(path), module)
        direct: dict[str, set[str]] = {}
        for module, dependency in db.module_dependencies():
            direct.setdefault(module, set()).add(dependency)
        self.sees: dict[str, set[str]] = {}
        for module in direct:
            reached: set[str] = set()
            frontier = [module]
            while frontier:
                for dependency in direct.get(frontier.pop(), ()):
                    if dependency not in reached:
                        reached.add(dependency)
                        frontier.append(dependency)
            self.sees[module] = reached

    def can_see(self, real_path: str) -> bool:
        if not self.judged:
            return True
        module = self.modules.get(real_path)
        if module is None:
            return True  # not a file the index compiled: nothing to judge it by
        imports = file_imports(real_path)
        return any(self._sees(declared, real_path, module, imports) for declared in self.declared)

    def _sees(self, declared: Declared, real_path: str, module: str, imports: dict[str, bool]) -> bool:
        if declared.level == FILE:
            return real_path == declared.real_path
        if module == declared.module or imports.get(declared.module, False):
            return True  # its own module, or an `@testable import` of it
        if declared.level < PACKAGE:
            return False
        return declared.module in self.sees.get(module, ()) or declared.module in imports
