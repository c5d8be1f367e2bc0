"""Where libIndexStore lives on this machine: the search itself is `xcindex.project.toolchain`'s (one
order for the server, the workers and the doctor); this keeps the names `indexstore` code uses.

Import-light on purpose (no cffi): the doctor and the hooks use it too.
"""

from __future__ import annotations

from xcindex.project.toolchain import (
    DEFAULT_TOOLCHAIN,
    LIBRARY_ENV,
    TOOLCHAIN_ENV,
    LibraryNotFound,
    find_library,
    toolchain_roots,
)

__all__ = [
    "DEFAULT_TOOLCHAIN",
    "LIBRARY_ENV",
    "TOOLCHAIN_ENV",
    "LibraryNotFound",
    "find_library",
    "toolchain_roots",
]
