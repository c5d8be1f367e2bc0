"""call_hierarchy: who calls a function (incoming), or what it calls (outgoing), a few levels deep.

Incoming counts dynamic dispatch: a dynamic call of a base class method or a protocol
requirement is listed for every override and witness it can reach (its sites say
`dynamic` and name the base they resolve to); `super` calls are listed and marked. Each
level groups the sites by calling function. A caller already on the path (recursion) is
listed once more with `cycle: true` and not expanded again. Outgoing lists the explicit
calls in the body as the compiler resolved them; calls of symbols the index has no
definition for (the standard library, SDKs) are counted, not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, StrictInt, model_validator

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import written_occurrences
from xcindex.indexstore.model import kind_name
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.call_graph import (
    CallSite,
    definition_of,
    incoming_calls,
    is_listed,
    outgoing_calls,
    symbol_for,
)
from xcindex.tools.common import Freshness, canonical_occurrence, freshness_for
from xcindex.tools.shapes import CallHierarchyJson, CallJson, CallSiteJson, SymbolSiteJson

MAX_DEPTH = 5
MAX_CALLS = 500
"""Caller/callee groups listed at most (every level together); `truncated` says when cut."""


@dataclass(frozen=True)
class SymbolSite:
    symbol: SymbolRow
    definition: OccurrenceRow | None

    def to_json(self) -> SymbolSiteJson:
        d = self.definition
        return {
            "usr": self.symbol.usr,
            "name": self.symbol.name,
            "kind": kind_name(self.symbol.kind),
            "path": d.path if d else None,
            "line": d.line if d else None,
            "column": d.column if d else None,
        }


@dataclass(frozen=True)
class CallGroup:
    """The calls from one caller to one callee at one level of the hierarchy."""

    level: int
    caller: SymbolSite
    callee: SymbolSite
    sites: tuple[tuple[CallSite, str], ...]  # (site, usr it resolves to)
    cycle: bool

    def to_json(self) -> CallJson:
        return {
            "level": self.level,
            "caller": self.caller.to_json(),
            "callee": self.callee.to_json(),
            "sites": [_site_json(site, usr) for site, usr in self.sites],
            "cycle": self.cycle,
        }


def _site_json(site: CallSite, resolves_to: str) -> CallSiteJson:
    occ = site.occurrence
    return {
        "path": occ.path,
        "line": occ.line,
        "column": occ.column,
        "dispatch": site.dispatch,
        "resolvesTo": resolves_to,
    }


@dataclass(frozen=True)
class CallHierarchyAnswer:
    query: str
    root: SymbolSite | None
    direction: str
    depth: int
    groups: tuple[CallGroup, ...]
    external_calls: int
    truncated: bool
    freshness: Freshness

    def named_paths(self) -> set[str]:
        return {site.occurrence.path for g in self.groups for site, _ in g.sites}

    def shown(self, budget: int | None = None) -> tuple[CallGroup, ...]:
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return self.groups[: fitting(self.groups, lambda g: item_cost(g.to_json()), lists_budget)]

    def to_json(self, budget: int | None = None) -> CallHierarchyJson:
        shown = self.shown(budget)
        return {
            "root": self.root.to_json() if self.root else None,
            "direction": self.direction,
            "depth": self.depth,
            "calls": [g.to_json() for g in shown],
            "callCount": len(self.groups),
            "externalCallCount": self.external_calls,
            "truncated": self.truncated or len(shown) < len(self.groups),
            **self.freshness.to_json(budget),
        }


class _Walk:
    def __init__(self, db: Database, incoming: bool, depth: int) -> None:
        self.db = db
        self.incoming = incoming
        self.depth = depth
        self.groups: list[CallGroup] = []
        self.external = 0
        self.truncated = False
        self.expanded: set[int] = set()
        self._sites: dict[int, SymbolSite] = {}

    def prefetch(self, symbol_ids: set[int]) -> None:
        """Symbols and definitions of a level's callers or callees, in two queries."""
        wanted = symbol_ids - set(self._sites)
        symbols = self.db.symbols_by_ids(wanted)
        written = written_occurrences(self.db, wanted)
        for symbol_id, symbol in symbols.items():
            self._sites[symbol_id] = SymbolSite(symbol, canonical_occurrence(written.get(symbol_id, [])))

    def site(self, symbol_id: int) -> SymbolSite | None:
        if symbol_id not in self._sites:
            symbol = self.db.symbols_by_ids([symbol_id]).get(symbol_id)
            if symbol is None:
                return None
            self._sites[symbol_id] = SymbolSite(symbol, definition_of(self.db, symbol_id))
        return self._sites[symbol_id]

    def visit(self, node: SymbolSite, level: int, path: tuple[int, ...]) -> None:
        self.expanded.add(node.symbol.id)
        calls = (
            incoming_calls(self.db, node.symbol) if self.incoming else outgoing_calls(self.db, node.symbol)
        )
        by_other: dict[int, list[CallSite]] = {}
        for call in calls:
            by_other.setdefault(call.caller_id if self.incoming else call.callee_id, []).append(call)
        ordered = sorted(by_other.items(), key=lambda item: _order(item[1]))[
            : MAX_CALLS - len(self.groups) + 1
        ]
        self.prefetch({other for other, _ in ordered} | {s.callee_id for _, sites in ordered for s in sites})
        for other_id, sites in ordered:
            other = self.site(other_id)
            if other is None or not is_listed(other.symbol):
                continue
            if not self.incoming and other.definition is None:
                self.external += len(sites)
                continue
            if len(self.groups) >= MAX_CALLS:
                self.truncated = True
                return
            cycle = other_id in path
            resolved = [(s, self._usr(s.callee_id)) for s in sites]
            caller, callee = (other, node) if self.incoming else (node, other)
            self.groups.append(CallGroup(level, caller, callee, tuple(resolved), cycle))
            if not cycle and level < self.depth and other_id not in self.expanded:
                self.visit(other, level + 1, (*path, other_id))

    def _usr(self, symbol_id: int) -> str:
        site = self.site(symbol_id)
        return site.symbol.usr if site else ""


