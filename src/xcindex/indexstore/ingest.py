"""Bring a Database up to date with its index store, reading only what changed.

The walk through libIndexStore happens in worker processes (both cores); the database is
written from one worker thread at a time. A worker that dies (libIndexStore aborts on
some corrupt files) costs only its batch, which is bisected until the unreadable unit or
record is isolated and reported; everything else is still ingested.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.indexstore.database import Database, IngestCounters
from xcindex.indexstore.model import DependencyKind, ReadFailure, UnitInfo
from xcindex.indexstore.pool import WorkerDied, WorkerPool
from xcindex.indexstore.writer import is_generated_source
from xcindex.project.store_layout import (
    format_dir,
    from_another_package,
    package_of_store,
    records_dir,
    units_dir,
)
from xcindex.vocabulary import FailureKind

log = get_logger(__name__)

UNIT_BATCH = 256
"""Units are cheap to read: a rebuild that rewrote a module's hundred-odd units is one batch
for the one warm worker, rather than two batches of which one waits for a new worker's
Python start-up (a quarter of a second)."""
RECORD_BATCH = 32
BULK_LOAD_MIN_RECORDS = 64
"""A first ingestion of at least this many records builds the query indexes at its end."""
TEST_MODULES = frozenset({"XCTest", "Testing"})

ProgressCallback = Callable[[int, int, str], Awaitable[None]]

OVERLAY_UNIT_PREFIX = "overlay:"
"""Units ingested from the freshness overlay's store are named with this prefix in the
database: they compete with the build's units for "newest unit of its main file" (their
mtime is the edited file's, so a later build's unit supersedes them), and the build
store's refresh leaves them alone."""


def _test_units(units: Sequence[UnitInfo]) -> dict[str, bool]:
    return {
        u.name: any(d.kind == DependencyKind.UNIT and d.module_name in TEST_MODULES for d in u.dependencies)
        for u in units
    }


class LiveUnits:
    """Makes units live while a first ingestion runs, once their records are all in.

    Only on demand (`request`, when a question would otherwise wait): an ingestion nobody
    asks during writes its units at the end, as before, in one step. Once asked, the
    units that are ready are written and marked live at once, and after every batch of
    records from then on, so answers see a growing subset of the final one. Exact: a unit
    is made live early only if it is the one the end of the ingestion makes live (its
    main file exists and is the user's, and it is strictly the newest unit for that file);
    ties and everything else wait for the end (`recompute_live_units`).
    """

    def __init__(self) -> None:
        self.wanted = False
        self.live = 0
        """Units made live early so far."""
        self._db: Database | None = None
        self._units: dict[str, UnitInfo] = {}
        self._is_test: dict[str, bool] = {}
        self._waiting: dict[str, int] = {}
        self._wanted_by: dict[str, list[str]] = {}
        self._ready: list[str] = []
        self.written: set[str] = set()
        self._lock = anyio.Lock()

    def arm(
        self, db: Database, candidates: list[UnitInfo], missing: set[str], is_test: dict[str, bool]
    ) -> None:
        self._db, self._is_test = db, is_test
        for unit in candidates:
            self._units[unit.name] = unit
            records = {d.name for d in unit.record_dependencies()} & missing
            for record in records:
                self._wanted_by.setdefault(record, []).append(unit.name)
            if records:
                self._waiting[unit.name] = len(records)
            else:
                self._ready.append(unit.name)

    async def disarm(self) -> None:
        """The end of the ingestion writes the rest; no early write may overlap it."""
        async with self._lock:
            self._db = None

    def records_done(self, names: list[str]) -> None:
        for record in names:
            for unit in self._wanted_by.pop(record, ()):
                self._waiting[unit] -= 1
                if not self._waiting[unit]:
                    del self._waiting[unit]
                    self._ready.append(unit)

    async def request(self) -> None:
        """Someone is asking: make live what is ready now, and keep doing so."""
        self.wanted = True
        await self.publish()

    async def publish(self) -> None:
        async with self._lock:
            db, ready = self._db, self._ready
            if db is None or not ready:
                return
            self._ready = []
            units = [self._units[name] for name in ready]
            await anyio.to_thread.run_sync(lambda: db.replace_units(units, self._is_test, live=True))
            self.written.update(ready)
            self.live += len(ready)


