"""What can run changed code: the one reach change_impact and blast_radius share, each
reached symbol labelled with how (docs/tools.md, "Reach").

From the changed symbols, to a fixed point, a symbol is reached
- by a *direct call*: its code references or calls a reached symbol; an accessor reaches its
  property; a type its subtypes;
- by *dispatch*: it calls, at a dispatch point that can run it, something a reached symbol
  overrides or witnesses (tools/graph/dispatch.py); at a generic dispatch point (no
  receiver named: `T.scale(x)`), it holds a value of the reached symbol's type, or calls
  generic code that passes the type on to such a point; at a point whose receiver is named
  (an existential `any LogHandler`, a class), the point runs the symbol only on a value of
  its type, so what runs it is code that both leads to the point and to where such a value
  is held (code mentioning the type or a subtype, or a member of the type holding it, which
  stores it for its other members), through direct calls: from that code on it is reached;
  the code between it and the point can run the symbol too, and is reached *held
  elsewhere* (`Reach.held_elsewhere`): not followed further, and not a covering test (a
  test logging through `Logger` runs no `InMemoryLogHandler` it never made);
- by *library dispatch*: a reached symbol witnesses a requirement declared outside the index
  and library code can be handed its type here (tools/graph/library.py);
- by an *executable run by name*: the change reaches an executable and its code names it
  (tools/graph/executables.py).

A symbol's label is the surest way it is reached (`Via`, in that order): the reach is a
search that expands the surest labels first, so a test both called directly and reached
through dispatch says `directCall`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import (
    calls_of,
    generic_declarations,
    members_of,
    related_through,
    users_by_symbol,
    users_of,
    written_occurrences,
)
from xcindex.indexstore.model import Role
from xcindex.project.package import PackageDescription
from xcindex.tools.graph.call_graph import overridden_closures
from xcindex.tools.graph.dispatch import PROTOCOL_KIND, TYPE_KINDS, Dispatch, dispatches
from xcindex.tools.graph.executables import Executables
from xcindex.tools.graph.library import LibraryWitness, demangled, holding, library_callers, subtypes
from xcindex.tools.graph.selection import Via, runs_for_each_instance

MAX_GENERIC_HOPS = 8
"""Levels of generic code a type binding is looked for through, at most."""
_GENERIC_SIGNATURE = re.compile(r"<(?:A\b| where )")
"""A generic signature in a demangled name: `f<A where A: P>(…)`, `T< where A: P>.f()`."""


@dataclass(frozen=True)
class Reach:
    via: dict[int, Via]
    """Every reached symbol (the changed ones included) and the surest way it is reached."""
    executables: tuple[str, ...]
    """The executables the change reaches (target names), which code running them by name covers."""
    held_elsewhere: frozenset[int] = frozenset()
    """Reached symbols that run the change only on a value their callers hold: code between a
    dispatch point and where a value of the implementation's type is held. In `via`, not
    followed further, and no test among them is covering."""

    def covering(self) -> dict[int, Via]:
        """The reached symbols whose tests cover the change."""
        return {sid: how for sid, how in self.via.items() if sid not in self.held_elsewhere}


def reach(
    db: Database,
    seeds: Iterable[int],
    *,
    package: PackageDescription | None = None,
    changed_paths: Iterable[str] = (),
) -> Reach:
    """Everything that can run (or use) the seeds, or the changed files' top-level code."""
    graph = _Graph(db, package)
    label: dict[int, Via] = {}
    queues: dict[Via, set[int]] = {via: set() for via in Via}
    held_elsewhere: set[int] = set()

    def offer(symbols: Iterable[int], via: Via) -> None:
        for symbol in symbols:
            if symbol in held_elsewhere or symbol not in label or via < label[symbol]:
                held_elsewhere.discard(symbol)
                label[symbol] = via
                queues[via].add(symbol)

    offer(seeds, Via.DIRECT_CALL)
    changed_executables = graph.executables.in_paths(changed_paths)
    graph.reached_executables |= changed_executables
    offer(graph.executables.runners(changed_executables), Via.EXECUTABLE_BY_NAME)
    while True:
        level = next((via for via in Via if queues[via]), None)
        if level is None:
            break
        frontier = {symbol for symbol in queues[level] if label[symbol] == level}
        queues[level] = set()
        for symbols, how in graph.expand(frontier):
            offer(symbols, max(level, how))
        for symbol in graph.held_elsewhere - label.keys():
            label[symbol] = max(level, Via.DISPATCH)
            held_elsewhere.add(symbol)
        graph.held_elsewhere.clear()
    return Reach(label, tuple(sorted(graph.reached_executables)), frozenset(held_elsewhere))


