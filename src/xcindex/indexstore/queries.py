"""The read side of the database: the rows and queries the tools ask for.

Every query sees only *live* units (the newest unit of each existing source file), joined
through `unit_records` to the records they use. Kept stable for `tools/`: they call these
methods on a `Database`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xcindex.indexstore.model import Property, Role, is_generated_name

PARAMETER_KIND = 25
"""libIndexStore's symbol kind for a function parameter."""
BY_SYMBOL_ROLES = int(Role.REL_OVERRIDEOF | Role.REL_BASEOF | Role.REL_EXTENDEDBY)
"""The relation roles looked up by related symbol (overrides, conformances, extensions):
only these rows are in the `relations_symbol` index, and a query uses that index only when
its WHERE clause repeats the index's condition, spelled the same way (`_BY_SYMBOL`)."""
_BY_SYMBOL = f" AND (rel.roles & {BY_SYMBOL_ROLES}) != 0"


def by_symbol_clause(roles: int) -> str:
    """The `relations_symbol` index's own condition, for a query by related symbol whose roles
    it holds (the planner uses a partial index only when the query repeats it)."""
    return _by_symbol(roles)


def _by_symbol(roles: int) -> str:
    return _BY_SYMBOL if roles & ~BY_SYMBOL_ROLES == 0 else ""


@dataclass(frozen=True)
class SymbolRow:
    id: int
    usr: str
    name: str
    kind: int
    subkind: int
    language: int
    properties: int


@dataclass(frozen=True)
class OccurrenceRow:
    id: int
    symbol_id: int
    roles: int
    path: str
    line: int
    column: int
    module: str
    unit_mtime_ns: int


@dataclass(frozen=True)
class RelationRow:
    """A relation of an occurrence: `occurrence` (of some symbol) relates to `symbol`."""

    occurrence: OccurrenceRow
    roles: int
    symbol_id: int


_OCC_SELECT = """
SELECT DISTINCT o.id, o.symbol_id, o.roles, f.path, o.line, o.col, u.module, u.mtime_ns
FROM occurrences o
JOIN unit_records ur ON ur.record_id = o.record_id
JOIN units u ON u.id = ur.unit_id AND u.live = 1
JOIN files f ON f.id = ur.file_id
"""


