"""The call graph the index records, with dynamic dispatch: shared by call_hierarchy and
change_impact.

A call site is an occurrence with the `call` role whose `calledBy` relation names the
calling function (or accessor). A call resolves to one symbol, but a *dynamic* call to a
base class method or a protocol requirement can run any override or witness of it, so the
callers of a method are those that call it, plus those that call something it overrides
or witnesses with a dynamic call. A `super.m()` call is static (no `dynamic` role), so it
reaches only the method it names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import written_occurrences
from xcindex.indexstore.model import Role, is_generated_name
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.resolve import resolve
from xcindex.warnings import XcindexError

_CALL = int(Role.CALL)
_DYNAMIC = int(Role.DYNAMIC)
_IMPLICIT = int(Role.IMPLICIT)
_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_CALLED_BY, _CONTAINED_BY = int(Role.REL_CALLEDBY), int(Role.REL_CONTAINEDBY)
_SUPER_CALLABLE = frozenset({16, 17, 22})
"""instanceMethod, classMethod, constructor: the kinds `super.` can call."""
MAX_OVERRIDE_DEPTH = 32


@dataclass(frozen=True)
class CallSite:
    """One call: where it is written, who makes it, what it resolves to and how it dispatches."""

    occurrence: OccurrenceRow
    caller_id: int
    callee_id: int
    dispatch: str  # "static" | "dynamic" | "super"


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


def definition_of(db: Database, symbol_id: int) -> OccurrenceRow | None:
    return canonical_occurrence(written_occurrences(db, [symbol_id]).get(symbol_id, []))


def overridden_bases(db: Database, symbol_id: int) -> list[int]:
    """What the symbol overrides or witnesses, transitively (nearest first): the methods
    and requirements through which a dynamic call can reach it."""
    found: list[int] = []
    frontier = [symbol_id]
    seen = {symbol_id}
    for _ in range(MAX_OVERRIDE_DEPTH):
        following: list[int] = []
        for current in frontier:
            for relation in db.related_occurrences_of(current, Role.REL_OVERRIDEOF):
                occ = relation.occurrence
                if occ.roles & _IMPLICIT or not occ.roles & _WRITTEN:
                    continue
                if relation.symbol_id not in seen:
                    seen.add(relation.symbol_id)
                    found.append(relation.symbol_id)
                    following.append(relation.symbol_id)
        if not following:
            break
        frontier = following
    return found


def _calls_of(db: Database, symbol_id: int) -> list[tuple[OccurrenceRow, int]]:
    """Explicit calls of a symbol, each with its calling symbol (calledBy, else containedBy)."""
    calls = [o for o in db.occurrences_of(symbol_id) if o.roles & _CALL and not o.roles & _IMPLICIT]
    relations = db.relations_of([o.id for o in calls])
    found: list[tuple[OccurrenceRow, int]] = []
    for occ in calls:
        rels = relations.get(occ.id, [])
        caller = next((sid for roles, sid in rels if roles & _CALLED_BY), None)
        if caller is None:
            caller = next((sid for roles, sid in rels if roles & _CONTAINED_BY), None)
        if caller is not None:
            found.append((occ, caller))
    return found


def incoming_calls(db: Database, symbol: SymbolRow) -> list[CallSite]:
    """Calls that can run `symbol`: its own calls, and dynamic calls of what it overrides
    or witnesses (marked dynamic, resolved to the base they name)."""
    sites: list[CallSite] = []
    super_callable = symbol.kind in _SUPER_CALLABLE
    for occ, caller in _calls_of(db, symbol.id):
        sites.append(CallSite(occ, caller, symbol.id, _dispatch(occ, super_callable)))
    for base in overridden_bases(db, symbol.id):
        for occ, caller in _calls_of(db, base):
            if occ.roles & _DYNAMIC:
                sites.append(CallSite(occ, caller, base, "dynamic"))
    return _unique(sites)


def _dispatch(occ: OccurrenceRow, super_callable: bool) -> str:
    """A dynamic call is never a super call; a static one of a method may be."""
    if occ.roles & _DYNAMIC:
        return "dynamic"
    return "super" if super_callable and _is_super_call(occ) else "static"


def outgoing_calls(db: Database, symbol: SymbolRow) -> list[CallSite]:
    """Explicit calls written in the symbol's body, resolved as the compiler resolved them."""
    sites: list[CallSite] = []
    calls = [
        r.occurrence
        for r in db.related_occurrences(symbol.id, Role.REL_CALLEDBY)
        if r.occurrence.roles & _CALL and not r.occurrence.roles & _IMPLICIT
    ]
    callees = db.symbols_by_ids(occ.symbol_id for occ in calls)
    for occ in calls:
        callee = callees.get(occ.symbol_id)
        super_callable = callee is not None and callee.kind in _SUPER_CALLABLE
        sites.append(CallSite(occ, symbol.id, occ.symbol_id, _dispatch(occ, super_callable)))
    return _unique(sites)


def _unique(sites: Iterable[CallSite]) -> list[CallSite]:
    """One site per (place, caller, callee): the index can record a site once per unit."""
    by_key: dict[tuple[str, int, int, int, int], CallSite] = {}
    for site in sites:
        occ = site.occurrence
        by_key.setdefault((occ.path, occ.line, occ.column, site.caller_id, site.callee_id), site)
    return [by_key[key] for key in sorted(by_key)]


def _is_super_call(occ: OccurrenceRow) -> bool:
    """`super.m()`: the source text right before the name says so (the index does not)."""
    text = _line_text(occ.path, occ.line)
    before = text.encode("utf-8")[: max(occ.column - 1, 0)].decode("utf-8", "replace").rstrip()
    return before.endswith("super.") or before.endswith("super")


def _line_text(path: str, line: int) -> str:
    lines = _file_lines(path, _mtime(path))
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@lru_cache(maxsize=256)
def _file_lines(path: str, mtime_ns: int) -> tuple[str, ...]:
    """A source file's lines, cached per modification time (read only, never written)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return tuple(handle.read().splitlines())
    except OSError:
        return ()


def is_listed(symbol: SymbolRow) -> bool:
    """Symbols a call graph shows by name (not macro-generated helpers)."""
    return not is_generated_name(symbol.name)
