"""How an Engine is configured, and what its callers hand it besides arguments."""

from __future__ import annotations

import math
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xcindex.project.ledger import OVERLAY_ENV

WATCH_ENV = "XCINDEX_WATCH"

if TYPE_CHECKING:
    from xcindex.actors.index_messages import ProgressListener
    from xcindex.lsp.config import LspPoolConfig

MAX_OVERLAY_FILES_PER_QUESTION = 8
"""A question starts the overlay for at most this many files (an empty answer's
project-wide stale list can be long); the rest keep their labels until asked about."""

LOCATION_TTL_S = 2.0
"""How long a located store is reused without looking again (it is still checked to exist)."""


current_progress_listener: ContextVar[ProgressListener | None] = ContextVar("xcindex_progress", default=None)
"""Set by a caller (the MCP server, per tool call) to hear about a first ingestion that its
call waits for. A context variable, so the Engine's methods keep one signature per tool."""


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
    max_index_actors: int = 8
    """Index actors (one per store, each with its database open) kept at most: starting
    one more retires the least recently used idle one. The next question to a retired
    store starts it again (a warm start: milliseconds)."""
    index_idle_timeout_s: float = 900.0
    """An index actor unused this long retires and closes its database."""
    overlay: bool = field(default_factory=lambda: os.environ.get(OVERLAY_ENV, "1") != "0")
    """Re-index files edited since the last build on their own (the freshness overlay), so
    that answers about them are fresh without a build. On unless XCINDEX_OVERLAY=0."""
    watch: bool = field(default_factory=lambda: os.environ.get(WATCH_ENV, "1") != "0")
    """Follow the project's folders with a watch (inotify, on Linux) so that each question
    knows what changed at once; off (XCINDEX_WATCH=0), or where there is none, each question
    sweeps the project's Swift files instead (docs/tools.md, "Freshness")."""
    overlay_wait_s: float = 3.0
    """How long a query waits for the overlay of the files it names; past it, the answer
    keeps its stale labels (the overlay lands for the next question)."""
    overlay_debounce_s: float = 1.0
    """The session's edits (the hooks' ledger, `record_edit`) start the overlay of the
    edited files in the background once a file has been quiet this long."""
    first_answer_wait_s: float = math.inf
    """How long an index tool waits for a store's first ingestion before answering from the
    files ingested so far (`completeness: indexing`, with the progress). Unbounded here: a
    program embedding the Engine, like the CLI, asked for an answer, not a sample; the MCP
    server bounds it (server.front.FIRST_ANSWER_WAIT_S) because an agent's call must never look
    hung. plan_rename always waits: a partial plan would be a wrong edit."""


@dataclass(frozen=True)
class StatusVersion:
    """What a store's status depends on that changes under it: the units folder (the
    compiler renames every unit it writes into it) and the session-edited files."""

    units_mtime_ns: int
    edited: frozenset[str]
    overlay_version: int = 0
    """How many files the freshness overlay has re-indexed (it moves when one lands)."""
