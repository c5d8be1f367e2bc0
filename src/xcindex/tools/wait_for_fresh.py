"""wait_for_fresh: block (up to a timeout) until the index covers named files' current content.

An agent that edited files and started a build asks this instead of sleeping or polling
`status`. A file is *fresh* when a live unit compiles it and the unit was written after the
file's last modification (the same rule that marks answers `stale`), *stale* when the file
changed after its unit, *not_indexed* when no live unit compiles it yet (a new file before
its first build), and *missing* when it does not exist (nothing to wait for). The Engine
re-checks after every change of the store until every file is fresh or missing, or the
timeout ends; a timeout is an answer (`timedOut`), not an error.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

import anyio
from pydantic import Field, field_validator

from xcindex.errors import CodedError
from xcindex.indexstore.database import Database
from xcindex.tools.arguments import ArgumentProblem, LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import AnswerWarning, file_is_stale
from xcindex.tools.limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from xcindex.tools.shapes import FileFreshnessJson, FreshWaitJson
from xcindex.vocabulary import WarningCode

MAX_FILES = 200


class FileState(StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    NOT_INDEXED = "not_indexed"
    MISSING = "missing"
    UNKNOWN = "unknown"
    """The index was too busy with other queries to check within the timeout."""


@dataclass(frozen=True)
class FileFreshness:
    path: str
    state: FileState
    session_edited: bool = False
    indexed_path: str | None = None
    """The path as the index spells it (None when no live unit compiles the file)."""

    @property
    def settled(self) -> bool:
        """Nothing more to wait for: fresh, or a file that does not exist."""
        return self.state in (FileState.FRESH, FileState.MISSING)

    def to_json(self) -> FileFreshnessJson:
        return {"path": self.path, "state": str(self.state), "sessionEdited": self.session_edited}


@dataclass(frozen=True)
class FreshWaitAnswer:
    files: tuple[FileFreshness, ...]
    waited_s: float
    timed_out: bool
    warnings: tuple[AnswerWarning, ...] = ()
    """Why files still stale could not be re-indexed by the freshness overlay."""

    @property
    def fresh(self) -> bool:
        return all(f.state is FileState.FRESH for f in self.files)

    def named_paths(self) -> set[str]:
        return {f.path for f in self.files}

    def shown(self, budget: int | None = None) -> tuple[FileFreshness, ...]:
        """Unsettled files first (what the agent still waits for), within a response budget."""
        ordered = sorted(self.files, key=lambda f: (f.settled, f.path))
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return tuple(ordered[: fitting(ordered, lambda f: item_cost(f.to_json()), lists_budget)])

    def to_json(self, budget: int | None = None) -> FreshWaitJson:
        shown = self.shown(budget)
        answer: FreshWaitJson = {
            "fresh": self.fresh,
            "timedOut": self.timed_out,
            "waitedMs": round(self.waited_s * 1000),
            "files": [f.to_json() for f in shown],
            "fileCount": len(self.files),
            "truncated": len(shown) < len(self.files),
        }
        if self.warnings:
            answer["warnings"] = [w.to_json() for w in self.warnings]
        return answer


def files_freshness(
    db: Database, paths: Sequence[str], edited: frozenset[str] = frozenset()
) -> list[FileFreshness]:
    """The state of each named file (absolute paths, compared with symlinks resolved)."""
    live: dict[str, tuple[str, int]] = {}
    for path, mtime, *_ in db.live_files():
        live[os.path.realpath(path)] = (path, mtime)
    found: list[FileFreshness] = []
    for asked in paths:
        real = os.path.realpath(asked)
        session_edited = real in edited
        if not os.path.exists(real):
            found.append(FileFreshness(asked, FileState.MISSING, session_edited))
        elif real not in live:
            found.append(FileFreshness(asked, FileState.NOT_INDEXED, session_edited))
        else:
            path, mtime = live[real]
            state = FileState.STALE if file_is_stale(db, path, mtime) else FileState.FRESH
            found.append(FileFreshness(asked, state, session_edited, path))
    return found


def _unknown(paths: list[str], edited: frozenset[str]) -> list[FileFreshness]:
    return [FileFreshness(path, FileState.UNKNOWN, os.path.realpath(path) in edited) for path in paths]


async def wait_until_fresh(
    paths: list[str],
    timeout_s: float,
    *,
    check: Callable[[frozenset[str]], Awaitable[list[FileFreshness]]],
    edited: Callable[[], Awaitable[frozenset[str]]],
    first_ingestion: Callable[[], Awaitable[tuple[int, int] | None]],
    poll_s: float,
) -> FreshWaitAnswer:
    """Ask `check` until every file is settled or `timeout_s` passes.

    A check the index cannot answer in time (a first ingestion, or other queries ahead of
    this one) ends the wait: during a first ingestion that is an error with its progress
    (`first_ingestion` gives (done, total) then, else None); otherwise an answer with what
    was last known, `timedOut`.
    """
    started = anyio.current_time()
    deadline = started + timeout_s
    last: list[FileFreshness] | None = None
    while True:
        now_edited = await edited()
        files = None
        with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0) + poll_s):
            files = await check(now_edited)
        now = anyio.current_time()
        if files is None:
            progress = await first_ingestion()
            if progress is not None:
                done, total = progress
                raise CodedError(
                    WarningCode.INDEX_FIRST_INGESTION_RUNNING,
                    f"The first ingestion of this index is still running ({done}/{total} records read); "
                    "ask again in a moment.",
                )
            # Busy, not broken: a timeout is an answer, with what was last known.
            known = last if last is not None else await anyio.to_thread.run_sync(_unknown, paths, now_edited)
            return FreshWaitAnswer(tuple(known), waited_s=now - started, timed_out=True)
        last = files
        settled = all(f.settled for f in files)
        if settled or now >= deadline:
            return FreshWaitAnswer(tuple(files), waited_s=now - started, timed_out=not settled)
        await anyio.sleep(min(poll_s, deadline - now))


class WaitForFreshArgs(LocationArgs):
    tool = "wait_for_fresh"

    files: Annotated[list[Text], Field(min_length=1, max_length=MAX_FILES)] = Field(
        description="Absolute paths of the files you edited."
    )
    timeout_seconds: float = Field(
        DEFAULT_TIMEOUT_S, ge=0, le=MAX_TIMEOUT_S, strict=True, description="How long to wait at most."
    )

    @field_validator("files")
    @classmethod
    def _absolute(cls, files: list[str]) -> list[str]:
        relative = [path for path in files if not os.path.isabs(path)]
        if relative:
            raise ArgumentProblem(f"'files' must be absolute paths; got '{relative[0]}'")
        return files
