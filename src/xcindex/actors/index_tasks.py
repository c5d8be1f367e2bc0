"""The index actor's slow steps, each a task of its own: they are handed what they need,
do their work (in threads and worker processes), and report back to the actor's loop with
a message (actors/index_messages.py). None of them can change the actor's state: only the
loop does, when it hears from them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.actors.index_messages import (
    IndexRequest,
    JobOver,
    Progress,
    Refreshed,
    TreeOpened,
    TreeStirred,
    UseDatabase,
)
from xcindex.actors.mailbox import ActorHandle, Envelope
from xcindex.errors import XcindexError
from xcindex.indexstore.database import Database
from xcindex.indexstore.ingest import LiveUnits, refresh
from xcindex.indexstore.pool import WorkerPool
from xcindex.indexstore.writer import FailedCompiles
from xcindex.overlay.changes import ToClassify, classify, open_tree
from xcindex.overlay.runner import OverlayCompiler, after_refresh

log = get_logger("xcindex.actors.index")

WARM_UP_AFTER_S = 2.0
"""How long after a store's first refresh a worker is started ahead of need (`warm_up`)."""

Loop = ActorHandle[IndexRequest, Any]
"""The actor's own mailbox, to report back to its loop."""


@dataclass(frozen=True)
class RefreshInputs:
    db: Database
    store_path: Path
    workers: WorkerPool
    live: LiveUnits | None
    """The first ingestion's early units (None for a later refresh)."""
    start: bool = False
    """The actor's first refresh: the overlay's units of an earlier process are forgotten."""


async def refresh_job(loop: Loop, inputs: RefreshInputs, number: int, units_mtime_ns: int) -> None:
    """Take in what changed in the store (everything, the first time); report `JobOver`."""
    db = inputs.db

    async def progress(done: int, total: int, _what: str) -> None:
        loop.tell_nowait(Progress(done, total))

    outcome = JobOver(number)
    try:
        report = await refresh(
            db, inputs.store_path, workers=inputs.workers, progress=progress, live=inputs.live
        )
        dropped, overlay_live = await anyio.to_thread.run_sync(
            lambda: after_refresh(db, changed=report.changed, start=inputs.start)
        )
        if dropped:
            log.info("overlay_superseded", store=str(inputs.store_path), units=dropped)
        counts = await anyio.to_thread.run_sync(db.counts)
        failed = await anyio.to_thread.run_sync(_failed_compiles, db)
        outcome = JobOver(number, refreshed=Refreshed(units_mtime_ns, report, counts, overlay_live, failed))
        log.info(
            "index_refreshed",
            store=str(inputs.store_path),
            units_read=report.counters.units_read,
            units_unchanged=report.counters.units_unchanged,
            records_read=report.counters.records_read,
            failures=len(report.failures),
            duration_ms=round(report.duration_s * 1000, 1),
        )
    except Exception as error:
        outcome = JobOver(number, error=_one_error(error))
    finally:
        with anyio.CancelScope(shield=True):
            await loop.tell(outcome)
    if inputs.live is not None:
        # Later, not now: the questions that opened the store are being answered, and a
        # worker's start (an interpreter importing cffi) would share the cores with them.
        await anyio.sleep(WARM_UP_AFTER_S)
        try:
            await inputs.workers.warm_up()
        except Exception as error:  # a refresh will start its own worker, or report why not
            log.warning("ingest_worker_warm_up_failed", error=repr(error))


async def classify_job(
    loop: Loop, db: Database, number: int, envelope: Envelope[IndexRequest, Any], snapshot: ToClassify
) -> None:
    """Which of the project's files the index no longer describes: answers the GetChanges,
    reports what it found current (`JobOver.classified`)."""
    outcome = JobOver(number)
    try:
        result = await anyio.to_thread.run_sync(classify, db, snapshot)
    except Exception as error:
        envelope.fail_nowait(error)
    else:
        outcome = JobOver(number, classified=(result, snapshot))
        envelope.reply_nowait(result.changes)
    finally:
        envelope.close()
        with anyio.CancelScope(shield=True):
            await loop.tell(outcome)


async def open_project(loop: Loop, compiler: OverlayCompiler, watch: bool, store_path: Path) -> None:
    """Find the project's source roots and watch them (in a thread: it walks them); report
    `TreeOpened` (with no watch when there is none: each question then sweeps)."""

    async def live_files(db: Database) -> list[str]:
        return await anyio.to_thread.run_sync(lambda: [path for path, *_ in db.live_files()])

    try:
        sources = await anyio.to_thread.run_sync(compiler.source_map)
        files: list[str] = await loop.ask(UseDatabase(live_files))
        opened, roots = await anyio.to_thread.run_sync(open_tree, sources, files, watch)
    except Exception as error:  # answers then sweep: slower, as exact
        log.warning("project_watch_failed", store=str(store_path), error=repr(error))
        opened, roots, sources = None, (), None
    log.info(
        "project_watch",
        store=str(store_path),
        roots=[str(root) for root in roots],
        folders=0 if opened is None else opened.folders,
    )
    with anyio.CancelScope(shield=True):
        if not await loop.tell(TreeOpened(opened, roots, sources)) and opened is not None:
            opened.close()


async def follow_watch(loop: Loop, fd: int) -> None:
    """Tell the loop when the watch has events (it reads them itself, as questions do)."""
    while True:
        await anyio.wait_readable(fd)
        await loop.ask(TreeStirred())


def _failed_compiles(db: Database) -> tuple[str, ...]:
    """The files whose live unit a failed compile wrote (one listing per object folder)."""
    failed = FailedCompiles()
    return tuple(sorted(path for path, output in db.live_output_files().items() if failed(output)))


def _one_error(error: Exception) -> Exception:
    """The error a refresh's waiting questions hear. Its workers fail together (each one meets
    the same missing libIndexStore) and its task group wraps them in an ExceptionGroup: when
    every one of them is an XcindexError, the first is the answer, so a tool call says why
    (and the embedding API raises what docs/embedding.md promises)."""
    if isinstance(error, ExceptionGroup):
        matched, rest = error.split(XcindexError)
        if matched is not None and rest is None:
            first: BaseException = matched
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            assert isinstance(first, XcindexError)
            return first
    return error