class ReadSide:
    """Queries (mixed into Database): synchronous, called from the index actor's thread."""

    _conn: sqlite3.Connection

    def symbols_by_name(self, name: str) -> list[SymbolRow]:
        return [
            SymbolRow(*row)
            for row in self._conn.execute(
                "SELECT id, usr, name, kind, subkind, language, properties FROM symbols WHERE name = ?",
                (name,),
            )
        ]

    def symbols_by_base_name(self, base: str) -> list[SymbolRow]:
        """Symbols spelled `base(...)`: the labelled forms of a bare method name."""
        return [
            SymbolRow(*row)
            for row in self._conn.execute(
                "SELECT id, usr, name, kind, subkind, language, properties FROM symbols"
                " WHERE name >= ? AND name < ?",
                (base + "(", base + ")"),
            )
        ]

    def symbol_by_usr(self, usr: str) -> SymbolRow | None:
        row = self._conn.execute(
            "SELECT id, usr, name, kind, subkind, language, properties FROM symbols WHERE usr = ?", (usr,)
        ).fetchone()
        return SymbolRow(*row) if row else None

    def symbols_by_ids(self, ids: Iterable[int]) -> dict[int, SymbolRow]:
        wanted = list(set(ids))
        result: dict[int, SymbolRow] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                f"SELECT id, usr, name, kind, subkind, language, properties FROM symbols WHERE id IN ({marks})",
                chunk,
            ):
                result[int(row[0])] = SymbolRow(*row)
        return result

    def occurrences_of(self, symbol_id: int) -> list[OccurrenceRow]:
        return [
            OccurrenceRow(*row)
            for row in self._conn.execute(_OCC_SELECT + " WHERE o.symbol_id = ?", (symbol_id,))
        ]

    def related_occurrences(self, symbol_id: int, role: Role) -> list[RelationRow]:
        """Occurrences that carry a relation with `role` to the symbol."""
        rows = self._conn.execute(
            _OCC_SELECT.replace("SELECT DISTINCT", "SELECT DISTINCT rel.roles, rel.symbol_id,")
            + " JOIN relations rel ON rel.occurrence_id = o.id"
            " WHERE rel.symbol_id = ? AND (rel.roles & ?) != 0" + _by_symbol(int(role)),
            (symbol_id, int(role)),
        )
        return [RelationRow(OccurrenceRow(*row[2:]), int(row[0]), int(row[1])) for row in rows]

    def related_occurrences_of(self, symbol_id: int, role: Role) -> list[RelationRow]:
        """Occurrences *of* the symbol that carry a relation with `role` (to another symbol).
        An occurrence's roles include its relations' roles, so the occurrence index picks
        them out first: a type referenced in thousands of places has few such mentions."""
        rows = self._conn.execute(
            _OCC_SELECT.replace("SELECT DISTINCT", "SELECT DISTINCT rel.roles, rel.symbol_id,")
            + " JOIN relations rel ON rel.occurrence_id = o.id"
            " WHERE o.symbol_id = ? AND (o.roles & ?) != 0 AND (rel.roles & ?) != 0",
            (symbol_id, int(role), int(role)),
        )
        return [RelationRow(OccurrenceRow(*row[2:]), int(row[0]), int(row[1])) for row in rows]

    def relations_of(self, occurrence_ids: Sequence[int]) -> dict[int, list[tuple[int, int]]]:
        """The relations (roles, symbol id) of each given occurrence."""
        result: dict[int, list[tuple[int, int]]] = {}
        for start in range(0, len(occurrence_ids), 500):
            chunk = list(occurrence_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for occ_id, roles, symbol_id in self._conn.execute(
                f"SELECT occurrence_id, roles, symbol_id FROM relations WHERE occurrence_id IN ({marks})",
                chunk,
            ):
                result.setdefault(int(occ_id), []).append((int(roles), int(symbol_id)))
        return result

    def occurrences_in_file(self, path: str) -> list[OccurrenceRow]:
        return [OccurrenceRow(*row) for row in self._conn.execute(_OCC_SELECT + " WHERE f.path = ?", (path,))]

    def files_relating_to(self, symbol_ids: Sequence[int], roles: int) -> set[str]:
        """Files with an occurrence that relates (override, witness, base) to the symbols."""
        found: set[str] = set()
        for start in range(0, len(symbol_ids), 500):
            chunk = list(symbol_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for (path,) in self._conn.execute(
                "SELECT DISTINCT f.path FROM relations rel"
                " JOIN occurrences o ON o.id = rel.occurrence_id"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                " JOIN files f ON f.id = ur.file_id"
                f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & ?) != 0" + _by_symbol(roles),
                [*chunk, roles],
            ):
                found.add(str(path))
        return found

    def files_referencing(self, symbol_ids: Sequence[int]) -> dict[str, set[int]]:
        """Files with an occurrence of any of the symbols, and which ones."""
        result: dict[str, set[int]] = {}
        for start in range(0, len(symbol_ids), 500):
            chunk = list(symbol_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for path, symbol_id in self._conn.execute(
                "SELECT DISTINCT f.path, o.symbol_id FROM occurrences o"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                " JOIN files f ON f.id = ur.file_id"
                f" WHERE o.symbol_id IN ({marks})",
                chunk,
            ):
                result.setdefault(str(path), set()).add(int(symbol_id))
        return result

    def live_files(self) -> list[tuple[str, int, str, str, bool]]:
        """(path, newest unit mtime, module, target, is_test) of every live main file."""
        return [
            (str(path), int(mtime), str(module), str(target), bool(is_test))
            for path, mtime, module, target, is_test in self._conn.execute(
                "SELECT f.path, u.mtime_ns, u.module, u.target, u.is_test FROM units u"
                " JOIN files f ON f.id = u.main_file_id WHERE u.live = 1 ORDER BY f.path"
            )
        ]

    def system_modules(self) -> set[str]:
        """Modules that some unit imports as system modules (the standard library, SDKs)."""
        return {
            str(row[0])
            for row in self._conn.execute("SELECT DISTINCT module FROM unit_units WHERE is_system = 1")
        }

    def unit_of_file(self, path: str) -> tuple[str, int, bool] | None:
        row = self._conn.execute(
            "SELECT u.module, u.mtime_ns, u.is_test FROM units u JOIN files f ON f.id = u.main_file_id"
            " WHERE u.live = 1 AND f.path = ?",
            (path,),
        ).fetchone()
        return (str(row[0]), int(row[1]), bool(row[2])) if row else None

    def test_symbols_in_files(self, paths: Sequence[str]) -> list[tuple[str, SymbolRow, int]]:
        """Definitions of UNITTEST-marked symbols in the given files: (path, symbol, line)."""
        result: list[tuple[str, SymbolRow, int]] = []
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                "SELECT DISTINCT f.path, s.id, s.usr, s.name, s.kind, s.subkind, s.language, s.properties, o.line"
                + _LIVE_SYMBOLS_IN_FILES
                + f" WHERE f.path IN ({marks}) AND (s.properties & ?) != 0 AND (o.roles & ?) != 0",
                (*chunk, int(Property.UNITTEST), int(Role.DEFINITION)),
            ):
                result.append((str(row[0]), SymbolRow(*row[1:8]), int(row[8])))
        return result

    def declared_symbol_ids(self, paths: Sequence[str]) -> list[int]:
        """Symbols the files declare in their source: definitions and declarations that are
        not implicit, not parameters, not locals. Filtered in SQL: on a hub file's dependents
        this runs over every occurrence of hundreds of files."""
        found: set[int] = set()
        written = int(Role.DEFINITION | Role.DECLARATION)
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            for symbol_id, name in self._conn.execute(
                "SELECT DISTINCT s.id, s.name"
                + _LIVE_SYMBOLS_IN_FILES
                + f" WHERE f.path IN ({marks}) AND (o.roles & ?) != 0 AND (o.roles & ?) = 0"
                " AND s.kind != ? AND (s.properties & ?) = 0",
                (*chunk, written, int(Role.IMPLICIT), PARAMETER_KIND, int(Property.LOCAL)),
            ):
                if not is_generated_name(str(name)):
                    found.add(int(symbol_id))
        return sorted(found)

    def symbol_ids_with_usr_prefix(self, prefixes: Sequence[str]) -> list[int]:
        """Symbols whose USR starts with one of the prefixes (a range scan each)."""
        found: list[int] = []
        for prefix in prefixes:
            found.extend(
                int(row[0])
                for row in self._conn.execute(
                    "SELECT id FROM symbols WHERE usr >= ? AND usr < ?", (prefix, prefix + "\U0010ffff")
                )
            )
        return found


_LIVE_SYMBOLS_IN_FILES = (
    " FROM files f JOIN unit_records ur ON ur.file_id = f.id"
    " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
    " JOIN occurrences o ON o.record_id = ur.record_id"
    " JOIN symbols s ON s.id = o.symbol_id"
)
"""Occurrences (o) and their symbols (s) in the live units' files (f): add `WHERE f.path IN …`."""


def _chunks(items: Sequence[str], size: int = 500) -> list[Sequence[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
