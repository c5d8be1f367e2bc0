"""call_hierarchy: who calls a function (incoming), or what it calls (outgoing), a few levels deep.

Incoming counts dispatch: a dispatch point (a call of a protocol requirement, static ones
through `T.`/`Self.` included, or a dynamic call of a class's method) is listed for every
override and witness it can run, whose type its receiver can be (its sites say `dynamic`
and name the base they resolve to); `super` calls are listed and marked; a call of a
protocol extension's method is static. Each level groups the sites by calling function;
each function is expanded once, at the shallowest level it is met at (breadth first). A
caller already on the path (recursion) is listed once more with `cycle: true` and not
expanded again. Outgoing lists the explicit calls in the body as the compiler resolved
them, and for a dispatch point also every override and witness it can run (`viaDispatch`,
with the same sites); calls of symbols the index has no definition for (the standard
library, SDKs) are counted, not listed.

Level-1 groups are paged (`offset`, `nextOffset`): a hub function's thousands of callers
are counted in full (`callCount`) and only the page shown is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, StrictInt, model_validator

from xcindex.indexstore.database import Database
from xcindex.indexstore.model import is_generated_name
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, freshness_for
from xcindex.tools.graph.call_graph import (
    CallPage,
    CallSite,
    SymbolSite,
    incoming_calls,
    outgoing_calls,
    symbol_for,
    symbol_sites,
)
from xcindex.tools.graph.dispatch import Dispatch
from xcindex.tools.shapes import CallHierarchyJson, CallJson, CallSiteJson

MAX_DEPTH = 5
MAX_CALLS = 500
PAGE_GROUPS = 100
"""Level-1 groups an answer holds (each with the deeper levels under it, while MAX_CALLS
lasts); `nextOffset` gives the rest. What an agent's context shows is fewer still."""
"""Caller/callee groups listed at most (every level together); `truncated` says when cut."""


