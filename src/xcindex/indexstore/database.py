"""The SQLite database that mirrors one index store.

Records are content-addressed and immutable, so a record is parsed once, ever; units are
re-read when their modification time changes. The jobs are split: where a database lives
(`cache.py`), how it is written (`writer.py`: records by the workers, units by the
server), and what the tools ask of it (`queries.py`). This module owns the schema and
the bookkeeping the ingester needs, and puts the two sides together as `Database`.

Blocking: every method here is synchronous; the index actor calls them from a worker
thread, one at a time.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xcindex.indexstore.cache import CACHE_ENV as CACHE_ENV
from xcindex.indexstore.cache import cache_dir as cache_dir
from xcindex.indexstore.cache import database_path_for as database_path_for
from xcindex.indexstore.cache import writable
from xcindex.indexstore.model import ReadFailure
from xcindex.indexstore.name_queries import NameQueries
from xcindex.indexstore.queries import PARAMETER_KIND as PARAMETER_KIND
from xcindex.indexstore.queries import OccurrenceRow as OccurrenceRow
from xcindex.indexstore.queries import ReadSide
from xcindex.indexstore.queries import RelationRow as RelationRow
from xcindex.indexstore.queries import SymbolRow as SymbolRow
from xcindex.indexstore.writer import BULK_INDEXES, LIVE_UNITS_PENDING, WriteSide, connect
from xcindex.indexstore.writer import is_generated_source as is_generated_source

SCHEMA_VERSION = 10
"""3: relations clustered by occurrence, a partial index by symbol; 4: system headers'
records are not ingested; 5: units carry their file's digest; 6: occurrences indexed by
(symbol, roles) rather than by symbol alone; 7: a record's occurrences are the id range
[first_occurrence, last_occurrence] (no index by record), symbols are indexed by a hash
of their USR (no unique index of the USRs), a unit's module dependencies are its modules
(the dependency units' names were never read); 8: units carry their output file (a unit
whose object file a failed compile removed is not trusted); 9: the store's package is
recorded, and units another package's build wrote (a copied `.build`) are not live."""

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
    live INTEGER NOT NULL DEFAULT 0,
    digest BLOB NOT NULL DEFAULT x'',
    output_file TEXT NOT NULL DEFAULT '',
    checked_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS units_main_file ON units(main_file_id);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    first_occurrence INTEGER NOT NULL DEFAULT 0,
    last_occurrence INTEGER NOT NULL DEFAULT -1
);
CREATE TABLE IF NOT EXISTS unit_records (
    unit_id INTEGER NOT NULL, record_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
    PRIMARY KEY (unit_id, record_id, file_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS unit_records_record ON unit_records(record_id);
CREATE INDEX IF NOT EXISTS unit_records_file ON unit_records(file_id);
CREATE TABLE IF NOT EXISTS unit_units (
    unit_id INTEGER NOT NULL, module TEXT NOT NULL, is_system INTEGER NOT NULL,
    PRIMARY KEY (unit_id, module)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unit_files (unit_id INTEGER NOT NULL, file_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS unit_files_unit ON unit_files(unit_id);
CREATE TABLE IF NOT EXISTS unit_missing_records (unit_id INTEGER NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS unit_missing_records_unit ON unit_missing_records(unit_id);
CREATE TABLE IF NOT EXISTS symbols (
    id INTEGER PRIMARY KEY,
    usr TEXT NOT NULL,
    usr_hash INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind INTEGER NOT NULL,
    subkind INTEGER NOT NULL,
    language INTEGER NOT NULL,
    properties INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_usr_hash ON symbols(usr_hash);
CREATE TABLE IF NOT EXISTS occurrences (
    id INTEGER PRIMARY KEY,
    record_id INTEGER NOT NULL,
    symbol_id INTEGER NOT NULL,
    roles INTEGER NOT NULL,
    line INTEGER NOT NULL,
    col INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS relations (
    occurrence_id INTEGER NOT NULL,
    roles INTEGER NOT NULL,
    symbol_id INTEGER NOT NULL,
    PRIMARY KEY (occurrence_id, symbol_id, roles)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, mtime_ns INTEGER NOT NULL, message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_digests (
    file_id INTEGER PRIMARY KEY, unit_mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, digest BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS build_digests (
    file_id INTEGER PRIMARY KEY, unit_mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, digest BLOB NOT NULL
);
"""


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
    units_unchanged: int = 0
    """Rewritten by a rebuild byte for byte: only their mtime was taken in."""
    units_dropped: int = 0
    records_read: int = 0
    records_reused: int = 0
    failures: int = 0


class Database(ReadSide, WriteSide, NameQueries):  # NameQueries: batched reads for name resolution
    def __init__(self, path: Path) -> None:
        writable(path.parent)
        self.path = path
        self._conn = connect(str(path))
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA cache_size=-65536")
        version = self._schema_version()
        if version not in (None, SCHEMA_VERSION):
            self._conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            self._conn = connect(str(path))
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        # A first ingestion killed before its end left them dropped (see BULK_INDEXES).
        for statement in BULK_INDEXES:
            self._conn.execute(statement)
        self._conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        self._file_ids: dict[str, int] = {}
        self.last_counters = IngestCounters()
        self.token = random.getrandbits(62)
        """Names this open database to the workers, which cache symbol ids per database."""

    @classmethod
    def reader(cls, path: Path) -> Database:
        """A second, read-only connection to a database being written: answers asked
        during a first ingestion read through it (WAL: they see committed transactions
        only), so they need not wait for the writer's connection. Changes nothing: no
        schema, no indexes (a first ingestion builds those at its end)."""
        self = cls.__new__(cls)
        self.path = path
        self._conn = connect(str(path))
        self._conn.execute("PRAGMA query_only=1")
        self._file_ids = {}
        self.last_counters = IngestCounters()
        self.token = 0
        return self

    def snapshot(self) -> None:
        """Begin a read transaction: the statements of one answer see one state."""
        self._conn.execute("BEGIN")

    def end_snapshot(self) -> None:
        self._conn.execute("ROLLBACK")

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

    def known_units(self) -> dict[str, tuple[int, bytes]]:
        """Unit name → (mtime, content digest)."""
        return {
            str(name): (int(mtime), bytes(digest))
            for name, mtime, digest in self._conn.execute("SELECT name, mtime_ns, digest FROM units")
        }

    def overlay_live_files(self) -> dict[str, int]:
        """Main files whose live unit came from the freshness overlay, with its mtime."""
        return {
            str(path): int(mtime)
            for path, mtime in self._conn.execute(
                "SELECT f.path, u.mtime_ns FROM units u JOIN files f ON f.id = u.main_file_id"
                " WHERE u.live = 1 AND u.name LIKE 'overlay:%'"
            )
        }

    def overlay_unit_names(self) -> list[str]:
        """Every freshness-overlay unit, live or not."""
        return [
            str(name) for (name,) in self._conn.execute("SELECT name FROM units WHERE name LIKE 'overlay:%'")
        ]

    def superseded_overlay_units(self) -> list[str]:
        """Freshness-overlay units that are no longer live (a build's newer unit took over,
        or their file is gone)."""
        return [
            str(name)
            for (name,) in self._conn.execute(
                "SELECT name FROM units WHERE live = 0 AND name LIKE 'overlay:%'"
            )
        ]

    def live_overlay_unit(self, path: str) -> tuple[str, int] | None:
        """The name and mtime of `path`'s live unit if it is a freshness-overlay unit."""
        row = self._conn.execute(
            "SELECT u.name, u.mtime_ns FROM units u JOIN files f ON f.id = u.main_file_id"
            " WHERE u.live = 1 AND f.path = ? AND u.name LIKE 'overlay:%'",
            (path,),
        ).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def live_unit_mtime(self, path: str) -> int | None:
        """The mtime of `path`'s live unit (None when it has none)."""
        row = self._conn.execute(
            "SELECT max(u.mtime_ns) FROM units u JOIN files f ON f.id = u.main_file_id"
            " WHERE u.live = 1 AND f.path = ?",
            (path,),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def known_failures(self) -> dict[str, tuple[str, int, str]]:
        return {
            name: (kind, mtime, message)
            for name, kind, mtime, message in self._conn.execute(
                "SELECT name, kind, mtime_ns, message FROM failures"
            )
        }

    def live_units_pending(self) -> bool:
        return self.get_meta(LIVE_UNITS_PENDING) is not None

    def units_missing_records(self) -> set[str]:
        """Units that depend on a record that could not be read: read again on a rewrite,
        however alike, since the record may be readable now."""
        return {
            str(row[0])
            for row in self._conn.execute(
                "SELECT DISTINCT u.name FROM unit_missing_records m JOIN units u ON u.id = m.unit_id"
            )
        }

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


def failure_rows(
    failures: Sequence[ReadFailure], kind: str, mtimes: dict[str, int]
) -> list[tuple[str, str, int, str]]:
    return [(f.name, kind, mtimes.get(f.name, 0), f.message) for f in failures]
