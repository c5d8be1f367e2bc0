"""The index actor's messages: what callers ask it, and what its own tasks report back.

Callers' requests carry data (a tool's name and arguments; a query function for the Engine's
own reads); the reports are how the actor's tasks (a database job, a wait for the first
ingestion, an overlay batch) tell the loop what happened, so that only the loop changes the
actor's state.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import anyio

from xcindex.indexstore.database import Counts, Database
from xcindex.indexstore.ingest import RefreshReport
from xcindex.overlay.arguments import SourceMap
from xcindex.overlay.changes import Classified, ToClassify
from xcindex.overlay.runner import OverlayOutcome
from xcindex.project.watch import TreeWatch

ProgressListener = Callable[[int, int], Awaitable[None]]
"""`(done, total)` of a first ingestion a caller waits for (its client's progress channel)."""


# -- from callers ----------------------------------------------------------------------------


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
    inputs: Any = None
    """What the Engine read for the query beforehand, outside the database (blast_radius: the
    package's description; change_impact: git's diff): the query's third argument."""
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
class GetChanges:
    """Reply the project's `Changes` as of now: what the watch has seen is taken in first,
    and deleted files are forgotten before any question asked after this one."""


@dataclass(frozen=True)
class Retire:
    """Stop if idle (nothing in flight, no ingestion): reply True, then close the database
    and stop; reply False and carry on if busy."""


@dataclass(frozen=True)
class HoldBusy:
    """Test-only: hold the database (as a long query does) until `release` is set; reply
    None once it is held, so that a test knows the actor is busy."""

    release: anyio.Event


# -- from the actor's own tasks -----------------------------------------------------------------


@dataclass(frozen=True)
class UseDatabase:
    """From the actor's overlay task: run `fn(db)` when the database is free (a job like a
    query's) and reply its result."""

    fn: Callable[[Database], Awaitable[Any]]


@dataclass(frozen=True)
class TreeStirred:
    """From the actor's watch task: the project's watch has events to read. Replies None
    once they are taken in."""


@dataclass(frozen=True)
class TreeOpened:
    """From the actor's own task: the project's watch (None: sweeps only) and its roots."""

    watch: TreeWatch | None
    roots: tuple[Path, ...]
    sources: SourceMap | None


@dataclass(frozen=True)
class Refreshed:
    """What a refresh found, for the loop to take in (None fields: the refresh failed)."""

    units_mtime_ns: int
    """The units folder's mtime when the refresh began: the store is read up to here."""
    report: RefreshReport
    counts: Counts
    overlay_live: tuple[str, ...]
    failed_compiles: tuple[str, ...] = ()
    """Files whose live unit a failed compile wrote (see `writer.failed_compile`)."""


@dataclass(frozen=True)
class JobOver:
    """A database job has ended; `refreshed` when it was a refresh that succeeded, `error`
    when a refresh failed (the job waiting for it is answered with the error), `classified`
    when it classified the project's changes (with the snapshot it classified)."""

    job: int
    refreshed: Refreshed | None = None
    error: BaseException | None = None
    classified: tuple[Classified, ToClassify] | None = None


@dataclass(frozen=True)
class Progress:
    """The first ingestion's progress: `done` of `total` records."""

    done: int
    total: int


@dataclass(frozen=True)
class Served:
    """A task answered the envelope `key` (it no longer counts as in flight)."""

    key: int


@dataclass(frozen=True)
class AnswerEarly:
    """A question waited its `first_answer_wait` for the first ingestion: answer it from the
    units live so far, if its job has not started."""

    key: int


@dataclass(frozen=True)
class OverlayReport:
    """From the actor's own overlay task: one file of batch `batch` is done."""

    batch: int
    outcome: OverlayOutcome


@dataclass(frozen=True)
class OverlayBatchOver:
    """From the actor's own overlay task: batch `batch` has ended (normally or not)."""

    batch: int


IndexRequest: TypeAlias = (
    Query
    | ToolQuery
    | GetState
    | GetStoreVersion
    | Refresh
    | Overlay
    | EditsSeen
    | GetOverlay
    | GetChanges
    | Retire
    | HoldBusy
    | UseDatabase
    | TreeStirred
    | TreeOpened
    | JobOver
    | Progress
    | Served
    | AnswerEarly
    | OverlayReport
    | OverlayBatchOver
)
