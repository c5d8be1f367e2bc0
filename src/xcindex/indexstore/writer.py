"""The write side of the database: records (from the workers) and units (from the server).

Records are written by the ingestion workers themselves, one transaction per batch: by
the compiled ingester (`native_ingest.c`) or, where none could be built, by `RecordWriter`
below. Units and their edges are written by the server after all of their records are in,
so a process killed in the middle of an ingestion leaves nothing half-done that looks
finished (a unit made live early, during a first ingestion someone asks during, has all of
its records and is one the end would make live too).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from xcindex.indexstore.content import content_digest
from xcindex.indexstore.model import DependencyKind, RecordData, UnitInfo, keeps_relations, usr_hash
from xcindex.indexstore.queries import BY_SYMBOL_ROLES, UNITTEST_PROPERTY
from xcindex.project.store_layout import from_another_package
from xcindex.project.store_layout import is_generated_source as is_generated_source

OWN_PACKAGE = "own_package"
"""Meta key: the SwiftPM package whose `.build` holds the store (see `from_another_package`)."""
LIVE_UNITS_PENDING = "live_units_pending"
"""Meta key set in the transaction that changes units, cleared in the one that recomputes
which are live: a process killed in between leaves it set, and the next refresh finishes."""

BULK_INDEXES = (
    "CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name)",
    f"CREATE INDEX IF NOT EXISTS symbols_unittest ON symbols(id) WHERE (properties & {UNITTEST_PROPERTY}) != 0",
    # With the roles: "the definitions of S" or "the calls of S" are filtered in the index,
    # without reading a table row for each of a hub symbol's tens of thousands of occurrences.
    "CREATE INDEX IF NOT EXISTS occurrences_symbol_roles ON occurrences(symbol_id, roles)",
    # Partial: only the relations asked for by their symbol (see queries.BY_SYMBOL_ROLES);
    # calledBy, containedBy and childOf, most of the rows, are asked for by occurrence.
    f"CREATE INDEX IF NOT EXISTS relations_symbol ON relations(symbol_id) WHERE (roles & {BY_SYMBOL_ROLES}) != 0",
)
"""The indexes only queries need: dropped for a first ingestion into an empty database and
built once at its end (a sort, rather than a random insert per row). Opening the database
recreates them, so a first ingestion killed half-way leaves a usable database."""


INDEX_BUILD = "/.build/index-build/"
"""sourcekit-lsp's own build folder in a package (its background indexing's store)."""


def failed_compile(output_file: str) -> bool:
    """A unit a failed compile wrote: the compiler writes a file's unit even when the file
    (or another of its module) does not compile, and the driver then removes the object file
    the unit names. Only where the object file's folder is there (a build moved or copied
    elsewhere names folders that are not, and proves nothing)."""
    if not output_file:
        return False  # the overlay's units (and a store that records none)
    if INDEX_BUILD in output_file:
        return False  # sourcekit-lsp's background indexing compiles to index only: no object file
    return not os.path.exists(output_file) and os.path.isdir(os.path.dirname(output_file))


class FailedCompiles:
    """`failed_compile` for many units: each object folder listed once, rather than a stat
    per unit (8 % of a cached start's busy time at the benchmark's L). Same answers, except
    that an object file that is a dangling symbolic link counts as written."""

    def __init__(self) -> None:
        self._listed: dict[str, frozenset[str] | None] = {}

    def __call__(self, output_file: str) -> bool:
        if not output_file or INDEX_BUILD in output_file:
            return False
        folder, name = os.path.split(output_file)
        if folder not in self._listed:
            try:
                self._listed[folder] = frozenset(os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                self._listed[folder] = None  # no folder: a build moved or copied elsewhere
            except OSError:
                return failed_compile(output_file)
        listed = self._listed[folder]
        return listed is not None and name not in listed


def connect(path: str) -> sqlite3.Connection:
    """A connection as every xcindex writer uses it (WAL, autocommit, waits for the lock)."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=120)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("PRAGMA temp_store=MEMORY")
    return conn


