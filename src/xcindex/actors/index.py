"""The index actor: owns one store's database, keeps it fresh, answers queries.

One task, the loop, owns the actor's state; everything slow is a task of its own that
reports back with a message (`actors/index_messages.py`), so no field is written anywhere
else. The database is used by one job at a time, in the order asked: a query, a tool's
named query, a refresh, the overlay's writes. Before a job that reads the store starts, the
loop compares the mtime of `v5/units` (which the compiler's atomic renames bump) with the one
the database was last refreshed at and runs a refresh first when they differ, so a rebuild
while the server runs is picked up without a restart. Nothing slow from outside (git,
SwiftPM) ever runs as a job: the Engine reads it before asking.

A first (cold) ingestion runs as the first job, so `status` answers at once with its
progress. A named tool query waits for it up to its `first_answer_wait` and then answers
from the units live so far (`WhileIngesting`: the Engine marks it `indexing` with the
progress); the ingestion makes units live as their records come in once someone has asked
(ingest.LiveUnits). A failed refresh answers the job that waited for it with the error,
and the actor stays up: the next question tries again.

The actor is the only reader of its store: the Engine asks it for the store's version
(`GetStoreVersion`) and to take in what changed (`Refresh`) instead of looking itself. An
actor left unused for `idle_timeout` retires (its database closes); so does one the Engine
asks to (`Retire`, to keep within its bound), if it is idle. The Engine's `IndexHandle`
starts a new one on the next question, transparently.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from xcindex._log import get_logger
from xcindex.actors import index_tasks as tasks
from xcindex.actors.index_handle import IndexHandle
from xcindex.actors.index_messages import (
    AnswerEarly,
    EditsSeen,
    GetChanges,
    GetOverlay,
    GetState,
    GetStoreVersion,
    HoldBusy,
    IndexRequest,
    JobOver,
    Overlay,
    OverlayBatchOver,
    OverlayReport,
    Progress,
    ProgressListener,
    Query,
    Refresh,
    Retire,
    Served,
    ToolQuery,
    TreeOpened,
    TreeStirred,
    UseDatabase,
    WhileIngesting,
)
from xcindex.actors.mailbox import ActorHandle, Envelope, Mailbox, Published
from xcindex.errors import ActorGone
from xcindex.indexstore.database import Counts, Database, database_path_for
from xcindex.indexstore.ingest import LiveUnits, RefreshReport, Unreadable, newest_write_ns
from xcindex.indexstore.pool import WorkerPool
from xcindex.indexstore.state import IndexState, StoreVersion
from xcindex.overlay.changes import WatchedTree
from xcindex.overlay.runner import (
    Checked,
    Failed,
    Landed,
    OverlayCompiler,
    OverlayOutcome,
    OverlaySchedule,
)
from xcindex.project.store_layout import units_mtime_ns

log = get_logger(__name__)

T = TypeVar("T")

DEFAULT_IDLE_TIMEOUT_S = math.inf
"""An actor on its own never retires; the Engine sets a bound (EngineConfig)."""
DEFAULT_OVERLAY_DEBOUNCE_S = 1.0
"""How long the session's edits of a file must have been quiet before the overlay
re-indexes it in the background (a question about it does not wait for that)."""

OVERLAY_BURST = 32
"""Files changed at once beyond this (a checkout, a formatter over the tree) are not all
re-indexed in the background: a build is the cheaper way; questions still re-index the
ones they need, a few at a time, and say the rest are stale."""

_OVERLAY_DUE = object()
"""What `_next_envelope` returns when the overlay has files due and no message came."""

Env: TypeAlias = Envelope[IndexRequest, Any]


class _Kind(Enum):
    FIRST_REFRESH = "first refresh"
    REFRESH = "refresh"
    """A caller's Refresh: take in what the store has (the refresh, if due, runs before it)."""
    QUERY = "query"
    CALL = "call"
    """The overlay's own use of the database (UseDatabase)."""
    HOLD = "hold"
    CLASSIFY = "classify"
    """Which of the project's files the index no longer describes (GetChanges)."""


@dataclass(frozen=True)
class _Job:
    number: int
    kind: _Kind
    envelope: Env | None = None


