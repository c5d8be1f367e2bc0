"""What the Engine holds for one store: `IndexHandle` asks the store's current index actor
(actors/index.py), and a new one when that actor has retired. Each method sends one message
(actors/index_messages.py) and waits for its reply."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, TypeVar

import anyio

from xcindex.actors.index_messages import (
    EditsSeen,
    GetChanges,
    GetOverlay,
    GetState,
    GetStoreVersion,
    HoldBusy,
    IndexRequest,
    Overlay,
    ProgressListener,
    Query,
    Refresh,
    ToolQuery,
)
from xcindex.actors.mailbox import ActorHandle
from xcindex.errors import ActorGone
from xcindex.indexstore.database import Database
from xcindex.indexstore.state import IndexState, StoreVersion
from xcindex.overlay.changes import Changes
from xcindex.overlay.runner import OverlaySnapshot

T = TypeVar("T")


Connect: TypeAlias = Callable[
    [ActorHandle[IndexRequest, Any] | None], Awaitable[ActorHandle[IndexRequest, Any]]
]
"""The current actor's handle; given the handle of an actor that answered ActorGone, a
new actor's (the old one retired)."""


class IndexHandle:
    """What the Engine holds for one store: asks its current actor, and a new one when
    that actor has retired."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect

    async def _ask(self, request: IndexRequest, *, timeout: float) -> Any:
        handle = await self._connect(None)
        try:
            return await handle.ask(request, timeout=timeout)
        except ActorGone:
            # It retired between our lookup and our question: ask its successor, once.
            handle = await self._connect(handle)
            return await handle.ask(request, timeout=timeout)

    async def query(
        self,
        fn: Callable[[Database], T],
        *,
        timeout: float = math.inf,
        progress: ProgressListener | None = None,
    ) -> T:
        result: T = await self._ask(Query(fn, progress), timeout=timeout)
        return result

    async def ask(
        self,
        tool: str,
        args: Any,
        inputs: Any = None,
        *,
        timeout: float = math.inf,
        progress: ProgressListener | None = None,
        first_answer_wait: float = math.inf,
    ) -> Any:
        """The answer of the named query `tool` for `args` (and the `inputs` read for it); a
        `WhileIngesting` if a first ingestion was still running `first_answer_wait` seconds
        after asking."""
        return await self._ask(ToolQuery(tool, args, progress, inputs, first_answer_wait), timeout=timeout)

    async def state(self, *, timeout: float = 5.0) -> IndexState:
        state: IndexState = await self._ask(GetState(), timeout=timeout)
        return state

    async def version(self, *, newest_write: bool = False, timeout: float = 60.0) -> StoreVersion:
        """The store's version as it is on disk now (read by the actor, in a thread)."""
        version: StoreVersion = await self._ask(GetStoreVersion(newest_write), timeout=timeout)
        return version

    async def refresh(self, *, timeout: float = math.inf) -> None:
        """Wait until the actor has taken in what the store has now."""
        await self._ask(Refresh(), timeout=timeout)

    async def overlay(self, paths: tuple[str, ...], *, timeout: float = math.inf) -> list[str]:
        """Re-index edited files into the overlay; the files that landed within `timeout`
        (ActorTimeout after it: the work goes on in the actor)."""
        landed: list[str] = await self._ask(Overlay(paths), timeout=timeout)
        return landed

    async def overlay_soon(self, paths: tuple[str, ...], *, timeout: float = 5.0) -> None:
        """Start re-indexing edited files into the overlay now, without waiting for it."""
        await self._ask(Overlay(paths, wait=False), timeout=timeout)

    async def edits_seen(self, paths: tuple[str, ...], *, timeout: float = 5.0) -> None:
        """Tell the actor the session edited `paths`: it re-indexes those of its files
        after the debounce period, in the background."""
        await self._ask(EditsSeen(paths), timeout=timeout)

    async def changes(self, *, timeout: float = 60.0) -> Changes:
        """The project's Swift files the index does not describe as they are now (edited,
        new, outside every target), as of this moment; deleted ones are forgotten first."""
        changes: Changes = await self._ask(GetChanges(), timeout=timeout)
        return changes

    async def overlay_state(self, *, timeout: float = 5.0) -> OverlaySnapshot:
        snapshot: OverlaySnapshot = await self._ask(GetOverlay(), timeout=timeout)
        return snapshot

    async def hold_busy(self, release: anyio.Event, *, timeout: float = math.inf) -> None:
        """Test-only: returns once the actor holds its database until `release` is set."""
        await self._ask(HoldBusy(release), timeout=timeout)
