"""Where databases live: one SQLite file per index store, in the user's cache folder.

Import-light (os, hashlib, pathlib): the hooks and the doctor ask where a database is
without loading SQLite.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CACHE_ENV = "XCINDEX_CACHE_DIR"


def cache_dir() -> Path:
    if configured := os.environ.get(CACHE_ENV):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "xcindex"


def database_path_for(store_path: Path) -> Path:
    """One database per store, keyed by the store's real path so copies never collide."""
    real = str(store_path.resolve())
    digest = hashlib.sha1(real.encode()).hexdigest()[:16]
    return cache_dir() / f"{store_path.resolve().parent.name[:40]}-{digest}.sqlite"
