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
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from xcindex._log import get_logger
from xcindex.actors.index import IndexActor, IndexHandle, IndexState, ProgressListener
from xcindex.actors.ledger import LedgerActor, LedgerHandle
from xcindex.actors.workers import WorkerPool
from xcindex.engine_graph import GraphTools
from xcindex.indexstore.database import Database, cache_dir
from xcindex.indexstore.ingest import newest_write_ns
from xcindex.indexstore.library import toolchain_roots
from xcindex.locate import Location, locate
from xcindex.lsp.positions import LspLocation
from xcindex.lsp.workspace import WorkspaceRoot, resolve_workspace_root
from xcindex.tools.arguments import LocationArgs
from xcindex.tools.blast_radius import BlastRadiusAnswer, BlastRadiusArgs
from xcindex.tools.common import AnswerWarning, Freshness
from xcindex.tools.conformances import ConformancesAnswer, FindConformancesArgs
from xcindex.tools.find_symbol import FindSymbolAnswer, FindSymbolArgs
from xcindex.tools.plan_rename import (
    DEFAULT_MAX_RANGES,
    PlanRenameArgs,
    RenamePlan,
    early_refusal,
    index_plan,
    lsp_ranges,
    reconcile,
    refused,
    with_warnings,
)
from xcindex.tools.references import (
    DEFAULT_MAX_RESULTS,
    DefinitionAnswer,
    FindDefinitionArgs,
    FindOverridesArgs,
    FindReferencesArgs,
    SitesAnswer,
)
from xcindex.tools.shapes import LspChildJson
from xcindex.tools.status import (
    StatusAnswer,
    StatusArgs,
    iso,
    lsp_child_json,
    stale_files_now,
    status_answer,
    unreadable_warnings,
)
from xcindex.tools.wait_for_fresh import (
    DEFAULT_TIMEOUT_S,
    FileFreshness,
    FileState,
    FreshWaitAnswer,
    WaitForFreshArgs,
    files_freshness,
)
from xcindex.warnings import CodedError, Completeness, WarningCode, XcindexError

if TYPE_CHECKING:
    # The LSP stack (lsprotocol's types take most of a second to import) loads on first
    # use: a server that is never asked for a rename plan never pays for it.
    from xcindex.actors.lsp import LspPool, LspPoolConfig

log = get_logger(__name__)

LOCATION_TTL_S = 2.0
"""How long a located store is reused without looking again (it is still checked to exist)."""


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
    lsp: LspPoolConfig | None = None
    """How sourcekit-lsp runs (default: LspPoolConfig with its scratch folders in the cache
    folder, so sourcekit-lsp never builds into the user's project)."""
    reconcile: bool = True
    """plan_rename asks sourcekit-lsp to confirm the index's ranges (green-verified)."""
    watch_poll_s: float = 0.5
    """How often `wait_for_fresh` and `wait_status_change` look at the store and the ledger."""
    watch_settle_s: float = 3.0
    """A change of the store counts once it has been quiet this long: a build writes units
    for seconds, and one rebuild should be one status change, not one per unit."""


@dataclass(frozen=True)
class StatusVersion:
    """What a store's status depends on that changes under it: the units folder (the
    compiler renames every unit it writes into it) and the session-edited files."""

    units_mtime_ns: int
    edited: frozenset[str]


def _units_mtime_ns(store_path: Path) -> int:
    try:
        return (store_path / "v5" / "units").stat().st_mtime_ns
    except OSError:
        return 0


def _freshness_of(db: Database, *, paths: list[str], edited: frozenset[str]) -> list[FileFreshness]:
    return files_freshness(db, paths, edited)


def _edited_in_project(edited: frozenset[str], root: Path | None) -> list[str]:
    """The session's edited files that belong to this project (all of them when its folder
    is unknown): an edit in another checkout does not make this index stale."""
    if root is None:
        return sorted(edited)
    top = os.path.realpath(root).rstrip("/") + "/"
    return sorted(path for path in edited if os.path.realpath(path).startswith(top))