class RecordWriter:
    """Writes parsed records (the cffi walk's RecordData) in one transaction per batch: the
    worker's fallback when the compiled ingester is unavailable. Symbol ids are cached for
    the life of one database (`token`): symbols are never deleted."""

    def __init__(self, path: str, token: int) -> None:
        self.path, self.token = path, token
        self._conn = connect(path)
        self._symbol_ids: dict[str, int] = {}

    def serves(self, path: str, token: int) -> bool:
        return (path, token) == (self.path, self.token)

    def close(self) -> None:
        self._conn.close()

    def _symbol_id(self, usr: str, info: tuple[str, int, int, int, int]) -> int:
        symbol_id = self._symbol_ids.get(usr)
        if symbol_id is None:
            hashed = usr_hash(usr)
            row = self._conn.execute(
                "SELECT id FROM symbols WHERE usr_hash = ? AND usr = ?", (hashed, usr)
            ).fetchone()
            if row is None:
                cursor = self._conn.execute(
                    "INSERT INTO symbols(usr, usr_hash, name, kind, subkind, language, properties)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (usr, hashed, *info),
                )
                symbol_id = int(cursor.lastrowid or 0)
            else:
                symbol_id = int(row[0])
            self._symbol_ids[usr] = symbol_id
        return symbol_id

    def add_records(self, records: Sequence[RecordData]) -> set[str]:
        """Insert parsed records (one transaction); records already present are skipped.
        Returns the names written."""
        written: set[str] = set()
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            next_occurrence = int(
                self._conn.execute("SELECT coalesce(max(id), 0) FROM occurrences").fetchone()[0]
            )
            for record in records:
                if self._conn.execute("SELECT 1 FROM records WHERE name = ?", (record.name,)).fetchone():
                    continue
                cursor = self._conn.execute("INSERT INTO records(name) VALUES (?)", (record.name,))
                record_id = int(cursor.lastrowid or 0)
                written.add(record.name)
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
                    if not keeps_relations(record.symbols[occ.symbol], occ.roles):
                        continue
                    # In the table's key order, so that rows only append (see native_ingest.c).
                    relation_rows.extend(
                        (next_occurrence, roles, symbol_id)
                        for symbol_id, roles in sorted(
                            (symbol_ids[index], roles) for roles, index in occ.relations
                        )
                    )
                self._conn.executemany(
                    "INSERT INTO occurrences(id, record_id, symbol_id, roles, line, col) VALUES (?,?,?,?,?,?)",
                    occurrence_rows,
                )
                if occurrence_rows:  # one contiguous id range per record (see the schema)
                    self._conn.execute(
                        "UPDATE records SET first_occurrence = ?, last_occurrence = ? WHERE id = ?",
                        (occurrence_rows[0][0], occurrence_rows[-1][0], record_id),
                    )
                self._conn.executemany(
                    "INSERT OR IGNORE INTO relations(occurrence_id, roles, symbol_id) VALUES (?,?,?)",
                    relation_rows,
                )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._symbol_ids.clear()
            raise
        return written


def _digest_if_not_newer(path: str, unit_mtime_ns: int) -> tuple[int, bytes] | None:
    """(size, digest) of the file, if it was not written after `unit_mtime_ns` (before and
    after reading it: a write in between is not taken for the indexed content)."""
    try:
        with open(path, "rb") as handle:
            before = os.fstat(handle.fileno())
            if before.st_mtime_ns > unit_mtime_ns:
                return None
            data = handle.read()
            after = os.fstat(handle.fileno())
    except OSError:
        return None
    if after.st_mtime_ns != before.st_mtime_ns or after.st_size != len(data):
        return None
    return len(data), content_digest(data)


def _digests_to_write(
    rows: Sequence[tuple[Any, ...]], read: dict[tuple[int, int], tuple[int, bytes] | None]
) -> tuple[list[tuple[int, int, int, bytes]], list[tuple[int]]]:
    """From (file id, path, unit mtime, the mtime its digest row is for) rows: the rows to
    write and the files whose row goes. `read` keeps each (file, unit mtime) read once."""
    put: list[tuple[int, int, int, bytes]] = []
    drop: list[tuple[int]] = []
    for file_id, path, unit_mtime, known in rows:
        if known == unit_mtime:
            continue
        key = (int(file_id), int(unit_mtime))
        if key not in read:
            read[key] = _digest_if_not_newer(str(path), int(unit_mtime))
        digest = read[key]
        if digest is None:
            drop.append((int(file_id),))
        else:
            put.append((*key, *digest))
    return put, drop


