"""The session ledger: the files an agent edited since the session started.

The file contract is byte-compatible with the original plugin, whose hooks and server
compute the same path independently:
`$TMPDIR/xcindex-edited-<first 12 hex of sha1(CLAUDE_PROJECT_DIR, else the working
directory)>.txt` (`TMPDIR` defaults to `/tmp`, one trailing `/` trimmed), one absolute
path per line.

Two things differ on purpose. Paths are compared by real path (symlinks resolved), so
`/var/x.swift` and `/private/var/x.swift` are one edit; they are still written as the
absolute path given. And every access takes `fcntl.flock` on the ledger, with appends
through `O_APPEND`, so that many hook processes appending at once never lose or
duplicate a line.

Import-light (stdlib only): the hooks run this on every edit an agent makes.
"""

from __future__ import annotations

import errno
import fcntl
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    LedgerFile = str | os.PathLike[str]

PROJECT_DIR_ENV = "CLAUDE_PROJECT_DIR"
OVERLAY_ENV = "XCINDEX_OVERLAY"
"""`0` turns the freshness overlay off (it re-indexes the session's edited Swift files on
their own); read by the Engine (EngineConfig.overlay) and by the post-tool-use hook's note."""
TRACKED_SUFFIXES = (".swift", ".m", ".mm", ".h")
"""The edits worth recording: sources the compiler indexes."""

_FILE_MODE = 0o600


def project_directory(environ: Mapping[str, str] | None = None) -> str:
    """`CLAUDE_PROJECT_DIR` when set and non-empty, else the working directory."""
    env = os.environ if environ is None else environ
    return env.get(PROJECT_DIR_ENV) or os.getcwd()


def _sha1_hex(data: bytes) -> str:
    """SHA-1 without loading OpenSSL when the interpreter has its own (a hook runs on every
    edit: `hashlib` costs a tenth of its run)."""
    import importlib

    try:
        builtin: Any = importlib.import_module("_sha1")  # CPython's own, without OpenSSL
        return str(builtin.sha1(data).hexdigest())
    except ImportError:  # an interpreter built without it
        import hashlib

        return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def ledger_path(project_dir: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """Where the ledger of `project_dir` (default: `project_directory()`) lives."""
    env = os.environ if environ is None else environ
    key = project_directory(env) if project_dir is None else project_dir
    temp = env.get("TMPDIR") or "/tmp"
    # The shell original trims exactly one trailing slash (`${TMP%/}`).
    temp = temp.removesuffix("/")
    digest = _sha1_hex(os.fsencode(key))[:12]
    return f"{temp}/xcindex-edited-{digest}.txt"


def is_tracked(path: str) -> bool:
    """Whether an edit of `path` can make index answers stale (Swift and ObjC sources)."""
    return path.endswith(TRACKED_SUFFIXES)


def real_path(path: str) -> str:
    """The comparison key of a ledger entry: symlinks resolved, `..` folded."""
    return os.path.realpath(path)


def _check_entry(path: str) -> None:
    if not os.path.isabs(path):
        raise ValueError(f"ledger entries are absolute paths; got {path!r}")
    if "\n" in path or "\r" in path or "\x00" in path:
        raise ValueError(f"a path with a line break or NUL cannot be a ledger line: {path!r}")


def _lines(data: bytes) -> list[str]:
    return [os.fsdecode(line) for line in data.replace(b"\r", b"").split(b"\n") if line]


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _open(ledger: LedgerFile, flags: int) -> int:
    # O_NOFOLLOW: the ledger lives in a shared temporary folder; never write through a
    # symlink someone else planted there.
    try:
        return os.open(ledger, flags | os.O_NOFOLLOW | os.O_CLOEXEC, _FILE_MODE)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, "the ledger is a symbolic link; refusing to follow it", str(ledger)
            ) from None
        raise


def append(path: str, ledger: LedgerFile | None = None) -> bool:
    """Add `path` unless a line with the same real path is there; True if it was added.

    Raises ValueError for a relative path or one with a line break, OSError when the
    ledger cannot be written.
    """
    _check_entry(path)
    target = ledger_path() if ledger is None else ledger
    fd = _open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        key = real_path(path)
        data = _read_all(fd)
        if any(real_path(line) == key for line in _lines(data)):
            return False
        # A line left unterminated (a writer killed mid-write) must not swallow ours.
        prefix = b"\n" if data and not data.endswith(b"\n") else b""
        line = prefix + os.fsencode(path) + b"\n"
        while line:
            line = line[os.write(fd, line) :]
        return True
    finally:
        os.close(fd)  # also releases the lock


def read(ledger: LedgerFile | None = None) -> frozenset[str]:
    """Every path in the ledger, as written; empty when there is no ledger yet."""
    target = ledger_path() if ledger is None else ledger
    try:
        fd = _open(target, os.O_RDONLY)
    except FileNotFoundError:
        return frozenset()
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return frozenset(_lines(_read_all(fd)))
    finally:
        os.close(fd)


def real_paths(paths: Iterable[str]) -> frozenset[str]:
    """The comparison keys of many entries (see `real_path`)."""
    return frozenset(real_path(path) for path in paths)


def clear(ledger: LedgerFile | None = None) -> None:
    """Empty the ledger (creating it if needed), as a new session does."""
    target = ledger_path() if ledger is None else ledger
    fd = _open(target, os.O_WRONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)
