"""The index actor's published state: a frozen snapshot, so that tools/ can read it
without knowing anything about actors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xcindex.indexstore.database import Counts
from xcindex.indexstore.ingest import RefreshReport, Unreadable


@dataclass(frozen=True)
class IndexState:
    store_path: Path
    database_path: Path
    ready: bool
    """The first ingestion has finished: queries answer without waiting for it."""
    ingesting: bool
    progress: tuple[int, int]
    last_refresh: RefreshReport | None
    counts: Counts | None
    failures: tuple[Unreadable, ...]


@dataclass(frozen=True)
class StoreVersion:
    """What the store's own files say about it, read by the index actor (in a thread)."""

    units_mtime_ns: int
    """The units folder's mtime: the compiler renames every unit it writes into it."""
    newest_write_ns: int | None = None
    """The newest modification anywhere in the store (every unit file stat'ed), when asked."""
