"""Source files' lines as they are on disk now, read once per modification time.

One process-wide cache for the tools that quote a line the index points at (a call's
`super.`, a declaration's head, a local type's inheritance clause): keyed by path and
modification time, so an edited file is read again and an unchanged one never is.
"""

from __future__ import annotations

import os
from functools import lru_cache

from xcindex.swift.lexer import split_lines

CACHED_FILES = 256


def source_lines(path: str) -> tuple[str, ...]:
    """The file's lines (numbered as the index numbers them); none when it cannot be read."""
    try:
        mtime_ns = os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return ()
    return _read(path, mtime_ns)


def source_line(path: str, line: int) -> str:
    """One (1-based) line of the file; empty past its end or when it cannot be read."""
    lines = source_lines(path)
    return lines[line - 1] if 0 < line <= len(lines) else ""


@lru_cache(maxsize=CACHED_FILES)
def _read(path: str, mtime_ns: int) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return tuple(split_lines(handle.read()))
    except (OSError, ValueError):
        return ()
