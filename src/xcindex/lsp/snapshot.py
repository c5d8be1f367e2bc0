"""Frozen snapshots of sourcekit-lsp children, as the LSP actors publish them.

Status readers (the Engine, tools/status.py) see only these: immutable values, never an
actor's fields. They live below the actors so that tools/ can name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from xcindex.errors import CodedError
from xcindex.lsp.jsonrpc import WorkDone
from xcindex.vocabulary import WarningCode


class ChildState(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    """Shut down (idle, evicted, or the pool closed); starts again on next use."""
    CRASHED = "crashed"
    """Died or failed to start; starts again on next use, after the backoff."""
    GAVE_UP = "gave_up"
    """Crashed too often; refuses until the backoff period ends."""


@dataclass(frozen=True)
class Fault:
    """A failure with its documented code, as a value (an exception is not one)."""

    code: WarningCode
    message: str

    @classmethod
    def of(cls, error: CodedError) -> Fault:
        return cls(error.code, error.message)

    def error(self) -> CodedError:
        return CodedError(self.code, self.message)


@dataclass(frozen=True)
class ChildSnapshot:
    """What one LSP actor publishes about itself, each time any of it changes."""

    pid: int | None = None
    started: bool = False
    """The handshake completed."""
    accepting: bool = False
    """New queries are welcome: started, not stopping, and the connection is alive."""
    ready: bool = False
    """`wait_ready` has succeeded since this child started."""
    retired_idle: bool = False
    """It stopped itself after `idle_timeout` unused (not a failure)."""
    failure: Fault | None = None
    """Why a started child stopped on its own (crash, broken protocol)."""
    exit_status: int | None = None
    indexing: tuple[WorkDone, ...] = ()
    """Work-done progress the child reported (`$/progress`) and has not ended."""
    log: tuple[tuple[float, str], ...] = ()
    """(time, line): lifecycle events, its stderr and its log messages, oldest first."""


@dataclass(frozen=True)
class LspChildStatus:
    """One workspace root's sourcekit-lsp, as `status` shows it."""

    root: Path
    pid: int | None
    state: ChildState
    restarts: int
    """Launch attempts after the first one."""
    crashes: int
    last_error: WarningCode | None
    last_error_message: str | None
    ready: bool
    """`wait_ready` has succeeded since this child started."""
    indexing: tuple[WorkDone, ...]
    """Work-done progress the child reported (`$/progress`) and has not ended."""
    retry_after: float | None
    """Seconds until the next start is allowed, while backing off or after giving up."""
