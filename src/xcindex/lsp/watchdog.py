"""Run before sourcekit-lsp on Linux: `python watchdog.py SERVER_PID PROGRAM [ARG…]`.

A SIGKILLed server gets no chance to stop its children, and sourcekit-lsp does not always
notice that its stdin closed (under load it sometimes did not within 20 s). So this script,
started by `lsp/process.py` in the new session, forks a watchdog and then exec's sourcekit-lsp
(which keeps this pid and its pipes). The watchdog waits on the server's pidfd and SIGKILLs
sourcekit-lsp once the server is gone; it dies with sourcekit-lsp itself (PR_SET_PDEATHSIG).

Not PR_SET_PDEATHSIG on sourcekit-lsp: that fires when the *thread* that started it exits, and
trio starts processes from worker threads that exit after 10 s idle (every child died 10 s
after launch). Run as a script by path, standard library only: it must not import xcindex.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1


def _watch(server: int, lsp: int) -> None:
    """In the forked watchdog: wait for the server to be gone, then kill sourcekit-lsp."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != lsp:
        return  # sourcekit-lsp is already gone
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # never hold sourcekit-lsp's pipes open
    try:
        select.select([os.pidfd_open(server)], [], [])
    except (AttributeError, OSError):  # no pidfd (old kernel): poll
        while True:
            try:
                os.kill(server, 0)
            except ProcessLookupError:
                break
            time.sleep(0.5)
    os.kill(lsp, signal.SIGKILL)


def main(argv: list[str]) -> None:
    server = int(argv[1])
    if os.getppid() != server:
        sys.exit(1)  # the server died before we got here
    lsp = os.getpid()
    if os.fork() == 0:
        try:
            _watch(server, lsp)
        finally:
            os._exit(0)
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv)
