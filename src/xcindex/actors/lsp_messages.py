"""The LSP pool's messages and the snapshot it publishes.

Callers send `Request` (and the pool's `aclose` sends `Close`); the pool's own tasks report
back with the others, so that the one owning task is the only one that changes the pool's
state. `SlotSnapshot` is what the owner publishes per workspace root; `status_of` turns it
(with the child's own `ChildSnapshot`) into the `LspChildStatus` that status shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from xcindex.actors.mailbox import Envelope, Published
from xcindex.lsp.queries import LspAnswer, LspQuery
from xcindex.lsp.snapshot import ChildSnapshot, ChildState, Fault, LspChildStatus

if TYPE_CHECKING:
    from xcindex.actors.lsp_child import LspActor

LIVE = (ChildState.RUNNING, ChildState.STARTING, ChildState.STOPPING)
"""The states in which a slot has a child process."""


# -- messages ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """Answer `query` with the child for `root` (a real path), starting one if needed."""

    root: Path
    query: LspQuery


@dataclass(frozen=True)
class Close:
    """Stop every child, then the pool."""


@dataclass(frozen=True)
class ChildStarted:
    """From a supervisor: `actor` completed its handshake."""

    root: Path
    actor: LspActor


@dataclass(frozen=True)
class ChildStopped:
    """From a supervisor: `actor` has stopped (and its process is gone)."""

    root: Path
    actor: LspActor
    start_failure: Fault | None


@dataclass(frozen=True)
class StartDue:
    """From a backoff timer: the slot for `root` may start a child now."""

    root: Path


@dataclass(frozen=True)
class Forwarded:
    """From a forwarder: one query to `root`'s child is over (answered or failed)."""

    root: Path


@dataclass(frozen=True)
class Retry:
    """From a forwarder: the child retired for idleness as the query reached it; ask a new
    one (once)."""

    root: Path
    query: LspQuery
    caller: Envelope[PoolMessage, LspAnswer]


PoolMessage: TypeAlias = Request | Close | ChildStarted | ChildStopped | StartDue | Forwarded | Retry


@dataclass(frozen=True)
class SlotSnapshot:
    """What the pool publishes about one root; `child` is that child's own publication."""

    root: Path
    state: ChildState
    attempts: int
    crashes: int
    last_error: Fault | None
    next_start_at: float
    gave_up_until: float | None
    child: Published[ChildSnapshot] | None


def status_of(slot: SlotSnapshot, now: float) -> LspChildStatus:
    child = slot.child.value if slot.child is not None else None
    state = slot.state
    if state is ChildState.RUNNING and child is not None and not child.accepting:
        state = ChildState.STOPPING  # it died or went idle; the pool is still stopping it
    live = child is not None and state in LIVE
    if slot.gave_up_until is not None and slot.gave_up_until > now:
        retry_after: float | None = slot.gave_up_until - now
    elif slot.next_start_at > now:
        retry_after = slot.next_start_at - now
    else:
        retry_after = None
    return LspChildStatus(
        root=slot.root,
        pid=child.pid if child is not None and live else None,
        state=state,
        restarts=max(0, slot.attempts - 1),
        crashes=slot.crashes,
        last_error=None if slot.last_error is None else slot.last_error.code,
        last_error_message=None if slot.last_error is None else slot.last_error.message,
        ready=child is not None and live and child.ready,
        indexing=child.indexing if child is not None and live else (),
        retry_after=retry_after,
    )
