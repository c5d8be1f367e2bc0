"""find_symbol: candidate symbols for a name, each with its USR and definition site.

The name is resolved by `tools/resolve.py` (the rules are in docs/tools.md, "Resolving
names"); this module shapes the answer: ranked candidates, the one a tool that needs one
symbol would take (`resolvedUsr`), and pages (`offset`, `nextOffset`) under the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, StrictInt

from xcindex.indexstore.database import Database
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, freshness_for
from xcindex.tools.limits import DEFAULT_MAX_CANDIDATES
from xcindex.tools.resolve import Candidate, Resolution, resolve
from xcindex.tools.shapes import FindSymbolJson
from xcindex.vocabulary import MatchedBy

SymbolMatch = Candidate
"""A candidate of find_symbol (the embedding API's name for it)."""


MAX_CANDIDATES = 500


@dataclass(frozen=True)
class FindSymbolAnswer:
    query: str
    matches: tuple[Candidate, ...]
    """Every candidate, ranked; a page shows `matches[offset:]` (as many as fit)."""
    matched_by: MatchedBy
    freshness: Freshness
    offset: int = 0
    max_results: int | None = None
    """Candidates per page (None: as many as fit the budget)."""
    resolved: Candidate | None = None
    """The one symbol a tool that needs one takes (None when the name is ambiguous)."""
    resolved_note: str | None = None

    def named_paths(self) -> set[str]:
        return {m.definition.path for m in self.matches if m.definition is not None}

    def shown(self, budget: int | None = None) -> tuple[Candidate, ...]:
        """The candidates of this page that fit a response budget (all of them without one)."""
        end = None if self.max_results is None else self.offset + self.max_results
        page = self.matches[self.offset : end]
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return page[: fitting(page, lambda m: item_cost(m.to_json()), lists_budget)]

    def next_offset(self, budget: int | None = None) -> int | None:
        end = self.offset + len(self.shown(budget))
        return end if end < len(self.matches) else None

    def to_json(self, budget: int | None = None) -> FindSymbolJson:
        shown = self.shown(budget)
        next_offset = self.next_offset(budget)
        answer: FindSymbolJson = {
            **self.freshness.to_json(budget),  # type: ignore[typeddict-item]  # optional keys set below
            "results": [m.to_json() for m in shown],
            "matchedBy": self.matched_by,
            "resolvedUsr": self.resolved.symbol.usr if self.resolved else None,
            "totalCount": len(self.matches),
            "truncated": next_offset is not None,
        }
        if self.resolved_note:
            answer["resolvedNote"] = self.resolved_note
        if next_offset is not None:
            answer["nextOffset"] = next_offset
        return answer


def answer_for(
    resolution: Resolution, db: Database, query: str, offset: int = 0, max_results: int | None = None
) -> FindSymbolAnswer:
    matches = resolution.candidates
    defined = [m.definition for m in matches[offset:] if m.definition is not None]
    freshness = freshness_for(db, defined, empty=not matches)
    resolved, note = resolution.single
    return FindSymbolAnswer(
        query, matches, resolution.matched_by, freshness, offset, max_results, resolved, note
    )


def find_symbol(
    db: Database, symbol_name: str, *, offset: int = 0, max_results: int | None = None
) -> FindSymbolAnswer:
    return answer_for(resolve(db, symbol_name), db, symbol_name, offset, max_results)


class FindSymbolArgs(LocationArgs):
    tool = "find_symbol"

    symbol_name: Text = Field(
        description="fetchUser(id:), a bare fetchUser, UserService.fetchUser(id:), Module.Type, @Wrapper."
    )
    max_results: StrictInt = Field(
        DEFAULT_MAX_CANDIDATES, ge=1, le=MAX_CANDIDATES, description="Candidates per page, best first."
    )
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")


def query_find_symbol(db: Database, args: FindSymbolArgs) -> FindSymbolAnswer:
    return find_symbol(db, args.symbol_name, offset=args.offset, max_results=args.max_results)
