"""The call graph the index records, with dispatch: shared by call_hierarchy, change_impact
and blast_radius.

A call site is an occurrence with the `call` role whose `calledBy` relation names the
calling function (or accessor). A call resolves to one symbol, but a dispatch point (a call
of a protocol requirement, or a dynamic call of a class's method: tools/graph/dispatch.py)
can run any override or witness of it whose type the receiver can be. So the callers of a
method are those that call it, plus those that call something it overrides or witnesses at
a dispatch point that can run it; and the callees of a function are what its calls name,
plus, for each dispatch point, every override and witness it can run (`via dispatch`). A
`super.m()` call is static, so it reaches only the method it names; so is a call of a
member of an extension (a protocol extension's methods included).

Calls are grouped by the other symbol (the caller, or the callee) and the groups ordered
by their first site (path, line, column). A hub function can have tens of thousands of
callers: they are read in one query as tuples, grouped and counted, and only the page an
answer shows becomes objects (and has its `super` calls told apart, which reads source).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xcindex.errors import XcindexError
from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import (
    POSITION_LINE_SHIFT,
    CallRow,
    call_places_of,
    calls_at,
    calls_from,
    calls_of,
    file_paths,
    overridden,
    overriding,
    written_occurrences,
)
from xcindex.indexstore.model import Role, is_generated_name, kind_name
from xcindex.swift.source import source_line
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.graph.dispatch import Dispatch, dispatches
from xcindex.tools.graph.library import holding
from xcindex.tools.resolve import resolve
from xcindex.tools.shapes import SymbolSiteJson

_CHILD_OF = int(Role.REL_CHILDOF)
_PROPERTY_KINDS = frozenset({13, 19, 20, 21})
"""variable, instanceProperty, classProperty, staticProperty."""
_SUPER_CALLABLE = frozenset({16, 17, 22})
"""instanceMethod, classMethod, constructor: the kinds `super.` can call."""
MAX_OVERRIDE_DEPTH = 32
_ID_BITS = 40
_ID_MASK = (1 << _ID_BITS) - 1
_POSITION_BITS = 42
"""Packed call keys (incoming_calls): symbol and occurrence ids below 2^40, a position below 2^42."""


@dataclass(frozen=True)
class CallSite:
    """One call: where it is written, who makes it, what it resolves to and how it dispatches."""

    occurrence: OccurrenceRow
    caller_id: int
    callee_id: int
    dispatch: str  # "static" | "dynamic" | "super"


@dataclass(frozen=True)
class SymbolSite:
    """A symbol in a hierarchy: its definition site and the type (or extended type) that
    declares it, which tells a dozen `log(event:)` witnesses apart."""

    symbol: SymbolRow
    definition: OccurrenceRow | None
    container: str | None = None

    @property
    def qualified_name(self) -> str:
        """`StreamLogHandler.log(event:)`; a global's own name."""
        return f"{self.container}.{self.symbol.name}" if self.container else self.symbol.name

    def to_json(self) -> SymbolSiteJson:
        d = self.definition
        return {
            "usr": self.symbol.usr,
            "name": self.symbol.name,
            "kind": kind_name(self.symbol.kind),
            "container": self.container,
            "path": d.path if d else None,
            "line": d.line if d else None,
            "column": d.column if d else None,
        }


def symbol_sites(db: Database, symbol_ids: Iterable[int]) -> dict[int, SymbolSite]:
    """The symbols with their definitions and containers, in a few queries whatever their number."""
    wanted = set(symbol_ids)
    symbols = db.symbols_by_ids(wanted)
    written = written_occurrences(db, wanted)
    definitions = {sid: canonical_occurrence(written.get(sid, [])) for sid in symbols}
    parents = _parents(db, definitions)
    # An accessor's parent is its property: name the type that declares the property.
    properties = {p.id for p in parents.values() if p is not None and p.kind in _PROPERTY_KINDS}
    owners = symbol_sites(db, properties) if properties else {}
    return {
        sid: SymbolSite(
            symbol,
            definitions[sid],
            owners[parent.id].container
            if parent is not None and parent.id in owners
            else _container_name(parent),
        )
        for sid, symbol in symbols.items()
        for parent in [parents.get(sid)]
    }


def _parents(db: Database, definitions: dict[int, OccurrenceRow | None]) -> dict[int, SymbolRow | None]:
    """Each symbol's `childOf` parent at its definition (a type, an extension, a property)."""
    relations = db.relations_of([occ.id for occ in definitions.values() if occ is not None])
    parent_of = {
        sid: next((other for roles, other in relations.get(occ.id, []) if roles & _CHILD_OF), None)
        for sid, occ in definitions.items()
        if occ is not None
    }
    rows = db.symbols_by_ids(p for p in parent_of.values() if p is not None)
    return {sid: rows.get(parent) if parent is not None else None for sid, parent in parent_of.items()}