class _Graph:
    """The edges out of a frontier, by kind; what they read is kept for the question."""

    def __init__(self, db: Database, package: PackageDescription | None) -> None:
        self.db = db
        self.dispatch = Dispatch(db)
        self.executables = Executables(db, package)
        self.reached_executables: set[str] = set()
        self.held_elsewhere: set[int] = set()
        """What the last expansion found between a dispatch point and the code holding a value."""
        self._held_reach: dict[int, set[int]] = {}
        self._up: dict[int, frozenset[int]] = {}
        """symbol → what uses it (and an accessor's property), read once for the question: the
        upward closures of a hub's many implementations share most of their edges."""
        self._leading: dict[frozenset[int], set[int]] = {}

    def expand(self, frontier: set[int]) -> Iterator[tuple[set[int], Via]]:
        yield users_of(self.db, frontier), Via.DIRECT_CALL
        yield (
            {p for found in related_through(self.db, frontier, Role.REL_ACCESSOROF).values() for p in found},
            (Via.DIRECT_CALL),
        )
        kinds = self.dispatch.kinds(frontier)
        types = {sid for sid, kind in kinds.items() if kind in TYPE_KINDS}
        if types:
            yield subtypes(self.db, types), Via.DIRECT_CALL
        bases = overridden_closures(self.db, frontier)
        every_base = {base for found in bases.values() for base in found}
        # A base declared outside the index (`Equatable.==`) is the library's: what calls it
        # is narrowed by type (library dispatch), never every generic `==` of the project.
        defined = set(written_occurrences(self.db, every_base)) if every_base else set()
        yield self._dispatch_callers({s: found & defined for s, found in bases.items()}), Via.DISPATCH
        yield self._library_callers({s: found - defined for s, found in bases.items()}), Via.LIBRARY_DISPATCH
        executables = self.executables.reached_by(frontier) - self.reached_executables
        if executables:
            self.reached_executables |= executables
            yield self.executables.runners(executables), Via.EXECUTABLE_BY_NAME

    def _dispatch_callers(self, bases: dict[int, set[int]]) -> set[int]:
        """The callers whose dispatch points of a base can run the symbol overriding it. A
        dispatch point whose receiver the index does not name (a generic `T.scale(x)`,
        `Value.AtomicRepresentation.atomicLoad(…)`) runs it only when its type is bound
        there: the callers it reaches are those that hold a value of the type (as library
        dispatch reads it, the types it is declared in included), found up through the
        generic code that passes the type on."""
        every_base = {base for found in bases.values() for base in found}
        if not every_base:
            return set()
        rows = calls_of(self.db, every_base, uses=True)
        usrs = {sid: symbol.usr for sid, symbol in self.db.symbols_by_ids(every_base).items()}
        owners = self.dispatch.owners(every_base | bases.keys())
        points = [
            row
            for row in rows
            if dispatches(owners.get(row.callee_id), row.roles, usrs.get(row.callee_id, ""))
        ]
        receivers = self.dispatch.receivers(points)
        by_base: dict[int, list[int]] = {}
        for index, row in enumerate(points):
            by_base.setdefault(row.callee_id, []).append(index)
        found: set[int] = set()
        callers: dict[int, tuple[set[int], set[int]]] = {}
        for implementation, its_bases in bases.items():
            owner = owners.get(implementation)
            generic: set[int] = set()
            named: set[int] = set()
            callers[implementation] = (generic, named)
            for base in its_bases:
                for index in by_base.get(base, ()):
                    row = points[index]
                    receiver = receivers[row.occurrence_id]
                    if not self.dispatch.can_run(owner, receiver):
                        continue
                    if owner is None or owner.kind == PROTOCOL_KIND:
                        found.add(row.caller_id)
                    elif receiver == 0:
                        generic.add(row.caller_id)
                    else:
                        named.add(row.caller_id)
        self._prefetch_holding([implementation for implementation, (_g, named) in callers.items() if named])
        self._prefetch_up([named for _generic, named in callers.values() if named])
        for implementation, (generic, named) in callers.items():
            if generic:
                found |= self._binding(implementation, generic)
            if named:
                key = frozenset(named)
                if key not in self._leading:
                    self._leading[key] = self._upward(named)
                leading = self._leading[key]
                meeting = leading & self._holding_reach(implementation)
                found |= meeting
                self.held_elsewhere |= leading - meeting
        return found

    def _prefetch_holding(self, implementations: list[int]) -> None:
        """Read what `_holding_reach` asks of each implementation's holders (their owners, and
        what uses them) for all of them at once: a hub's reach asks it of hundreds of types."""
        owners = self.dispatch.owners(implementations)
        todo = {
            o.type_id: sid for sid, o in owners.items() if o is not None and o.type_id not in self._held_reach
        }
        holders = {h for sid in todo.values() for h in holding(self.db, self.dispatch, sid)}
        self.dispatch.owners(holders)
        self._prefetch_up([holders])

    def _prefetch_up(self, groups: list[set[int]]) -> None:
        """The upward edges of everything `_upward` will reach from these groups, read a level
        at a time for all of them together."""
        seen: set[int] = set().union(*groups) if groups else set()
        frontier = set(seen)
        while frontier:
            self._learn_up(frontier)
            following = {user for symbol in frontier for user in self._up[symbol]}
            frontier = {symbol for symbol in following if symbol not in seen}
            seen |= frontier

    def _learn_up(self, symbols: set[int]) -> None:
        unknown = [symbol for symbol in symbols if symbol not in self._up]
        if unknown:
            users = users_by_symbol(self.db, unknown)
            properties = related_through(self.db, unknown, Role.REL_ACCESSOROF)
            for symbol in unknown:
                self._up[symbol] = frozenset(users.get(symbol, set()) | properties.get(symbol, set()))

    def _holding_reach(self, implementation: int) -> set[int]:
        """The code holding a value of the implementation's type (and every member of a type
        whose per-instance code holds one, keeping it for the others: a test class's `setUp`,
        an initializer, a stored property's initial value), and all that calls it, directly.
        Kept for the question."""
        owner = self.dispatch.owners([implementation])[implementation]
        if owner is None:
            return set()
        if owner.type_id not in self._held_reach:
            holders = set(holding(self.db, self.dispatch, implementation))
            keepers = {
                o.type_id
                for sid, o in self.dispatch.owners(holders).items()
                if o is not None and runs_for_each_instance(self.db, self.dispatch, sid)
            }
            for keeper in keepers:
                holders |= {occ.symbol_id for occ in members_of(self.db, keeper)}
            self._held_reach[owner.type_id] = self._upward(holders)
        return self._held_reach[owner.type_id]

    def _upward(self, symbols: set[int]) -> set[int]:
        """The symbols and all that calls or references them (an accessor: its property), to a
        fixed point."""
        found = set(symbols)
        frontier = set(symbols)
        while frontier:
            self._learn_up(frontier)
            following = {user for symbol in frontier for user in self._up[symbol]}
            frontier = following - found
            found |= frontier
        return found

    def _binding(self, implementation: int, callers: set[int]) -> set[int]:
        """Of the code calling a generic dispatch point that can run `implementation`, and of
        their callers up through generic code, what holds a value of its type."""
        holders = holding(self.db, self.dispatch, implementation, enclosing=True)
        generic = self.db.derived("reach.generic_declarations", lambda: generic_declarations(self.db))
        found: set[int] = set()
        seen = set(callers)
        frontier = set(callers)
        for _ in range(MAX_GENERIC_HOPS):
            found |= frontier & holders
            usrs = {sid: symbol.usr for sid, symbol in self.db.symbols_by_ids(frontier - holders).items()}
            readable = demangled(usrs.values())
            passing = {g for g, usr in usrs.items() if self._is_generic(g, readable.get(usr, ""), generic)}
            if not passing:
                break
            frontier = users_of(self.db, passing) - seen
            seen |= frontier
        return found

    def _is_generic(self, symbol: int, readable: str, generic: set[int]) -> bool:
        """Generic code: it has generic parameters (`scaled<A where A: Scalable>`, as
        swift-demangle reads its USR), or its type (or the type that one is declared in)
        does, or it is a protocol's (`Self`)."""
        if symbol in generic or _GENERIC_SIGNATURE.search(readable):
            return True
        owner = self.dispatch.owners([symbol])[symbol]
        if owner is None:
            return False
        if owner.type_id in generic or owner.kind == PROTOCOL_KIND:
            return True
        outer = self.dispatch.owners([owner.type_id])[owner.type_id]
        return outer is not None and outer.type_id in generic

    def _library_callers(self, outside: dict[int, set[int]]) -> set[int]:
        """`outside`: each symbol's bases declared outside the index."""
        witnesses = [LibraryWitness(symbol, frozenset(found)) for symbol, found in outside.items() if found]
        return library_callers(self.db, self.dispatch, witnesses) if witnesses else set()