def _order(sites: list[CallSite]) -> tuple[str, int, int]:
    first = min(sites, key=lambda s: (s.occurrence.path, s.occurrence.line, s.occurrence.column))
    return (first.occurrence.path, first.occurrence.line, first.occurrence.column)


def call_hierarchy(
    db: Database,
    *,
    usr: str | None = None,
    symbol_name: str | None = None,
    direction: str = "incoming",
    depth: int = 1,
) -> CallHierarchyAnswer:
    symbol = symbol_for(db, usr, symbol_name)
    query = usr or symbol_name or ""
    if symbol is None:
        freshness = freshness_for(db, [], empty=True)
        return CallHierarchyAnswer(query, None, direction, depth, (), 0, False, freshness)
    walk = _Walk(db, direction == "incoming", depth)
    root = SymbolSite(symbol, definition_of(db, symbol.id))
    walk.visit(root, 1, (symbol.id,))
    named = [site.occurrence for g in walk.groups for site, _ in g.sites]
    named += [root.definition] if root.definition else []
    freshness = freshness_for(db, named, empty=not walk.groups)
    return CallHierarchyAnswer(
        query, root, direction, depth, tuple(walk.groups), walk.external, walk.truncated, freshness
    )


class CallHierarchyArgs(LocationArgs):
    tool = "call_hierarchy"

    usr: Text | None = Field(None, description="The function's usr, from find_symbol (preferred).")
    symbol_name: Text | None = Field(
        None,
        description="A name find_symbol resolves to exactly one symbol, e.g. UserService.fetchUser(id:).",
    )
    direction: Literal["incoming", "outgoing"] = Field(
        "incoming", description="incoming: who calls it; outgoing: what it calls."
    )
    depth: StrictInt = Field(1, ge=1, le=MAX_DEPTH, description="How many levels of calls to follow.")

    @model_validator(mode="after")
    def _one_subject(self) -> CallHierarchyArgs:
        if (self.symbol_name is None) == (self.usr is None):
            raise ValueError("give exactly one of 'symbolName' or 'usr'")
        return self


def query_call_hierarchy(db: Database, args: CallHierarchyArgs) -> CallHierarchyAnswer:
    return call_hierarchy(
        db, usr=args.usr, symbol_name=args.symbol_name, direction=args.direction, depth=args.depth
    )
