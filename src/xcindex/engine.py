"""The Engine: the actors in one task group, and one async method per tool.

This is the embedding API as well as what the MCP server calls. It runs under asyncio and
trio alike (anyio only). Everything blocking happens in actors' worker threads or worker
processes, never on the caller's event loop.
"""

from __future__ import annotations

import math
import os
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from xcindex._log import get_logger
from xcindex.actors.index import IndexActor, IndexHandle, IndexState, ProgressListener
from xcindex.actors.ledger import LedgerActor, LedgerHandle
from xcindex.actors.workers import WorkerPool
from xcindex.locate import Location, locate
from xcindex.tools.blast_radius import BlastRadiusAnswer, blast_radius
from xcindex.tools.common import Freshness, Warning
from xcindex.tools.conformances import ConformancesAnswer, find_conformances
from xcindex.tools.find_symbol import FindSymbolAnswer, find_symbol
from xcindex.tools.references import (
    DEFAULT_MAX_RESULTS,
    MAX_RESULTS,
    DefinitionAnswer,
    SitesAnswer,
    find_definition,
    find_overrides,
    find_references,
)
from xcindex.tools.status import StatusAnswer, stale_files_now, status_answer, unreadable_warnings
from xcindex.warnings import Completeness, XcindexError

log = get_logger(__name__)


current_progress_listener: ContextVar[ProgressListener | None] = ContextVar("xcindex_progress", default=None)
"""Set by a caller (the MCP server, per tool call) to hear about a first ingestion that its
call waits for. A context variable, so the Engine's methods keep one signature per tool."""


def edited_among(paths: set[str], edited: frozenset[str]) -> list[str]:
    """The paths (as the index names them) whose real path was edited this session."""
    return sorted(path for path in paths if os.path.realpath(path) in edited)


class _HasFreshness(Protocol):
    @property
    def freshness(self) -> Freshness: ...

    def named_paths(self) -> set[str]: ...


A = TypeVar("A", bound=_HasFreshness)


@dataclass(frozen=True)
class EngineConfig:
    ingest_workers: int = 2
    """Worker processes for walking libIndexStore (both cores by default)."""
    query_timeout_s: float = 900.0
    """Upper bound for one query, including a first ingestion of a large store."""
    status_wait_s: float = 1.0
    """How long `status` waits for a first refresh before answering with its progress."""
    project_dir: str | None = None
    """Whose session-edited files to track (default: CLAUDE_PROJECT_DIR, else the working
    directory), matching the hooks' ledger file."""


class Engine:
    """Use as `async with Engine() as engine:`; every tool is an async method."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._task_group: TaskGroup | None = None
        self._index: dict[Path, IndexHandle] = {}
        self._index_lock = anyio.Lock()
        self.workers = WorkerPool(self.config.ingest_workers)
        self._ledger: LedgerHandle | None = None

    async def __aenter__(self) -> Engine:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        try:
            ledger = LedgerActor(self.config.project_dir)
            await task_group.start(ledger.run)
            self._ledger = ledger.handle()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
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
        return await handle.query(
            fn,
            timeout=timeout if timeout is not None else self.config.query_timeout_s,
            progress=current_progress_listener.get(),
        )

    async def _answer(self, project_path: str | None, index_store_path: str | None, fn: Any) -> Any:
        """Run a tool's logic on a fresh database, then add what the location and the
        store's own health say to its freshness (name-match fallback, unreadable units)."""
        location = await self.locate(project_path, index_store_path)
        answer = await self._query(location, fn)
        state = await (await self._index_for(location)).state()
        extra = [Warning(code, message) for code, message in location.notes] + unreadable_warnings(state)
        edited = await self.edited_files()
        named_edited = await anyio.to_thread.run_sync(edited_among, answer.named_paths(), edited)
        if not extra and not named_edited:
            return answer
        freshness: Freshness = answer.freshness
        completeness = freshness.completeness
        if state.failures and completeness is Completeness.COMPLETE:
            completeness = Completeness.PARTIAL
        if named_edited:
            completeness = Completeness.STALE
        return replace(
            answer,
            freshness=replace(
                freshness,
                completeness=completeness,
                session_edited_files=tuple(named_edited),
                warnings=freshness.warnings + tuple(extra),
            ),
        )

    # --- the session ledger ------------------------------------------------------------

    async def record_edit(self, path: str) -> None:
        """Tell the engine that the agent edited `path` (for agents without the hooks):
        answers naming it say so, and plan_rename marks its ranges red-stale."""
        assert self._ledger is not None, "the Engine is not running"
        await self._ledger.record_edit(path)

    async def edited_files(self) -> frozenset[str]:
        """Files edited this session (real paths), from the hooks' ledger and record_edit."""
        assert self._ledger is not None, "the Engine is not running"
        return await self._ledger.edited_files()

    async def clear_edits(self) -> None:
        assert self._ledger is not None, "the Engine is not running"
        await self._ledger.clear()

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
        """Candidate symbols for a name (exact, bare base name, or `Type.member(label:)`)."""
        answer: FindSymbolAnswer = await self._answer(
            project_path, index_store_path, lambda db: find_symbol(db, symbol_name)
        )
        return answer

    async def find_references(
        self,
        symbol_name: str | None = None,
        *,
        usr: str | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> SitesAnswer:
        """Every source occurrence of a symbol, by USR (preferred) or by name."""
        if (symbol_name is None) == (usr is None):
            raise XcindexError("Give exactly one of 'symbolName' or 'usr'.")
        if not 1 <= max_results <= MAX_RESULTS:
            raise XcindexError(f"'maxResults' must be between 1 and {MAX_RESULTS}; got {max_results}.")
        answer: SitesAnswer = await self._answer(
            project_path,
            index_store_path,
            lambda db: find_references(db, symbol_name=symbol_name, usr=usr, max_results=max_results),
        )
        return answer

    async def find_definition(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> DefinitionAnswer:
        answer: DefinitionAnswer = await self._answer(
            project_path, index_store_path, lambda db: find_definition(db, usr)
        )
        return answer

    async def find_overrides(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> SitesAnswer:
        answer: SitesAnswer = await self._answer(
            project_path, index_store_path, lambda db: find_overrides(db, usr)
        )
        return answer

    async def find_conformances(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> ConformancesAnswer:
        answer: ConformancesAnswer = await self._answer(
            project_path, index_store_path, lambda db: find_conformances(db, usr)
        )
        return answer

    async def blast_radius(
        self, file_path: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> BlastRadiusAnswer:
        answer: BlastRadiusAnswer = await self._answer(
            project_path, index_store_path, lambda db: blast_radius(db, file_path)
        )
        return answer

    async def status(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusAnswer:
        """Answers at once, even during a first ingestion (then with its progress)."""
        location = await self.locate(project_path, index_store_path)
        handle = await self._index_for(location)
        stale: list[str] = []
        # A warm start refreshes in milliseconds: wait that long, but never for a cold
        # ingestion, which status reports with its progress instead.
        with anyio.move_on_after(self.config.status_wait_s):
            stale = await handle.query(stale_files_now, timeout=self.config.query_timeout_s)
        state = await handle.state()
        notes = tuple(Warning(code, message) for code, message in location.notes)
        answer = status_answer(state, stale, session_edited_files=tuple(sorted(await self.edited_files())))
        return replace(answer, warnings=notes + answer.warnings)
