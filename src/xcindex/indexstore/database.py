"""The SQLite database that mirrors one index store, and the queries the tools ask.

Records are content-addressed and immutable, so a record is parsed once, ever; units are
re-read when their modification time changes. A unit row is written in the same
transaction as its edges, after all of its records are in, so a process killed in the
middle of an ingestion leaves nothing half-done that looks finished.

Blocking: every method here is synchronous; the index actor calls them from a worker
thread, one at a time.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xcindex.indexstore.model import (
    DependencyKind,
    Property,
    ReadFailure,
    RecordData,
    Role,
    UnitInfo,
    is_generated_name,
)
from xcindex.indexstore.name_queries import NameQueries

PARAMETER_KIND = 25
"""libIndexStore's symbol kind for a function parameter."""
SCHEMA_VERSION = 2
CACHE_ENV = "XCINDEX_CACHE_DIR"
LIVE_UNITS_PENDING = "live_units_pending"
"""Meta key set in the transaction that changes units, cleared in the one that recomputes
which are live: a process killed in between leaves it set, and the next refresh finishes."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS units (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    main_file_id INTEGER,
    module TEXT NOT NULL,
    target TEXT NOT NULL,
    provider TEXT NOT NULL,
    is_system INTEGER NOT NULL,
    is_test INTEGER NOT NULL DEFAULT 0,
    live INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS units_main_file ON units(main_file_id);
CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS unit_records (
    unit_id INTEGER NOT NULL, record_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
    PRIMARY KEY (unit_id, record_id, file_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS unit_records_record ON unit_records(record_id);
CREATE INDEX IF NOT EXISTS unit_records_file ON unit_records(file_id);
CREATE TABLE IF NOT EXISTS unit_units (
    unit_id INTEGER NOT NULL, dependency TEXT NOT NULL, module TEXT NOT NULL, is_system INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS unit_units_unit ON unit_units(unit_id);
CREATE TABLE IF NOT EXISTS unit_files (unit_id INTEGER NOT NULL, file_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS unit_files_unit ON unit_files(unit_id);
CREATE TABLE IF NOT EXISTS unit_missing_records (unit_id INTEGER NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS unit_missing_records_unit ON unit_missing_records(unit_id);
CREATE TABLE IF NOT EXISTS symbols (
    id INTEGER PRIMARY KEY,
    usr TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    kind INTEGER NOT NULL,
    subkind INTEGER NOT NULL,
    language INTEGER NOT NULL,
    properties INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE TABLE IF NOT EXISTS occurrences (
    id INTEGER PRIMARY KEY,
    record_id INTEGER NOT NULL,
    symbol_id INTEGER NOT NULL,
    roles INTEGER NOT NULL,
    line INTEGER NOT NULL,
    col INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS occurrences_symbol ON occurrences(symbol_id);
CREATE INDEX IF NOT EXISTS occurrences_record ON occurrences(record_id);
CREATE TABLE IF NOT EXISTS relations (
    occurrence_id INTEGER NOT NULL,
    roles INTEGER NOT NULL,
    symbol_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS relations_occurrence ON relations(occurrence_id);
CREATE INDEX IF NOT EXISTS relations_symbol ON relations(symbol_id);
CREATE TABLE IF NOT EXISTS failures (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, mtime_ns INTEGER NOT NULL, message TEXT NOT NULL
);
"""


def cache_dir() -> Path:
    if configured := os.environ.get(CACHE_ENV):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "xcindex"


def database_path_for(store_path: Path) -> Path:
    """One database per store, keyed by the store's real path so copies never collide."""
    real = str(store_path.resolve())
    digest = hashlib.sha1(real.encode()).hexdigest()[:16]
    return cache_dir() / f"{store_path.resolve().parent.name[:40]}-{digest}.sqlite"


_BUILD_FOLDERS = ("/.build/", "/DerivedData/")


def is_generated_source(path: str) -> bool:
    """Sources the build system wrote (test discovery, resource accessors): never answers."""
    return any(folder in path for folder in _BUILD_FOLDERS)


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


@dataclass(frozen=True)
class Counts:
    units: int
    live_units: int
    records: int
    symbols: int
    occurrences: int
    relations: int


