"""The read side of the database: the rows and queries the tools ask for.

Every query sees only *live* units (the newest unit of each existing source file), joined
through `unit_records` to the records they use. Kept stable for `tools/`: they call these
methods on a `Database`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from xcindex.indexstore.content import content_digest
from xcindex.indexstore.model import PARAMETER_KIND as PARAMETER_KIND
from xcindex.indexstore.model import Property, Role, usr_hash

T = TypeVar("T")

BY_SYMBOL_ROLES = int(Role.REL_OVERRIDEOF | Role.REL_BASEOF | Role.REL_EXTENDEDBY)
"""The relation roles looked up by related symbol (overrides, conformances, extensions):
only these rows are in the `relations_symbol` index, and a query uses that index only when
its WHERE clause repeats the index's condition, spelled the same way (`_BY_SYMBOL`)."""
_BY_SYMBOL = f" AND (rel.roles & {BY_SYMBOL_ROLES}) != 0"
UNITTEST_PROPERTY = int(Property.UNITTEST)
STATED_RELATIONS = f"NOT ((o.roles & {int(Role.IMPLICIT)}) != 0 AND (o.roles & {int(Role.DEFINITION | Role.DECLARATION)}) != 0)"
"""model.states_relations in SQL, on the occurrence `o`: its relations are the source's
unless it is a synthesised declaration."""
"""Test classes and test methods: the `symbols_unittest` partial index holds them only."""


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
    _derived: dict[str, tuple[tuple[int, int], Any]] | None = None
    _same: dict[tuple[str, int, int, int], bool] | None = None

    def same_as_indexed(self, path: str, unit_mtime_ns: int, now: os.stat_result) -> bool:
        """Whether `path`, written after its live unit (of `unit_mtime_ns`), has the content
        that unit indexed again (writer.record_source_digests). Read once per (file time,
        size): a restored file is hashed once, not per answer."""
        key = (path, now.st_mtime_ns, now.st_size, unit_mtime_ns)
        if self._same is None:
            self._same = {}
        known = self._same.get(key)
        if known is not None:
            return known
        try:
            row = self._conn.execute(
                "SELECT d.unit_mtime_ns, d.size, d.digest FROM source_digests d"
                " JOIN files f ON f.id = d.file_id WHERE f.path = ?",
                (path,),
            ).fetchone()
        except sqlite3.OperationalError:
            row = None  # a reader opened on a database from before the table
        same = False
        if row is not None and int(row[0]) == unit_mtime_ns and int(row[1]) == now.st_size:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                data = None
            same = data is not None and content_digest(data) == bytes(row[2])
        if len(self._same) > 4096:
            self._same.clear()
        self._same[key] = same
        return same

    def built_digests(self, paths: Iterable[str]) -> dict[str, tuple[int, bytes]]:
        """(size, content digest) of each of `paths` as its newest build unit compiled it
        (writer.record_source_digests), for those where that is known; looked up as spelled
        and by real path."""
        found: dict[str, tuple[int, bytes]] = {}
        for path in paths:
            for spelled in dict.fromkeys((path, os.path.realpath(path))):
                try:
                    row = self._conn.execute(
                        "SELECT b.size, b.digest FROM build_digests b JOIN files f ON f.id = b.file_id"
                        " WHERE f.path = ?",
                        (spelled,),
                    ).fetchone()
                except sqlite3.OperationalError:
                    return {}  # a reader opened on a database from before the table
                if row is not None:
                    found[path] = (int(row[0]), bytes(row[1]))
                    break
        return found

    def derived(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`'s value, kept until this connection or another one changes the
        database (a refresh, an overlay, a worker's records). For whole-project facts that
        are cheap to read in one pass and costly to read per question."""
        version = (self._conn.total_changes, int(self._conn.execute("PRAGMA data_version").fetchone()[0]))
        if self._derived is None:
            self._derived = {}
        cached = self._derived.get(name)
        if cached is not None and cached[0] == version:
            return cast(T, cached[1])
        value = compute()
        self._derived[name] = (version, value)
        return value

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
            "SELECT id, usr, name, kind, subkind, language, properties FROM symbols WHERE usr_hash = ? AND usr = ?",
            (usr_hash(usr), usr),
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

    def live_record_files(self) -> dict[int, tuple[tuple[str, str, int], ...]]:
        """Record id → (path, module, unit mtime) of each live unit that uses it. Small (one
        row per file), it spares a three-table join per occurrence when a symbol has
        thousands of them."""
        return self.derived("live_record_files", self._read_live_record_files)

    def _read_live_record_files(self) -> dict[int, tuple[tuple[str, str, int], ...]]:
        found: dict[int, list[tuple[str, str, int]]] = {}
        for record_id, path, module, mtime in self._conn.execute(
            "SELECT ur.record_id, f.path, u.module, u.mtime_ns FROM unit_records ur"
            " JOIN units u ON u.id = ur.unit_id AND u.live = 1 JOIN files f ON f.id = ur.file_id"
        ):
            found.setdefault(int(record_id), []).append((str(path), str(module), int(mtime)))
        return {record_id: tuple(files) for record_id, files in found.items()}

    def file_dependents(self) -> dict[str, frozenset[str]]:
        """Declaring file → the files that depend on it: they mention a symbol it declares
        (not a parameter, a local or a macro's helper), or override, witness, inherit from
        or extend one. Read in one pass over the records (about 0.1 s at L, where walking
        a hub file's dependents read the occurrences of 1,500 files per level)."""
        return self.derived("file_dependents", self._read_file_dependents)

    def _read_file_dependents(self) -> dict[str, frozenset[str]]:
        edges = self._conn.execute(
            "WITH decl AS (SELECT DISTINCT o.symbol_id, o.record_id FROM occurrences o"
            " JOIN symbols s ON s.id = o.symbol_id"
            " WHERE (o.roles & ?) != 0 AND (o.roles & ?) = 0 AND s.kind != ? AND (s.properties & ?) = 0"
            " AND substr(s.name, 1, 1) != '$' AND instr(s.name, ':$s') = 0)"
            " SELECT o.record_id, decl.record_id FROM occurrences o JOIN decl ON decl.symbol_id = o.symbol_id"
            " UNION SELECT o.record_id, decl.record_id FROM relations rel"
            " JOIN decl ON decl.symbol_id = rel.symbol_id JOIN occurrences o ON o.id = rel.occurrence_id"
            " WHERE (rel.roles & ?) != 0" + _BY_SYMBOL,
            (
                int(Role.DEFINITION | Role.DECLARATION),
                int(Role.IMPLICIT),
                PARAMETER_KIND,
                int(Property.LOCAL),
                int(Role.REL_OVERRIDEOF | Role.REL_BASEOF | Role.REL_EXTENDEDBY),
            ),
        ).fetchall()
        live = self.live_record_files()
        found: dict[str, set[str]] = {}
        for referencing, declaring in edges:
            for declaring_file, _, _ in live.get(declaring, ()):
                for referencing_file, _, _ in live.get(referencing, ()):
                    if referencing_file != declaring_file:
                        found.setdefault(declaring_file, set()).add(referencing_file)
        return {path: frozenset(paths) for path, paths in found.items()}

    def written_site_page(self, symbol_id: int, limit: int, offset: int) -> tuple[int, list[OccurrenceRow]]:
        """One page of the symbol's occurrences written in the source (not implicit), one per
        (path, line, column) with their roles merged, in that order, and how many there are.
        Reads the occurrences' own columns only (through `live_record_files`), so a hub
        symbol's tens of thousands of sites cost no join and one page of rows built."""
        live = self.live_record_files()
        by_key: dict[tuple[str, int, int], tuple[int, int, str, int]] = {}
        for occ_id, record_id, roles, line, col in self._conn.execute(
            "SELECT id, record_id, roles, line, col FROM occurrences WHERE symbol_id = ? AND (roles & ?) = 0",
            (symbol_id, int(Role.IMPLICIT)),
        ):
            for path, module, mtime in live.get(record_id, ()):
                key = (path, line, col)
                seen = by_key.get(key)
                if seen is None:
                    by_key[key] = (occ_id, roles, module, mtime)
                elif seen[1] | roles != seen[1]:
                    by_key[key] = (seen[0], seen[1] | roles, seen[2], seen[3])
        keys = sorted(by_key)[offset : offset + limit]
        page = []
        for path, line, col in keys:
            occ_id, roles, module, mtime = by_key[(path, line, col)]
            page.append(
                OccurrenceRow(int(occ_id), symbol_id, int(roles), path, line, col, str(module), int(mtime))
            )
        return len(by_key), page

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
        return [
            OccurrenceRow(*row)
            for row in self._conn.execute(
                "SELECT DISTINCT o.id, o.symbol_id, o.roles, f.path, o.line, o.col, u.module, u.mtime_ns"
                " FROM files f JOIN unit_records ur ON ur.file_id = f.id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                + RECORD_OCCURRENCES.format(record="ur.record_id")
                + " WHERE f.path = ?",
                (path,),
            )
        ]

    def positions_in_file(self, path: str) -> set[tuple[int, int]]:
        """Where the index has an occurrence in the file, (line, column): what plan_rename's
        whole-tree scan asks of each file naming the old name (a row object per occurrence
        was most of a plan's time on a large package)."""
        return {
            (int(line), int(col))
            for line, col in self._conn.execute(
                "SELECT DISTINCT o.line, o.col FROM files f JOIN unit_records ur ON ur.file_id = f.id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                + RECORD_OCCURRENCES.format(record="ur.record_id")
                + " WHERE f.path = ?",
                (path,),
            )
        }

    def live_files(self) -> list[tuple[str, int, str, str, bool]]:
        """(path, newest unit mtime, module, target, is_test) of every live main file."""
        return [
            (str(path), int(mtime), str(module), str(target), bool(is_test))
            for path, mtime, module, target, is_test in self._conn.execute(
                "SELECT f.path, u.mtime_ns, u.module, u.target, u.is_test FROM units u"
                " JOIN files f ON f.id = u.main_file_id WHERE u.live = 1 ORDER BY f.path"
            )
        ]

    def newest_build_unit_mtime(self) -> int:
        """The newest live unit a build wrote (not the overlay): when the last build wrote."""
        row = self._conn.execute(
            "SELECT max(mtime_ns) FROM units WHERE live = 1 AND name NOT LIKE 'overlay:%'"
        ).fetchone()
        return int(row[0]) if row is not None and row[0] is not None else 0

    def live_output_files(self, paths: Sequence[str] | None = None) -> dict[str, str]:
        """The object file each live unit names (of `paths`, or every live main file)."""
        query = (
            "SELECT f.path, u.output_file FROM units u JOIN files f ON f.id = u.main_file_id"
            " WHERE u.live = 1 AND u.output_file != ''"
        )
        if paths is None:
            return {str(path): str(output) for path, output in self._conn.execute(query)}
        found: dict[str, str] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                (str(path), str(output))
                for path, output in self._conn.execute(f"{query} AND f.path IN ({marks})", chunk)
            )
        return found

    def live_unit_mtimes(self, paths: Sequence[str]) -> dict[str, int]:
        """The newest live unit's mtime of each of `paths` that has one (as the index spells it)."""
        found: dict[str, int] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for path, mtime in self._conn.execute(
                "SELECT f.path, max(u.mtime_ns) FROM units u JOIN files f ON f.id = u.main_file_id"
                f" WHERE u.live = 1 AND f.path IN ({marks}) GROUP BY f.path",
                chunk,
            ):
                found[str(path)] = int(mtime)
        return found

    def paths_with_units(self, paths: Sequence[str]) -> set[str]:
        """Those of `paths` some unit (live or not) has as its main file."""
        found: set[str] = set()
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                str(path)
                for (path,) in self._conn.execute(
                    f"SELECT DISTINCT f.path FROM files f JOIN units u ON u.main_file_id = f.id WHERE f.path IN ({marks})",
                    chunk,
                )
            )
        return found

    def module_dependencies(self) -> list[tuple[str, str]]:
        """(module, a module it imports) for every live unit's non-system module dependency:
        the target graph as the build recorded it."""
        return [
            (str(module), str(dependency))
            for module, dependency in self._conn.execute(
                "SELECT DISTINCT u.module, uu.module FROM units u JOIN unit_units uu ON uu.unit_id = u.id"
                " WHERE u.live = 1 AND uu.is_system = 0"
            )
        ]

    def system_modules(self) -> set[str]:
        """Modules that some unit imports as system modules (the standard library, SDKs)."""
        return {
            str(row[0])
            for row in self._conn.execute("SELECT DISTINCT module FROM unit_units WHERE is_system = 1")
        }

    def test_symbols(self) -> list[tuple[str, SymbolRow, int]]:
        """Definitions of UNITTEST-marked symbols (test classes and methods): (path, symbol,
        line). From the few marked symbols (a partial index), not from files' occurrences."""
        return [
            (str(row[0]), SymbolRow(*row[1:8]), int(row[8]))
            for row in self._conn.execute(
                "SELECT DISTINCT f.path, s.id, s.usr, s.name, s.kind, s.subkind, s.language, s.properties, o.line"
                " FROM symbols s INDEXED BY symbols_unittest JOIN occurrences o ON o.symbol_id = s.id"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1 JOIN files f ON f.id = ur.file_id"
                f" WHERE (s.properties & {UNITTEST_PROPERTY}) != 0 AND (o.roles & ?) != 0",
                (int(Role.DEFINITION),),
            )
        ]


RECORD_OCCURRENCES = (
    " JOIN records rr ON rr.id = {record}"
    " JOIN occurrences o ON o.id BETWEEN rr.first_occurrence AND rr.last_occurrence"
)
"""The occurrences (o) of a record: its contiguous id range (see the schema), a rowid range
scan, where an index of occurrences by record cost a fifth of the database."""
