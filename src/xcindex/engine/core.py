"""What every Engine call stands on: the actors in one task group, locating a store, an
index answer's freshness (the overlay included), the session ledger, and watching a store for
changes. The Engine (`api.py`) is the public face; `runs.py` and the registry use this core.

It runs under asyncio and trio alike (anyio only). Everything blocking happens in actors'
worker threads or worker processes, never on the caller's event loop.
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from xcindex._log import get_logger
from xcindex.actors.index_handle import IndexHandle
from xcindex.actors.index_messages import WhileIngesting
from xcindex.actors.index_set import IndexActors
from xcindex.actors.ledger import LedgerActor, LedgerHandle
from xcindex.engine.config import (
    LOCATION_TTL_S,
    MAX_OVERLAY_FILES_PER_QUESTION,
    EngineConfig,
    StatusVersion,
    current_progress_listener,
)
from xcindex.errors import ActorGone, ActorTimeout, CodedError, XcindexError
from xcindex.indexstore.database import Database, cache_dir
from xcindex.indexstore.pool import WorkerPool
from xcindex.indexstore.state import IndexState
from xcindex.overlay.changes import Changes
from xcindex.overlay.runner import OverlaySnapshot
from xcindex.project.locate import Location, locate
from xcindex.project.store_layout import units_dir
from xcindex.tools.arguments import LocationArgs
from xcindex.tools.common import AnswerWarning, Freshness
from xcindex.tools.elsewhere import BuiltElsewhere, BuiltElsewhereError, built_elsewhere
from xcindex.tools.status import (
    unreadable_warnings,
)
from xcindex.tools.wait_for_fresh import (
    FileFreshness,
    files_freshness,
)
from xcindex.vocabulary import Completeness, ProjectKind, WarningCode

if TYPE_CHECKING:
    # The LSP stack (lsprotocol's types take most of a second to import) loads on first
    # use: a server that is never asked for a rename plan never pays for it.
    from xcindex.actors.lsp import LspPool

log = get_logger(__name__)


def edited_among(paths: set[str], edited: frozenset[str]) -> list[str]:
    """The paths (as the index names them) whose real path was edited this session."""
    return sorted(path for path in paths if os.path.realpath(path) in edited)


def overlay_files_in(db: Database) -> tuple[dict[str, int], set[str]]:
    """Files whose live unit is the overlay's: those it describes (the file is as it was
    when indexed: the unit carries its exact modification time), and those put back since
    with an older time (a restore or copy that keeps times; "newer than its unit" cannot
    tell, so the overlay looks at them again)."""
    covered: dict[str, int] = {}
    went_back: set[str] = set()
    for path, unit_mtime in db.overlay_live_files().items():
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        if mtime == unit_mtime:
            covered[path] = unit_mtime
        elif mtime < unit_mtime:
            went_back.add(path)
    return covered, went_back


def _mtimes(paths: frozenset[str]) -> dict[str, int]:
    """The modification time of each path that exists."""
    found: dict[str, int] = {}
    for path in paths:
        try:
            found[path] = os.stat(path).st_mtime_ns
        except OSError:
            continue
    return found


def files_freshness_of(db: Database, *, paths: list[str], edited: frozenset[str]) -> list[FileFreshness]:
    return files_freshness(db, paths, edited)


def edited_in_project(edited: frozenset[str], root: Path | None) -> list[str]:
    """The session's edited files that belong to this project (all of them when its folder
    is unknown): an edit in another checkout does not make this index stale."""
    if root is None:
        return sorted(edited)
    top = os.path.realpath(root).rstrip("/") + "/"
    return sorted(path for path in edited if os.path.realpath(path).startswith(top))


@contextmanager
def _index_timeout(limit: float) -> Iterator[None]:
    """An index actor that does not answer in time is a coded fault, not a bare timeout."""
    try:
        yield
    except ActorTimeout:
        raise CodedError(
            WarningCode.INDEX_QUERY_TIMEOUT,
            f"The index did not answer within {limit:g} s (a very large first ingestion, or a stuck "
            "query); status shows its progress. Ask again, or raise EngineConfig.query_timeout_s.",
        ) from None


class EngineCore:
    """What the Engine stands on (see `Engine`, its public face): started by `start`, stopped
    by `stop`; the registry's runs and the Engine's methods call it."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._task_group: TaskGroup | None = None
        from xcindex.engine.registry import INDEX_QUERIES

        self.workers = WorkerPool(self.config.ingest_workers)
        self._indexes = IndexActors(
            self.workers,
            max_actors=self.config.max_index_actors,
            idle_timeout=self.config.index_idle_timeout_s,
            queries=INDEX_QUERIES,
            overlay_debounce_s=self.config.overlay_debounce_s,
            overlay=self.config.overlay,
            watch=self.config.watch,
        )
        self._ledger: LedgerHandle | None = None
        self._lsp: LspPool | None = None
        self._lsp_lock = anyio.Lock()
        self._locations: dict[tuple[str | None, str | None], tuple[float, Location]] = {}
        self._elsewhere: dict[tuple[Path, Path], tuple[object, BuiltElsewhere | None]] = {}

    async def start(self) -> None:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = self._indexes.task_group = task_group
        try:
            ledger = LedgerActor(self.config.project_dir)
            await task_group.start(ledger.run)
            self._ledger = ledger.handle()
            if self.config.overlay:
                task_group.start_soon(self._watch_edits)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        task_group, self._task_group = self._task_group, None
        self._indexes.task_group = None
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

    async def settle(self, *, project_path: str | None = None, index_store_path: str | None = None) -> None:
        """Wait until the index has taken in what the store has (a first ingestion included)."""
        location = await self.locate(project_path, index_store_path)
        with _index_timeout(self.config.query_timeout_s):
            await (await self.index_for(location)).refresh(timeout=self.config.query_timeout_s)

    async def close_children(self) -> None:
        """Stop every child process now (sourcekit-lsp, ingestion workers), shielded. For a
        host that must leave without unwinding (the server on a signal); `stop` does this
        anyway."""
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
            and os.path.isdir(units_dir(cached[1].store_path))  # noqa: ASYNC240
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
                from xcindex.actors.lsp import LspPool
                from xcindex.lsp.config import LspPoolConfig

                if self._task_group is None:
                    raise RuntimeError("the Engine is not running: use `async with Engine() as engine`")
                pool = LspPool(self.config.lsp or LspPoolConfig(scratch_root=cache_dir() / "sourcekit-lsp"))
                await self._task_group.start(pool.run)
                self._lsp = pool
            return self._lsp

    async def index_for(self, location: Location) -> IndexHandle:
        """The store's handle: it asks the store's current index actor, started (again,
        after a retirement) on demand."""
        return self._indexes.handle_for(location.store_path)

    @asynccontextmanager
    async def holding_index(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> AsyncIterator[None]:
        """Test-only: inside the block, the store's index actor is busy (holding its
        database as a long query would); it is entered only once that is so."""
        location = await self.locate(project_path, index_store_path)
        release = anyio.Event()
        try:
            await (await self.index_for(location)).hold_busy(release)
            yield
        finally:
            release.set()

    async def built_elsewhere(
        self, location: Location, handle: IndexHandle, state: IndexState
    ) -> BuiltElsewhere | None:
        """Whether the project's index holds another folder's sources (a package copied or
        moved after its build; tools/elsewhere.py): worked out once per refresh of the store
        and project folder, not per question. None for a bare indexStorePath (no project) and
        during a first ingestion (its live files so far prove nothing)."""
        root, report = location.workspace_root, state.last_refresh
        if root is None or location.project_kind is ProjectKind.STORE or not state.ready or report is None:
            return None
        key = (location.store_path, root)
        cached = self._elsewhere.get(key)
        # The report is a new object at every refresh that read the store; held here, its
        # identity cannot be reused.
        if cached is not None and cached[0] is report:
            return cached[1]
        found: BuiltElsewhere | None = await handle.query(
            partial(built_elsewhere, project=str(root), kind=location.project_kind),
            timeout=self.config.query_timeout_s,
        )
        if found is not None:
            log.info("index_built_elsewhere", store=str(location.store_path), built_in=found.built_in)
        if len(self._elsewhere) > 64:
            self._elsewhere.clear()
        self._elsewhere[key] = (report, found)
        return found

    async def query(self, location: Location, fn: Any, timeout: float | None = None) -> Any:
        handle = await self.index_for(location)
        limit = timeout if timeout is not None else self.config.query_timeout_s
        with _index_timeout(limit):
            return await handle.query(fn, timeout=limit, progress=current_progress_listener.get())

    async def answer(self, tool: str, args: LocationArgs, read: Callable[[Location, Any], Any]) -> Any:
        """Answer a tool's named query on a fresh database, after `read` gathered what it needs
        from outside the index (in a thread, before the index actor is asked); then add what the
        location and the store's own health say to its freshness (name-match fallback,
        unreadable units, a first ingestion still running, the overlay)."""
        location = await self.locate(args.project_path, args.index_store_path)
        handle = await self.index_for(location)
        inputs = await anyio.to_thread.run_sync(read, location, args)

        async def ask() -> Any:
            with _index_timeout(self.config.query_timeout_s):
                return await handle.ask(
                    tool,
                    args,
                    inputs,
                    timeout=self.config.query_timeout_s,
                    progress=current_progress_listener.get(),
                    first_answer_wait=self.config.first_answer_wait_s,
                )

        try:
            answer = await ask()
        except (CodedError, ActorGone, ActorTimeout):
            raise
        except XcindexError as error:
            # A tool's error (a file not in the index) is no mystery when the index is another folder's.
            elsewhere = await self.built_elsewhere(location, handle, await handle.state())
            if elsewhere is None:
                raise
            raise BuiltElsewhereError(error, elsewhere) from None
        during: WhileIngesting | None = None
        if isinstance(answer, WhileIngesting):
            during, answer = answer, answer.answer
        elsewhere = (
            None if during is not None else await self.built_elsewhere(location, handle, await handle.state())
        )
        # The overlay is off for an index built elsewhere: the compiler arguments it would use
        # (the build description) name the other folder's files, not this one's.
        overlay = self.config.overlay and elsewhere is None
        changes = Changes()
        if during is None and elsewhere is None:
            # What changed in the project without the index knowing, whoever changed it: a
            # deleted file is forgotten now (ask again), edited and new ones are this answer's.
            changes = await handle.changes(timeout=self.config.query_timeout_s)
            if changes.gone:
                answer = await ask()
        edited = await self.edited_files()
        named_edited = (
            await anyio.to_thread.run_sync(edited_among, answer.named_paths(), edited) if edited else []
        )
        # A session edit counts while the file is newer than its unit: a build after it ends it.
        newer = {*changes.edited, *answer.freshness.stale_files}
        named_edited = [path for path in named_edited if path in newer]
        pending = list(changes.pending)
        overlay_files: list[str] = []
        if overlay and during is None:
            answer, overlay_files, named_edited, pending = await self._with_overlay(
                handle, answer, named_edited, pending, ask, frozenset(changes.suspects)
            )
        state = await handle.state()
        extra = [AnswerWarning(code, message) for code, message in location.notes] + unreadable_warnings(
            state
        )
        extra += [
            AnswerWarning(
                WarningCode.FILE_OUTSIDE_TARGETS,
                f"{path} is in the folder of no target the last build compiled: SwiftPM compiles it "
                "into no module here (a file beside the targets, or in a target this platform does not "
                "build), so no answer counts it.",
            )
            for path in changes.outside
        ]
        unanswered = sorted(set(pending) - set(answer.freshness.stale_files))
        if overlay and (answer.freshness.stale_files or named_edited or unanswered):
            extra += await self.overlay_failures(
                await handle.overlay_state(), {*answer.freshness.stale_files, *named_edited, *unanswered}
            )
        if len(unanswered) > MAX_OVERLAY_FILES_PER_QUESTION:
            extra.append(
                AnswerWarning(
                    WarningCode.OVERLAY_PENDING,
                    f"{len(unanswered)} Swift files changed since the index last saw them (a checkout, "
                    "a formatter?): they are re-indexed a few at a time, and this answer is stale until "
                    "they are. A build (swift build --build-tests) takes them all in at once.",
                )
            )
        first = () if elsewhere is None else (elsewhere.warning(),)
        if (
            not first
            and not extra
            and not named_edited
            and not overlay_files
            and not unanswered
            and during is None
        ):
            return answer
        freshness: Freshness = answer.freshness
        if during is not None:
            freshness = freshness.while_indexing(during.done, during.total, during.live_units)
        completeness = freshness.completeness
        if state.failures and completeness is Completeness.COMPLETE:
            completeness = Completeness.PARTIAL
        if (named_edited or unanswered or elsewhere is not None) and during is None:
            completeness = Completeness.STALE  # rebuild, or wait_for_fresh (docs/tools.md, "Freshness")
        return replace(
            answer,
            freshness=replace(
                freshness,
                completeness=completeness,
                stale_files=(*freshness.stale_files, *unanswered),
                session_edited_files=tuple(named_edited),
                warnings=first + freshness.warnings + tuple(extra),
                overlay_files=tuple(overlay_files),
            ),
        )

    async def _with_overlay(
        self,
        handle: IndexHandle,
        answer: Any,
        named_edited: list[str],
        pending: list[str],
        ask: Any,
        suspects: frozenset[str] = frozenset(),
    ) -> tuple[Any, list[str], list[str], list[str]]:
        """Re-index into the overlay the answer's stale files, its session-edited ones and the
        project's files changed since the index saw them (waiting up to `overlay_wait_s`); ask
        again if any is current now. Returns the answer, the files the overlay answers for it,
        and the edited and changed files still not covered."""
        stale = set(answer.freshness.stale_files)
        wanted = {*stale, *named_edited}
        live_named = answer.named_paths() & set((await handle.overlay_state()).live)
        if not wanted and not live_named and not pending:
            return answer, [], named_edited, pending  # nothing changed, nothing re-indexed: no look
        covered, went_back = await handle.query(overlay_files_in)
        named_first = sorted(wanted | (went_back & live_named))
        # A suspect is to be compiled again even when the overlay covers it (a file the overlay
        # indexed before a declaration it uses changed).
        changed = [
            path for path in pending if (path not in covered or path in suspects) and path not in wanted
        ]
        candidates = tuple([*named_first, *changed][:MAX_OVERLAY_FILES_PER_QUESTION])
        landed: list[str] = []
        if candidates:
            try:
                landed = await handle.overlay(candidates, timeout=self.config.overlay_wait_s)
            except ActorTimeout:
                landed = []
        # What is still not indexed as it is now (a suspect the compiler checked is cleared),
        # read before the answer is asked again: a file that stopped pending before this
        # read has its new unit in the database for the question below, and one still
        # pending is named. (Read after, a check landing in between left an answer from
        # before it labelled complete.)
        still_pending = (
            list((await handle.changes(timeout=self.config.query_timeout_s)).pending) if pending else []
        )
        meanwhile = set(pending) - set(still_pending)
        if landed or meanwhile:
            covered, _ = await handle.query(overlay_files_in)
        # A file another question (or the background) re-indexed meanwhile counts as well.
        if landed or meanwhile or (stale | set(pending)) & covered.keys():
            answer = await ask()
        if not covered:
            return answer, [], named_edited, still_pending
        # A file re-indexed for this answer counts even when it no longer names a site
        # (a call removed): the answer's silence about it comes from the overlay.
        named = answer.named_paths() | set(landed) | (set(candidates) & covered.keys())
        overlay_files = sorted(path for path in named if path in covered)
        still_edited = [path for path in named_edited if path not in covered]
        return answer, overlay_files, still_edited, still_pending

    async def overlay_failures(self, snapshot: OverlaySnapshot, paths: set[str]) -> list[AnswerWarning]:
        """Why these files (stale still) have no overlay, as warnings (`overlay_failed`,
        `overlay_unavailable`, `overlay_pending`)."""
        if not snapshot.failures and not snapshot.pending:
            return []
        found = await anyio.to_thread.run_sync(snapshot.warnings_for, paths)
        return [AnswerWarning(code, message) for _path, code, message in found]

    async def overlay_files(
        self, handle: IndexHandle, paths: set[str], *, wait: bool
    ) -> tuple[set[str], list[AnswerWarning]]:
        """For tools that are not one query (plan_rename, wait_for_fresh): re-index those of
        `paths` edited since their unit (waiting up to `overlay_wait_s` when `wait`, else
        only starting it); returns the files the overlay covers now, and why the others of
        `paths` that are still stale have no overlay."""
        if not self.config.overlay or not paths:
            return set(), []
        candidates = tuple(sorted(paths))[:MAX_OVERLAY_FILES_PER_QUESTION]
        try:
            if wait:
                await handle.overlay(candidates, timeout=self.config.overlay_wait_s)
            else:
                await handle.overlay_soon(candidates)
        except ActorTimeout:
            pass
        covered, _ = await handle.query(overlay_files_in)
        why_not = await self.overlay_failures(await handle.overlay_state(), paths - covered.keys())
        return covered.keys() & paths, why_not

    async def _watch_edits(self) -> None:
        """The session's edits start the overlay in the background: every `watch_poll_s`,
        the edited files that changed are told to every running index actor (all of them
        to an actor that has not heard them yet), which re-indexes those of its own files
        once they have been quiet for `overlay_debounce_s`."""
        seen: dict[str, int] = {}
        told: set[Path] = set()
        while True:
            await anyio.sleep(self.config.watch_poll_s)
            try:
                edited = await self.edited_files()
            except XcindexError:
                continue
            mtimes = await anyio.to_thread.run_sync(_mtimes, edited)
            changed = tuple(sorted(path for path, mtime in mtimes.items() if seen.get(path) != mtime))
            seen = mtimes
            running = set(self._indexes.running())
            for store in running:
                paths = changed if store in told else tuple(sorted(mtimes))
                if not paths:
                    continue
                try:
                    await self._indexes.handle_for(store).edits_seen(paths)
                except XcindexError:
                    running.discard(store)
            told = running

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
        return await (await self.index_for(location)).state()

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
        return await self.query(location, fn, timeout)

    # --- pushed freshness ------------------------------------------------------------

    async def status_version(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusVersion:
        location = await self.locate(project_path, index_store_path)
        handle = await self.index_for(location)
        version = await handle.version()
        overlay = (await handle.overlay_state()).version if self.config.overlay else 0
        return StatusVersion(version.units_mtime_ns, await self.edited_files(), overlay)

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
        index = await self.index_for(location)
        poll = self.config.watch_poll_s
        while True:
            units = (await index.version()).units_mtime_ns
            edited = await self.edited_files()
            if edited != since.edited:
                return replace(since, edited=edited)
            if self.config.overlay:
                # A file re-indexed on its own (the overlay) is one change: no settling.
                overlay = (await index.overlay_state()).version
                if overlay != since.overlay_version:
                    log.info("overlay_changed", store=str(location.store_path), version=overlay)
                    return replace(since, overlay_version=overlay)
            if units != since.units_mtime_ns:
                quiet_since = anyio.current_time()
                while anyio.current_time() - quiet_since < self.config.watch_settle_s:
                    await anyio.sleep(poll)
                    latest = (await index.version()).units_mtime_ns
                    if latest != units:
                        units, quiet_since = latest, anyio.current_time()
                await index.refresh(timeout=self.config.query_timeout_s)
                log.info("store_changed", store=str(location.store_path), units_mtime_ns=units)
                return replace(since, units_mtime_ns=units, edited=edited)
            await anyio.sleep(poll)
