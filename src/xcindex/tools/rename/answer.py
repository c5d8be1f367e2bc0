"""plan_rename's answer: the plan, its ranges and refusal, and how a page of it is shown.

A plan is computed once (plan.py) and shown a page at a time: `offset` picks the first
range, `maxRanges` and the response budget how many follow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import cast

from xcindex.tools.budget import fitting, json_size
from xcindex.tools.rename.scan import Mention, mentions_json
from xcindex.tools.shapes import RefusalJson, RenamePlanJson, RenameRangeJson, RenameSummaryJson
from xcindex.vocabulary import RangeReason, RefusalReason, Tier, WarningCode

DEFAULT_MAX_RANGES = 500
MAX_MENTIONS = 100
"""Safety-net sites listed per list in a plan's JSON (the counts are always whole)."""
MAX_RANGES = 5000

_SUMMARY_KEYS = {
    Tier.GREEN_VERIFIED: "green_verified",
    Tier.GREEN_INDEXSTORE: "green_indexstore",
    Tier.YELLOW_DISAGREEMENT: "yellow_disagreement",
    Tier.YELLOW_LSP_ONLY: "yellow_lsp_only",
    Tier.RED_STALE: "red_stale",
}


@dataclass(frozen=True)
class Refusal:
    reason: RefusalReason
    message: str
    remediation: str

    def to_json(self) -> RefusalJson:
        return {"reason": str(self.reason), "message": self.message, "remediation": self.remediation}


@dataclass(frozen=True)
class RenameRange:
    path: str
    line: int
    column: int
    end_column: int
    tier: Tier
    reasons: tuple[RangeReason, ...]
    module: str | None
    source: str  # "indexstore" | "sourcekit-lsp"

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)

    def to_json(self) -> RenameRangeJson:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "endColumn": self.end_column,
            "tier": str(self.tier),
            "reasons": [str(r) for r in self.reasons],
            "module": self.module,
            "source": self.source,
        }


COMPACT_HEADROOM_CHARS = 6_000
"""What a compact plan's text needs besides its `line:column` lists (headers, warnings, counts)."""


@dataclass(frozen=True)
class RenamePlan:
    usr: str
    old_name: str | None
    new_name: str
    generated_at: str
    last_built: str | None
    files_edited_this_session: int
    ranges: tuple[RenameRange, ...] = ()
    refusal: Refusal | None = None
    warnings: tuple[tuple[WarningCode, str], ...] = ()
    max_ranges: int = DEFAULT_MAX_RANGES
    definitions: tuple[tuple[str, str, int, int], ...] = field(default=())
    """(usr, path, line, utf-8 column) of each renamed symbol's definition: where to ask LSP."""
    unproven: tuple[Mention, ...] = ()
    """Code occurrences of the old name that no range covers and the index does not explain."""
    text_mentions: tuple[Mention, ...] = ()
    """Occurrences in comments, strings, DocC links and `@available(renamed:)`: optional edits."""
    offset: int = 0
    """The first range shown (paging through a plan larger than maxRanges)."""

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(_SUMMARY_KEYS.values(), 0)
        for rename_range in self.ranges:
            counts[_SUMMARY_KEYS[rename_range.tier]] += 1
        return counts

    def shown(self) -> tuple[RenameRange, ...]:
        return self.ranges[self.offset : self.offset + self.max_ranges]

    @property
    def next_offset(self) -> int | None:
        end = self.offset + self.max_ranges
        return end if end < len(self.ranges) else None

    def fitted(self, budget: int | None) -> RenamePlan:
        """The page of the plan that fits a response budget together with its text: fewer
        ranges (`nextOffset` says where the rest starts) when the whole page would not."""
        if budget is None:
            return self
        page = self.shown()
        without_ranges = json_size(replace(self, ranges=())._json())
        if 2 * (without_ranges + sum(json_size(r.to_json()) + 1 for r in page)) <= budget:
            return self
        # The structured ranges, and one short `line:column` each in the compact text.
        allowed = budget - 2 * without_ranges - COMPACT_HEADROOM_CHARS
        count = fitting(page, lambda r: json_size(r.to_json()) + 16, max(allowed, 0))
        return replace(self, max_ranges=max(count, 1))

    def to_json(self, budget: int | None = None) -> RenamePlanJson:
        return self.fitted(budget)._json()

    def _json(self) -> RenamePlanJson:
        shown = self.shown()
        return {
            "usr": self.usr,
            "oldName": self.old_name,
            "newName": self.new_name,
            "generatedAt": self.generated_at,
            "indexFreshness": {
                "lastBuilt": self.last_built,
                "filesEditedThisSession": self.files_edited_this_session,
            },
            "ranges": [r.to_json() for r in shown],
            "summary": cast(RenameSummaryJson, self.summary()),
            "refusal": self.refusal.to_json() if self.refusal else None,
            "warnings": [{"code": str(code), "message": message} for code, message in self.warnings],
            "truncated": len(self.ranges) > len(shown),
            "nextOffset": self.next_offset,
            "unprovenSites": mentions_json(self.unproven, MAX_MENTIONS),
            "unprovenSiteCount": len(self.unproven),
            "textMentions": mentions_json(self.text_mentions, MAX_MENTIONS),
            "textMentionCount": len(self.text_mentions),
        }


def now_iso() -> str:
    return datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def refused(usr: str, new_name: str, refusal: Refusal, max_ranges: int = DEFAULT_MAX_RANGES) -> RenamePlan:
    """A plan that is only its refusal (no index was read)."""
    return RenamePlan(
        usr=usr,
        old_name=None,
        new_name=new_name,
        generated_at=now_iso(),
        last_built=None,
        files_edited_this_session=0,
        refusal=refusal,
        max_ranges=max_ranges,
    )


def with_warnings(plan: RenamePlan, warnings: Iterable[tuple[WarningCode, str]]) -> RenamePlan:
    return replace(plan, warnings=plan.warnings + tuple(warnings))