def _early_candidates(units: list[UnitInfo], package: str | None) -> list[UnitInfo]:
    """The units that the end of an ingestion into an empty database will make live, where
    that is certain already (see LiveUnits and WriteSide.recompute_live_units)."""
    by_file: dict[str, list[UnitInfo]] = {}
    real: dict[str, str] = {}
    for unit in units:
        if from_another_package(unit.output_file, package, real):
            continue
        if not unit.is_system and unit.main_file:
            by_file.setdefault(unit.main_file, []).append(unit)
    chosen: list[UnitInfo] = []
    for path, group in by_file.items():
        if is_generated_source(path) or not os.path.exists(path):
            continue
        group.sort(key=lambda u: u.mtime_ns, reverse=True)
        if len(group) == 1 or group[0].mtime_ns > group[1].mtime_ns:
            chosen.append(group[0])
    return chosen


@dataclass(frozen=True)
class Unreadable:
    """A unit or record file of the store that could not be read (and was skipped)."""

    kind: FailureKind
    name: str
    message: str


@dataclass
class RefreshReport:
    counters: IngestCounters
    failures: list[Unreadable] = field(default_factory=list)
    duration_s: float = 0.0
    changed: bool = False


def scan_units(store_path: Path) -> dict[str, int]:
    """Unit names with their modification times, from a directory listing (no libIndexStore)."""
    units: dict[str, int] = {}
    try:
        with os.scandir(units_dir(store_path)) as entries:
            for entry in entries:
                if entry.is_file():
                    units[entry.name] = entry.stat().st_mtime_ns
    except FileNotFoundError:
        pass
    return units


def unit_digests(store_path: Path, names: Sequence[str]) -> dict[str, bytes]:
    """The content digest of each unit file (a vanished one has none). Read before the
    worker parses a unit, so a stored digest is never newer than the parse stored with it."""
    digests: dict[str, bytes] = {}
    folder = units_dir(store_path)
    for name in names:
        try:
            with open(os.path.join(folder, name), "rb") as unit:
                digests[name] = hashlib.blake2b(unit.read(), digest_size=16).digest()
        except OSError:
            continue
    return digests


def newest_write_ns(store_path: Path) -> int:
    """The newest modification inside the store (the folders the compiler writes into)."""
    newest = 0
    for folder in (units_dir(store_path), records_dir(store_path), format_dir(store_path)):
        try:
            newest = max(newest, os.stat(folder).st_mtime_ns)
        except FileNotFoundError:
            continue
    units = scan_units(store_path)
    if units:
        newest = max(newest, max(units.values()))
    return newest


async def _read_isolating_crashes(
    workers: WorkerPool, function: str, store: str, names: list[str], options: dict[str, Any] | None = None
) -> list[Any]:
    """Read a batch in a worker; if the worker dies, bisect to find the culprit(s)."""
    try:
        return await workers.run(function, store, names, options)
    except WorkerDied:
        if len(names) == 1:
            return [
                ReadFailure(names[0], "libIndexStore crashed while reading it (corrupt or truncated file)")
            ]
        middle = len(names) // 2
        first = await _read_isolating_crashes(workers, function, store, names[:middle], options)
        second = await _read_isolating_crashes(workers, function, store, names[middle:], options)
        return first + second


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