def _container_name(parent: SymbolRow | None) -> str | None:
    """A type's name; an extension's is the extended type's (the index names it so)."""
    if parent is None or is_generated_name(parent.name):
        return None
    return parent.name


@dataclass(frozen=True)
class CallGroup:
    """The calls between the asked symbol and one other symbol (its caller, or its callee).
    `via_dispatch`: no site names the callee; dynamic dispatch reaches it through the base
    or requirement the sites name."""

    other_id: int
    sites: tuple[CallSite, ...]
    via_dispatch: bool


@dataclass(frozen=True)
class CallPage:
    groups: tuple[CallGroup, ...]
    """From `offset` on, at most `limit`, in the one order (first site, then direct first)."""
    total: int
    """Groups in all, listed or not."""
    external_calls: int = 0
    """Outgoing: calls of symbols with no definition in the index (the SDKs, the standard library)."""


def symbol_for(db: Database, usr: str | None, symbol_name: str | None) -> SymbolRow | None:
    """The one symbol a usr or a name (as find_symbol resolves it) names; None if none.
    A name naming several symbols is an error that lists them, so the caller can pick."""
    if usr is not None:
        return db.symbol_by_usr(usr)
    assert symbol_name is not None
    resolution = resolve(db, symbol_name)
    resolved, _note = resolution.single
    matches = resolution.candidates
    if resolved is None and len(matches) > 1:
        listed = "; ".join(
            f"{m.symbol.usr} ({m.symbol.name} at {m.definition.path}:{m.definition.line})"
            if m.definition is not None
            else f"{m.symbol.usr} ({m.symbol.name})"
            for m in matches[:10]
        )
        raise XcindexError(
            f"'{symbol_name}' names {len(matches)} symbols; give one of their usr values instead: {listed}."
        )
    chosen = resolved or (matches[0] if matches else None)
    return chosen.symbol if chosen is not None else None


def overridden_bases(db: Database, symbol_id: int) -> list[int]:
    """What the symbol overrides or witnesses, transitively (nearest first): the methods
    and requirements through which a dynamic call can reach it."""
    return _closure(db, symbol_id, overridden)


def overridden_closures(db: Database, symbol_ids: Iterable[int]) -> dict[int, set[int]]:
    """overridden_bases for many symbols at once: one query per level of the hierarchy."""
    direct: dict[int, set[int]] = {}
    frontier = set(symbol_ids)
    for _ in range(MAX_OVERRIDE_DEPTH):
        todo = {sid for sid in frontier if sid not in direct}
        if not todo:
            break
        found = overridden(db, todo)
        for symbol_id in todo:
            direct[symbol_id] = found.get(symbol_id, set())
        frontier = {base for symbol_id in todo for base in direct[symbol_id]}
    closures: dict[int, set[int]] = {}
    for symbol_id in symbol_ids:
        seen: set[int] = set()
        stack = list(direct.get(symbol_id, ()))
        while stack:
            base = stack.pop()
            if base not in seen and base != symbol_id:
                seen.add(base)
                stack.extend(direct.get(base, ()))
        closures[symbol_id] = seen
    return closures


def overriding_symbols(db: Database, symbol_id: int) -> list[int]:
    """What overrides or witnesses the symbol, transitively (nearest first): what a dynamic
    call of it can run instead."""
    return _closure(db, symbol_id, overriding)


def _closure(
    db: Database, symbol_id: int, step: Callable[[Database, Iterable[int]], dict[int, set[int]]]
) -> list[int]:
    found: list[int] = []
    seen = {symbol_id}
    frontier = [symbol_id]
    for _ in range(MAX_OVERRIDE_DEPTH):
        following = sorted({other for ids in step(db, frontier).values() for other in ids} - seen)
        if not following:
            break
        seen.update(following)
        found += following
        frontier = following
    return found