def _unknown_freshness(paths: list[str], edited: frozenset[str]) -> list[FileFreshness]:
    return [FileFreshness(path, FileState.UNKNOWN, os.path.realpath(path) in edited) for path in paths]


def _nothing(db: object) -> None:
    """A query that only makes the index actor take in what the store has."""


class Engine(GraphTools):
    """Use as `async with Engine() as engine:`; every tool is an async method."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._task_group: TaskGroup | None = None
        self._index: dict[Path, IndexHandle] = {}
        self._index_lock = anyio.Lock()
        self.workers = WorkerPool(self.config.ingest_workers)
        self._ledger: LedgerHandle | None = None
        self._lsp: LspPool | None = None
        self._lsp_lock = anyio.Lock()
        self._locations: dict[tuple[str | None, str | None], tuple[float, Location]] = {}

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
        try:
            # Every sourcekit-lsp child is asked to shut down (and killed if it will not)
            # before anything else is cancelled.
            if self._lsp is not None:
                await self._lsp.aclose()
        finally:
            task_group.cancel_scope.cancel()
        # The caller's own exception must reach the caller as itself, not wrapped in an
        # ExceptionGroup by the actors' task group: the task group only sees shutdown.
        try:
            await task_group.__aexit__(None, None, None)
        finally:
            await self.workers.aclose()
        return None

    async def close_children(self) -> None:
        """Stop every child process now (sourcekit-lsp, ingestion workers), shielded. For a
        host that must leave without unwinding (the server on a signal); `__aexit__` does
        this anyway."""
        with anyio.CancelScope(shield=True):
            if self._lsp is not None:
                await self._lsp.aclose()
            await self.workers.aclose()

    # --- plumbing ------------------------------------------------------------------------

    async def locate(self, project_path: str | None, index_store_path: str | None) -> Location:
        """Where the store is. Reused for a moment (a tool call per keystroke of an agent's
        plan should not walk the file system each time) unless the store is gone."""
        key = (project_path, index_store_path)
        now = anyio.current_time()
        cached = self._locations.get(key)
        if (
            cached is not None
            and now - cached[0] < LOCATION_TTL_S
            # One stat of a local folder: microseconds, far less than the thread hop it saves.
            and os.path.isdir(cached[1].store_path / "v5" / "units")  # noqa: ASYNC240
        ):
            return cached[1]
        location = await anyio.to_thread.run_sync(locate, project_path, index_store_path)
        if len(self._locations) > 64:
            self._locations.clear()
        self._locations[key] = (now, location)
        return location

    @property
    def lsp(self) -> LspPool | None:
        """The sourcekit-lsp pool, once plan_rename has needed it (None before)."""
        return self._lsp

    async def lsp_pool(self) -> LspPool:
        """The sourcekit-lsp pool, started in the Engine's task group on first use."""
        async with self._lsp_lock:
            if self._lsp is None:
                from xcindex.actors.lsp import LspPool, LspPoolConfig

                if self._task_group is None:
                    raise RuntimeError("the Engine is not running: use `async with Engine() as engine`")
                pool = LspPool(self.config.lsp or LspPoolConfig(scratch_root=cache_dir() / "sourcekit-lsp"))
                await self._task_group.start(pool.run)
                self._lsp = pool
            return self._lsp

    async def _index_for(self, location: Location) -> IndexHandle:
        async with self._index_lock:
            handle = self._index.get(location.store_path)
            if handle is None:
                if self._task_group is None:
                    raise RuntimeError("the Engine is not running: use `async with Engine() as engine`")
                from xcindex.registry import INDEX_QUERIES

                actor = IndexActor(location.store_path, self.workers, INDEX_QUERIES)
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

    async def _answer(
        self, project_path: str | None, index_store_path: str | None, args: LocationArgs
    ) -> Any:
        """Run a tool's named query on a fresh database, then add what the location and the
        store's own health say to its freshness (name-match fallback, unreadable units)."""
        location = await self.locate(project_path, index_store_path)
        handle = await self._index_for(location)
        answer = await handle.ask(
            args.tool, args, timeout=self.config.query_timeout_s, progress=current_progress_listener.get()
        )
        state = await (await self._index_for(location)).state()
        extra = [AnswerWarning(code, message) for code, message in location.notes] + unreadable_warnings(
            state
        )
        edited = await self.edited_files()
        named_edited = (
            await anyio.to_thread.run_sync(edited_among, answer.named_paths(), edited) if edited else []
        )
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

    async def call(self, args: LocationArgs, **options: Any) -> Any:
        """Answer one tool call, given its validated argument model (see `registry.TOOLS`).

        A tool answered from the index alone is a named query to the index actor; the rest
        (status, wait_for_fresh, plan_rename) are methods here. `options` are Engine-only
        settings a tool takes (plan_rename's `reconcile_with_lsp`)."""
        from xcindex.registry import INDEX_QUERIES

        if args.tool in INDEX_QUERIES:
            return await self._answer(args.project_path, args.index_store_path, args)
        if args.tool == "status":
            return await self._status(args)
        if args.tool == "wait_for_fresh":
            assert isinstance(args, WaitForFreshArgs)
            return await self._wait_for_fresh(args)
        if args.tool == "plan_rename":
            assert isinstance(args, PlanRenameArgs)
            return await self._plan_rename(args, **options)
        raise XcindexError(f"unknown tool '{args.tool}'.")

    async def settle(self, *, project_path: str | None = None, index_store_path: str | None = None) -> None:
        """Wait until the index has taken in what the store has (a first ingestion included)."""
        location = await self.locate(project_path, index_store_path)
        await self._query(location, _nothing)

    async def find_symbol(
        self, symbol_name: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> FindSymbolAnswer:
        """Candidate symbols for a name (exact, bare base name, or `Type.member(label:)`)."""
        answer: FindSymbolAnswer = await self.call(
            FindSymbolArgs.build(
                symbol_name=symbol_name, project_path=project_path, index_store_path=index_store_path
            )
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
        answer: SitesAnswer = await self.call(
            FindReferencesArgs.build(
                symbol_name=symbol_name,
                usr=usr,
                max_results=max_results,
                project_path=project_path,
                index_store_path=index_store_path,
            )
        )
        return answer

    async def find_definition(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> DefinitionAnswer:
        answer: DefinitionAnswer = await self.call(
            FindDefinitionArgs.build(usr=usr, project_path=project_path, index_store_path=index_store_path)
        )
        return answer

    async def find_overrides(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> SitesAnswer:
        answer: SitesAnswer = await self.call(
            FindOverridesArgs.build(usr=usr, project_path=project_path, index_store_path=index_store_path)
        )
        return answer

    async def find_conformances(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> ConformancesAnswer:
        answer: ConformancesAnswer = await self.call(
            FindConformancesArgs.build(usr=usr, project_path=project_path, index_store_path=index_store_path)
        )
        return answer

    async def blast_radius(
        self, file_path: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> BlastRadiusAnswer:
        answer: BlastRadiusAnswer = await self.call(
            BlastRadiusArgs.build(
                file_path=file_path, project_path=project_path, index_store_path=index_store_path
            )
        )
        return answer

    async def status(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusAnswer:
        """Answers at once, even during a first ingestion (then with its progress)."""
        answer: StatusAnswer = await self.call(
            StatusArgs.build(project_path=project_path, index_store_path=index_store_path)
        )
        return answer

    async def _status(self, args: LocationArgs) -> StatusAnswer:
        location = await self.locate(args.project_path, args.index_store_path)
        handle = await self._index_for(location)
        stale: list[str] = []
        # A warm start refreshes in milliseconds: wait that long, but never for a cold
        # ingestion, which status reports with its progress instead.
        with anyio.move_on_after(self.config.status_wait_s):
            stale = await handle.query(stale_files_now, timeout=self.config.query_timeout_s)
        state = await handle.state()
        notes = tuple(AnswerWarning(code, message) for code, message in location.notes)
        answer = status_answer(
            state,
            stale,
            session_edited_files=tuple(
                await anyio.to_thread.run_sync(
                    _edited_in_project, await self.edited_files(), location.workspace_root
                )
            ),
            lsp=self._lsp_children(),
        )
        return replace(answer, warnings=notes + answer.warnings)

    def _lsp_children(self) -> tuple[LspChildJson, ...]:
        """Each sourcekit-lsp child as status shows it; a troubled one with its last log lines."""
        if self._lsp is None:
            return ()
        children: list[LspChildJson] = []
        for child in self._lsp.status():
            entry = lsp_child_json(child)
            if child.last_error is not None:
                entry["recentLog"] = self._lsp.recent_log(child.root, 10)
            children.append(entry)
        return tuple(children)

    async def plan_rename(
        self,
        usr: str,
        new_name: str,
        *,
        max_ranges: int = DEFAULT_MAX_RANGES,
        project_path: str | None = None,
        index_store_path: str | None = None,
        reconcile_with_lsp: bool | None = None,
    ) -> RenamePlan:
        """A tiered rename plan for `usr`; never writes a file. Reconciled with sourcekit-lsp
        unless `reconcile_with_lsp` (default: the config's `reconcile`) is False."""
        args = PlanRenameArgs.build(
            usr=usr,
            new_name=new_name,
            max_ranges=max_ranges,
            project_path=project_path,
            index_store_path=index_store_path,
        )
        plan: RenamePlan = await self.call(args, reconcile_with_lsp=reconcile_with_lsp)
        return plan

    async def _plan_rename(self, args: PlanRenameArgs, reconcile_with_lsp: bool | None = None) -> RenamePlan:
        usr, new_name, max_ranges = args.usr, args.new_name, args.max_ranges
        project_path = args.project_path
        refusal = early_refusal(new_name)
        if refusal is not None:
            return refused(usr, new_name, refusal, max_ranges)
        location = await self.locate(project_path, args.index_store_path)
        edited = await self.edited_files()
        roots = await anyio.to_thread.run_sync(toolchain_roots)
        last_built = iso(await anyio.to_thread.run_sync(newest_write_ns, location.store_path))
        plan: RenamePlan = await self._query(
            location,
            lambda db: index_plan(
                db,
                usr,
                new_name,
                toolchain_roots=roots,
                edited_files=edited,
                last_built=last_built,
                max_ranges=max_ranges,
            ),
        )
        state = await (await self._index_for(location)).state()
        notes = [(code, message) for code, message in location.notes]
        notes += [(w.code, w.message) for w in unreadable_warnings(state)]
        plan = with_warnings(plan, notes)
        if plan.refusal is not None:
            return plan
        if reconcile_with_lsp if reconcile_with_lsp is not None else self.config.reconcile:
            plan = await self._reconcile(plan, project_path, location)
        return plan

    async def _reconcile(self, plan: RenamePlan, project_path: str | None, location: Location) -> RenamePlan:
        """Ask sourcekit-lsp for the references at each renamed definition (after its
        background index is ready) and tier the plan by agreement. Any fault is a warning."""
        unavailable = WarningCode.RECONCILIATION_UNAVAILABLE
        try:
            root: WorkspaceRoot = await anyio.to_thread.run_sync(
                partial(
                    resolve_workspace_root,
                    # locate already walked up from the store: start from what it found.
                    project_path=Path(project_path) if project_path else location.workspace_root,
                    index_store_path=location.store_path,
                )
            )
            pool = await self.lsp_pool()
            await pool.wait_ready(root.path)
            locations: list[LspLocation] = []
            for _usr, path, line, column in plan.definitions:
                locations += await pool.references(
                    root.path, Path(path), line, column, include_declaration=True
                )
        except CodedError as error:
            return with_warnings(
                plan,
                [
                    (unavailable, f"sourcekit-lsp was not consulted: {error.message}"),
                    (error.code, error.message),
                ],
            )
        index_paths = {r.path for r in plan.ranges}
        found = await anyio.to_thread.run_sync(lsp_ranges, locations, plan.old_name or "", index_paths)
        warnings = [
            (code, f"{code}: sourcekit-lsp may lack build settings for {root.path}.")
            for code in root.warnings_for_answer(empty=not found)
        ]
        if not found:
            warnings.append(
                (
                    WarningCode.RECONCILIATION_EMPTY,
                    "sourcekit-lsp answered with no locations; the index's tiers stand.",
                )
            )
        return with_warnings(reconcile(plan, found), warnings)

    # --- pushed freshness ------------------------------------------------------------

    async def wait_for_fresh(
        self,
        file_paths: list[str],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> FreshWaitAnswer:
        """Wait until the index covers the current content of `file_paths` (absolute), or
        `timeout_s` passes. New units are taken in as the compiler writes them, so this
        returns as soon as the last named file's unit lands, not when the build ends."""
        answer: FreshWaitAnswer = await self.call(
            WaitForFreshArgs.build(
                files=file_paths,
                timeout_seconds=timeout_s,
                project_path=project_path,
                index_store_path=index_store_path,
            )
        )
        return answer

    async def _wait_for_fresh(self, args: WaitForFreshArgs) -> FreshWaitAnswer:
        file_paths, timeout_s = list(args.files), args.timeout_seconds
        location = await self.locate(args.project_path, args.index_store_path)
        started = anyio.current_time()
        deadline = started + timeout_s
        last: list[FileFreshness] | None = None
        while True:
            edited = await self.edited_files()
            files = None
            # A first ingestion of a large store, or other queries ahead of this one, can
            # outlast the caller's timeout.
            with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0) + self.config.watch_poll_s):
                files = await self._query(location, partial(_freshness_of, paths=file_paths, edited=edited))
            now = anyio.current_time()
            if files is None:
                state = await (await self._index_for(location)).state()
                if not state.ready:
                    done, total = state.progress
                    raise XcindexError(
                        f"The first ingestion of this index is still running ({done}/{total} records read); "
                        "ask again in a moment."
                    )
                # Busy, not broken: a timeout is an answer, with what was last known.
                known: list[FileFreshness] = (
                    last
                    if last is not None
                    else await anyio.to_thread.run_sync(_unknown_freshness, file_paths, edited)
                )
                return FreshWaitAnswer(tuple(known), waited_s=now - started, timed_out=True)
            last = files
            settled = all(f.settled for f in files)
            if settled or now >= deadline:
                return FreshWaitAnswer(tuple(files), waited_s=now - started, timed_out=not settled)
            await anyio.sleep(min(self.config.watch_poll_s, deadline - now))

    async def status_version(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusVersion:
        location = await self.locate(project_path, index_store_path)
        units = await anyio.to_thread.run_sync(_units_mtime_ns, location.store_path)
        return StatusVersion(units, await self.edited_files())

    async def wait_status_change(
        self,
        since: StatusVersion,
        *,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> StatusVersion:
        """Return the new version once the status differs from `since`: at once when the
        session-edited files change; when the store changes, once it has been quiet for
        `watch_settle_s` and the index has taken the new units in (so a status read right
        after reflects the rebuild)."""
        location = await self.locate(project_path, index_store_path)
        poll = self.config.watch_poll_s
        while True:
            units = await anyio.to_thread.run_sync(_units_mtime_ns, location.store_path)
            edited = await self.edited_files()
            if edited != since.edited:
                return StatusVersion(since.units_mtime_ns, edited)
            if units != since.units_mtime_ns:
                quiet_since = anyio.current_time()
                while anyio.current_time() - quiet_since < self.config.watch_settle_s:
                    await anyio.sleep(poll)
                    latest = await anyio.to_thread.run_sync(_units_mtime_ns, location.store_path)
                    if latest != units:
                        units, quiet_since = latest, anyio.current_time()
                await self._query(location, _nothing)
                log.info("store_changed", store=str(location.store_path), units_mtime_ns=units)
                return StatusVersion(units, edited)
            await anyio.sleep(poll)