async def refresh(
    db: Database,
    store_path: Path,
    *,
    workers: WorkerPool,
    progress: ProgressCallback | None = None,
    live: LiveUnits | None = None,
) -> RefreshReport:
    """Take in what changed. `live`, on a first ingestion (no units yet), lets questions
    asked during it see the units whose records are in (see LiveUnits)."""
    started = time.perf_counter()
    counters = IngestCounters()
    report = RefreshReport(counters)
    store = str(store_path)
    package = package_of_store(store_path)
    await anyio.to_thread.run_sync(db.set_own_package, package)
    on_disk = await anyio.to_thread.run_sync(scan_units, store_path)
    # Overlay units come from another store (see ingest_overlay): never "removed" here.
    known = {
        name: mtime_digest
        for name, mtime_digest in (await anyio.to_thread.run_sync(db.known_units)).items()
        if not name.startswith(OVERLAY_UNIT_PREFIX)
    }
    known_failures = await anyio.to_thread.run_sync(db.known_failures)

    to_read = [
        name
        for name, mtime in on_disk.items()
        if (name not in known or known[name][0] != mtime)
        and not (name in known_failures and known_failures[name][1] == mtime)
    ]
    removed = [name for name in known if name not in on_disk]
    digests = await anyio.to_thread.run_sync(unit_digests, store_path, to_read)
    # A rebuild rewrites every unit of each module it compiled, but only the edited files'
    # units change: the others keep their rows and take their new mtime (unless they wait
    # for a record that could not be read: it may be readable now).
    waiting = await anyio.to_thread.run_sync(db.units_missing_records) if to_read else set()
    rewritten_alike = {
        name: on_disk[name]
        for name in to_read
        if name in known and known[name][1] and digests.get(name) == known[name][1] and name not in waiting
    }
    if rewritten_alike:
        await anyio.to_thread.run_sync(db.touch_units, rewritten_alike)
        counters.units_unchanged = len(rewritten_alike)
        to_read = [name for name in to_read if name not in rewritten_alike]

    if removed:
        await anyio.to_thread.run_sync(db.drop_units, removed)
        counters.units_dropped += len(removed)

    units: list[UnitInfo] = []
    unit_failures: list[ReadFailure] = []
    if to_read:
        results: list[UnitInfo | ReadFailure] = []

        async def read_unit_batch(batch: list[str]) -> None:
            results.extend(await _read_isolating_crashes(workers, "read_units", store, batch))

        async with anyio.create_task_group() as tg:
            for batch in _batches(to_read, UNIT_BATCH):
                tg.start_soon(read_unit_batch, batch)
        for result in results:
            if isinstance(result, ReadFailure):
                unit_failures.append(result)
            else:
                units.append(replace(result, digest=digests.get(result.name, b"")))
        counters.units_read = len(units)

    user_units = [u for u in units if not u.is_system and u.main_file]
    wanted: dict[str, None] = {}
    for unit in user_units:
        for dep in unit.record_dependencies():
            wanted[dep.name] = None
    present = await anyio.to_thread.run_sync(db.known_records, list(wanted))
    missing = [name for name in wanted if name not in present]
    counters.records_reused = len(wanted) - len(missing)

    record_failures: list[ReadFailure] = []
    done = 0
    options = {"database": str(db.path), "token": db.token}

    async def ingest_record_batch(batch: list[str]) -> None:
        nonlocal done
        # The worker writes the batch into the database itself (one transaction).
        results = await _read_isolating_crashes(workers, "ingest_records", store, batch, options)
        record_failures.extend(r for r in results if isinstance(r, ReadFailure))
        counters.records_read += sum(1 for r in results if r is True)
        done += len(batch)
        if early is not None:
            early.records_done(batch)
            if early.wanted:
                await early.publish()
        if progress is not None:
            await progress(done, len(missing), "records")

    is_test = _test_units(units)
    early = live if live is not None and not known and units else None

    bulk = False
    if missing:
        bulk = len(missing) >= BULK_LOAD_MIN_RECORDS and await anyio.to_thread.run_sync(db.is_empty)
        if bulk:
            await anyio.to_thread.run_sync(db.begin_bulk_load)
        try:
            if early is not None:  # from here on, only early writes use `db` until disarmed
                candidates = await anyio.to_thread.run_sync(_early_candidates, units, package)
                early.arm(db, candidates, set(missing), is_test)
                if early.wanted:
                    await early.publish()
            if progress is not None:  # the records to read are known: say so before the first batch
                await progress(0, len(missing), "records")
            async with anyio.create_task_group() as tg:
                for batch in _batches(missing, RECORD_BATCH):
                    tg.start_soon(ingest_record_batch, batch)
        finally:
            with anyio.CancelScope(shield=True):
                if early is not None:
                    await early.disarm()
                if bulk:
                    await anyio.to_thread.run_sync(db.end_bulk_load)

    if early is not None:
        await early.disarm()
        units_left = [u for u in units if u.name not in early.written]
    else:
        units_left = units
    if units_left:
        await anyio.to_thread.run_sync(db.replace_units, units_left, is_test)
    failure_rows = [(f.name, FailureKind.UNIT, on_disk.get(f.name, 0), f.message) for f in unit_failures]
    failure_rows += [(f.name, FailureKind.RECORD, 0, f.message) for f in record_failures]
    if failure_rows:
        await anyio.to_thread.run_sync(db.record_failures, failure_rows)
        counters.failures = len(failure_rows)
        for kind, name, message in ((r[1], r[0], r[3]) for r in failure_rows):
            log.warning("index_file_unreadable", kind=kind, name=name, message=message, store=store)
    # What is unreadable now: units still on disk, and records a unit still depends on (a
    # rebuild that no longer needs a corrupt record, or reads it at last, clears it).
    still_failing = await anyio.to_thread.run_sync(db.known_failures)
    wanted_records = await anyio.to_thread.run_sync(db.wanted_missing_records)
    report.failures.extend(
        Unreadable(FailureKind(kind), name, message)
        for name, (kind, _, message) in sorted(still_failing.items())
        if (kind == FailureKind.UNIT and name in on_disk)
        or (kind == FailureKind.RECORD and name in wanted_records)
    )

    if counters.records_read and not bulk:
        await anyio.to_thread.run_sync(db.checkpoint)
    report.changed = bool(units or removed or rewritten_alike)
    # A previous process may have been killed after changing units but before this step.
    if report.changed or not known or await anyio.to_thread.run_sync(db.live_units_pending):
        await anyio.to_thread.run_sync(db.recompute_live_units)
        await anyio.to_thread.run_sync(db.collect_garbage)
    # Every time (a database from before digests has none): only files whose live unit
    # changed are read.
    await anyio.to_thread.run_sync(db.record_source_digests)
    db.last_counters = counters
    report.duration_s = time.perf_counter() - started
    return report


