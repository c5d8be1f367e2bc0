"""status: where the index is, how fresh it is, and what the server is doing with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from xcindex.indexstore.database import Database
from xcindex.indexstore.state import IndexState
from xcindex.tools.arguments import LocationArgs
from xcindex.tools.common import AnswerWarning, project_stale_files
from xcindex.tools.shapes import LspChildJson, StatusJson
from xcindex.vocabulary import Completeness, FailureKind, WarningCode

if TYPE_CHECKING:
    from xcindex.lsp.snapshot import LspChildStatus

MAX_LISTED = 50
"""Files listed per list of the structured answer under a response budget."""
TEXT_LISTED = 10
"""Stale files named in the text rendering under a response budget."""


def iso(ns: int) -> str | None:
    if ns <= 0:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StatusAnswer:
    state: IndexState
    index_mtime_ns: int
    stale_files: tuple[str, ...]
    session_edited_files: tuple[str, ...] = ()
    lsp: tuple[LspChildJson, ...] = ()
    warnings: tuple[AnswerWarning, ...] = field(default=())
    overlay_files: tuple[str, ...] = ()
    """Files edited since the last build that the freshness overlay re-indexed as they are now."""
    overlay_covered_edits: tuple[str, ...] = ()
    """The session-edited files among them (real paths): they do not make the index stale."""
    built_in: str | None = None
    """The folder the index's sources lie in, when it is not the project's (the package was
    copied or moved after its build: `index_built_elsewhere`)."""
    new_files: tuple[str, ...] = ()
    """Swift files of the project's targets that no unit describes yet (written since the
    last build, not yet re-indexed on their own)."""

    @property
    def completeness(self) -> Completeness:
        if not self.state.ready:
            return Completeness.INDEXING
        if (
            self.built_in is not None
            or self.stale_files
            or self.new_files
            or set(self.session_edited_files) - set(self.overlay_covered_edits)
        ):
            return Completeness.STALE
        if self.state.failures:
            return Completeness.PARTIAL
        return Completeness.COMPLETE

    def summary(self) -> str:
        when = iso(self.index_mtime_ns) or "unknown"
        text = f"Index store found at {self.state.store_path} (last modified {when})."
        if self.completeness is Completeness.INDEXING:
            done, total = self.state.progress
            text += f" First ingestion in progress: {done}/{total} records read."
        elif self.built_in is not None:
            text += f" It holds the sources of {self.built_in}, not of this project: rebuild here."
        elif self.stale_files or self.new_files:
            if self.stale_files:
                text += f" {len(self.stale_files)} file(s) changed since they were indexed."
            if self.new_files:
                text += f" {len(self.new_files)} new file(s) not indexed yet."
            text += " They are re-indexed on their own in a moment, or rebuild to refresh."
        else:
            text += " Every indexed file is current, and no file is new or gone."
        if self.session_edited_files:
            text += f" {len(self.session_edited_files)} file(s) edited this session."
        if self.overlay_files:
            text += (
                f" {len(self.overlay_files)} file(s) edited since the last build were re-indexed on their "
                "own (the freshness overlay): answers about them are fresh."
            )
        if self.state.failures:
            text += f" {len(self.state.failures)} unit/record file(s) could not be read and were skipped."
        return text

    def to_json(self, budget: int | None = None) -> StatusJson:
        """Under a response budget each list names at most MAX_LISTED files; the counts
        say how many there are."""
        state = self.state
        report = state.last_refresh
        counts = state.counts
        limit = None if budget is None else MAX_LISTED
        answer: StatusJson = {
            "indexStorePath": str(state.store_path),
            "indexMtime": iso(self.index_mtime_ns),
            "staleFileCount": len(self.stale_files),
            "staleFiles": list(self.stale_files[:limit]),
            "summary": self.summary(),
            "completeness": str(self.completeness),
            "sessionEditedFiles": list(self.session_edited_files[:limit]),
            "sessionEditedFileCount": len(self.session_edited_files),
            "ingesting": state.ingesting,
            "ingestProgress": {"done": state.progress[0], "total": state.progress[1]},
            "counts": None
            if counts is None
            else {
                "units": counts.units,
                "liveUnits": counts.live_units,
                "records": counts.records,
                "symbols": counts.symbols,
                "occurrences": counts.occurrences,
                "relations": counts.relations,
            },
            "lastRefresh": None
            if report is None
            else {
                "durationMs": round(report.duration_s * 1000, 1),
                "unitsRead": report.counters.units_read,
                "unitsUnchanged": report.counters.units_unchanged,
                "unitsDropped": report.counters.units_dropped,
                "recordsRead": report.counters.records_read,
                "recordsReused": report.counters.records_reused,
            },
            "unreadable": [
                {"kind": str(f.kind), "name": f.name, "message": f.message} for f in state.failures[:limit]
            ],
            "unreadableCount": len(state.failures),
            "databasePath": str(state.database_path),
            "sourcekitLsp": list(self.lsp),
            "warnings": [w.to_json() for w in self.warnings],
        }
        if self.overlay_files:
            answer["overlayFiles"] = list(self.overlay_files[:limit])
        if self.new_files:
            answer["newFiles"] = list(self.new_files[:limit])
        return answer


def lsp_child_json(child: LspChildStatus) -> LspChildJson:
    """One sourcekit-lsp child as `status` reports it."""
    return {
        "root": str(child.root),
        "state": str(child.state),
        "pid": child.pid,
        "ready": child.ready,
        "restarts": child.restarts,
        "crashes": child.crashes,
        "lastError": None if child.last_error is None else str(child.last_error),
        "lastErrorMessage": child.last_error_message,
        "indexing": [
            w.title + (f" ({w.percentage}%)" if w.percentage is not None else "") for w in child.indexing
        ],
        "retryAfterSeconds": None if child.retry_after is None else round(child.retry_after, 1),
    }


def unreadable_warnings(state: IndexState) -> list[AnswerWarning]:
    units = sum(1 for f in state.failures if f.kind is FailureKind.UNIT)
    records = len(state.failures) - units
    found: list[AnswerWarning] = []
    if units:
        found.append(
            AnswerWarning(
                WarningCode.INDEX_UNIT_UNREADABLE, f"{units} unit file(s) could not be read and were skipped."
            )
        )
    if records:
        found.append(
            AnswerWarning(
                WarningCode.INDEX_RECORD_UNREADABLE,
                f"{records} record file(s) could not be read and were skipped.",
            )
        )
    return found


def stale_files_now(db: Database) -> list[str]:
    return project_stale_files(db)


def status_answer(state: IndexState, stale: list[str], *, index_mtime_ns: int, **extra: Any) -> StatusAnswer:
    """`index_mtime_ns`: the newest write in the store (the index actor reads it, in a thread)."""
    return StatusAnswer(
        state=state,
        index_mtime_ns=index_mtime_ns,
        stale_files=tuple(stale),
        warnings=tuple(unreadable_warnings(state)),
        **extra,
    )


class StatusArgs(LocationArgs):
    tool = "status"