def dispatch_calls_running(
    db: Database, dispatch: Dispatch, implementation: int, bases: list[int]
) -> list[CallRow]:
    """The calls of these bases (what `implementation` overrides or witnesses) that are
    dispatch points able to run it: the receiver can be its type, and, for a base declared
    outside the index (`Equatable.==`), the caller holds a value of its type (library
    dispatch narrowed by type, tools/graph/library.py)."""
    if not bases:
        return []
    rows = calls_of(db, bases)
    usrs = {sid: symbol.usr for sid, symbol in db.symbols_by_ids(bases).items()}
    owners = dispatch.owners([implementation, *bases])
    candidates = [
        row for row in rows if dispatches(owners.get(row.callee_id), row.roles, usrs.get(row.callee_id, ""))
    ]
    defined = set(written_occurrences(db, bases))
    owner = owners[implementation]
    outside = frozenset(row.callee_id for row in candidates if row.callee_id not in defined)
    if outside:
        holders = holding(db, dispatch, implementation, bases=outside)
        candidates = [row for row in candidates if row.callee_id in defined or row.caller_id in holders]
    receivers = dispatch.receivers(candidates)
    return [row for row in candidates if dispatch.can_run(owner, receivers[row.occurrence_id])]


def incoming_calls(
    db: Database,
    symbol: SymbolRow,
    *,
    offset: int = 0,
    limit: int | None = None,
    dispatch: Dispatch | None = None,
) -> CallPage:
    """Calls that can run `symbol`, grouped by calling symbol: its own calls, and the
    dispatch points of what it overrides or witnesses that can run it (marked dynamic,
    resolved to the base they name)."""
    dispatch = dispatch or Dispatch(db)
    places = call_places_of(db, symbol.id)
    seen = set(places.occurrences)
    for row in dispatch_calls_running(db, dispatch, symbol.id, overridden_bases(db, symbol.id)):
        if row.occurrence_id not in seen:
            seen.add(row.occurrence_id)
            places.callers.append(row.caller_id)
            places.occurrences.append(row.occurrence_id)
            places.files.append(row.file_id)
            places.positions.append(row.line << POSITION_LINE_SHIFT | row.column)
    paths = file_paths(db, set(places.files))
    rank = _path_rank(paths)
    # One integer per call, sorted: where it is (file in path order, line, column), then who
    # makes it and which occurrence it is. A caller's first value is its first site.
    packed = sorted(
        ((rank[file_id] << _POSITION_BITS | position) << _ID_BITS * 2) | (caller << _ID_BITS) | occurrence
        for caller, occurrence, file_id, position in zip(
            places.callers, places.occurrences, places.files, places.positions, strict=True
        )
    )
    seen_callers: set[int] = set()
    ordered: list[int] = []
    for value in packed:
        caller = value >> _ID_BITS & _ID_MASK
        if caller not in seen_callers:
            seen_callers.add(caller)
            ordered.append(caller)
    page = ordered[offset:] if limit is None else ordered[offset : offset + limit]
    on_page = set(page)
    wanted = {value & _ID_MASK for value in packed if value >> _ID_BITS & _ID_MASK in on_page}
    rows = [row for row in calls_at(db, wanted) if row.caller_id in on_page]
    by_caller = _grouped(rows)
    labels = _Labels(db, dispatch, {row.callee_id for row in rows})
    super_callable = symbol.kind in _SUPER_CALLABLE
    groups = []
    for caller in page:
        found = sorted(by_caller.get(caller, []), key=lambda row: _site_key(row, paths))
        sites = tuple(
            _site(row, paths, labels, super_callable and row.callee_id == symbol.id) for row in found
        )
        groups.append(CallGroup(caller, sites, all(s.callee_id != symbol.id for s in sites)))
    return CallPage(tuple(groups), len(ordered))


def _path_rank(paths: dict[int, str]) -> dict[int, int]:
    """File id → its place in path order: sites then order by one integer."""
    return {file_id: rank for rank, file_id in enumerate(sorted(paths, key=paths.__getitem__))}


