"""The index actor: owns one store's database, keeps it fresh, answers queries.

A first (cold) ingestion runs in the background so that `status` answers at once with
its progress; queries wait for it. Before every query a cheap check (the mtime of
`v5/units`, which the compiler's atomic renames bump) decides whether a refresh is due,
so a rebuild while the server runs is picked up without a restart.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.actors.mailbox import ActorHandle, Envelope, Mailbox
from xcindex.indexstore.database import Counts, Database, database_path_for
from xcindex.indexstore.ingest import RefreshReport, refresh
from xcindex.indexstore.layout import units_mtime_ns
from xcindex.indexstore.pool import WorkerPool

log = get_logger(__name__)

T = TypeVar("T")


ProgressListener = Callable[[int, int], Awaitable[None]]


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


@dataclass(frozen=True)
class GetState:
    """Reply the actor's current state without waiting for an ingestion."""


@dataclass(frozen=True)
class IndexState:
    store_path: Path
    database_path: Path
    ready: bool
    """The first ingestion has finished: queries answer without waiting for it."""
    ingesting: bool
    progress: tuple[int, int]
    last_refresh: RefreshReport | None
    counts: Counts | None
    failures: tuple[tuple[str, str, str], ...]


IndexRequest = Query | ToolQuery | GetState


@dataclass
class IndexActor:
    store_path: Path
    workers: WorkerPool
    queries: Mapping[str, Callable[[Database, Any], Any]] = field(default_factory=dict)
    """The named queries this actor answers (the registry's index tools)."""
    mailbox: Mailbox[IndexRequest, Any] = field(default_factory=Mailbox)
    _db: Database | None = None
    _ready: anyio.Event = field(default_factory=anyio.Event)
    _ingesting: bool = False
    _progress: tuple[int, int] = (0, 0)
    _last_report: RefreshReport | None = None
    _counts: Counts | None = None
    _units_mtime_ns: int = -1
    _refresh_lock: anyio.Lock = field(default_factory=anyio.Lock)
    _failures: tuple[tuple[str, str, str], ...] = ()
    _listeners: set[ProgressListener] = field(default_factory=set)
    _unserved: dict[int, Envelope[IndexRequest, Any]] = field(default_factory=dict)
    """Envelopes handed to a task that may be cancelled before it runs a line (asyncio
    never starts a coroutine cancelled before its first step): closed at shutdown so no
    caller's reply channel is left open."""
    _db_path: Path = field(default=Path())

    def handle(self) -> IndexHandle:
        return IndexHandle(self.mailbox.handle())

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        db_path = self._db_path = database_path_for(self.store_path)
        self._db = await anyio.to_thread.run_sync(Database, db_path)
        log.info("index_actor_started", store=str(self.store_path), database=str(db_path))
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._first_refresh)
                task_status.started()
                async for envelope in self.mailbox.inbox:
                    if isinstance(envelope.request, GetState):
                        await envelope.reply(self._state())
                    else:
                        self._unserved[id(envelope)] = envelope
                        tg.start_soon(self._serve, envelope)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.mailbox.aclose()
                for unserved in self._unserved.values():
                    unserved.close()
                self._unserved.clear()
                db, self._db = self._db, None
                if db is not None:
                    await anyio.to_thread.run_sync(db.close)
            log.info("index_actor_stopped", store=str(self.store_path))

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
            await self._refresh_if_needed(force=True)
        finally:
            self._ready.set()
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

    def _units_mtime(self) -> int:
        return units_mtime_ns(self.store_path)

    async def _refresh_if_needed(self, *, force: bool = False) -> None:
        async with self._refresh_lock:
            current = self._units_mtime()
            if not force and current == self._units_mtime_ns:
                return
            assert self._db is not None
            self._ingesting = True
            try:
                report = await refresh(
                    self._db, self.store_path, workers=self.workers, progress=self._on_progress
                )
            finally:
                self._ingesting = False
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
                records_read=report.counters.records_read,
                failures=len(report.failures),
                duration_ms=round(report.duration_s * 1000, 1),
            )

    async def _serve(self, envelope: Envelope[IndexRequest, Any]) -> None:
        request = envelope.request
        assert isinstance(request, Query | ToolQuery)
        try:
            if request.progress is not None and not self._ready.is_set():
                self._listeners.add(request.progress)
                try:
                    await self._notify(request.progress, *self._progress)
                    await self._ready.wait()
                finally:
                    self._listeners.discard(request.progress)
            await self._ready.wait()
            await self._refresh_if_needed()
            db = self._db
            assert db is not None
            if isinstance(request, ToolQuery):
                query = self.queries[request.tool]
                args = request.args
                async with self._refresh_lock:
                    result = await anyio.to_thread.run_sync(lambda: query(db, args))
            else:
                async with self._refresh_lock:
                    result = await anyio.to_thread.run_sync(request.fn, db)
        except Exception as error:
            await envelope.fail(error)
        else:
            await envelope.reply(result)
        finally:
            envelope.close()
            self._unserved.pop(id(envelope), None)


class IndexHandle:
    def __init__(self, handle: ActorHandle[IndexRequest, Any]) -> None:
        self._handle = handle

    async def query(
        self,
        fn: Callable[[Database], T],
        *,
        timeout: float = math.inf,
        progress: ProgressListener | None = None,
    ) -> T:
        result: T = await self._handle.ask(Query(fn, progress), timeout=timeout)
        return result

    async def ask(
        self, tool: str, args: Any, *, timeout: float = math.inf, progress: ProgressListener | None = None
    ) -> Any:
        """The answer of the named query `tool` for `args`."""
        return await self._handle.ask(ToolQuery(tool, args, progress), timeout=timeout)

    async def state(self, *, timeout: float = 5.0) -> IndexState:
        state: IndexState = await self._handle.ask(GetState(), timeout=timeout)
        return state
