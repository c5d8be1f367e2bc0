"""Where databases live: one SQLite file per index store, in the user's cache folder.

Import-light (os, hashlib, pathlib): the hooks and the doctor ask where a database is
without loading SQLite.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from xcindex.errors import XcindexError

CACHE_ENV = "XCINDEX_CACHE_DIR"


class CacheFolderError(XcindexError):
    """The cache folder cannot be written: named, with the way out."""


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


def writable(folder: Path) -> Path:
    """`folder` (in the cache), created if missing; a CacheFolderError that names it when it
    cannot be written (a read-only disk, another user's folder, a file in the way)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise CacheFolderError(
            f"xcindex's cache folder {folder} cannot be written ({error.strerror or error}): make it "
            f"writable, or set {CACHE_ENV} to a folder that is."
        ) from None
    return folder
