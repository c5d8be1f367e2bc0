"""Starting a sourcekit-lsp process so that nothing it starts outlives us.

The child leads a new session, so that its helpers (builds, swiftc) can be found and
signalled even after it has exited; on Linux it also dies with this process (`lsp/watchdog.py`
leaves a watchdog that kills it when the server is gone, then exec's it). Not actor logic: the
LSP actor owns a child started here, and tests substitute in-memory children through `Launcher`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeAlias

import anyio
import anyio.to_thread
from anyio.abc import AnyByteReceiveStream, AnyByteSendStream, Process

from xcindex.lsp import watchdog


class LspChild(Protocol):
    """What an actor needs from a running sourcekit-lsp (a real process, or a test double)."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> AnyByteSendStream: ...

    @property
    def stdout(self) -> AnyByteReceiveStream: ...

    @property
    def stderr(self) -> AnyByteReceiveStream | None: ...

    async def wait(self) -> int: ...

    def signal_all(self, signum: int) -> None:
        """Send `signum` to the child and to every helper it started (builds, compilers)."""

    async def aclose(self) -> None:
        """Release the pipes (the process is gone or abandoned)."""


Launcher: TypeAlias = Callable[[Sequence[str], Path], Awaitable[LspChild]]


class _ProcessChild:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._process = process
        self._stdin: AnyByteSendStream = process.stdin
        self._stdout: AnyByteReceiveStream = process.stdout

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdin(self) -> AnyByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> AnyByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> AnyByteReceiveStream | None:
        return self._process.stderr

    async def wait(self) -> int:
        return await self._process.wait()

    def signal_all(self, signum: int) -> None:
        # The child leads a new session: its process group and its session id are its pid.
        # sourcekit-lsp puts some helpers (swiftc) in process groups of their own, but they
        # stay in its session, as they do once it has exited and they are orphans.
        pid = self._process.pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signum)
        for member in _session_members(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member, signum)

    async def aclose(self) -> None:
        if self._process.returncode is not None:
            # anyio's own aclose also releases asyncio's pipe transports; it waits for the
            # process, which has exited.
            await self._process.aclose()
            return
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(anyio.BrokenResourceError, OSError):
                    await stream.aclose()


def _session_members(session: int) -> list[int]:
    """The processes in `session`, from Linux's /proc (none where there is no /proc).

    Linux never reuses a pid while it still names a live session, so the members found are
    the ones our child started, even after the child itself has been reaped.
    """
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # pid (comm) state ppid pgrp session …; comm may contain spaces and parentheses.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == session:
            members.append(int(entry))
    return members


def _check_executable(program: str) -> None:
    """Refuse what exec would refuse, here in the parent, where it is a launch failure (the
    exec itself now happens in the child, after the wrapper above)."""
    path = shutil.which(program) or program
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if not os.access(path, os.X_OK) or not (magic == b"\x7fELF" or magic.startswith(b"#!")):
        raise OSError(errno.ENOEXEC, "Exec format error", path)


async def launch_process(command: Sequence[str], cwd: Path) -> LspChild:
    """Start `command` in `cwd`, in a new session (so its helpers can be found), with piped
    stdio; on Linux it dies with this process (the exec keeps its pid and name)."""
    argv = list(command)
    if sys.platform == "linux":
        await anyio.to_thread.run_sync(_check_executable, argv[0])
        argv = [sys.executable, watchdog.__file__, str(os.getpid()), *argv]
    process = await anyio.open_process(argv, cwd=cwd, start_new_session=True)
    return _ProcessChild(process)
