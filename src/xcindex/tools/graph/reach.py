"""What can run changed code: the one reach change_impact and blast_radius share, each
reached symbol labelled with how (docs/tools.md, "Reach").

From the changed symbols, to a fixed point, a symbol is reached
- by a *direct call*: its code references or calls a reached symbol; an accessor reaches its
  property; a type its subtypes;
- by *dispatch*: it calls, at a dispatch point that can run it, something a reached symbol
  overrides or witnesses (tools/graph/dispatch.py);
- by *library dispatch*: a reached symbol witnesses a requirement declared outside the index
  and library code can be handed its type here (tools/graph/library.py);
- by an *executable run by name*: the change reaches an executable and its code names it
  (tools/graph/executables.py).

A symbol's label is the surest way it is reached (`Via`, in that order): the reach is a
search that expands the surest labels first, so a test both called directly and reached
through dispatch says `directCall`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import calls_of, related_through, users_of, written_occurrences
from xcindex.indexstore.model import Role
from xcindex.project.package import PackageDescription
from xcindex.tools.graph.call_graph import overridden_closures
from xcindex.tools.graph.dispatch import TYPE_KINDS, Dispatch, dispatches
from xcindex.tools.graph.executables import Executables
from xcindex.tools.graph.library import LibraryWitness, library_callers, subtypes
from xcindex.tools.graph.selection import Via


@dataclass(frozen=True)
class Reach:
    via: dict[int, Via]
    """Every reached symbol (the changed ones included) and the surest way it is reached."""
    executables: tuple[str, ...]
    """The executables the change reaches (target names), which code running them by name covers."""


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

    def offer(symbols: Iterable[int], via: Via) -> None:
        for symbol in symbols:
            if symbol not in label or via < label[symbol]:
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
    return Reach(label, tuple(sorted(graph.reached_executables)))


class _Graph:
    """The edges out of a frontier, by kind; what they read is kept for the question."""

    def __init__(self, db: Database, package: PackageDescription | None) -> None:
        self.db = db
        self.dispatch = Dispatch(db)
        self.executables = Executables(db, package)
        self.reached_executables: set[str] = set()

    def expand(self, frontier: set[int]) -> Iterator[tuple[set[int], Via]]:
        yield users_of(self.db, frontier), Via.DIRECT_CALL
        yield (
            {p for found in related_through(self.db, frontier, Role.REL_ACCESSOROF).values() for p in found},
            (Via.DIRECT_CALL),
        )
        types = {sid for sid in frontier if self.dispatch.kind(sid) in TYPE_KINDS}
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
        """The callers whose dispatch points of a base can run the symbol overriding it."""
        every_base = {base for found in bases.values() for base in found}
        if not every_base:
            return set()
        rows = calls_of(self.db, every_base)
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
        for implementation, its_bases in bases.items():
            owner = owners.get(implementation)
            for base in its_bases:
                for index in by_base.get(base, ()):
                    row = points[index]
                    if row.caller_id not in found and self.dispatch.can_run(
                        owner, receivers[row.occurrence_id]
                    ):
                        found.add(row.caller_id)
        return found

    def _library_callers(self, outside: dict[int, set[int]]) -> set[int]:
        """`outside`: each symbol's bases declared outside the index."""
        witnesses = [LibraryWitness(symbol, frozenset(found)) for symbol, found in outside.items() if found]
        return library_callers(self.db, self.dispatch, witnesses) if witnesses else set()
