"""The index actor: owns one store's database, keeps it fresh, answers queries.

A first (cold) ingestion runs in the background so that `status` answers at once with
its progress. A named tool query waits for it up to its `first_answer_wait` and then
answers from the units live so far (`WhileIngesting`: the Engine marks it `indexing` with
the progress); the ingestion makes units live as their records come in once someone has
asked (ingest.LiveUnits). Other queries (`Query`) wait for the end. Before every query a cheap check (the mtime of
`v5/units`, which the compiler's atomic renames bump) decides whether a refresh is due,
so a rebuild while the server runs is picked up without a restart.

The actor is the only reader of its store: the Engine asks it for the store's version
(`GetStoreVersion`) and to take in what changed (`Refresh`) instead of looking itself. An
actor left unused for `idle_timeout` retires (its database closes); so does one the Engine
asks to (`Retire`, to keep within its bound), if it is idle. The Engine's `IndexHandle`
starts a new one on the next question, transparently.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.actors.mailbox import ActorGone, ActorHandle, Envelope, Mailbox
from xcindex.indexstore.database import Counts, Database, database_path_for
from xcindex.indexstore.ingest import LiveUnits, RefreshReport, Unreadable, newest_write_ns, refresh
from xcindex.indexstore.pool import WorkerPool
from xcindex.indexstore.state import IndexState, StoreVersion
from xcindex.overlay.runner import (
    Failed,
    OverlayCompiler,
    OverlayOutcome,
    OverlaySchedule,
    OverlaySnapshot,
    after_refresh,
)
from xcindex.project.store_layout import units_mtime_ns

log = get_logger(__name__)

T = TypeVar("T")

ProgressListener = Callable[[int, int], Awaitable[None]]

DEFAULT_IDLE_TIMEOUT_S = math.inf
"""An actor on its own never retires; the Engine sets a bound (EngineConfig)."""
DEFAULT_OVERLAY_DEBOUNCE_S = 1.0
"""How long the session's edits of a file must have been quiet before the overlay
re-indexes it in the background (a question about it does not wait for that)."""


# -- messages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """Run `fn` against the fresh database (in a worker thread) and reply its result.

    `progress`, when given, hears about a first ingestion that the query has to wait for.
    """

    fn: Callable[[Database], Any]
    progress: ProgressListener | None = None


@dataclass(frozen=True)
class ToolQuery:
    """Run the tool named `tool` (a key of the actor's query table) with `args`, its argument
    model, against the fresh database, and reply its answer. Data, not a closure: a reader
    follows a question from the server to the SQL by the tool's name."""

    tool: str
    args: Any
    progress: ProgressListener | None = None
    context: Any = None
    """What the Engine gathered for the query beforehand (blast_radius: the package's
    description), passed as the query's third argument when given."""
    first_answer_wait: float = math.inf
    """How long to wait for a first ingestion before answering from what is live so far."""


@dataclass(frozen=True)
class WhileIngesting:
    """The reply to a ToolQuery answered during a first ingestion: `answer` covers only the
    units live so far; `done` of `total` records were in when it was read (total 0: the
    units are still being read)."""

    answer: Any
    done: int
    total: int
    live_units: int


@dataclass(frozen=True)
class GetState:
    """Reply the actor's current `IndexState` without waiting for an ingestion."""


@dataclass(frozen=True)
class GetStoreVersion:
    """Reply a `StoreVersion` of the store as it is now, without waiting for an ingestion;
    with `newest_write` also the newest write in it (stats every unit file, in a thread)."""

    newest_write: bool = False


@dataclass(frozen=True)
class Refresh:
    """Take in what the store has now (after any first ingestion); reply None."""


@dataclass(frozen=True)
class Overlay:
    """Re-index those of `paths` edited since their unit into the freshness overlay, now
    (after any first ingestion and refresh); reply the paths that landed once each has
    been tried. The work is the actor's: a caller that stops waiting leaves it running."""

    paths: tuple[str, ...]
    wait: bool = True
    """False: reply None at once (the work still starts now)."""


@dataclass(frozen=True)
class EditsSeen:
    """The session edited `paths` (or they changed again): re-index those of them that are
    files of this store once they have been quiet for the debounce period. Replies None
    at once."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class GetOverlay:
    """Reply the overlay's `OverlaySnapshot` (its version moves when a file lands) without waiting."""


@dataclass(frozen=True)
class OverlayReport:
    """From the actor's own overlay task: one file of batch `batch` is done."""

    batch: int
    outcome: OverlayOutcome


@dataclass(frozen=True)
class OverlayLive:
    """From the actor's own refresh: the files whose overlay unit is live now."""

    files: tuple[str, ...]


@dataclass(frozen=True)
class OverlayBatchOver:
    """From the actor's own overlay task: batch `batch` has ended (normally or not)."""

    batch: int


@dataclass(frozen=True)
class Retire:
    """Stop if idle (nothing in flight, no ingestion): reply True, then close the database
    and stop; reply False and carry on if busy."""


@dataclass(frozen=True)
class HoldBusy:
    """Test-only: hold the database (as a long query does) until `release` is set; reply
    None once it is held, so that a test knows the actor is busy."""

    release: anyio.Event


IndexRequest: TypeAlias = (
    Query
    | ToolQuery
    | GetState
    | GetStoreVersion
    | Refresh
    | Overlay
    | EditsSeen
    | GetOverlay
    | OverlayReport
    | OverlayLive
    | OverlayBatchOver
    | Retire
    | HoldBusy
)

_OVERLAY_DUE = object()
"""What `_next_envelope` returns when the overlay has files due and no message came."""


# -- the actor ---------------------------------------------------------------------------------


def _store_version(store_path: Path, newest_write: bool) -> StoreVersion:
    return StoreVersion(units_mtime_ns(store_path), newest_write_ns(store_path) if newest_write else None)


class IndexActor:
    """Run with `await task_group.start(actor.run)`; talk to it through `actor.handle()`.

    Args:
        store_path: the index store (the folder holding `v5`).
        workers: the ingestion process pool (shared by every index actor of an Engine).
        idle_timeout: retire after this long with nothing asked and nothing in flight.
        overlay_debounce_s: the quiet period after an edit before its background overlay.
    """

    def __init__(
        self,
        store_path: Path,
        workers: WorkerPool,
        queries: Mapping[str, Callable[[Database, Any], Any]] | None = None,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S,
        overlay_debounce_s: float = DEFAULT_OVERLAY_DEBOUNCE_S,
    ) -> None:
        self.store_path = store_path
        self.workers = workers
        self.queries: Mapping[str, Callable[[Database, Any], Any]] = queries or {}
        """The named queries this actor answers (the registry's index tools)."""
        self.idle_timeout = idle_timeout
        self.mailbox: Mailbox[IndexRequest, Any] = Mailbox()
        self._db: Database | None = None
        self._db_path = database_path_for(store_path)
        self._reader: Database | None = None
        """The read-only connection answers use during a first ingestion (opened then)."""
        self._reader_lock = anyio.Lock()
        self._live = LiveUnits()
        self._ready = anyio.Event()
        self._ingesting = False
        self._progress: tuple[int, int] = (0, 0)
        self._last_report: RefreshReport | None = None
        self._counts: Counts | None = None
        self._units_mtime_ns = -1
        self._refresh_lock = anyio.Lock()
        self._failures: tuple[Unreadable, ...] = ()
        self._listeners: set[ProgressListener] = set()
        self._in_flight = 0
        self._unserved: dict[int, Envelope[IndexRequest, Any]] = {}
        """Envelopes handed to a task that may be cancelled before it runs a line (asyncio
        never starts a coroutine cancelled before its first step): closed at shutdown so no
        caller's reply channel is left open."""
        self._last_activity = 0.0
        self._overlay: OverlaySchedule[Envelope[IndexRequest, Any]] = OverlaySchedule(overlay_debounce_s)
        """The freshness overlay's state: changed only by this actor's loop."""
        self._compiler = OverlayCompiler(store_path, self._db_path, workers)
        """Used by the one overlay task running at a time."""

    def handle(self) -> IndexHandle:
        handle = self.mailbox.handle()

        async def connect(gone: ActorHandle[IndexRequest, Any] | None) -> ActorHandle[IndexRequest, Any]:
            if gone is not None:
                raise ActorGone("the index actor has stopped")
            return handle

        return IndexHandle(connect)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        self._db = await anyio.to_thread.run_sync(Database, self._db_path)
        self._last_activity = anyio.current_time()
        log.info("index_actor_started", store=str(self.store_path), database=str(self._db_path))
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._first_refresh)
                task_status.started()
                while (envelope := await self._next_envelope()) is not None:
                    self._last_activity = anyio.current_time()
                    if envelope is _OVERLAY_DUE:
                        self._start_overlay_batch(tg)
                        continue
                    assert isinstance(envelope, Envelope)
                    request = envelope.request
                    if isinstance(request, GetState):
                        await envelope.reply(self._state())
                    elif isinstance(
                        request,
                        Overlay | EditsSeen | GetOverlay | OverlayReport | OverlayLive | OverlayBatchOver,
                    ):
                        self._on_overlay(envelope, request)
                        self._start_overlay_batch(tg)
                    elif isinstance(request, Retire):
                        if self._idle():
                            await envelope.reply(True)
                            log.info("index_actor_retired", store=str(self.store_path), reason="bound")
                            break
                        await envelope.reply(False)
                    else:
                        self._in_flight += 1
                        self._unserved[id(envelope)] = envelope
                        tg.start_soon(self._serve, envelope)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                # Questions that came in after retiring are answered ActorGone: the handle
                # asks a new actor.
                await self.mailbox.aclose()
                for unserved in [*self._unserved.values(), *self._overlay.close()]:
                    unserved.close()
                self._unserved.clear()
                db, self._db = self._db, None
                if db is not None:
                    await anyio.to_thread.run_sync(db.close)
                reader, self._reader = self._reader, None
                if reader is not None:
                    await anyio.to_thread.run_sync(reader.close)
            log.info("index_actor_stopped", store=str(self.store_path))

    def _idle(self) -> bool:
        return (
            self._in_flight == 0 and self._ready.is_set() and not self._ingesting and not self._overlay.busy
        )

    async def _next_envelope(self) -> Envelope[IndexRequest, Any] | object | None:
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

    async def _first_refresh(self) -> None:
        try:
            await self._refresh_if_needed(force=True, live=self._live)
        finally:
            self._ready.set()
            with anyio.CancelScope(shield=True):
                async with self._reader_lock:
                    reader, self._reader = self._reader, None
                    if reader is not None:
                        await anyio.to_thread.run_sync(reader.close)
        try:
            await self.workers.warm_up()
        except Exception as error:  # a refresh will start its own worker, or report why not
            log.warning("ingest_worker_warm_up_failed", error=repr(error))

    async def _on_progress(self, done: int, total: int, _what: str) -> None:
        self._progress = (done, total)
        for listener in list(self._listeners):
            await self._notify(listener, done, total)

    async def _notify(self, listener: ProgressListener, done: int, total: int) -> None:
        # A listener is a client's progress channel: its failure must not stop ingestion.
        try:
            await listener(done, total)
        except Exception as error:
            log.debug("progress_listener_failed", error=repr(error))
            self._listeners.discard(listener)

    async def _refresh_if_needed(self, *, force: bool = False, live: LiveUnits | None = None) -> None:
        async with self._refresh_lock:
            # One stat of a local folder: far cheaper than the thread hop it would take.
            current = units_mtime_ns(self.store_path)
            if not force and current == self._units_mtime_ns:
                return
            assert self._db is not None
            self._ingesting = True
            try:
                report = await refresh(
                    self._db, self.store_path, workers=self.workers, progress=self._on_progress, live=live
                )
            finally:
                self._ingesting = False
            db, changed = self._db, report.changed
            dropped, overlay_live = await anyio.to_thread.run_sync(lambda: after_refresh(db, changed=changed))
            if dropped:
                log.info("overlay_superseded", store=str(self.store_path), units=dropped)
            self.mailbox.handle().tell_nowait(OverlayLive(overlay_live))
            # A unit written during the walk leaves the folder newer than `current`: the next
            # query sees the difference and refreshes again.
            self._units_mtime_ns = current
            self._last_report = report
            self._failures = tuple(report.failures)
            self._counts = await anyio.to_thread.run_sync(self._db.counts)
            log.info(
                "index_refreshed",
                store=str(self.store_path),
                units_read=report.counters.units_read,
                units_unchanged=report.counters.units_unchanged,
                records_read=report.counters.records_read,
                failures=len(report.failures),
                duration_ms=round(report.duration_s * 1000, 1),
            )

    async def _serve(self, envelope: Envelope[IndexRequest, Any]) -> None:
        request = envelope.request
        try:
            if isinstance(request, GetStoreVersion):
                result: Any = await anyio.to_thread.run_sync(
                    _store_version, self.store_path, request.newest_write
                )
            elif isinstance(request, HoldBusy):
                async with self._refresh_lock:
                    await envelope.reply(None)
                    await request.release.wait()
                return
            else:
                result = await self._fresh(envelope, request)
        except Exception as error:
            await envelope.fail(error)
        else:
            await envelope.reply(result)
        finally:
            envelope.close()
            self._unserved.pop(id(envelope), None)
            self._in_flight -= 1
            self._last_activity = anyio.current_time()

    async def _fresh(self, envelope: Envelope[IndexRequest, Any], request: IndexRequest) -> Any:
        """Wait for the first ingestion and any refresh due, then run a Query (or nothing,
        for Refresh)."""
        progress = request.progress if isinstance(request, Query | ToolQuery) else None
        bound = request.first_answer_wait if isinstance(request, ToolQuery) else math.inf
        if not self._ready.is_set():
            if progress is not None:
                self._listeners.add(progress)
            try:
                if progress is not None:
                    await self._notify(progress, *self._progress)
                with anyio.move_on_after(bound):
                    await self._ready.wait()
                if not self._ready.is_set() and isinstance(request, ToolQuery):
                    partial = await self._while_ingesting(request)
                    if partial is not None:
                        return partial
                await self._ready.wait()
            finally:
                if progress is not None:
                    self._listeners.discard(progress)
        await self._refresh_if_needed()
        db = self._db
        assert db is not None
        if isinstance(request, ToolQuery):
            query: Callable[..., Any] = self.queries[request.tool]
            extra = () if request.context is None else (request.context,)
            async with self._refresh_lock:
                return await anyio.to_thread.run_sync(query, db, request.args, *extra)
        if not isinstance(request, Query):
            return None
        async with self._refresh_lock:
            return await anyio.to_thread.run_sync(request.fn, db)

    # -- the freshness overlay ---------------------------------------------------------------

    def _on_overlay(
        self,
        envelope: Envelope[IndexRequest, Any],
        request: Overlay | EditsSeen | GetOverlay | OverlayReport | OverlayLive | OverlayBatchOver,
    ) -> None:
        """The overlay's messages, handled in the loop (none waits): questions wait in the
        schedule until their files are done; the task's reports answer them."""
        now = anyio.current_time()
        done: list[tuple[Envelope[IndexRequest, Any], list[str]]] = []
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
            envelope.reply_nowait(self._overlay.snapshot())
        elif isinstance(request, OverlayReport):
            envelope.close()  # a report from the actor's own task: nobody waits for a reply
            done = self._overlay.reported(request.batch, request.outcome, now)
        elif isinstance(request, OverlayLive):
            envelope.close()
            self._overlay.refreshed(request.files)
        else:
            envelope.close()
            done = self._overlay.batch_over(request.batch)
        for waiter, landed in done:
            waiter.reply_nowait(landed)

    def _start_overlay_batch(self, tg: anyio.abc.TaskGroup) -> None:
        batch = self._overlay.start_batch(anyio.current_time())
        if batch is not None:
            tg.start_soon(self._overlay_batch, *batch)

    async def _overlay_batch(self, batch: int, paths: tuple[str, ...], tried: dict[str, int]) -> None:
        """Re-index `paths` one after the other, reporting each outcome to the loop (a task
        of the actor's: the loop never waits for a compiler)."""
        me = self.mailbox.handle()
        try:
            await self._ready.wait()
            try:
                await self._refresh_if_needed()
            except Exception as error:  # the files are answered as not landed (batch over)
                log.warning("overlay_refresh_failed", store=str(self.store_path), error=repr(error))
                return
            db = self._db
            assert db is not None
            for path in paths:
                try:
                    outcome: OverlayOutcome = await self._compiler.run_one(
                        db, self._refresh_lock, path, tried
                    )
                except Exception as error:
                    log.warning("overlay_error", path=path, error=repr(error))
                    outcome = await anyio.to_thread.run_sync(Failed.unexpected, path, error)
                me.tell_nowait(OverlayReport(batch, outcome))
        finally:
            me.tell_nowait(OverlayBatchOver(batch))

    async def _while_ingesting(self, request: ToolQuery) -> WhileIngesting | None:
        """Answer from the units live so far, read through the reader connection (the
        writer's belongs to the ingestion), in one read transaction; None if the ingestion
        ended meanwhile (then the usual full answer)."""
        await self._live.request()
        query: Callable[..., Any] = self.queries[request.tool]
        extra = () if request.context is None else (request.context,)

        def run(reader: Database) -> Any:
            reader.snapshot()
            try:
                return query(reader, request.args, *extra)
            finally:
                reader.end_snapshot()

        async with self._reader_lock:
            if self._ready.is_set():
                return None
            if self._reader is None:
                self._reader = await anyio.to_thread.run_sync(Database.reader, self._db_path)
            (done, total), live = self._progress, self._live.live
            answer = await anyio.to_thread.run_sync(run, self._reader)
        return WhileIngesting(answer, done, total, live)


