"""How the tools that are more than one question run: status, wait_for_fresh and plan_rename.

Each is a function of the Engine's core (`EngineCore`): its index actors, its ledger, its
sourcekit-lsp pool and its freshness overlay. The registry declares them as `EngineRun`s.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import anyio
import anyio.to_thread

from xcindex.engine.core import edited_in_project, files_freshness_of, overlay_files_in
from xcindex.errors import CodedError
from xcindex.overlay.changes import Changes
from xcindex.project.locate import Location
from xcindex.project.toolchain import toolchain_roots
from xcindex.project.workspace import WorkspaceRoot, resolve_workspace_root
from xcindex.tools.common import AnswerWarning
from xcindex.tools.elsewhere import BuiltElsewhere
from xcindex.tools.rename.pages import PlanKey, PlanPages
from xcindex.tools.rename.plan import (
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
    FileFreshness,
    FileState,
    FreshWaitAnswer,
    WaitForFreshArgs,
    wait_until_fresh,
)
from xcindex.vocabulary import RefusalReason, Tier, WarningCode

if TYPE_CHECKING:
    from xcindex.engine.core import EngineCore
    from xcindex.indexstore.database import Database


def _stale_indexed(files: list[FileFreshness]) -> set[str]:
    """The files among `files` the overlay can make fresh: the stale ones, as the index
    spells them, and the Swift files no unit compiles yet (a new file)."""
    stale = {f.indexed_path for f in files if f.state is FileState.STALE and f.indexed_path}
    new = {f.path for f in files if f.state is FileState.NOT_INDEXED and f.path.endswith(".swift")}
    return stale | new


def _nothing(db: Database) -> None:
    """A query that only waits for the store to be read: a Query, not a Refresh, so a first
    ingestion waited for still reports its progress to the caller."""


def _real_paths(paths: set[str]) -> set[str]:
    return {os.path.realpath(path) for path in paths}


async def status(core: EngineCore, args: StatusArgs) -> StatusAnswer:
    """Answers at once, even during a first ingestion (then with its progress)."""
    location = await core.locate(args.project_path, args.index_store_path)
    handle = await core.index_for(location)
    stale: list[str] = []
    covered: dict[str, int] = {}
    changes = Changes()
    elsewhere = None
    # A warm start refreshes in milliseconds: wait that long, but never for a cold
    # ingestion, which status reports with its progress instead.
    with anyio.move_on_after(core.config.status_wait_s):
        changes = await handle.changes(timeout=core.config.query_timeout_s)
        stale = await handle.query(stale_files_now, timeout=core.config.query_timeout_s)
        elsewhere = await core.built_elsewhere(location, handle, await handle.state())
        if core.config.overlay and elsewhere is None:
            covered, _ = await handle.query(overlay_files_in, timeout=core.config.query_timeout_s)
    # A session edit counts while the file is newer than its unit: a build after it ends it.
    newer = await anyio.to_thread.run_sync(_real_paths, {*stale, *covered})
    edited = [
        path
        for path in await anyio.to_thread.run_sync(
            edited_in_project, await core.edited_files(), location.workspace_root
        )
        if path in newer
    ]
    overlay_notes = (
        await core.overlay_failures(await handle.overlay_state(), {*stale, *edited})
        if core.config.overlay and elsewhere is None
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
        lsp=_lsp_children(core),
        overlay_files=tuple(sorted(covered)),
        overlay_covered_edits=tuple(
            sorted(set(edited) & await anyio.to_thread.run_sync(_real_paths, set(covered)))
        ),
        built_in=None if elsewhere is None else elsewhere.built_in,
        new_files=changes.new,
    )
    first = () if elsewhere is None else (elsewhere.warning(),)
    outside = tuple(
        AnswerWarning(
            WarningCode.FILE_OUTSIDE_TARGETS,
            f"{path} is in the folder of no target the last build compiled: it is in no module here.",
        )
        for path in changes.outside
    )
    return replace(answer, warnings=first + notes + answer.warnings + tuple(overlay_notes) + outside)


def _lsp_children(core: EngineCore) -> tuple[LspChildJson, ...]:
    """Each sourcekit-lsp child as status shows it; a troubled one with its last log lines."""
    if core.lsp is None:
        return ()
    children: list[LspChildJson] = []
    for child in core.lsp.status():
        entry = lsp_child_json(child)
        if child.last_error is not None:
            entry["recentLog"] = core.lsp.recent_log(child.root, 10)
        children.append(entry)
    return tuple(children)


_PAGES: WeakKeyDictionary[EngineCore, PlanPages] = WeakKeyDictionary()
"""Each Engine's recent plans, so that the pages of one request cut one plan (rename/pages.py)."""