def outgoing_calls(
    db: Database,
    symbol: SymbolRow,
    *,
    offset: int = 0,
    limit: int | None = None,
    dispatch: Dispatch | None = None,
) -> CallPage:
    """The explicit calls written in the symbol's body, grouped by callee as the compiler
    resolved them; and for each dispatch point, a group for every override and witness of
    what it names that it can run (`via_dispatch`), with the same sites. Callees the index
    has no definition for are counted, not grouped."""
    dispatch = dispatch or Dispatch(db)
    rows = calls_from(db, symbol.id)
    paths = file_paths(db, {row.file_id for row in rows})
    callees = db.symbols_by_ids(row.callee_id for row in rows)
    defined = set(written_occurrences(db, callees))
    by_callee = _grouped(rows, by_callee=True)
    external = sum(len(found) for callee, found in by_callee.items() if callee not in defined)
    direct = {
        callee: found
        for callee, found in by_callee.items()
        if callee in defined and not is_generated_name(callees[callee].name)
    }
    labels = _Labels(db, dispatch, callees)
    reached: dict[int, list[CallRow]] = {}
    for callee, found in by_callee.items():
        dispatched = [row for row in found if labels.dispatched(row)]
        if not dispatched or is_generated_name(callees[callee].name):
            continue
        candidates = overriding_symbols(db, callee)
        owners = dispatch.owners(candidates)
        receivers = dispatch.receivers(dispatched)
        for implementation in candidates:
            # A requirement declared outside the index (`Equatable.==`): the library's, whose
            # call runs a witness only where a value of its type is held.
            if callee not in defined and symbol.id not in holding(
                db, dispatch, implementation, bases=frozenset({callee})
            ):
                continue
            running = [
                row
                for row in dispatched
                if dispatch.can_run(owners[implementation], receivers[row.occurrence_id])
            ]
            if running:
                reached.setdefault(implementation, []).extend(running)
    # Only implementations written here: an SDK member a conformance makes a witness
    # (`Double./` through `extension Double: Field {}`) has no body to show or to test.
    implementations = {
        impl: canonical_occurrence(occs) for impl, occs in written_occurrences(db, reached).items()
    }
    entries = [(callee, found, False) for callee, found in direct.items()]
    entries += [
        (impl, found, True)
        for impl, found in reached.items()
        if impl not in direct and impl in implementations
    ]
    for _callee, found, _via in entries:
        found.sort(key=lambda row: _site_key(row, paths))

    def order(entry: tuple[int, list[CallRow], bool]) -> tuple[tuple[str, int, int], bool, str, int, int]:
        """By the first site; the implementations a dispatch point reaches after what it
        names, by where they are defined."""
        callee, found, via = entry
        where = implementations.get(callee) if via else None
        return (
            _site_key(found[0], paths),
            via,
            where.path if where else "",
            where.line if where else 0,
            callee,
        )

    entries.sort(key=order)
    end = len(entries) if limit is None else offset + limit
    groups = []
    for callee, found, via in entries[offset:end]:
        sites = tuple(
            _site(row, paths, labels, callees[row.callee_id].kind in _SUPER_CALLABLE) for row in found
        )
        groups.append(CallGroup(callee, sites, via))
    return CallPage(tuple(groups), len(entries), external)


class _Labels:
    """How each call dispatches, from its callee's owner (read once for the callees of a page)."""

    def __init__(self, db: Database, dispatch: Dispatch, callee_ids: Iterable[int]) -> None:
        wanted = set(callee_ids)
        self._owners = dispatch.owners(wanted)
        self._usrs = {sid: symbol.usr for sid, symbol in db.symbols_by_ids(wanted).items()}

    def dispatched(self, row: CallRow) -> bool:
        return dispatches(self._owners.get(row.callee_id), row.roles, self._usrs.get(row.callee_id, ""))


def _grouped(rows: Iterable[CallRow], *, by_callee: bool = False) -> dict[int, list[CallRow]]:
    """Rows by caller (or callee), one per site: the index can record a site once per unit.
    (Tuple indexes, not field names: this runs once per call of a hub function.)"""
    seen: set[tuple[int, int, int, int, int]] = set()
    groups: dict[int, list[CallRow]] = {}
    for row in rows:
        identity = (row[0], row[1], row[4], row[5], row[6])
        if identity not in seen:
            seen.add(identity)
            groups.setdefault(row[1] if by_callee else row[0], []).append(row)
    return groups


def _site_key(row: CallRow, paths: dict[int, str]) -> tuple[str, int, int]:
    return (paths.get(row.file_id, ""), row.line, row.column)


def _site(row: CallRow, paths: dict[int, str], labels: _Labels, super_callable: bool) -> CallSite:
    occ = OccurrenceRow(
        row.occurrence_id,
        row.callee_id,
        row.roles,
        paths.get(row.file_id, ""),
        row.line,
        row.column,
        row.module,
        row.unit_mtime_ns,
    )
    return CallSite(occ, row.caller_id, row.callee_id, _dispatch(occ, labels.dispatched(row), super_callable))


def _dispatch(occ: OccurrenceRow, dispatched: bool, super_callable: bool) -> str:
    """A dispatch point is never a super call; a static call of a method may be."""
    if dispatched:
        return "dynamic"
    return "super" if super_callable and _is_super_call(occ) else "static"


def _is_super_call(occ: OccurrenceRow) -> bool:
    """`super.m()`: the source text right before the name says so (the index does not)."""
    text = source_line(occ.path, occ.line)
    before = text.encode("utf-8")[: max(occ.column - 1, 0)].decode("utf-8", "replace").rstrip()
    return before.endswith("super.") or before.endswith("super")
