"""Which source files changed, without a hook: the kernel's own record, read when asked.

On Linux, `TreeWatch` holds an inotify instance watching every folder under a project's
source roots (build folders and hidden ones skipped). The kernel queues an event as soon as a
write, a create, a delete or a rename returns, so draining the queue when a question arrives
(`drain`, a non-blocking read) knows every change made before it: an edit from a shell, a
formatter, `git checkout` or another editor counts as much as one the agent's hook saw. A
folder created later is watched as soon as its event is read, and the files already in it
are reported. An overflowed queue (more than the kernel keeps) says so, and the caller
sweeps instead.

Where inotify is not available (another system, or the watch limit reached) `sweep` stats
every Swift file under the roots instead; it is what a first look at a project does anyway.
Standard library only (ctypes), like the rest of `project/`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_SUFFIXES = (".swift",)
"""The files whose changes the index tracks (the overlay re-indexes Swift files only)."""
SKIPPED_FOLDERS = frozenset({".build", ".git", ".swiftpm", "DerivedData", "node_modules", ".hg", ".svn"})

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ISDIR = 0x40000000
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")
_READ_SIZE = 1 << 16


def skipped(name: str) -> bool:
    """A folder never looked into: build products and hidden folders."""
    return name in SKIPPED_FOLDERS or name.startswith(".")


def is_source(name: str) -> bool:
    """A Swift source a target compiles (a package manifest is not one: SwiftPM compiles it
    apart, and its changes reach no answer's sites)."""
    base = os.path.basename(name)
    return base.endswith(SOURCE_SUFFIXES) and not (
        base == "Package.swift" or base.startswith("Package@swift")
    )


def walk(root: Path) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """Every folder under `root` (skipping `skipped` ones), with its entries."""
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        yield folder, entries
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False) and not skipped(entry.name):
                    pending.append(entry.path)
            except OSError:
                continue


def sweep(roots: Iterable[Path]) -> dict[str, int]:
    """Every Swift file under `roots`, with its modification time (ns)."""
    found: dict[str, int] = {}
    for root in roots:
        for _folder, entries in walk(root):
            for entry in entries:
                if is_source(entry.name):
                    try:
                        found[entry.path] = entry.stat(follow_symlinks=True).st_mtime_ns
                    except OSError:
                        continue
    return found


@dataclass
class Drained:
    """What changed since the last drain: the source paths touched (created, written,
    deleted, renamed, re-timed; their current state is for the caller to stat), the folders
    deleted or moved away (every file the index has under them is gone), and whether the
    kernel dropped events (then only a sweep knows)."""

    paths: set[str] = field(default_factory=set)
    gone_folders: set[str] = field(default_factory=set)
    overflowed: bool = False


class TreeWatch:
    """An inotify watch over source roots. Not thread-safe: one owner drains it."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self._fd = fd
        self._libc = libc
        self._folders: dict[int, str] = {}
        self.limit_reached = False
        """A folder could not be watched (the user's watch limit): changes there are unseen."""

    @classmethod
    def open(cls, roots: Iterable[Path]) -> TreeWatch | None:
        """A watch over every folder under `roots`; None where inotify is not available."""
        if not sys.platform.startswith("linux"):
            return None
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(fd, libc)
        for root in roots:
            for folder, _entries in walk(root):
                watch._add(folder)
        return watch

    def fileno(self) -> int:
        """Readable when events are queued (for a task that wants to hear them early)."""
        return self._fd

    @property
    def folders(self) -> int:
        return len(self._folders)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _add(self, folder: str) -> bool:
        descriptor = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
        if descriptor < 0:
            if ctypes.get_errno() == errno.ENOSPC:
                self.limit_reached = True
            return False
        self._folders[descriptor] = folder
        return True

    def drain(self) -> Drained:
        """Every event queued so far (non-blocking): the source paths it concerns."""
        drained = Drained()
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return drained
            except OSError:
                drained.overflowed = True
                return drained
            self._read(data, drained)

    def _read(self, data: bytes, drained: Drained) -> None:
        offset = 0
        while offset + _EVENT.size <= len(data):
            descriptor, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
            offset += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                drained.overflowed = True
                continue
            folder = self._folders.get(descriptor)
            if mask & _IN_IGNORED:
                self._folders.pop(descriptor, None)
                continue
            if folder is None or not name:
                continue
            path = os.path.join(folder, os.fsdecode(name))
            if mask & _IN_ISDIR:
                if mask & (_IN_CREATE | _IN_MOVED_TO) and not skipped(os.fsdecode(name)):
                    # A new folder (or one moved in): watch it and everything in it, and
                    # report the files it already holds (written before the watch began).
                    for sub, entries in walk(Path(path)):
                        self._add(sub)
                        drained.paths.update(e.path for e in entries if is_source(e.name))
                elif mask & (_IN_DELETE | _IN_MOVED_FROM):
                    drained.gone_folders.add(path)
            elif is_source(path):
                drained.paths.add(path)