@dataclass
class IngestCounters:
    """What the last refresh actually did; tests assert incrementality from these."""

    units_read: int = 0
    units_dropped: int = 0
    records_read: int = 0
    records_reused: int = 0
    failures: int = 0


_OCC_SELECT = """
SELECT DISTINCT o.id, o.symbol_id, o.roles, f.path, o.line, o.col, u.module, u.mtime_ns
FROM occurrences o
JOIN unit_records ur ON ur.record_id = o.record_id
JOIN units u ON u.id = ur.unit_id AND u.live = 1
JOIN files f ON f.id = ur.file_id
"""


class Database(NameQueries):  # NameQueries: batched reads for name resolution
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=OFF")
        self._conn.execute("PRAGMA temp_store=MEMORY")
        self._conn.execute("PRAGMA cache_size=-65536")
        version = self._schema_version()
        if version not in (None, SCHEMA_VERSION):
            self._conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        self._symbol_ids: dict[str, int] = {}
        self._file_ids: dict[str, int] = {}
        self.last_counters = IngestCounters()

    def _schema_version(self) -> int | None:
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:
            return None
        return int(row[0]) if row else None

    def close(self) -> None:
        self._conn.close()

    # --- bookkeeping -----------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def known_units(self) -> dict[str, int]:
        return dict(self._conn.execute("SELECT name, mtime_ns FROM units").fetchall())

    def known_failures(self) -> dict[str, tuple[str, int, str]]:
        return {
            name: (kind, mtime, message)
            for name, kind, mtime, message in self._conn.execute(
                "SELECT name, kind, mtime_ns, message FROM failures"
            )
        }

    def live_units_pending(self) -> bool:
        return self.get_meta(LIVE_UNITS_PENDING) is not None

    def _mark_live_units_pending(self) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (LIVE_UNITS_PENDING,))

    def wanted_missing_records(self) -> set[str]:
        """Records that some unit depends on but that are not in the database (unreadable)."""
        return {str(row[0]) for row in self._conn.execute("SELECT DISTINCT record FROM unit_missing_records")}

    def known_records(self, names: Iterable[str]) -> set[str]:
        found: set[str] = set()
        batch: list[str] = []
        for name in names:
            batch.append(name)
            if len(batch) == 500:
                found |= self._records_present(batch)
                batch = []
        if batch:
            found |= self._records_present(batch)
        return found

    def _records_present(self, names: Sequence[str]) -> set[str]:
        marks = ",".join("?" * len(names))
        return {
            row[0] for row in self._conn.execute(f"SELECT name FROM records WHERE name IN ({marks})", names)
        }

    def counts(self) -> Counts:
        def one(sql: str) -> int:
            return int(self._conn.execute(sql).fetchone()[0])

        return Counts(
            units=one("SELECT count(*) FROM units"),
            live_units=one("SELECT count(*) FROM units WHERE live = 1"),
            records=one("SELECT count(*) FROM records"),
            symbols=one("SELECT count(*) FROM symbols"),
            occurrences=one("SELECT count(*) FROM occurrences"),
            relations=one("SELECT count(*) FROM relations"),
        )

    def integrity_ok(self) -> bool:
        return bool(self._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok")

    # --- writing -----------------------------------------------------------------------

    def _file_id(self, path: str) -> int:
        file_id = self._file_ids.get(path)
        if file_id is None:
            self._conn.execute("INSERT OR IGNORE INTO files(path) VALUES (?)", (path,))
            file_id = int(self._conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()[0])
            self._file_ids[path] = file_id
        return file_id

    def _symbol_id(self, usr: str, info: tuple[str, int, int, int, int]) -> int:
        symbol_id = self._symbol_ids.get(usr)
        if symbol_id is None:
            row = self._conn.execute("SELECT id FROM symbols WHERE usr = ?", (usr,)).fetchone()
            if row is None:
                cursor = self._conn.execute(
                    "INSERT INTO symbols(usr, name, kind, subkind, language, properties) VALUES (?,?,?,?,?,?)",
                    (usr, *info),
                )
                symbol_id = int(cursor.lastrowid or 0)
            else:
                symbol_id = int(row[0])
            self._symbol_ids[usr] = symbol_id
        return symbol_id

    def add_records(self, records: Sequence[RecordData]) -> None:
        """Insert parsed records (one transaction); records already present are skipped."""
        self._conn.execute("BEGIN")
        try:
            next_occurrence = int(
                self._conn.execute("SELECT coalesce(max(id), 0) FROM occurrences").fetchone()[0]
            )
            for record in records:
                if self._conn.execute("SELECT 1 FROM records WHERE name = ?", (record.name,)).fetchone():
                    continue
                cursor = self._conn.execute("INSERT INTO records(name) VALUES (?)", (record.name,))
                record_id = int(cursor.lastrowid or 0)
                # Read at last (a rebuild or a repaired file): no longer unreadable.
                self._conn.execute("DELETE FROM failures WHERE name = ?", (record.name,))
                symbol_ids = [
                    self._symbol_id(s.usr, (s.name, s.kind, s.subkind, s.language, s.properties))
                    for s in record.symbols
                ]
                occurrence_rows: list[tuple[int, int, int, int, int, int]] = []
                relation_rows: list[tuple[int, int, int]] = []
                for occ in record.occurrences:
                    next_occurrence += 1
                    occurrence_rows.append(
                        (next_occurrence, record_id, symbol_ids[occ.symbol], occ.roles, occ.line, occ.column)
                    )
                    relation_rows.extend(
                        (next_occurrence, roles, symbol_ids[index]) for roles, index in occ.relations
                    )
                self._conn.executemany(
                    "INSERT INTO occurrences(id, record_id, symbol_id, roles, line, col) VALUES (?,?,?,?,?,?)",
                    occurrence_rows,
                )
                self._conn.executemany(
                    "INSERT INTO relations(occurrence_id, roles, symbol_id) VALUES (?,?,?)", relation_rows
                )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._symbol_ids.clear()
            self._file_ids.clear()
            raise

    def replace_units(self, units: Sequence[UnitInfo], is_test: dict[str, bool]) -> None:
        """Write (or rewrite) units and their edges. Their records must already be in."""
        self._conn.execute("BEGIN")
        try:
            for unit in units:
                self._delete_unit(unit.name)
                main_file_id = self._file_id(unit.main_file) if unit.main_file else None
                cursor = self._conn.execute(
                    "INSERT INTO units(name, mtime_ns, main_file_id, module, target, provider, is_system, is_test)"
                    " VALUES (?,?,?,?,?,?,?,?)",
                    (
                        unit.name,
                        unit.mtime_ns,
                        main_file_id,
                        unit.module_name,
                        unit.target,
                        unit.provider,
                        int(unit.is_system),
                        int(is_test.get(unit.name, False)),
                    ),
                )
                unit_id = int(cursor.lastrowid or 0)
                if unit.is_system:
                    continue
                for dep in unit.dependencies:
                    if dep.kind == DependencyKind.RECORD:
                        row = self._conn.execute(
                            "SELECT id FROM records WHERE name = ?", (dep.name,)
                        ).fetchone()
                        if row is not None:
                            self._conn.execute(
                                "INSERT OR IGNORE INTO unit_records(unit_id, record_id, file_id) VALUES (?,?,?)",
                                (unit_id, int(row[0]), self._file_id(dep.file_path or unit.main_file)),
                            )
                        else:
                            # Unreadable: remembered so that it is reported while a unit wants it.
                            self._conn.execute(
                                "INSERT INTO unit_missing_records(unit_id, record) VALUES (?,?)",
                                (unit_id, dep.name),
                            )
                    elif dep.kind == DependencyKind.UNIT:
                        self._conn.execute(
                            "INSERT INTO unit_units(unit_id, dependency, module, is_system) VALUES (?,?,?,?)",
                            (unit_id, dep.name, dep.module_name, int(dep.is_system)),
                        )
                    elif dep.kind == DependencyKind.FILE:
                        self._conn.execute(
                            "INSERT INTO unit_files(unit_id, file_id) VALUES (?,?)",
                            (unit_id, self._file_id(dep.file_path)),
                        )
                self._conn.execute("DELETE FROM failures WHERE name = ?", (unit.name,))
            self._mark_live_units_pending()
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._symbol_ids.clear()
            self._file_ids.clear()
            raise

    def _delete_unit(self, name: str) -> None:
        row = self._conn.execute("SELECT id FROM units WHERE name = ?", (name,)).fetchone()
        if row is None:
            return
        unit_id = int(row[0])
        for table in ("unit_records", "unit_units", "unit_files", "unit_missing_records"):
            self._conn.execute(f"DELETE FROM {table} WHERE unit_id = ?", (unit_id,))
        self._conn.execute("DELETE FROM units WHERE id = ?", (unit_id,))

    def drop_units(self, names: Iterable[str]) -> None:
        self._conn.execute("BEGIN")
        try:
            for name in names:
                self._delete_unit(name)
            self._mark_live_units_pending()
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def record_failures(self, failures: Sequence[tuple[str, str, int, str]]) -> None:
        self._conn.executemany(
            "INSERT OR REPLACE INTO failures(name, kind, mtime_ns, message) VALUES (?,?,?,?)", failures
        )

    def forget_failures(self, names: Iterable[str]) -> None:
        self._conn.executemany("DELETE FROM failures WHERE name = ?", [(n,) for n in names])

    def recompute_live_units(self) -> None:
        """A unit is live when its main file exists, is the user's source (not a file the
        build generated, such as SwiftPM's test-discovery sources under `.build/`), and it
        is the newest unit for that file."""
        rows = self._conn.execute(
            "SELECT u.id, u.mtime_ns, u.main_file_id, f.path, u.is_system FROM units u"
            " LEFT JOIN files f ON f.id = u.main_file_id"
        ).fetchall()
        newest: dict[int, tuple[int, int]] = {}
        for unit_id, mtime, main_file_id, path, is_system in rows:
            if (
                is_system
                or main_file_id is None
                or not path
                or is_generated_source(path)
                or not os.path.exists(path)
            ):
                continue
            best = newest.get(main_file_id)
            if best is None or (mtime, unit_id) > best:
                newest[main_file_id] = (mtime, unit_id)
        live = {unit_id for _, unit_id in newest.values()}
        self._conn.execute("BEGIN")
        self._conn.execute("UPDATE units SET live = 0")
        self._conn.executemany("UPDATE units SET live = 1 WHERE id = ?", [(u,) for u in live])
        self._conn.execute("DELETE FROM meta WHERE key = ?", (LIVE_UNITS_PENDING,))
        self._conn.execute("COMMIT")

    def collect_garbage(self) -> int:
        """Delete records no unit refers to any more (superseded content); returns how many."""
        orphans = [
            int(row[0])
            for row in self._conn.execute(
                "SELECT r.id FROM records r WHERE NOT EXISTS (SELECT 1 FROM unit_records ur WHERE ur.record_id = r.id)"
            )
        ]
        if not orphans:
            return 0
        self._conn.execute("BEGIN")
        for record_id in orphans:
            self._conn.execute(
                "DELETE FROM relations WHERE occurrence_id IN (SELECT id FROM occurrences WHERE record_id = ?)",
                (record_id,),
            )
            self._conn.execute("DELETE FROM occurrences WHERE record_id = ?", (record_id,))
            self._conn.execute("DELETE FROM records WHERE id = ?", (record_id,))
        self._conn.execute("COMMIT")
        return len(orphans)

    # --- reading -----------------------------------------------------------------------

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
            " WHERE rel.symbol_id = ? AND (rel.roles & ?) != 0",
            (symbol_id, int(role)),
        )
        return [RelationRow(OccurrenceRow(*row[2:]), int(row[0]), int(row[1])) for row in rows]

    def related_occurrences_of(self, symbol_id: int, role: Role) -> list[RelationRow]:
        """Occurrences *of* the symbol that carry a relation with `role` (to another symbol)."""
        rows = self._conn.execute(
            _OCC_SELECT.replace("SELECT DISTINCT", "SELECT DISTINCT rel.roles, rel.symbol_id,")
            + " JOIN relations rel ON rel.occurrence_id = o.id"
            " WHERE o.symbol_id = ? AND (rel.roles & ?) != 0",
            (symbol_id, int(role)),
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
                f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & ?) != 0",
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


def failure_rows(
    failures: Sequence[ReadFailure], kind: str, mtimes: dict[str, int]
) -> list[tuple[str, str, int, str]]:
    return [(f.name, kind, mtimes.get(f.name, 0), f.message) for f in failures]
