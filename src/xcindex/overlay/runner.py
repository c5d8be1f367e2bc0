"""The freshness overlay for one project store.

Two parts, both owned by the store's index actor:
- `OverlaySchedule`: which files wait for the overlay (due at once when a question asks,
  after a quiet period when the session's edits announce them), who waits for them, what
  failed and how many files landed. Plain state, changed only by the actor's own loop.
- `OverlayCompiler.run_one`: the work on one file (is it newer than its live unit, its
  module's compiler invocation, the compiler, the ingestion), done by one task at a time
  that reports each file's outcome back to the actor as a message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.indexstore.database import Database
from xcindex.indexstore.ingest import ingest_overlay
from xcindex.indexstore.pool import WorkerPool
from xcindex.indexstore.writer import failed_compile
from xcindex.overlay.arguments import (
    ModuleInvocation,
    SourceMap,
    build_dir_for_store,
    description_mtime_ns,
    load_dependencies,
    load_description,
    load_invocations,
)
from xcindex.overlay.changes import declared_in, users_of_namesakes, users_of_orphans
from xcindex.overlay.compile import (
    Indexed,
    NotIndexed,
    OverlayPlace,
    discard_run,
    emit_modules,
    index_file,
    remove_emitted,
)
from xcindex.project.realpaths import RealPaths
from xcindex.vocabulary import WarningCode

log = get_logger(__name__)

MAX_BATCH = 8
"""Files one task re-indexes before the actor looks at what is due again."""

W = TypeVar("W")
T = TypeVar("T")


class UseDatabase(Protocol):
    """Run `fn(db)` when the database is free, and give its result (the index actor's jobs)."""

    def __call__(self, fn: Callable[[Database], Awaitable[T]], /) -> Awaitable[T]: ...


@dataclass(frozen=True)
class Landed:
    """`path`'s overlay unit is its live unit now; `suspects`: the files that used a
    declaration it no longer has (overlay/changes.py, `Changes.suspects`)."""

    path: str
    duration_s: float
    suspects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checked:
    """`path`, a suspect unchanged since its unit, compiles as it is now: its new unit (which
    may bind its calls to other declarations) is live, as of when it compiled."""

    path: str


@dataclass(frozen=True)
class Failed:
    """`path` (as it was at `file_mtime_ns`) could not be re-indexed, for the reason `code`
    names; with `retry`, it changed while it was indexed and is tried again."""

    path: str
    code: WarningCode
    message: str
    file_mtime_ns: int
    retry: bool = False

    @classmethod
    def unexpected(cls, path: str, error: Exception) -> Failed:
        """An error nobody planned for (the database, a worker): the file as it is now failed."""
        return cls(
            path, WarningCode.OVERLAY_FAILED, f"{path} could not be re-indexed: {error}", _mtime(path) or 0
        )


@dataclass(frozen=True)
class Dropped:
    """`path` is older than its overlay unit (restored with its old modification time): the
    unit no longer describes it and was dropped; its last build's unit answers again."""

    path: str


@dataclass(frozen=True)
class Skipped:
    """Nothing to do for `path`: fresh already, not a file of this store, gone, or tried
    as it is now (its failure stands)."""

    path: str


OverlayOutcome = Landed | Checked | Failed | Dropped | Skipped


@dataclass(frozen=True)
class OverlayFailure:
    code: WarningCode
    message: str
    file_mtime_ns: int
    generation: int = 0
    """The project's change generation when it failed: a file that did not compile may once
    another file changed (a declaration it used put back), so it is tried again then."""


@dataclass(frozen=True)
class OverlaySnapshot:
    """What the overlay has done: `version` moves each time a file lands."""

    version: int
    failures: tuple[tuple[str, WarningCode, str, int], ...]
    """(path, code, message, the file's mtime when it failed)."""
    pending: tuple[str, ...]
    """Files waiting for the overlay or being re-indexed now."""
    last_duration_s: float | None
    live: tuple[str, ...] = ()
    """Files whose overlay unit may be their live unit (every one that is, perhaps a few
    that a build has just superseded): an answer naming none of them needs no look."""

    def warnings_for(self, paths: Iterable[str]) -> list[tuple[str, WarningCode, str]]:
        """Why these files (still stale) have no overlay: each one's last failure, while the
        file is as it was then, or that it is still being re-indexed (it stats the files:
        call it in a thread)."""
        wanted = set(paths)
        found = [
            (path, code, message)
            for path, code, message, mtime in self.failures
            if path in wanted and _mtime(path) == mtime
        ]
        failed = {path for path, _, _ in found}
        found += [
            (
                path,
                WarningCode.OVERLAY_PENDING,
                f"{path} is being re-indexed on its own (the freshness overlay) and was not done in "
                "time for this answer, which labels it stale: ask again in a moment, or wait_for_fresh.",
            )
            for path in self.pending
            if path in wanted and path not in failed
        ]
        return found


@dataclass
class _Waiting(Generic[W]):
    waiter: W
    paths: set[str]
    after_batch: int
    """Only runs of batches started after this one answer it (an earlier run may have read
    the file before the edit the question is about)."""
    landed: list[str] = field(default_factory=list)


@dataclass
class _Batch:
    number: int
    paths: tuple[str, ...]
    generation: int
    """The project's change generation when it started: a failure is as of then (a change
    made while it compiled may be what the failed file needed)."""
    reported: set[str] = field(default_factory=set)


class OverlaySchedule(Generic[W]):
    """The overlay's state for one store. Only the owning actor's loop calls it; the
    waiters (`W`) are whatever it answers when their files are done."""

    def __init__(self, debounce_s: float) -> None:
        self.debounce_s = debounce_s
        self.version = 0
        self.failures: dict[str, OverlayFailure] = {}
        self.last_duration_s: float | None = None
        self.live: set[str] = set()
        self._due: dict[str, float] = {}
        self._waiting: list[_Waiting[W]] = []
        self._batch: _Batch | None = None
        self._batches = 0

    @property
    def busy(self) -> bool:
        return bool(self._due or self._batch or self._waiting)

    def asked(self, paths: Iterable[str], waiter: W, now: float) -> W | None:
        """A question waits for `paths`: they are due at once. Returns `waiter` when there
        is nothing to wait for (no paths)."""
        wanted = set(paths)
        if not wanted:
            return waiter
        for path in wanted:
            self._due[path] = now
        self._waiting.append(_Waiting(waiter, wanted, self._batches))
        return None

    def soon(self, paths: Iterable[str], now: float) -> None:
        """`paths` are due at once, and nobody waits for them."""
        for path in paths:
            self._due[path] = now

    def edited(self, paths: Iterable[str], now: float) -> None:
        """The session edited `paths` (or they changed again): due once they have been
        quiet for `debounce_s`, unless a question wants them sooner."""
        for path in paths:
            self._due[path] = max(self._due.get(path, 0.0), now + self.debounce_s)

    def next_due(self) -> float | None:
        """When the next batch is due (None while one runs: its end starts the next)."""
        if self._batch is not None or not self._due:
            return None
        return min(self._due.values())

    def start_batch(
        self, now: float, generation: int = 0
    ) -> tuple[int, tuple[str, ...], dict[str, int]] | None:
        """The next batch to run (its number, its files, the failed files' mtimes), if one
        is due and none runs."""
        if self._batch is not None:
            return None
        due = sorted((when, path) for path, when in self._due.items() if when <= now)[:MAX_BATCH]
        if not due:
            return None
        paths = tuple(path for _, path in due)
        for path in paths:
            del self._due[path]
        self._batches += 1
        self._batch = _Batch(self._batches, paths, generation)
        tried = {
            path: failure.file_mtime_ns
            for path, failure in self.failures.items()
            if failure.generation == generation
        }
        return self._batches, paths, tried

    def reported(self, batch: int, outcome: OverlayOutcome, now: float) -> list[tuple[W, list[str]]]:
        """Take in one file's outcome; returns the waiters it completes, with what landed."""
        if self._batch is None or self._batch.number != batch:
            return []
        self._batch.reported.add(outcome.path)
        path = outcome.path
        if isinstance(outcome, Landed):
            self.failures.pop(path, None)
            self.live.add(path)
            self.version += 1
            self.last_duration_s = outcome.duration_s
        elif isinstance(outcome, Checked):
            self.failures.pop(path, None)
            self.live.add(path)
            self.version += 1
        elif isinstance(outcome, Failed) and outcome.retry:
            waited = any(path in w.paths for w in self._waiting)
            self._due[path] = now if waited else max(self._due.get(path, 0.0), now + self.debounce_s)
            return []  # its waiters wait for the retry
        elif isinstance(outcome, Failed):
            self.failures[path] = OverlayFailure(
                outcome.code, outcome.message, outcome.file_mtime_ns, self._batch.generation
            )
        elif isinstance(outcome, Dropped):
            self.failures.pop(path, None)
            self.live.discard(path)
            self.version += 1
        # A dropped unit changed the answers as a landed one does: its questions ask again.
        return self._answer(batch, [path], landed=isinstance(outcome, Landed | Checked | Dropped))

    def batch_over(self, batch: int) -> list[tuple[W, list[str]]]:
        """The batch's task ended: files it never reported (it failed or was cancelled)
        answer their waiters as not landed."""
        if self._batch is None or self._batch.number != batch:
            return []
        left = [path for path in self._batch.paths if path not in self._batch.reported]
        self._batch = None
        return self._answer(batch, left, landed=False)

    def _answer(self, batch: int, paths: list[str], *, landed: bool) -> list[tuple[W, list[str]]]:
        done: list[tuple[W, list[str]]] = []
        for waiting in list(self._waiting):
            if waiting.after_batch >= batch:
                continue
            for path in paths:
                if path in waiting.paths:
                    waiting.paths.discard(path)
                    if landed:
                        waiting.landed.append(path)
            if not waiting.paths:
                self._waiting.remove(waiting)
                done.append((waiting.waiter, sorted(waiting.landed)))
        return done

    def refreshed(self, live: Iterable[str], *, built: bool = False) -> None:
        """After a refresh of the build's store: the files whose overlay unit is live. When a
        build wrote units (`built`), the failures are forgotten: each was the compiler's
        word on the project as it was before that build (a file still changed since is
        classified, and tried, again)."""
        self.live = set(live)
        if built:
            self.failures.clear()

    def close(self) -> list[W]:
        """Every waiter still waiting (the actor is stopping)."""
        waiters = [w.waiter for w in self._waiting]
        self._waiting.clear()
        return waiters

    def snapshot(self, generation: int = 0) -> OverlaySnapshot:
        """What answers say about the overlay. A failure from before the project's last
        change (`generation`) is not the word on the file any more: it is tried again."""
        current = {p: f for p, f in self.failures.items() if f.generation == generation}
        pending = {*self._due, *(self._batch.paths if self._batch else ()), *(self.failures.keys() - current)}
        return OverlaySnapshot(
            self.version,
            tuple(sorted((p, f.code, f.message, f.file_mtime_ns) for p, f in current.items())),
            tuple(sorted(pending)),
            self.last_duration_s,
            tuple(sorted(self.live)),
        )


class OverlayCompiler:
    """The work on one file. One task at a time uses it (the actor runs one batch at a
    time), so its cache of the build description needs no lock."""

    def __init__(self, store_path: Path, database_path: Path, workers: WorkerPool) -> None:
        self.store_path = store_path
        self.place = OverlayPlace.for_database(database_path)
        self.workers = workers
        self._sources: tuple[int, SourceMap] | None = None

    def _built_ns(self) -> int:
        """When the last build wrote its description (its sources are as of then)."""
        return description_mtime_ns(build_dir_for_store(self.store_path))

    def source_map(self) -> SourceMap | None:
        """The build description's modules (re-read when it changes); None without one."""
        build_dir = build_dir_for_store(self.store_path)
        stamp = description_mtime_ns(build_dir)
        if stamp == 0:
            return None
        if self._sources is None or self._sources[0] != stamp:
            try:
                description = load_description(build_dir)
                real_path = RealPaths()  # each source resolved once, for both
                by_file = load_invocations(build_dir, description, real_path)
                dependencies = load_dependencies(build_dir, description)
                self._sources = (stamp, SourceMap.from_invocations(by_file, dependencies, real_path))
            except (OSError, ValueError):
                return None
        return self._sources[1]

    def _invocation_for(self, path: str, appeared: frozenset[str]) -> ModuleInvocation | NotIndexed:
        build_dir = build_dir_for_store(self.store_path)
        if description_mtime_ns(build_dir) == 0:
            return NotIndexed(
                path,
                WarningCode.OVERLAY_UNAVAILABLE,
                f"no SwiftPM build description at {build_dir}/description.json (an Xcode project, or "
                "a store without its build): the file keeps its last build's index until rebuilt.",
            )
        sources = self.source_map()
        if sources is None:
            return NotIndexed(
                path, WarningCode.OVERLAY_UNAVAILABLE, f"the build description at {build_dir} is unreadable."
            )
        if not path.endswith(".swift"):
            return NotIndexed(
                path,
                WarningCode.OVERLAY_UNAVAILABLE,
                f"only Swift files are re-indexed on their own; {path} (C, C++ or Objective-C) keeps its "
                "last build's index until rebuilt.",
            )
        invocation = sources.invocation_for(path, built_ns=self._built_ns(), also=appeared)
        if invocation is None:
            return NotIndexed(
                path,
                WarningCode.FILE_OUTSIDE_TARGETS,
                f"{path} is in the folder of no target the last build compiled (a file beside the targets, "
                "or in a target this platform does not build), so no module holds it and xcindex cannot "
                "index it: a target compiles the Swift files under its folder (Sources/<Target>/…).",
            )
        return invocation

    async def run_one(
        self,
        use_database: UseDatabase,
        path: str,
        tried: Mapping[str, int],
        *,
        check: bool = False,
        appeared: frozenset[str] = frozenset(),
    ) -> OverlayOutcome:
        """Re-index `path` if it is newer than its live unit; with `check` (a suspect), compile
        it even if not, to learn whether it still compiles. `tried` holds the mtimes at which
        files failed (the same content is not tried twice). `use_database` runs a function on
        the database when it is free (the index actor's job queue). `appeared`: files that
        appeared since the process first looked, whatever their times (their modules' sources)."""

        async def live_units(db: Database) -> tuple[int | None, tuple[str, int] | None, str]:
            return await anyio.to_thread.run_sync(
                lambda: (
                    db.live_unit_mtime(path),
                    db.live_overlay_unit(path),
                    db.live_output_files([path]).get(path, ""),
                )
            )

        unit_mtime, overlay, output_file = await use_database(live_units)
        current = _mtime(path)
        dropped = False
        if overlay is not None and current is not None and current < overlay[1]:
            # An overlay unit is written at its file's exact modification time: a file older
            # than it was put back (a copy or restore that keeps old times), and "newer than
            # its unit" could never tell. Its last build's unit answers again.
            name = overlay[0]

            async def drop(db: Database) -> int | None:
                await anyio.to_thread.run_sync(_drop, db, [name])
                return await anyio.to_thread.run_sync(db.live_unit_mtime, path)

            unit_mtime = await use_database(drop)
            log.info("overlay_dropped", path=path, reason="the file is older than its overlay unit")
            dropped = True
        # A file with no unit is new (or one the last build did not compile): indexed all the same.
        # A unit a failed compile wrote is newer than its file, and not to be trusted.
        unchanged = (
            unit_mtime is not None
            and current is not None
            and current <= unit_mtime
            and not failed_compile(output_file)
        )
        if current is None or (unchanged and not check) or tried.get(path) == current:
            return Dropped(path) if dropped else Skipped(path)
        invocation = await anyio.to_thread.run_sync(self._invocation_for, path, appeared)
        if isinstance(invocation, NotIndexed):
            return Failed(path, invocation.code, invocation.message, current)
        started = time.perf_counter()
        # The modules it imports whose files changed since the build: emitted as they are now.
        sources = self.source_map()
        changed: list[ModuleInvocation] = []
        if sources is not None:
            built_ns = self._built_ns()
            module = invocation.module_name
            written = await anyio.to_thread.run_sync(
                lambda: [s for s in sources.dependency_sources(module) if (_mtime(s) or 0) > built_ns]
            )

            async def as_built(db: Database) -> dict[str, tuple[int, bytes]]:
                return await anyio.to_thread.run_sync(db.built_digests, written)

            content = await use_database(as_built) if written else {}
            changed, built_alike = await anyio.to_thread.run_sync(
                lambda: sources.changed_dependencies(
                    invocation.module_name, built_ns=built_ns, also=appeared, as_built=content
                )
            )
            await anyio.to_thread.run_sync(remove_emitted, self.place, built_alike)
        if changed:
            failure = await emit_modules(changed, self.place, path)
            if failure is not None:
                return Failed(path, failure.code, failure.message, current)
        outcome = await index_file(
            path, invocation, self.place, modules=self.place.modules if changed else None
        )
        if isinstance(outcome, NotIndexed):
            return Failed(path, outcome.code, outcome.message, current, retry=outcome.retry)
        assert isinstance(outcome, Indexed)
        indexed = outcome
        # A suspect that compiles: it may now mean something else (a call that binds to the
        # changed function's new signature, or to another overload). Its new unit counts as of
        # now: newer than the build's unit, older than the next build's.
        checked_ns = time.time_ns() if unchanged else 0

        async def ingest(db: Database) -> tuple[bool, set[str]]:
            before = await anyio.to_thread.run_sync(declared_in, db, [path])
            ok = await ingest_overlay(
                db,
                indexed.store,
                indexed.unit_names,
                main_file=path,
                file_mtime_ns=indexed.file_mtime_ns,
                workers=self.workers,
                checked_ns=checked_ns,
            )
            if not ok:
                return False, set()
            # Declarations the edit removed (or renamed): their users elsewhere are suspects;
            # so are the callers of the namesakes of a function or method it added.
            after = await anyio.to_thread.run_sync(declared_in, db, [path])
            orphaned = await anyio.to_thread.run_sync(users_of_orphans, db, before - after, [path])
            overloaded = await anyio.to_thread.run_sync(users_of_namesakes, db, after - before, [path])
            return True, orphaned | overloaded

        try:
            ok, suspects = await use_database(ingest)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(discard_run, outcome.store)
        if not ok:
            return Failed(
                path, WarningCode.OVERLAY_FAILED, f"the overlay's unit for {path} could not be read.", current
            )
        duration = time.perf_counter() - started
        if unchanged:
            log.info("overlay_checked", path=path, duration_s=round(duration, 3))
            return Checked(path)
        log.info("overlay_landed", path=path, duration_s=round(duration, 3), suspects=len(suspects))
        return Landed(path, duration, tuple(sorted(suspects)))


def after_refresh(db: Database, *, changed: bool, start: bool = False) -> tuple[int, tuple[str, ...]]:
    """After a refresh of the build's store: when it changed units, forget the overlay
    units that are no longer live (a build wrote a newer unit for their file, or the file
    is gone), with the records only they used. Returns how many were dropped, and the files
    whose overlay unit is live.

    At `start` (a new process), every overlay unit is forgotten: one describes its file as
    compiled against the other files as they were then, and what made its callers suspects
    (a declaration an edit removed) was known only to the process that saw the edit. The
    files changed since the build are newer than their build's units, so the first answer
    that needs them re-indexes them, with their suspects."""
    names = db.overlay_unit_names() if start else (db.superseded_overlay_units() if changed else [])
    if names:
        _drop(db, names)
    return len(names), tuple(sorted(db.overlay_live_files()))


def _drop(db: Database, names: list[str]) -> None:
    """Forget these overlay units, with the records only they used."""
    db.drop_units(names)
    db.recompute_live_units()
    db.collect_garbage()


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
