"""Where the Swift toolchain and its libIndexStore live on this machine.

Import-light on purpose (no cffi): the doctor and the hooks use it too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from xcindex.warnings import XcindexError

LIBRARY_ENV = "XCINDEX_LIBINDEXSTORE"
TOOLCHAIN_ENV = "XCINDEX_TOOLCHAIN"
DEFAULT_TOOLCHAIN = Path("/opt/swift")
_LIBRARY_NAMES = ("libIndexStore.so", "libIndexStore.dylib")


class LibraryNotFound(XcindexError):
    pass


def toolchain_roots() -> list[Path]:
    """Candidate toolchain roots (the folder holding `usr/`), best first, deduplicated."""
    candidates: list[Path] = []
    if configured := os.environ.get(TOOLCHAIN_ENV):
        candidates.append(Path(configured))
    if lsp := os.environ.get("SOURCEKIT_LSP_PATH"):
        candidates.append(Path(lsp).resolve().parent.parent.parent)
    for tool in ("swift", "swiftc"):
        if found := shutil.which(tool):
            candidates.append(Path(found).resolve().parent.parent.parent)
    candidates.append(DEFAULT_TOOLCHAIN)
    seen: set[Path] = set()
    roots: list[Path] = []
    for root in candidates:
        if root not in seen and (root / "usr").is_dir():
            seen.add(root)
            roots.append(root)
    return roots


def find_library() -> Path:
    """The libIndexStore to load: the override, else the first toolchain that has one."""
    if configured := os.environ.get(LIBRARY_ENV):
        path = Path(configured)
        if not path.is_file():
            raise LibraryNotFound(f"{LIBRARY_ENV} points at '{configured}', which is not a file.")
        return path
    searched: list[str] = []
    for root in toolchain_roots():
        lib_dir = root / "usr" / "lib"
        searched.append(str(lib_dir))
        for name in _LIBRARY_NAMES:
            if (lib_dir / name).is_file():
                return lib_dir / name
        versioned = sorted(lib_dir.glob("libIndexStore.so.*"))
        if versioned:
            return versioned[-1]
    where = ", ".join(searched) or "no toolchain found"
    raise LibraryNotFound(
        f"libIndexStore was not found (searched: {where}). Install the Swift toolchain, put "
        f"`swift` on PATH, or set {LIBRARY_ENV} to the library's path."
    )
