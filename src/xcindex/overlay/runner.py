"""The overlay for one project store: which files to re-index, the compiler runs, their
ingestion into the store's database, and what failed (with its warning code).

Owned by the store's index actor (one task changes it); `OverlayRunner.run` is called from
the actor's tasks, with the lock that serialises the database.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.indexstore.database import Database
from xcindex.indexstore.ingest import ingest_overlay
from xcindex.indexstore.pool import WorkerPool
from xcindex.overlay.arguments import (
    ModuleInvocation,
    build_dir_for_store,
    description_mtime_ns,
    load_invocations,
)
from xcindex.overlay.compile import Indexed, NotIndexed, OverlayPlace, index_file
from xcindex.warnings import WarningCode

log = get_logger(__name__)

MAX_FILES_PER_RUN = 8
"""A query triggers at most this many files (an empty answer's project-wide stale list can
be long); the rest keep their labels until asked about."""


@dataclass(frozen=True)
class OverlayFailure:
    code: WarningCode
    message: str
    file_mtime_ns: int


@dataclass(frozen=True)
class OverlaySnapshot:
    """What the overlay has done: `version` moves each time a file lands."""

    version: int
    failures: tuple[tuple[str, WarningCode, str], ...]
    last_duration_s: float | None

    def failures_by_path(self) -> dict[str, tuple[WarningCode, str]]:
        return {path: (code, message) for path, code, message in self.failures}


class OverlayRunner:
    def __init__(self, store_path: Path, database_path: Path, workers: WorkerPool) -> None:
        self.store_path = store_path
        self.place = OverlayPlace.for_database(database_path)
        self.workers = workers
        self.version = 0
        self.failures: dict[str, OverlayFailure] = {}
        self.last_duration_s: float | None = None
        self._invocations: tuple[int, dict[str, ModuleInvocation]] | None = None
        self._running: dict[str, anyio.Event] = {}
        self._compile_lock = anyio.Lock()
        """One compiler at a time per store: the machine's cores are shared."""

    def snapshot(self) -> OverlaySnapshot:
        return OverlaySnapshot(
            self.version,
            tuple(sorted((p, f.code, f.message) for p, f in self.failures.items())),
            self.last_duration_s,
        )

    def failures_for(self, paths: Iterable[str]) -> list[tuple[WarningCode, str]]:
        """Why these files (still stale) have no overlay: the last failure of each, while the
        file is as it was then."""
        found: list[tuple[WarningCode, str]] = []
        for path in sorted(set(paths)):
            failure = self.failures.get(path)
            if failure is not None and _mtime(path) == failure.file_mtime_ns:
                found.append((failure.code, failure.message))
        return found

    def _invocation_for(self, path: str) -> ModuleInvocation | NotIndexed:
        build_dir = build_dir_for_store(self.store_path)
        stamp = description_mtime_ns(build_dir)
        if stamp == 0:
            return NotIndexed(
                path,
                WarningCode.OVERLAY_UNAVAILABLE,
                f"no SwiftPM build description at {build_dir}/description.json (an Xcode project, or "
                "a store without its build): the file keeps its last build's index until rebuilt.",
            )
        if self._invocations is None or self._invocations[0] != stamp:
            try:
                self._invocations = (stamp, load_invocations(build_dir))
            except (OSError, ValueError) as error:
                return NotIndexed(path, WarningCode.OVERLAY_UNAVAILABLE, f"the build description: {error}")
        invocation = self._invocations[1].get(path) or self._invocations[1].get(os.path.realpath(path))
        if invocation is None:
            return NotIndexed(
                path,
                WarningCode.OVERLAY_UNAVAILABLE,
                f"the last build did not compile {path} (a new file?): it is indexed by the next build.",
            )
        return invocation

    async def run(self, db: Database, db_lock: anyio.Lock, paths: Iterable[str]) -> list[str]:
        """Re-index those of `paths` that are newer than their live unit; returns the files
        that landed. A file already being re-indexed is waited for, not run twice."""
        landed: list[str] = []
        for path in list(dict.fromkeys(paths))[:MAX_FILES_PER_RUN]:
            running = self._running.get(path)
            if running is not None:
                await running.wait()
                continue
            done = self._running[path] = anyio.Event()
            try:
                if await self._run_one(db, db_lock, path):
                    landed.append(path)
            finally:
                del self._running[path]
                done.set()
        return landed

    async def _run_one(self, db: Database, db_lock: anyio.Lock, path: str) -> bool:
        async with db_lock:
            unit_mtime = await anyio.to_thread.run_sync(db.live_unit_mtime, path)
        current = _mtime(path)
        if unit_mtime is None or current is None or current <= unit_mtime:
            return False  # fresh already, not indexed at all, or gone
        failure = self.failures.get(path)
        if failure is not None and failure.file_mtime_ns == current:
            return False  # tried with this very content
        invocation = await anyio.to_thread.run_sync(self._invocation_for, path)
        if isinstance(invocation, NotIndexed):
            self.failures[path] = OverlayFailure(invocation.code, invocation.message, current)
            return False
        started = time.perf_counter()
        async with self._compile_lock:
            outcome = await index_file(path, invocation, self.place)
        if isinstance(outcome, NotIndexed):
            self.failures[path] = OverlayFailure(outcome.code, outcome.message, current)
            return False
        assert isinstance(outcome, Indexed)
        async with db_lock:
            ok = await ingest_overlay(
                db,
                self.place.store,
                outcome.unit_names,
                main_file=path,
                file_mtime_ns=outcome.file_mtime_ns,
                workers=self.workers,
            )
        if not ok:
            self.failures[path] = OverlayFailure(
                WarningCode.OVERLAY_FAILED, f"the overlay's unit for {path} could not be read.", current
            )
            return False
        self.failures.pop(path, None)
        self.version += 1
        self.last_duration_s = time.perf_counter() - started
        log.info("overlay_landed", path=path, duration_s=round(self.last_duration_s, 3))
        return True


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
