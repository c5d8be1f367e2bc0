"""plan_rename's answer: the plan, its ranges and refusal, and how a page of it is shown.

A plan is computed once (plan.py) and shown a page at a time (see RenamePlan): its ranges,
its unproven sites and its text mentions each on their own cursor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import cast

from xcindex.tools.budget import fitting, item_cost, json_size
from xcindex.tools.limits import DEFAULT_MAX_RANGES as DEFAULT_MAX_RANGES
from xcindex.tools.rename.scan import Mention
from xcindex.tools.shapes import RefusalJson, RenamePlanJson, RenameRangeJson, RenameSummaryJson
from xcindex.vocabulary import RangeReason, RefusalReason, Tier, WarningCode

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
    """A plan, and which page of it an answer shows: the ranges from `offset` (at most
    `max_ranges`), then, in what room a response budget leaves after them, the unproven
    sites from `unproven_offset` and the text mentions from `text_mention_offset`, each
    list on its own cursor. Without a budget every list is shown whole from its offset."""

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
    not_visible_count: int = 0
    """Code occurrences in files that cannot see any renamed symbol: not listed."""
    offset: int = 0
    """The first range shown (paging through a plan larger than maxRanges)."""
    unproven_offset: int = 0
    text_mention_offset: int = 0
    unproven_limit: int | None = None
    """How many unproven sites this page shows (None: all from the offset)."""
    text_mention_limit: int | None = None

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

    def unproven_shown(self) -> tuple[Mention, ...]:
        return _page(self.unproven, self.unproven_offset, self.unproven_limit)

    def text_mentions_shown(self) -> tuple[Mention, ...]:
        return _page(self.text_mentions, self.text_mention_offset, self.text_mention_limit)

    @property
    def unproven_next_offset(self) -> int | None:
        return _next(self.unproven, self.unproven_offset, self.unproven_shown())

    @property
    def text_mention_next_offset(self) -> int | None:
        return _next(self.text_mentions, self.text_mention_offset, self.text_mentions_shown())

    def page(
        self, offset: int, max_ranges: int, unproven_offset: int, text_mention_offset: int
    ) -> RenamePlan:
        """The same plan, another page of it."""
        return replace(
            self,
            offset=offset,
            max_ranges=max_ranges,
            unproven_offset=unproven_offset,
            text_mention_offset=text_mention_offset,
            unproven_limit=None,
            text_mention_limit=None,
        )

    def fitted(self, budget: int | None) -> RenamePlan:
        """The page that fits a response budget with its text: ranges first (at least one
        while any remain), then unproven sites, then text mentions, in the room left; what
        does not fit waits for the next page (each list's next offset says where)."""
        if budget is None:
            return self
        bare = replace(self, ranges=(), unproven=(), text_mentions=())
        room = budget - 2 * json_size(bare._json()) - COMPACT_HEADROOM_CHARS
        page = self.shown()
        costs = _range_costs(page)
        count = fitting(costs, lambda cost: cost, max(room, 0))
        count = max(count, 1) if page else 0
        room -= sum(costs[:count])
        fitted = replace(self, max_ranges=count)
        if count < len(page):
            return replace(fitted, unproven_limit=0, text_mention_limit=0)
        sites = self.unproven[self.unproven_offset :]
        shown_sites = fitting(sites, lambda m: item_cost(m.to_json()), max(room, 0))
        room -= sum(item_cost(m.to_json()) for m in sites[:shown_sites])
        mentions = self.text_mentions[self.text_mention_offset :]
        shown_mentions = fitting(mentions, lambda m: item_cost(m.to_json()), max(room, 0))
        return replace(fitted, unproven_limit=shown_sites, text_mention_limit=shown_mentions)

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
            "unprovenSites": [m.to_json() for m in self.unproven_shown()],
            "unprovenSiteCount": len(self.unproven),
            "unprovenNextOffset": self.unproven_next_offset,
            "notVisibleSiteCount": self.not_visible_count,
            "textMentions": [m.to_json() for m in self.text_mentions_shown()],
            "textMentionCount": len(self.text_mentions),
            "textMentionNextOffset": self.text_mention_next_offset,
        }


def _range_costs(ranges: tuple[RenameRange, ...]) -> list[int]:
    """What each range costs in both renderings: its structured JSON, and its `line:column`
    in the compact text, which opens a line of its own for each new file and tier."""
    groups: set[tuple[str, Tier]] = set()
    costs: list[int] = []
    for r in ranges:
        cost = json_size(r.to_json()) + len(f" {r.line}:{r.column}[") + sum(len(x) + 1 for x in r.reasons)
        if (r.path, r.tier) not in groups:
            groups.add((r.path, r.tier))
            cost += len(r.path) + len(r.tier) + 4
        costs.append(cost)
    return costs


def _page(items: tuple[Mention, ...], offset: int, limit: int | None) -> tuple[Mention, ...]:
    return items[offset:] if limit is None else items[offset : offset + limit]


def _next(items: tuple[Mention, ...], offset: int, shown: tuple[Mention, ...]) -> int | None:
    end = offset + len(shown)
    return end if end < len(items) else None


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