class WriteSide:
    """Units, failures, liveness and garbage (mixed into Database; the server's writes)."""

    _conn: sqlite3.Connection
    _file_ids: dict[str, int]

    def _mark_live_units_pending(self) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (LIVE_UNITS_PENDING,))

    def is_empty(self) -> bool:
        return self._conn.execute("SELECT 1 FROM records LIMIT 1").fetchone() is None

    def begin_bulk_load(self) -> None:
        """Drop the query-only indexes before a first ingestion (see BULK_INDEXES)."""
        for statement in BULK_INDEXES:
            self._conn.execute("DROP INDEX IF EXISTS " + statement.split()[5])

    def end_bulk_load(self) -> None:
        self._conn.execute("BEGIN")
        for statement in BULK_INDEXES:
            self._conn.execute(statement)
        # Grown by random inserts while the workers wrote (they look symbols up by it):
        # rebuilt once, sorted, its pages full.
        self._conn.execute("REINDEX symbols_usr_hash")
        self._conn.execute("COMMIT")
        self.checkpoint()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database and truncate it: the workers write
        without automatic checkpoints (each costs an fsync mid-ingestion)."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _file_id(self, path: str) -> int:
        file_id = self._file_ids.get(path)
        if file_id is None:
            self._conn.execute("INSERT OR IGNORE INTO files(path) VALUES (?)", (path,))
            file_id = int(self._conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()[0])
            self._file_ids[path] = file_id
        return file_id

    def replace_units(
        self, units: Sequence[UnitInfo], is_test: dict[str, bool], *, live: bool = False
    ) -> None:
        """Write (or rewrite) units and their edges. Their records must already be in.
        `live`: mark them live in the same transaction (units that a first ingestion still
        under way already knows will be; see ingest.LiveUnits). Immediate: the workers may
        be writing records at the same time, and a deferred transaction that read first
        could not take the write lock after one of their commits."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for unit in units:
                self._delete_unit(unit.name)
                main_file_id = self._file_id(unit.main_file) if unit.main_file else None
                cursor = self._conn.execute(
                    "INSERT INTO units(name, mtime_ns, main_file_id, module, target, provider, is_system, is_test,"
                    " digest, output_file) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        unit.name,
                        unit.mtime_ns,
                        main_file_id,
                        unit.module_name,
                        unit.target,
                        unit.provider,
                        int(unit.is_system),
                        int(is_test.get(unit.name, False)),
                        unit.digest,
                        unit.output_file,
                    ),
                )
                unit_id = int(cursor.lastrowid or 0)
                if live:
                    self._conn.execute("UPDATE units SET live = 1 WHERE id = ?", (unit_id,))
                if unit.is_system:
                    continue
                for dep in unit.dependencies:
                    if dep.kind == DependencyKind.RECORD and dep.is_system:
                        continue  # SDK headers: see UnitInfo.record_dependencies
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
                            "INSERT OR IGNORE INTO unit_units(unit_id, module, is_system) VALUES (?,?,?)",
                            (unit_id, dep.module_name, int(dep.is_system)),
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
            self._file_ids.clear()
            raise

    def touch_units(self, mtimes: dict[str, int]) -> None:
        """Give units the store rewrote byte for byte their new mtime (nothing else changed)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                "UPDATE units SET mtime_ns = ? WHERE name = ?",
                [(mtime, name) for name, mtime in mtimes.items()],
            )
            self._mark_live_units_pending()
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
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

    def set_own_package(self, package: str | None) -> None:
        if package is None:
            self._conn.execute("DELETE FROM meta WHERE key = ?", (OWN_PACKAGE,))
        else:
            self._conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (OWN_PACKAGE, package)
            )

    def mark_checked(self, names: Sequence[str], checked_ns: int) -> None:
        """These (overlay) units were compiled at `checked_ns` from a file older than that."""
        self._conn.executemany(
            "UPDATE units SET checked_ns = ? WHERE name = ?", [(checked_ns, n) for n in names]
        )

    def record_source_digests(self) -> int:
        """Remember the content of each live main file that is no newer than its live unit:
        the content that unit indexed. A file written later (its mtime newer) that has the
        same content again (`git checkout`, `git stash pop`, an edit undone) is then current,
        not stale (`ReadSide.same_as_indexed`). A file already newer than its unit when this
        runs has no digest: what its unit indexed is not known. Returns how many were read."""
        rows = self._conn.execute(
            "SELECT f.id, f.path, max(u.mtime_ns), d.unit_mtime_ns FROM units u"
            " JOIN files f ON f.id = u.main_file_id LEFT JOIN source_digests d ON d.file_id = f.id"
            " WHERE u.live = 1 GROUP BY f.id"
        ).fetchall()
        read: dict[tuple[int, int], tuple[int, bytes] | None] = {}
        put, drop = _digests_to_write(rows, read)
        # The same for each file's newest unit of a build (the overlay's left out): the content
        # its module was compiled from, which the overlay asks (`ReadSide.built_digests`) after
        # the overlay's own unit has taken the file's place above.
        built = self._conn.execute(
            "SELECT f.id, f.path, max(u.mtime_ns), b.unit_mtime_ns FROM units u"
            " JOIN files f ON f.id = u.main_file_id LEFT JOIN build_digests b ON b.file_id = f.id"
            " WHERE u.is_system = 0 AND u.name NOT LIKE 'overlay:%' GROUP BY f.id"
        ).fetchall()
        put_built, drop_built = _digests_to_write(built, read)
        if put or drop or put_built or drop_built:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for table, gone, kept in (
                    ("source_digests", drop, put),
                    ("build_digests", drop_built, put_built),
                ):
                    self._conn.executemany(f"DELETE FROM {table} WHERE file_id = ?", gone)
                    self._conn.executemany(
                        f"INSERT OR REPLACE INTO {table}(file_id, unit_mtime_ns, size, digest) VALUES (?,?,?,?)",
                        kept,
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return len(put)

    def recompute_live_units(self) -> None:
        """A unit is live when its main file exists, is the user's source (not a file the
        build generated, such as SwiftPM's test-discovery sources under `.build/`), and it
        is the newest unit for that file, unless a failed compile wrote it (`failed_compile`):
        then any other unit of the file (the overlay's) comes first. An overlay unit of a file
        that did not change, compiled again because a declaration it used changed (a suspect),
        counts as of when it was compiled (`checked_ns`), so that it outranks the build's unit
        compiled before that change, and a later build's outranks it. A unit another
        package's build wrote (a copied `.build`) is never live, unless every unit is (the
        package was not built where it is now)."""
        found = self._conn.execute("SELECT value FROM meta WHERE key = ?", (OWN_PACKAGE,)).fetchone()
        package = str(found[0]) if found else None
        real: dict[str, str] = {}
        rows = self._conn.execute(
            "SELECT u.id, max(u.mtime_ns, u.checked_ns), u.main_file_id, f.path, u.is_system, u.output_file"
            " FROM units u"
            " LEFT JOIN files f ON f.id = u.main_file_id"
        ).fetchall()
        foreign = {int(row[0]) for row in rows if from_another_package(str(row[5] or ""), package, real)}
        if foreign and not any(
            row[5] and not row[4] and row[2] is not None and int(row[0]) not in foreign for row in rows
        ):
            # Every unit is another folder's: a package moved or copied and not built here
            # since. It is answered from (index_built_elsewhere says so), not emptied.
            foreign = set()
        newest: dict[int, tuple[bool, int, int]] = {}
        failed = FailedCompiles()
        for unit_id, mtime, main_file_id, path, is_system, output_file in rows:
            if (
                is_system
                or main_file_id is None
                or not path
                or is_generated_source(path)
                or not os.path.exists(path)
                or int(unit_id) in foreign
            ):
                continue
            rank = (not failed(str(output_file)), int(mtime), int(unit_id))
            best = newest.get(main_file_id)
            if best is None or rank > best:
                newest[main_file_id] = rank
        live = {unit_id for _, _, unit_id in newest.values()}
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
            first, last = self._conn.execute(
                "SELECT first_occurrence, last_occurrence FROM records WHERE id = ?", (record_id,)
            ).fetchone()
            self._conn.execute("DELETE FROM relations WHERE occurrence_id BETWEEN ? AND ?", (first, last))
            self._conn.execute("DELETE FROM occurrences WHERE id BETWEEN ? AND ?", (first, last))
            self._conn.execute("DELETE FROM records WHERE id = ?", (record_id,))
        self._conn.execute("COMMIT")
        return len(orphans)
