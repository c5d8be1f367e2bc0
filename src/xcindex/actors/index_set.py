"""The Engine's index actors, one per store, at most `max_actors` at once.

Starting one more asks the least recently used to `Retire` (a busy one declines and is
asked again on a later question); an actor unused for `idle_timeout` retires by itself.
Retiring closes its database. The `IndexHandle` given out for a store outlives its actors:
a question that finds the actor gone waits until its database is closed, starts a new one
(a warm start) and asks it, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from xcindex.actors.index import DEFAULT_OVERLAY_DEBOUNCE_S, IndexActor
from xcindex.actors.index_handle import IndexHandle
from xcindex.actors.index_messages import IndexRequest, Retire
from xcindex.actors.mailbox import ActorHandle
from xcindex.errors import XcindexError
from xcindex.indexstore.database import Database
from xcindex.indexstore.pool import WorkerPool

RETIRE_TIMEOUT_S = 5.0
"""How long to wait for an actor to say whether it retires (it answers from its loop)."""


@dataclass(eq=False)
class _Entry:
    actor: IndexActor
    handle: ActorHandle[IndexRequest, Any]
    stopped: anyio.Event = field(default_factory=anyio.Event)
    last_used: float = 0.0


class IndexActors:
    """Give out a store's `IndexHandle`; start, bound and replace its actors. Set
    `task_group` (the Engine's) before the first question."""

    def __init__(
        self,
        workers: WorkerPool,
        *,
        max_actors: int,
        idle_timeout: float,
        queries: Mapping[str, Callable[[Database, Any, Any], Any]] | None = None,
        overlay_debounce_s: float = DEFAULT_OVERLAY_DEBOUNCE_S,
        overlay: bool = True,
        watch: bool = True,
    ) -> None:
        self.workers = workers
        self.overlay_debounce_s = overlay_debounce_s
        self.overlay = overlay
        self.watch = watch
        self.queries = queries
        self.max_actors = max(1, max_actors)
        self.idle_timeout = idle_timeout
        self.task_group: TaskGroup | None = None
        self._running: dict[Path, _Entry] = {}
        self._handles: dict[Path, IndexHandle] = {}
        self._lock = anyio.Lock()

    def handle_for(self, store: Path) -> IndexHandle:
        handle = self._handles.get(store)
        if handle is None:
            if len(self._handles) > 256:
                self._handles.clear()
            handle = self._handles[store] = IndexHandle(partial(self._connect, store))
        return handle

    def running(self) -> tuple[Path, ...]:
        """The stores whose actor is running now."""
        return tuple(store for store, entry in self._running.items() if not entry.stopped.is_set())

    async def _connect(
        self, store: Path, gone: ActorHandle[IndexRequest, Any] | None
    ) -> ActorHandle[IndexRequest, Any]:
        """The running actor for `store`; a new one if it retired (`gone` is the handle
        that found it gone)."""
        async with self._lock:
            entry = self._running.get(store)
            if entry is not None and gone is not None and entry.handle is gone:
                await entry.stopped.wait()  # its database is closed before a new one opens
            if entry is None or entry.stopped.is_set():
                entry = await self._start(store)
            entry.last_used = anyio.current_time()
            if len(self._running) > self.max_actors:
                # One was busy when the last actor started: retire it now if it is idle.
                await self._retire_beyond(self.max_actors, keep=entry)
            return entry.handle

    async def _start(self, store: Path) -> _Entry:
        if self.task_group is None:
            raise RuntimeError("the Engine is not running: use `async with Engine() as engine`")
        await self._retire_beyond(self.max_actors - 1, keep=None)
        actor = IndexActor(
            store,
            self.workers,
            self.queries,
            idle_timeout=self.idle_timeout,
            overlay_debounce_s=self.overlay_debounce_s,
            overlay=self.overlay,
            watch=self.watch,
        )
        entry = _Entry(actor, actor.mailbox.handle())
        await self.task_group.start(self._run, entry)
        self._running[store] = entry
        return entry

    @staticmethod
    async def _run(
        entry: _Entry, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await entry.actor.run(task_status=task_status)
        finally:
            entry.stopped.set()

    async def _retire_beyond(self, most: int, *, keep: _Entry | None) -> None:
        """Retire least recently used idle actors (never `keep`) until at most `most` run."""
        for store, entry in list(self._running.items()):
            if entry.stopped.is_set():
                del self._running[store]
        for store, entry in sorted(self._running.items(), key=lambda item: item[1].last_used):
            if len(self._running) <= most:
                return
            if entry is keep:
                continue
            try:
                retired = await entry.handle.ask(Retire(), timeout=RETIRE_TIMEOUT_S)
            except XcindexError:
                retired = True  # already gone
            if retired:
                await entry.stopped.wait()
                del self._running[store]