@dataclass(frozen=True)
class CallGroup:
    """The calls from one caller to one callee at one level of the hierarchy."""

    level: int
    caller: SymbolSite
    callee: SymbolSite
    sites: tuple[tuple[CallSite, str], ...]  # (site, usr it resolves to)
    cycle: bool
    via_dispatch: bool

    def to_json(self) -> CallJson:
        return {
            "level": self.level,
            "caller": self.caller.to_json(),
            "callee": self.callee.to_json(),
            "sites": [_site_json(site, usr) for site, usr in self.sites],
            "viaDispatch": self.via_dispatch,
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
    """A page of the hierarchy: up to PAGE_GROUPS level-1 groups from `offset` on, each
    followed by the deeper levels under it, at most MAX_CALLS groups in all. `call_count`
    counts every level-1 group, listed or not."""

    query: str
    root: SymbolSite | None
    direction: str
    depth: int
    groups: tuple[CallGroup, ...]
    call_count: int
    external_calls: int
    truncated: bool
    freshness: Freshness
    offset: int = 0

    def named_paths(self) -> set[str]:
        return {site.occurrence.path for g in self.groups for site, _ in g.sites}

    def shown(self, budget: int | None = None) -> tuple[CallGroup, ...]:
        """The groups that fit a response budget, and always the first one: a page that
        showed nothing would say to ask for the same page again."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        fit = fitting(self.groups, lambda g: item_cost(g.to_json()), lists_budget)
        return self.groups[: max(fit, 1)]

    def next_offset(self, budget: int | None = None) -> int | None:
        """Where the next page of level-1 groups starts, while some remain after the ones
        shown (a level-1 group whose deeper levels were cut counts as shown)."""
        end = self.offset + sum(1 for g in self.shown(budget) if g.level == 1)
        return end if end < self.call_count else None

    def to_json(self, budget: int | None = None) -> CallHierarchyJson:
        shown = self.shown(budget)
        next_offset = self.next_offset(budget)
        answer: CallHierarchyJson = {
            "root": self.root.to_json() if self.root else None,
            "direction": self.direction,
            "depth": self.depth,
            "calls": [g.to_json() for g in shown],
            "callCount": self.call_count,
            "externalCallCount": self.external_calls,
            "truncated": self.truncated or len(shown) < len(self.groups) or next_offset is not None,
            **self.freshness.to_json(budget),  # type: ignore[typeddict-item]  # nextOffset set below
        }
        if next_offset is not None:
            answer["nextOffset"] = next_offset
        return answer


class _Walk:
    """Breadth first: every node is expanded at the shallowest level it is met at, so no edge
    within the depth is lost to a node first met deeper down (a depth-first walk expanded
    such a node with less depth left, and never again). The groups are then listed in tree
    order: each group followed by the levels under it, when it is where its node was
    expanded."""

    def __init__(self, db: Database, incoming: bool, depth: int) -> None:
        self.db = db
        self.incoming = incoming
        self.depth = depth
        self.count = 0
        self.external = 0
        self.truncated = False
        self._sites: dict[int, SymbolSite] = {}
        self._dispatch = Dispatch(db)

    def prefetch(self, symbol_ids: set[int]) -> None:
        """Symbols, definitions and containers of a level's callers or callees, batched."""
        self._sites.update(symbol_sites(self.db, symbol_ids - set(self._sites)))

    def run(self, root: SymbolSite, offset: int) -> tuple[list[CallGroup], CallPage]:
        calls = incoming_calls if self.incoming else outgoing_calls
        under: dict[int, list[CallGroup]] = {}
        expands: dict[int, int] = {}  # id(group) → the node expanded under it
        expanded = {root.symbol.id}
        frontier: list[tuple[SymbolSite, tuple[int, ...]]] = [(root, (root.symbol.id,))]
        first: CallPage | None = None
        for level in range(1, self.depth + 1):
            following: list[tuple[SymbolSite, tuple[int, ...]]] = []
            for node, path in frontier:
                room = MAX_CALLS - self.count
                if room <= 0:
                    self.truncated = True
                    break
                page = calls(
                    self.db,
                    node.symbol,
                    offset=offset if level == 1 else 0,
                    limit=PAGE_GROUPS if level == 1 else room + 1,
                    dispatch=self._dispatch,
                )
                first = first or page
                self.external += page.external_calls
                self.prefetch(
                    {g.other_id for g in page.groups} | {s.callee_id for g in page.groups for s in g.sites}
                )
                listed = under.setdefault(node.symbol.id, [])
                for group in page.groups:
                    other = self._sites.get(group.other_id)
                    if other is None or is_generated_name(other.symbol.name):
                        continue
                    if self.count >= MAX_CALLS:
                        self.truncated = True
                        break
                    cycle = group.other_id in path
                    resolved = tuple((s, self._usr(s.callee_id)) for s in group.sites)
                    caller, callee = (other, node) if self.incoming else (node, other)
                    made = CallGroup(level, caller, callee, resolved, cycle, group.via_dispatch)
                    listed.append(made)
                    self.count += 1
                    if not cycle and level < self.depth and group.other_id not in expanded:
                        expanded.add(group.other_id)
                        expands[id(made)] = group.other_id
                        following.append((other, (*path, group.other_id)))
            frontier = following
        ordered: list[CallGroup] = []

        def emit(node_id: int) -> None:
            for group in under.get(node_id, []):
                ordered.append(group)
                if id(group) in expands:
                    emit(expands[id(group)])

        emit(root.symbol.id)
        assert first is not None
        return ordered, first

    def _usr(self, symbol_id: int) -> str:
        site = self._sites.get(symbol_id)
        return site.symbol.usr if site else ""


def call_hierarchy(
    db: Database,
    *,
    usr: str | None = None,
    symbol_name: str | None = None,
    direction: str = "incoming",
    depth: int = 1,
    offset: int = 0,
) -> CallHierarchyAnswer:
    symbol = symbol_for(db, usr, symbol_name)
    query = usr or symbol_name or ""
    if symbol is None:
        freshness = freshness_for(db, [], empty=True)
        return CallHierarchyAnswer(query, None, direction, depth, (), 0, 0, False, freshness, offset)
    walk = _Walk(db, direction == "incoming", depth)
    root = symbol_sites(db, [symbol.id])[symbol.id]
    groups, first = walk.run(root, offset)
    named = [site.occurrence for g in groups for site, _ in g.sites]
    named += [root.definition] if root.definition else []
    freshness = freshness_for(db, named, empty=not groups)
    return CallHierarchyAnswer(
        query,
        root,
        direction,
        depth,
        tuple(groups),
        first.total,
        walk.external,
        walk.truncated,
        freshness,
        offset,
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
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")

    @model_validator(mode="after")
    def _one_subject(self) -> CallHierarchyArgs:
        if (self.symbol_name is None) == (self.usr is None):
            raise ValueError("give exactly one of 'symbolName' or 'usr'")
        return self


def query_call_hierarchy(db: Database, args: CallHierarchyArgs) -> CallHierarchyAnswer:
    return call_hierarchy(
        db,
        usr=args.usr,
        symbol_name=args.symbol_name,
        direction=args.direction,
        depth=args.depth,
        offset=args.offset,
    )
