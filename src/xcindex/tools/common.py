"""What every tool answer carries besides its payload, and the helpers tools share.

An answer always says how far it can be trusted (`completeness`), which of the files it
names are stale (newer than their unit, or edited this session), and which non-fatal
warnings apply, so that an empty list is never ambiguous.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, role_names
from xcindex.tools.budget import VERDICT_LISTED
from xcindex.tools.shapes import OccurrenceJson, VerdictJson, WarningJson
from xcindex.vocabulary import Completeness, WarningCode


@dataclass(frozen=True)
class AnswerWarning:
    code: WarningCode
    message: str

    def to_json(self) -> WarningJson:
        return {"code": str(self.code), "message": self.message}


@dataclass(frozen=True)
class Freshness:
    """Verdict fields shared by every answer."""

    completeness: Completeness = Completeness.COMPLETE
    stale_files: tuple[str, ...] = ()
    session_edited_files: tuple[str, ...] = ()
    warnings: tuple[AnswerWarning, ...] = field(default=())
    overlay_files: tuple[str, ...] = ()
    """Named files answered from the freshness overlay (edited since the build, re-indexed)."""

    def to_json(self, budget: int | None = None) -> VerdictJson:
        """The verdict fields; under a response budget the file lists are capped (the
        project-wide stale list of an empty answer can be long) and `staleFileCount` says
        how many there are."""
        limit = None if budget is None else VERDICT_LISTED
        verdict: VerdictJson = {
            "completeness": str(self.completeness),
            "staleFiles": list(self.stale_files[:limit]),
            "staleFileCount": len(self.stale_files),
            "sessionEditedFiles": list(self.session_edited_files[:limit]),
            "warnings": [w.to_json() for w in self.warnings],
        }
        if self.overlay_files:
            verdict["overlayFiles"] = list(self.overlay_files[:limit])
        return verdict

    def while_indexing(self, done: int, total: int, live_files: int) -> Freshness:
        """This verdict for an answer read while the store's first ingestion still runs:
        `indexing` (even for an empty list, which proves nothing yet), with the progress."""
        if not total:
            progress = "reading its units"
        elif done < total:
            progress = f"{done} of {total} records ingested"
        else:  # every record is in; the ingestion is building its indexes and going live
            progress = f"{done} of {total} records ingested, finishing"
        return Freshness(
            completeness=Completeness.INDEXING,
            stale_files=self.stale_files,
            session_edited_files=self.session_edited_files,
            warnings=(
                *self.warnings,
                AnswerWarning(
                    WarningCode.INDEX_FIRST_INGESTION_RUNNING,
                    f"The first ingestion of this index store is still running ({progress}; "
                    f"{live_files} source files answerable so far): this answer covers only those "
                    "files and may miss results. Ask again later; status shows the progress.",
                ),
            ),
        )

    def notes(self, budget: int | None = None) -> list[str]:
        limit = None if budget is None else VERDICT_LISTED
        lines: list[str] = []
        if self.stale_files:
            lines.append(
                "Note: these files changed after the index was built; rebuild "
                "(swift build --build-tests) before trusting lines in them: "
                + _listed(self.stale_files, limit, "the status tool lists them all")
            )
        if self.session_edited_files:
            lines.append(
                "Note: these files were edited this session, after the index was built: "
                + _listed(self.session_edited_files, limit, "the status tool lists them all")
            )
        if self.overlay_files:
            lines.append(
                "Note: these files were edited since the last build and re-indexed on their own "
                "(fresh): " + _listed(self.overlay_files, limit, "the status tool lists them all")
            )
        lines.extend(f"Warning [{w.code}]: {w.message}" for w in self.warnings)
        return lines


def _listed(paths: tuple[str, ...], limit: int | None, rest: str) -> str:
    shown = ", ".join(paths[:limit])
    if limit is not None and len(paths) > limit:
        shown += f" … and {len(paths) - limit} more ({rest})"
    return shown


def file_is_stale(db: Database, path: str, unit_mtime_ns: int) -> bool:
    """A source file is stale when it was modified after its unit was written, unless its
    content is the one that unit indexed again (a `git checkout`, an edit undone)."""
    try:
        now = os.stat(path)
    except OSError:
        return True
    return now.st_mtime_ns > unit_mtime_ns and not db.same_as_indexed(path, unit_mtime_ns, now)


def stale_among(db: Database, occurrences: Iterable[OccurrenceRow]) -> list[str]:
    seen: dict[str, int] = {}
    for occ in occurrences:
        seen[occ.path] = max(seen.get(occ.path, 0), occ.unit_mtime_ns)
    return sorted(path for path, mtime in seen.items() if file_is_stale(db, path, mtime))


def project_stale_files(db: Database) -> list[str]:
    return [path for path, mtime, *_ in db.live_files() if file_is_stale(db, path, mtime)]


def freshness_for(
    db: Database, named: Iterable[OccurrenceRow], *, empty: bool, warnings: Iterable[AnswerWarning] = ()
) -> Freshness:
    """Stale files among those an answer names; an empty answer is judged project-wide."""
    stale = stale_among(db, named)
    if empty and not stale:
        stale = project_stale_files(db)
    return Freshness(
        completeness=Completeness.STALE if stale else Completeness.COMPLETE,
        stale_files=tuple(stale),
        warnings=tuple(warnings),
    )


_DEFINITION, _DECLARATION = int(Role.DEFINITION), int(Role.DECLARATION)  # ints: IntFlag ops cost in loops


def canonical_occurrence(occurrences: Iterable[OccurrenceRow]) -> OccurrenceRow | None:
    """The definition (else the declaration) with the smallest (path, line, column)."""
    best: OccurrenceRow | None = None
    best_rank = 3
    for occ in occurrences:
        rank = 0 if occ.roles & _DEFINITION else 1 if occ.roles & _DECLARATION else 3
        if rank == 3:
            continue
        if best is None or (rank, occ.path, occ.line, occ.column) < (
            best_rank,
            best.path,
            best.line,
            best.column,
        ):
            best, best_rank = occ, rank
    return best


def occurrence_json(symbol: SymbolRow, occ: OccurrenceRow) -> OccurrenceJson:
    return {
        "usr": symbol.usr,
        "symbolName": symbol.name,
        "path": occ.path,
        "line": occ.line,
        "column": occ.column,
        "roles": role_names(occ.roles),
    }


def split_qualified(name: str) -> tuple[str | None, str]:
    """`UserService.fetchUser(id:)` → ("UserService", "fetchUser(id:)"); `A.B.c()` → ("B", "c()").

    Only a dot outside the argument list that follows an identifier character splits, so
    operators such as `..<` stay whole and `Vector.+(_:_:)` names the `+` of `Vector`.
    """
    depth = 0
    split_at = -1
    for index, char in enumerate(name):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif (
            char == "."
            and depth == 0
            and 0 < index < len(name) - 1
            and _is_identifier_char(name[index - 1])
            and (name[index + 1].isalpha() or name[index + 1] in _MEMBER_START)
        ):
            split_at = index
            if name[index + 1] in _OPERATOR_CHARS:
                break  # an operator member: the rest is its name, dots included
    if split_at < 0:
        return None, name
    return name[:split_at].rsplit(".", 1)[-1], name[split_at + 1 :]


_OPERATOR_CHARS = frozenset("+-*/=<>!&|^~%?.")
_MEMBER_START = _OPERATOR_CHARS | {"_", "`"}


def _is_identifier_char(char: str) -> bool:
    return char.isalnum() or char == "_"