class IndexActor:
    """Run with `await task_group.start(actor.run)`; talk to it through `actor.handle()`.

    Args:
        store_path: the index store (the folder holding `v5`).
        workers: the ingestion process pool (shared by every index actor of an Engine).
        queries: the named queries it answers (the registry's index tools).
        idle_timeout: retire after this long with nothing asked and nothing in flight.
        overlay_debounce_s: the quiet period after an edit before its background overlay.
        overlay: re-index changed files in the background (the freshness overlay); off, they
            are only reported.
    """

    def __init__(
        self,
        store_path: Path,
        workers: WorkerPool,
        queries: Mapping[str, Callable[[Database, Any, Any], Any]] | None = None,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S,
        overlay_debounce_s: float = DEFAULT_OVERLAY_DEBOUNCE_S,
        overlay: bool = True,
        watch: bool = True,
    ) -> None:
        self.store_path = store_path
        self.workers = workers
        self.queries: Mapping[str, Callable[[Database, Any, Any], Any]] = {} if queries is None else queries
        self.idle_timeout = idle_timeout
        self.mailbox: Mailbox[IndexRequest, Any] = Mailbox()
        self._db_path = database_path_for(store_path)
        self._db: Database | None = None
        self._live = LiveUnits()
        """The first ingestion's early units (its own object, shared with the answers it
        makes possible)."""
        self._ready = anyio.Event()
        self._published = Published(self._initial_state())
        """The state as the loop last published it: what waiting tasks read."""
        self._ingesting = False
        self._progress: tuple[int, int] = (0, 0)
        self._last_report: RefreshReport | None = None
        self._counts: Counts | None = None
        self._failures: tuple[Unreadable, ...] = ()
        self._refreshed_at = -1
        """The units folder's mtime the database was last refreshed at."""
        self._jobs: deque[_Job] = deque()
        self._running: _Job | None = None
        self._job_count = 0
        self._unserved: dict[int, Env] = {}
        """Envelopes not answered yet, by `id`: closed at shutdown so no caller waits for ever."""
        self._last_activity = 0.0
        self._overlay: OverlaySchedule[Env] = OverlaySchedule(overlay_debounce_s)
        self._overlay_on = overlay
        self._watch_on = watch
        self._compiler = OverlayCompiler(store_path, self._db_path, workers)
        """Used by the one overlay task running at a time."""
        self._tree = WatchedTree()
        """The project's files: what changed without the index knowing (edited, new, gone)."""
        self._awaiting_tree: list[Env] = []
        """GetChanges asked before the project's roots were found (just after a first ingestion)."""

    def handle(self) -> IndexHandle:
        handle = self.mailbox.handle()

        async def connect(gone: ActorHandle[IndexRequest, Any] | None) -> ActorHandle[IndexRequest, Any]:
            if gone is not None:
                raise ActorGone("the index actor has stopped")
            return handle

        return IndexHandle(connect)

    # -- the loop ----------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        self._db = await anyio.to_thread.run_sync(Database, self._db_path)
        self._last_activity = anyio.current_time()
        log.info("index_actor_started", store=str(self.store_path), database=str(self._db_path))
        try:
            async with anyio.create_task_group() as tg:
                self._enqueue(_Kind.FIRST_REFRESH)
                self._ingesting = True
                self._publish()
                self._pump(tg)
                task_status.started()
                while (envelope := await self._next_envelope()) is not None:
                    self._last_activity = anyio.current_time()
                    if envelope is _OVERLAY_DUE:
                        self._start_overlay_batch(tg)
                        continue
                    assert isinstance(envelope, Envelope)
                    if isinstance(envelope.request, Retire):
                        if self._idle():
                            envelope.reply_nowait(True)
                            log.info("index_actor_retired", store=str(self.store_path), reason="bound")
                            break
                        envelope.reply_nowait(False)
                        continue
                    self._handle(envelope, tg)
                    self._pump(tg)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                # Questions that came in after retiring are answered ActorGone: the handle
                # asks a new actor.
                await self.mailbox.aclose()
                queued = [job.envelope for job in self._jobs if job.envelope is not None]
                for unserved in [*self._unserved.values(), *queued, *self._overlay.close()]:
                    unserved.close()
                db, self._db = self._db, None
                if db is not None:
                    await anyio.to_thread.run_sync(db.close)
                self._tree.close()
            log.info("index_actor_stopped", store=str(self.store_path))

    def _handle(self, envelope: Env, tg: TaskGroup) -> None:
        """One message, handled without waiting: slow work becomes a task or a job."""
        request = envelope.request
        if isinstance(request, GetState):
            envelope.reply_nowait(self._state())
        elif isinstance(request, Query | ToolQuery):
            self._unserved[id(envelope)] = envelope
            if not self._ready.is_set() and (request.progress is not None or isinstance(request, ToolQuery)):
                tg.start_soon(self._wait_first_ingestion, envelope)
            self._enqueue(_Kind.QUERY, envelope)
        elif isinstance(request, Refresh | UseDatabase | HoldBusy):
            self._unserved[id(envelope)] = envelope
            kind = {Refresh: _Kind.REFRESH, UseDatabase: _Kind.CALL, HoldBusy: _Kind.HOLD}[type(request)]
            self._enqueue(kind, envelope)
        elif isinstance(request, GetStoreVersion):
            self._unserved[id(envelope)] = envelope
            tg.start_soon(self._read_version, envelope)
        elif isinstance(request, GetChanges):
            self._take_in_watch()
            if not self._ready.is_set() or self._tree.quiet():
                envelope.reply_nowait(self._tree.changes)  # during a first ingestion: nothing known
            else:
                self._unserved[id(envelope)] = envelope
                if self._tree.opened:
                    self._enqueue(_Kind.CLASSIFY, envelope)
                else:
                    self._awaiting_tree.append(envelope)
        elif isinstance(request, TreeStirred):
            self._take_in_watch()
            envelope.reply_nowait(None)
        elif isinstance(request, TreeOpened):
            envelope.close()
            self._tree.open(request.watch, request.roots, request.sources)
            if request.watch is not None:
                tg.start_soon(tasks.follow_watch, self.mailbox.handle(), request.watch.fileno())
            for waiting in self._awaiting_tree:
                self._enqueue(_Kind.CLASSIFY, waiting)
            self._awaiting_tree.clear()
        elif isinstance(request, JobOver):
            envelope.close()
            self._job_over(request, tg)
        elif isinstance(request, Progress):
            envelope.close()
            self._progress = (request.done, request.total)
            self._publish()
        elif isinstance(request, Served):
            envelope.close()
            self._unserved.pop(request.key, None)
        elif isinstance(request, AnswerEarly):
            envelope.close()
            self._answer_early(request.key, tg)
        else:
            self._on_overlay(envelope, request)
            self._start_overlay_batch(tg)

    def _idle(self) -> bool:
        return (
            not self._unserved
            and not self._jobs
            and self._running is None
            and self._ready.is_set()
            and not self._overlay.busy
        )

    async def _next_envelope(self) -> Env | object | None:
        """The next message; `_OVERLAY_DUE` when overlay work fell due meanwhile; None once
        idle for `idle_timeout` (or the inbox closed)."""
        while True:
            now = anyio.current_time()
            wait = self.idle_timeout
            if self._idle():
                wait = self._last_activity + self.idle_timeout - now
                if wait <= 0:
                    log.info("index_actor_retired", store=str(self.store_path), reason="idle")
                    return None
            due = self._overlay.next_due()
            if due is not None:
                if due <= now:
                    return _OVERLAY_DUE
                wait = min(wait, due - now)
            with anyio.move_on_after(wait):
                try:
                    return await self.mailbox.inbox.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return None

    def _initial_state(self) -> IndexState:
        return IndexState(self.store_path, self._db_path, False, False, (0, 0), None, None, ())

    def _state(self) -> IndexState:
        return IndexState(
            store_path=self.store_path,
            database_path=self._db_path,
            ready=self._ready.is_set(),
            ingesting=self._ingesting,
            progress=self._progress,
            last_refresh=self._last_report,
            counts=self._counts,
            failures=self._failures,
        )

    def _publish(self) -> None:
        self._published.publish(self._state())

    # -- database jobs, one at a time --------------------------------------------------------

    def _enqueue(self, kind: _Kind, envelope: Env | None = None) -> None:
        self._job_count += 1
        self._jobs.append(_Job(self._job_count, kind, envelope))

    def _pump(self, tg: TaskGroup) -> None:
        """Start the next job if the database is free: a refresh first when the store moved."""
        if self._running is not None or not self._jobs:
            return
        job = self._jobs[0]
        if job.kind is not _Kind.FIRST_REFRESH and not self._ready.is_set():
            return  # the first ingestion is queued first; this is only reached if it is running
        if job.kind in (_Kind.FIRST_REFRESH, _Kind.REFRESH, _Kind.QUERY, _Kind.CALL, _Kind.CLASSIFY):
            # One stat of a local folder: far cheaper than the thread hop it would take.
            current = units_mtime_ns(self.store_path)
            if job.kind is _Kind.FIRST_REFRESH or current != self._refreshed_at:
                if job.kind is _Kind.FIRST_REFRESH:
                    self._jobs.popleft()
                self._job_count += 1
                self._running = _Job(
                    self._job_count, _Kind.FIRST_REFRESH if job.kind is _Kind.FIRST_REFRESH else _Kind.REFRESH
                )
                self._ingesting = True
                self._publish()
                first = job.kind is _Kind.FIRST_REFRESH
                assert self._db is not None
                inputs = tasks.RefreshInputs(
                    self._db, self.store_path, self.workers, self._live if first else None, start=first
                )
                tg.start_soon(tasks.refresh_job, self.mailbox.handle(), inputs, self._running.number, current)
                return
        self._running = self._jobs.popleft()
        if self._running.kind is _Kind.CLASSIFY:
            db = self._db
            assert db is not None
            assert self._running.envelope is not None
            tg.start_soon(
                tasks.classify_job,
                self.mailbox.handle(),
                db,
                self._running.number,
                self._running.envelope,
                self._tree.snapshot(),
            )
        else:
            tg.start_soon(self._job, self._running)

    def _job_over(self, report: JobOver, tg: TaskGroup) -> None:
        running, self._running = self._running, None
        assert running is not None
        assert running.number == report.job
        if running.kind is _Kind.FIRST_REFRESH or (
            running.kind is _Kind.REFRESH and running.envelope is None
        ):
            self._ingesting = False
            if report.refreshed is not None:
                refreshed = report.refreshed
                # A unit written during the walk leaves the folder newer than this: the next
                # job sees the difference and refreshes again.
                self._refreshed_at = refreshed.units_mtime_ns
                self._last_report = refreshed.report
                self._failures = tuple(refreshed.report.failures)
                self._counts = refreshed.counts
                self._overlay.refreshed(refreshed.overlay_live, built=refreshed.report.changed)
                if refreshed.failed_compiles:
                    # A failed build's units: the files are looked at again (and re-indexed).
                    self._tree.tracker.touch(set(refreshed.failed_compiles))
            elif report.error is not None and self._jobs and running.kind is _Kind.REFRESH:
                # The job that waited for this refresh gets its error; the next one tries again.
                waiting = self._jobs.popleft()
                if waiting.envelope is not None:
                    waiting.envelope.fail_nowait(report.error)
                    self._unserved.pop(id(waiting.envelope), None)
            if running.kind is _Kind.FIRST_REFRESH:
                tg.start_soon(
                    tasks.open_project, self.mailbox.handle(), self._compiler, self._watch_on, self.store_path
                )
            if running.kind is _Kind.FIRST_REFRESH:
                if report.error is not None:
                    # Every question waiting for it is answered with the error (the CLI's one
                    # line, the MCP isError): a warning here said it twice, as JSON.
                    log.info(
                        "index_first_refresh_failed", store=str(self.store_path), error=repr(report.error)
                    )
                    self._fail_queued(report.error)
                self._ready.set()
            self._publish()
        elif running.envelope is not None:
            self._unserved.pop(id(running.envelope), None)
        if report.classified is not None:
            result, snapshot = report.classified
            self._tree.classified(result, snapshot)
            if snapshot.sweep:
                # Files changed before anyone watched (edits made while no server ran):
                # re-indexed in the background as the watched ones are.
                self._overlay_soon(set(result.changes.pending))
            self._overlay_soon(set(result.suspects))

    def _fail_queued(self, error: BaseException) -> None:
        """The first ingestion failed: every question that waited for it hears why."""
        for job in self._jobs:
            if job.envelope is not None:
                job.envelope.fail_nowait(error)
                self._unserved.pop(id(job.envelope), None)
        self._jobs.clear()

    async def _job(self, job: _Job) -> None:
        """Run one job on the database and answer its envelope."""
        envelope = job.envelope
        assert envelope is not None
        assert self._db is not None
        db, request = self._db, envelope.request
        try:
            result: Any = None
            if isinstance(request, ToolQuery):
                result = await anyio.to_thread.run_sync(
                    self.queries[request.tool], db, request.args, request.inputs
                )
            elif isinstance(request, Query):
                result = await anyio.to_thread.run_sync(request.fn, db)
            elif isinstance(request, UseDatabase):
                result = await request.fn(db)
            elif isinstance(request, HoldBusy):
                envelope.reply_nowait(None)
                await request.release.wait()
                return
        except Exception as error:
            envelope.fail_nowait(error)
        else:
            envelope.reply_nowait(result)
        finally:
            envelope.close()
            with anyio.CancelScope(shield=True):
                await self.mailbox.handle().tell(JobOver(job.number))

    async def _read_version(self, envelope: Env) -> None:
        request = envelope.request
        assert isinstance(request, GetStoreVersion)
        try:
            version = await anyio.to_thread.run_sync(_store_version, self.store_path, request.newest_write)
        except Exception as error:
            envelope.fail_nowait(error)
        else:
            envelope.reply_nowait(version)
        finally:
            with anyio.CancelScope(shield=True):
                await self.mailbox.handle().tell(Served(id(envelope)))

    # -- the project's files -----------------------------------------------------------------

    def _take_in_watch(self) -> None:
        """What the watch saw: touched, and the Swift files among them re-indexed soon."""
        self._overlay_soon(self._tree.drain())

    def _overlay_soon(self, paths: set[str]) -> None:
        """Re-index changed files in the background, after the quiet period (not a burst: see
        OVERLAY_BURST)."""
        wanted = {path for path in paths if path.endswith(".swift")}
        if self._overlay_on and wanted and len(wanted) <= OVERLAY_BURST:
            self._overlay.edited(sorted(wanted), anyio.current_time())

    # -- questions during the first ingestion -----------------------------------------------

    async def _wait_first_ingestion(self, envelope: Env) -> None:
        """Relay the first ingestion's progress to the question's listener; past a tool
        query's `first_answer_wait`, ask the loop to answer it from what is live so far.

        A bound that ends while the ingestion is finishing (every record in, its indexes
        being built and its units made live) waits once more as long: the complete answer
        is seconds away, and an early one could cover only the units made live before
        (none, unless someone asked during the records; at the benchmark's XL the bound of 5 s
        fell in a 2 s finish and answered nothing, `indexing`)."""
        request = envelope.request
        assert isinstance(request, Query | ToolQuery)
        listener = request.progress
        bound = request.first_answer_wait if isinstance(request, ToolQuery) else math.inf
        for attempt in range(2):
            with anyio.move_on_after(bound):
                state = self._published.value
                while not state.ready:
                    if listener is not None and not await _notify(listener, *state.progress):
                        listener = None
                    state = await self._published.wait_changed()
                return
            done, total = self._published.value.progress
            if attempt or not (total and done >= total):
                break
        await self.mailbox.handle().tell(AnswerEarly(id(envelope)))

    def _answer_early(self, key: int, tg: TaskGroup) -> None:
        if self._ready.is_set():
            return
        for job in self._jobs:
            if job.envelope is not None and id(job.envelope) == key:
                self._jobs.remove(job)
                tg.start_soon(self._while_ingesting, job.envelope, self._progress)
                return

    async def _while_ingesting(self, envelope: Env, progress: tuple[int, int]) -> None:
        """Answer from the units live so far, through a reader connection of its own (the
        writer belongs to the ingestion), in one read transaction."""
        request = envelope.request
        assert isinstance(request, ToolQuery)
        query = self.queries[request.tool]
        try:
            await self._live.request()
            live = self._live.live

            def run() -> Any:
                reader = Database.reader(self._db_path)
                try:
                    reader.snapshot()
                    try:
                        return query(reader, request.args, request.inputs)
                    finally:
                        reader.end_snapshot()
                finally:
                    reader.close()

            answer = await anyio.to_thread.run_sync(run)
        except Exception as error:
            envelope.fail_nowait(error)
        else:
            envelope.reply_nowait(WhileIngesting(answer, progress[0], progress[1], live))
        finally:
            with anyio.CancelScope(shield=True):
                await self.mailbox.handle().tell(Served(id(envelope)))

    # -- the freshness overlay ---------------------------------------------------------------

    def _on_overlay(self, envelope: Env, request: IndexRequest) -> None:
        """The overlay's messages, handled in the loop (none waits): questions wait in the
        schedule until their files are done; the task's reports answer them."""
        now = anyio.current_time()
        done: list[tuple[Env, list[str]]] = []
        if isinstance(request, Overlay) and not request.wait:
            self._overlay.soon(request.paths, now)
            envelope.reply_nowait(None)
        elif isinstance(request, Overlay):
            if self._overlay.asked(request.paths, envelope, now) is not None:
                envelope.reply_nowait([])
        elif isinstance(request, EditsSeen):
            self._overlay.edited(request.paths, now)
            envelope.reply_nowait(None)
        elif isinstance(request, GetOverlay):
            envelope.reply_nowait(self._overlay.snapshot(self._tree.tracker.generation))
        elif isinstance(request, OverlayReport):
            envelope.close()  # a report from the actor's own task: nobody waits for a reply
            outcome = request.outcome
            if isinstance(outcome, Landed | Checked):
                self._tree.cleared(outcome.path)
            if isinstance(outcome, Landed) and outcome.suspects:
                self._tree.tracker.suspect(outcome.suspects)
                self._overlay_soon(set(outcome.suspects))
            done = self._overlay.reported(request.batch, outcome, now)
        elif isinstance(request, OverlayBatchOver):
            envelope.close()
            done = self._overlay.batch_over(request.batch)
        else:
            envelope.close()
        for waiter, landed in done:
            waiter.reply_nowait(landed)

    def _start_overlay_batch(self, tg: TaskGroup) -> None:
        batch = self._overlay.start_batch(anyio.current_time(), self._tree.tracker.generation)
        if batch is not None:
            tracker = self._tree.tracker
            tg.start_soon(
                self._overlay_batch, *batch, frozenset(tracker.suspects), frozenset(tracker.appeared)
            )

    async def _overlay_batch(
        self,
        batch: int,
        paths: tuple[str, ...],
        tried: dict[str, int],
        checks: frozenset[str],
        appeared: frozenset[str],
    ) -> None:
        """Re-index `paths` one after the other, reporting each outcome to the loop (a task
        of the actor's: the loop never waits for a compiler). Its database work is a job."""
        me = self.mailbox.handle()

        async def use_database(fn: Callable[[Database], Awaitable[T]]) -> T:
            result: T = await me.ask(UseDatabase(fn))
            return result

        try:
            await self._ready.wait()
            try:
                await me.ask(Refresh())
            except Exception as error:  # the files are answered as not landed (batch over)
                log.warning("overlay_refresh_failed", store=str(self.store_path), error=repr(error))
                return
            for path in paths:
                try:
                    outcome: OverlayOutcome = await self._compiler.run_one(
                        use_database, path, tried, check=path in checks, appeared=appeared
                    )
                except Exception as error:
                    log.warning("overlay_error", path=path, error=repr(error))
                    outcome = await anyio.to_thread.run_sync(Failed.unexpected, path, error)
                await me.tell(OverlayReport(batch, outcome))
        finally:
            with anyio.CancelScope(shield=True):
                await me.tell(OverlayBatchOver(batch))


def _store_version(store_path: Path, newest_write: bool) -> StoreVersion:
    return StoreVersion(units_mtime_ns(store_path), newest_write_ns(store_path) if newest_write else None)


async def _notify(listener: ProgressListener, done: int, total: int) -> bool:
    """Tell a client's progress channel; False once it failed (it must not stop anything)."""
    try:
        await listener(done, total)
    except Exception as error:
        log.debug("progress_listener_failed", error=repr(error))
        return False
    return True