Connect: TypeAlias = Callable[
    [ActorHandle[IndexRequest, Any] | None], Awaitable[ActorHandle[IndexRequest, Any]]
]
"""The current actor's handle; given the handle of an actor that answered ActorGone, a
new actor's (the old one retired)."""


class IndexHandle:
    """What the Engine holds for one store: asks its current actor, and a new one when
    that actor has retired."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect

    async def _ask(self, request: IndexRequest, *, timeout: float) -> Any:
        handle = await self._connect(None)
        try:
            return await handle.ask(request, timeout=timeout)
        except ActorGone:
            # It retired between our lookup and our question: ask its successor, once.
            handle = await self._connect(handle)
            return await handle.ask(request, timeout=timeout)

    async def query(
        self,
        fn: Callable[[Database], T],
        *,
        timeout: float = math.inf,
        progress: ProgressListener | None = None,
    ) -> T:
        result: T = await self._ask(Query(fn, progress), timeout=timeout)
        return result

    async def ask(
        self,
        tool: str,
        args: Any,
        *,
        timeout: float = math.inf,
        progress: ProgressListener | None = None,
        context: Any = None,
        first_answer_wait: float = math.inf,
    ) -> Any:
        """The answer of the named query `tool` for `args`; a `WhileIngesting` if a first
        ingestion was still running `first_answer_wait` seconds after asking."""
        return await self._ask(ToolQuery(tool, args, progress, context, first_answer_wait), timeout=timeout)

    async def state(self, *, timeout: float = 5.0) -> IndexState:
        state: IndexState = await self._ask(GetState(), timeout=timeout)
        return state

    async def version(self, *, newest_write: bool = False, timeout: float = 60.0) -> StoreVersion:
        """The store's version as it is on disk now (read by the actor, in a thread)."""
        version: StoreVersion = await self._ask(GetStoreVersion(newest_write), timeout=timeout)
        return version

    async def refresh(self, *, timeout: float = math.inf) -> None:
        """Wait until the actor has taken in what the store has now."""
        await self._ask(Refresh(), timeout=timeout)

    async def overlay(self, paths: tuple[str, ...], *, timeout: float = math.inf) -> list[str]:
        """Re-index edited files into the overlay; the files that landed within `timeout`
        (ActorTimeout after it: the work goes on in the actor)."""
        landed: list[str] = await self._ask(Overlay(paths), timeout=timeout)
        return landed

    async def overlay_soon(self, paths: tuple[str, ...], *, timeout: float = 5.0) -> None:
        """Start re-indexing edited files into the overlay now, without waiting for it."""
        await self._ask(Overlay(paths, wait=False), timeout=timeout)

    async def edits_seen(self, paths: tuple[str, ...], *, timeout: float = 5.0) -> None:
        """Tell the actor the session edited `paths`: it re-indexes those of its files
        after the debounce period, in the background."""
        await self._ask(EditsSeen(paths), timeout=timeout)

    async def overlay_state(self, *, timeout: float = 5.0) -> OverlaySnapshot:
        snapshot: OverlaySnapshot = await self._ask(GetOverlay(), timeout=timeout)
        return snapshot

    async def hold_busy(self, release: anyio.Event, *, timeout: float = math.inf) -> None:
        """Test-only: returns once the actor holds its database until `release` is set."""
        await self._ask(HoldBusy(release), timeout=timeout)
