"""The Engine: the actors in one task group, and one async method per tool.

This is the embedding API as well as what the MCP server calls. It runs under asyncio and
trio alike (anyio only). Everything blocking happens in actors' worker threads or worker
processes, never on the caller's event loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import structlog
from anyio.abc import TaskGroup

from xcindex.actors.index import IndexActor, IndexHandle, IndexState
from xcindex.actors.workers import WorkerPool
from xcindex.indexstore.database import Database
from xcindex.locate import Location, locate
from xcindex.tools.find_symbol import FindSymbolAnswer, find_symbol

log = structlog.stdlib.get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class EngineConfig:
    ingest_workers: int = 2
    """Worker processes for walking libIndexStore (both cores by default)."""
    query_timeout_s: float = 900.0
    """Upper bound for one query, including a first ingestion of a large store."""


class Engine:
    """Use as `async with Engine() as engine:`; every tool is an async method."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._task_group: TaskGroup | None = None
        self._index: dict[Path, IndexHandle] = {}
        self._index_lock = anyio.Lock()
        self.workers = WorkerPool(self.config.ingest_workers)

    async def __aenter__(self) -> Engine:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        task_group, self._task_group = self._task_group, None
        assert task_group is not None
        task_group.cancel_scope.cancel()
        # The caller's own exception must reach the caller as itself, not wrapped in an
        # ExceptionGroup by the actors' task group: the task group only sees shutdown.
        try:
            await task_group.__aexit__(None, None, None)
        finally:
            await self.workers.aclose()
        return None

    # --- plumbing ------------------------------------------------------------------------

    async def locate(self, project_path: str | None, index_store_path: str | None) -> Location:
        return await anyio.to_thread.run_sync(locate, project_path, index_store_path)

    async def _index_for(self, location: Location) -> IndexHandle:
        async with self._index_lock:
            handle = self._index.get(location.store_path)
            if handle is None:
                if self._task_group is None:
                    raise RuntimeError("the Engine is not running: use `async with Engine() as engine`")
                actor = IndexActor(location.store_path, self.workers)
                await self._task_group.start(actor.run)
                handle = actor.handle()
                self._index[location.store_path] = handle
            return handle

    async def _query(self, location: Location, fn: Any, timeout: float | None = None) -> Any:
        handle = await self._index_for(location)
        return await handle.query(fn, timeout=timeout if timeout is not None else self.config.query_timeout_s)

    async def index_state(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> IndexState:
        location = await self.locate(project_path, index_store_path)
        return await (await self._index_for(location)).state()

    async def run_query(
        self,
        fn: Any,
        *,
        project_path: str | None = None,
        index_store_path: str | None = None,
        timeout: float = math.inf,
    ) -> Any:
        """Run `fn(db: Database)` against a fresh database (tests and tools built on top)."""
        location = await self.locate(project_path, index_store_path)
        return await self._query(location, fn, timeout)

    # --- tools -------------------------------------------------------------------------

    async def find_symbol(
        self, symbol_name: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> FindSymbolAnswer:
        location = await self.locate(project_path, index_store_path)

        def run(db: Database) -> FindSymbolAnswer:
            return find_symbol(db, symbol_name)

        answer: FindSymbolAnswer = await self._query(location, run)
        return answer