async def plan_rename(core: EngineCore, args: PlanRenameArgs, *, reconcile: bool | None = None) -> RenamePlan:
    """A tiered rename plan; never writes a file. Reconciled with sourcekit-lsp unless
    `reconcile` (default: the Engine's `reconcile`) is False. A later page (an offset not 0)
    is cut from the plan the same request's first page made, while nothing it depends on
    changed (rename/pages.py)."""
    usr, new_name, max_ranges = args.usr, args.new_name, args.max_ranges
    project_path = args.project_path
    refusal = early_refusal(new_name)
    if refusal is not None:
        return refused(usr, new_name, refusal, max_ranges)
    location = await core.locate(project_path, args.index_store_path)
    edited = await core.edited_files()
    roots = await anyio.to_thread.run_sync(toolchain_roots)
    version = await (await core.index_for(location)).version(newest_write=True)
    last_built = iso(version.newest_write_ns or 0)
    project_root = location.workspace_root
    if project_root is None and project_path:
        given = Path(project_path)
        project_root = given.parent if given.suffix in (".xcodeproj", ".xcworkspace") else given
    reconciled = reconcile if reconcile is not None else core.config.reconcile
    key = PlanKey(
        usr,
        new_name,
        str(location.store_path),
        str(project_root) if project_root else None,
        reconciled,
        version.units_mtime_ns,
        version.newest_write_ns,
        frozenset(edited),
    )
    pages = _PAGES.setdefault(core, PlanPages())
    # A first page (every offset 0) is a new request: its plan is made afresh.
    later_page = any((args.offset, args.unproven_offset, args.text_mention_offset))
    cached = await anyio.to_thread.run_sync(pages.get, key) if later_page else None
    if cached is not None:
        return cached.page(args.offset, max_ranges, args.unproven_offset, args.text_mention_offset)

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

    handle = await core.index_for(location)
    # Whether the index is another folder's is known once the store is read (a query
    # waits for that), and is asked before the plan: on a copied package the plan
    # would be computed only to be refused.
    await core.query(location, _nothing)
    elsewhere = await core.built_elsewhere(location, handle, await handle.state())
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
    plan: RenamePlan = await core.query(location, plan_from_index(frozenset()))
    overlay_notes: list[tuple[WarningCode, str]] = []
    stale = {r.path for r in plan.ranges if r.tier is Tier.RED_STALE}
    if stale and plan.refusal is None:
        # Files edited since the build are re-indexed on their own (the overlay): their
        # ranges are then tiered like any indexed range; the others stay red-stale, with why.
        covered, why_not = await core.overlay_files(handle, stale, wait=True)
        if covered:
            real = frozenset(await anyio.to_thread.run_sync(_real_paths, covered))
            plan = await core.query(location, plan_from_index(real))
        overlay_notes = [(w.code, w.message) for w in why_not]
    state = await (await core.index_for(location)).state()
    notes = [(code, message) for code, message in location.notes]
    notes += [(w.code, w.message) for w in unreadable_warnings(state)]
    notes += overlay_notes
    plan = with_warnings(plan, notes)
    if plan.refusal is not None:
        return plan
    if reconciled:
        # The files changed since the build: sourcekit-lsp's store does not describe them.
        plan = await _reconcile(core, plan, project_path, location, frozenset(stale))
    # After reconciliation, so that sites sourcekit-lsp added count as covered.
    plan = await core.query(location, lambda db: with_safety_net(db, plan, project_root))
    if not any(r.tier is Tier.RED_STALE for r in plan.ranges):
        # A stale file may be re-indexed by the overlay meanwhile: such a plan is made again.
        await anyio.to_thread.run_sync(pages.put, key, plan)
    return plan.page(args.offset, max_ranges, args.unproven_offset, args.text_mention_offset)


async def _reconcile(
    core: EngineCore, plan: RenamePlan, project_path: str | None, location: Location, changed: frozenset[str]
) -> RenamePlan:
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
        pool = await core.lsp_pool()
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
    return await reconcile_plan(plan, pool, root, changed)


async def wait_for_fresh(core: EngineCore, args: WaitForFreshArgs) -> FreshWaitAnswer:
    location = await core.locate(args.project_path, args.index_store_path)
    handle = await core.index_for(location)
    paths = list(args.files)
    elsewhere: list[BuiltElsewhere] = []  # found by the first check (after any refresh)

    async def check(edited: frozenset[str]) -> list[FileFreshness]:
        result: list[FileFreshness] = await core.query(
            location, partial(files_freshness_of, paths=paths, edited=edited)
        )
        if not elsewhere and (found := await core.built_elsewhere(location, handle, await handle.state())):
            elsewhere.append(found)
        stale = _stale_indexed(result)
        if core.config.overlay and stale and not elsewhere:
            # Re-indexed on their own, they are fresh without a build (the overlay).
            await core.overlay_files(handle, stale, wait=False)
        return result

    async def progress() -> tuple[int, int] | None:
        state = await (await core.index_for(location)).state()
        return None if state.ready else state.progress

    answer = await wait_until_fresh(
        paths,
        args.timeout_seconds,
        check=check,
        edited=core.edited_files,
        first_ingestion=progress,
        poll_s=core.config.watch_poll_s,
    )
    if elsewhere:
        return replace(answer, warnings=(elsewhere[0].warning(),))
    stale = _stale_indexed(list(answer.files))
    if not core.config.overlay or not stale:
        return answer
    return replace(answer, warnings=tuple(await core.overlay_failures(await handle.overlay_state(), stale)))
