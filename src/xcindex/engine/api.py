"""The Engine: one async method per tool, on top of `EngineCore` (the actors, locating a
store, the ledger and the freshness watch).

This is the embedding API as well as what the MCP server calls. It runs under asyncio and
trio alike (anyio only). Everything blocking happens in actors' worker threads or worker
processes, never on the caller's event loop.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.engine.graph import GraphTools
from xcindex.indexstore.database import cache_dir
from xcindex.indexstore.library import toolchain_roots
from xcindex.project.locate import Location
from xcindex.project.package import describe_package
from xcindex.project.workspace import WorkspaceRoot, resolve_workspace_root
from xcindex.tools.arguments import LocationArgs
from xcindex.tools.common import AnswerWarning
from xcindex.tools.conformances import ConformancesAnswer, FindConformancesArgs
from xcindex.tools.elsewhere import BuiltElsewhere
from xcindex.tools.find_symbol import DEFAULT_MAX_CANDIDATES, FindSymbolAnswer, FindSymbolArgs
from xcindex.tools.graph.blast_radius import BlastRadiusAnswer, BlastRadiusArgs
from xcindex.tools.references import (
    DEFAULT_MAX_RESULTS,
    DefinitionAnswer,
    FindDefinitionArgs,
    FindOverridesArgs,
    FindReferencesArgs,
    SitesAnswer,
)
from xcindex.tools.rename.plan import (
    DEFAULT_MAX_RANGES,
    PlanRenameArgs,
    Refusal,
    RenamePlan,
    early_refusal,
    index_plan,
    refused,
    with_safety_net,
    with_warnings,
)
from xcindex.tools.rename.reconcile import reconcile_plan
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
    wait_until_fresh,
)
from xcindex.vocabulary import CodedError, RefusalReason, Tier, WarningCode, XcindexError

if TYPE_CHECKING:
    from xcindex.indexstore.database import Database

from xcindex.engine.core import (
    EngineConfig as EngineConfig,
)
from xcindex.engine.core import (
    EngineCore,
    _edited_in_project,
    _freshness_of,
    _index_timeout,
    _overlay_files,
)
from xcindex.engine.core import (
    StatusVersion as StatusVersion,
)
from xcindex.engine.core import (
    current_progress_listener as current_progress_listener,
)

log = get_logger(__name__)


def _stale_indexed(files: list[FileFreshness]) -> set[str]:
    """The stale files among `files`, as the index spells them."""
    return {f.indexed_path for f in files if f.state is FileState.STALE and f.indexed_path}


def _nothing(db: Database) -> None:
    """A query that only waits for the store to be read: a Query, not a Refresh, so a first
    ingestion waited for still reports its progress to the caller."""


def _real_paths(paths: set[str]) -> set[str]:
    return {os.path.realpath(path) for path in paths}


class Engine(GraphTools, EngineCore):
    """Use as `async with Engine() as engine:`; every tool is an async method."""

    # --- tools -------------------------------------------------------------------------

    async def call(self, args: LocationArgs, **options: Any) -> Any:
        """Answer one tool call, given its validated argument model (see `registry.TOOLS`).

        A tool answered from the index alone is a named query to the index actor; the rest
        (status, wait_for_fresh, plan_rename) are methods here. `options` are Engine-only
        settings a tool takes (plan_rename's `reconcile_with_lsp`)."""
        from xcindex.engine.registry import INDEX_QUERIES

        if args.tool == "blast_radius":
            # Which targets are tests and executables: SwiftPM's own description, read once
            # per Package.swift (a subprocess), before the index is asked.
            location = await self.locate(args.project_path, args.index_store_path)
            package = None
            if location.workspace_root is not None:
                package = await anyio.to_thread.run_sync(
                    describe_package, location.workspace_root, cache_dir() / "swiftpm-describe"
                )
            return await self._answer(args.project_path, args.index_store_path, args, package)
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
        with _index_timeout(self.config.query_timeout_s):
            await (await self._index_for(location)).refresh(timeout=self.config.query_timeout_s)

    async def find_symbol(
        self,
        symbol_name: str,
        *,
        max_results: int = DEFAULT_MAX_CANDIDATES,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> FindSymbolAnswer:
        """Ranked candidates for a name as an agent types it (docs/tools.md, "Resolving
        names"); `resolved` is the one a tool that needs one symbol takes. `offset` starts
        the page there (the answer holds every candidate; `to_json` shows the page)."""
        answer: FindSymbolAnswer = await self.call(
            FindSymbolArgs.build(
                symbol_name=symbol_name,
                max_results=max_results,
                offset=offset,
                project_path=project_path,
                index_store_path=index_store_path,
            )
        )
        return answer

    async def find_references(
        self,
        symbol_name: str | None = None,
        *,
        usr: str | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> SitesAnswer:
        """Every source occurrence of a symbol, by USR (preferred) or by name: a page of
        `max_results` from `offset` on; `next_offset()` says where the next page starts."""
        answer: SitesAnswer = await self.call(
            FindReferencesArgs.build(
                symbol_name=symbol_name,
                usr=usr,
                max_results=max_results,
                offset=offset,
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
        self,
        usr: str,
        *,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> SitesAnswer:
        """Overrides and witnesses of `usr`: a page of up to 500 from `offset` on."""
        answer: SitesAnswer = await self.call(
            FindOverridesArgs.build(
                usr=usr, offset=offset, project_path=project_path, index_store_path=index_store_path
            )
        )
        return answer

    async def find_conformances(
        self,
        usr: str,
        *,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> ConformancesAnswer:
        """Conforming types (subclasses of conforming classes included), from `offset` on."""
        answer: ConformancesAnswer = await self.call(
            FindConformancesArgs.build(
                usr=usr, offset=offset, project_path=project_path, index_store_path=index_store_path
            )
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
        covered: dict[str, int] = {}
        elsewhere = None
        # A warm start refreshes in milliseconds: wait that long, but never for a cold
        # ingestion, which status reports with its progress instead.
        with anyio.move_on_after(self.config.status_wait_s):
            stale = await handle.query(stale_files_now, timeout=self.config.query_timeout_s)
            elsewhere = await self.built_elsewhere(location, handle, await handle.state())
            if self.config.overlay and elsewhere is None:
                covered, _ = await handle.query(_overlay_files, timeout=self.config.query_timeout_s)
        edited = await anyio.to_thread.run_sync(
            _edited_in_project, await self.edited_files(), location.workspace_root
        )
        overlay_notes = (
            await self._overlay_failures(await handle.overlay_state(), {*stale, *edited})
            if self.config.overlay and elsewhere is None
            else []
        )
        state = await handle.state()
        # Every unit file is stat'ed for this: in the index actor's worker thread.
        version = await handle.version(newest_write=True)
        notes = tuple(AnswerWarning(code, message) for code, message in location.notes)
        answer = status_answer(
            state,
            stale,
            index_mtime_ns=version.newest_write_ns or 0,
            session_edited_files=tuple(edited),
            lsp=self._lsp_children(),
            overlay_files=tuple(sorted(covered)),
            overlay_covered_edits=tuple(
                sorted(set(edited) & await anyio.to_thread.run_sync(_real_paths, set(covered)))
            ),
            built_in=None if elsewhere is None else elsewhere.built_in,
        )
        first = () if elsewhere is None else (elsewhere.warning(),)
        return replace(answer, warnings=first + notes + answer.warnings + tuple(overlay_notes))

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
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
        reconcile_with_lsp: bool | None = None,
    ) -> RenamePlan:
        """A tiered rename plan for `usr`; never writes a file. Reconciled with sourcekit-lsp
        unless `reconcile_with_lsp` (default: the config's `reconcile`) is False. `offset`
        pages through a plan larger than `max_ranges` (the answer's `nextOffset`)."""
        args = PlanRenameArgs.build(
            usr=usr,
            new_name=new_name,
            max_ranges=max_ranges,
            offset=offset,
            project_path=project_path,
            index_store_path=index_store_path,
        )
        plan: RenamePlan = await self.call(args, reconcile_with_lsp=reconcile_with_lsp)
        return plan

    async def _plan_rename(self, args: PlanRenameArgs, reconcile_with_lsp: bool | None = None) -> RenamePlan:
        usr, new_name, max_ranges, offset = args.usr, args.new_name, args.max_ranges, args.offset
        project_path = args.project_path
        refusal = early_refusal(new_name)
        if refusal is not None:
            return refused(usr, new_name, refusal, max_ranges)
        location = await self.locate(project_path, args.index_store_path)
        edited = await self.edited_files()
        roots = await anyio.to_thread.run_sync(toolchain_roots)
        last_built = iso(
            (await (await self._index_for(location)).version(newest_write=True)).newest_write_ns or 0
        )
        project_root = location.workspace_root
        if project_root is None and project_path:
            given = Path(project_path)
            project_root = given.parent if given.suffix in (".xcodeproj", ".xcworkspace") else given

        def plan_from_index(overlay_files: frozenset[str]) -> Any:
            return lambda db: index_plan(
                db,
                usr,
                new_name,
                toolchain_roots=roots,
                edited_files=edited,
                overlay_files=overlay_files,
                last_built=last_built,
                max_ranges=max_ranges,
            )

        handle = await self._index_for(location)
        # Whether the index is another folder's is known once the store is read (a query
        # waits for that), and is asked before the plan: on a copied package the plan
        # would be computed only to be refused.
        await self._query(location, _nothing)
        elsewhere = await self.built_elsewhere(location, handle, await handle.state())
        if elsewhere is not None:
            # Its ranges are another folder's files: applied, the plan would edit that folder.
            return with_warnings(
                refused(
                    usr,
                    new_name,
                    Refusal(
                        RefusalReason.INDEX_BUILT_ELSEWHERE,
                        f"The index was built in {elsewhere.built_in}, not in this project: a plan "
                        f"would name (and an edit would change) the files of {elsewhere.built_in}.",
                        elsewhere.remedy,
                    ),
                    max_ranges,
                ),
                [(WarningCode.INDEX_BUILT_ELSEWHERE, elsewhere.message)],
            )
        plan: RenamePlan = await self._query(location, plan_from_index(frozenset()))
        overlay_notes: list[tuple[WarningCode, str]] = []
        stale = {r.path for r in plan.ranges if r.tier is Tier.RED_STALE}
        if stale and plan.refusal is None:
            # Files edited since the build are re-indexed on their own (the overlay): their
            # ranges are then tiered like any indexed range; the others stay red-stale, with why.
            covered, why_not = await self._overlay_files(handle, stale, wait=True)
            if covered:
                real = frozenset(await anyio.to_thread.run_sync(_real_paths, covered))
                plan = await self._query(location, plan_from_index(real))
            overlay_notes = [(w.code, w.message) for w in why_not]
        state = await (await self._index_for(location)).state()
        notes = [(code, message) for code, message in location.notes]
        notes += [(w.code, w.message) for w in unreadable_warnings(state)]
        notes += overlay_notes
        plan = with_warnings(plan, notes)
        if plan.refusal is not None:
            return plan
        if reconcile_with_lsp if reconcile_with_lsp is not None else self.config.reconcile:
            plan = await self._reconcile(plan, project_path, location)
        # After reconciliation, so that sites sourcekit-lsp added count as covered.
        plan = await self._query(location, lambda db: with_safety_net(db, plan, project_root))
        return replace(plan, offset=offset)

    async def _reconcile(self, plan: RenamePlan, project_path: str | None, location: Location) -> RenamePlan:
        """Find the workspace root and the pool, then reconcile (tools/rename_reconcile.py)."""
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
        except CodedError as error:
            return with_warnings(
                plan,
                [
                    (
                        WarningCode.RECONCILIATION_UNAVAILABLE,
                        f"sourcekit-lsp was not consulted: {error.message}",
                    ),
                    (error.code, error.message),
                ],
            )
        return await reconcile_plan(plan, pool, root)

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
        location = await self.locate(args.project_path, args.index_store_path)
        handle = await self._index_for(location)
        paths = list(args.files)
        elsewhere: list[BuiltElsewhere] = []  # found by the first check (after any refresh)

        async def check(edited: frozenset[str]) -> list[FileFreshness]:
            result: list[FileFreshness] = await self._query(
                location, partial(_freshness_of, paths=paths, edited=edited)
            )
            if not elsewhere and (
                found := await self.built_elsewhere(location, handle, await handle.state())
            ):
                elsewhere.append(found)
            stale = _stale_indexed(result)
            if self.config.overlay and stale and not elsewhere:
                # Re-indexed on their own, they are fresh without a build (the overlay).
                await self._overlay_files(handle, stale, wait=False)
            return result

        async def progress() -> tuple[int, int] | None:
            state = await (await self._index_for(location)).state()
            return None if state.ready else state.progress

        answer = await wait_until_fresh(
            paths,
            args.timeout_seconds,
            check=check,
            edited=self.edited_files,
            first_ingestion=progress,
            poll_s=self.config.watch_poll_s,
        )
        if elsewhere:
            return replace(answer, warnings=(elsewhere[0].warning(),))
        stale = _stale_indexed(list(answer.files))
        if not self.config.overlay or not stale:
            return answer
        return replace(
            answer, warnings=tuple(await self._overlay_failures(await handle.overlay_state(), stale))
        )