async def ingest_overlay(
    db: Database,
    overlay_store: Path,
    unit_names: Sequence[str],
    *,
    main_file: str,
    file_mtime_ns: int,
    workers: WorkerPool,
    checked_ns: int = 0,
) -> bool:
    """Take the overlay's units for `main_file` into the database as the file's live units.

    Each unit is stored as `overlay:<name>` with the edited file's mtime as its own: the
    answers then read the file as fresh, and the build's next unit for it (written later,
    so newer) takes over. `checked_ns`: the file did not change, a declaration it uses did;
    the units count as of then (writer.recompute_live_units). Returns False when a unit or record could not be read (nothing
    is changed then)."""
    store = str(overlay_store)
    results = await _read_isolating_crashes(workers, "read_units", store, list(unit_names))
    units = [r for r in results if isinstance(r, UnitInfo) and r.main_file == main_file and not r.is_system]
    if len(units) != len(results):
        return False
    wanted = {d.name: None for u in units for d in u.record_dependencies()}
    present = await anyio.to_thread.run_sync(db.known_records, list(wanted))
    missing = [name for name in wanted if name not in present]
    if missing:
        options = {"database": str(db.path), "token": db.token}
        written = await _read_isolating_crashes(workers, "ingest_records", store, missing, options)
        if any(isinstance(r, ReadFailure) for r in written):
            return False
    renamed = [
        replace(u, name=OVERLAY_UNIT_PREFIX + u.name, mtime_ns=file_mtime_ns, output_file="") for u in units
    ]
    await anyio.to_thread.run_sync(db.replace_units, renamed, _test_units(renamed))
    if checked_ns:
        await anyio.to_thread.run_sync(db.mark_checked, [u.name for u in renamed], checked_ns)
    await anyio.to_thread.run_sync(db.recompute_live_units)
    await anyio.to_thread.run_sync(db.collect_garbage)
    await anyio.to_thread.run_sync(db.record_source_digests)
    return True
