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
from xcindex.indexstore.model import Role, is_generated_name
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.find_symbol import resolve_symbols
from xcindex.warnings import XcindexError

_CALL = int(Role.CALL)
_DYNAMIC = int(Role.DYNAMIC)
_IMPLICIT = int(Role.IMPLICIT)
_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
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
    matches, _how = resolve_symbols(db, symbol_name)
    if len(matches) > 1:
        listed = "; ".join(
            f"{m.symbol.usr} ({m.symbol.name} at {m.definition.path}:{m.definition.line})"
            for m in matches[:10]
        )
        raise XcindexError(
            f"'{symbol_name}' names {len(matches)} symbols; give one of their usr values instead: {listed}."
        )
    return matches[0].symbol if matches else None


def definition_of(db: Database, symbol_id: int) -> OccurrenceRow | None:
    return canonical_occurrence(o for o in db.occurrences_of(symbol_id) if not o.roles & _IMPLICIT)


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
        caller = next((sid for roles, sid in rels if roles & Role.REL_CALLEDBY), None)
        if caller is None:
            caller = next((sid for roles, sid in rels if roles & Role.REL_CONTAINEDBY), None)
        if caller is not None:
            found.append((occ, caller))
    return found


def incoming_calls(db: Database, symbol: SymbolRow) -> list[CallSite]:
    """Calls that can run `symbol`: its own calls, and dynamic calls of what it overrides
    or witnesses (marked dynamic, resolved to the base they name)."""
    sites: list[CallSite] = []
    for occ, caller in _calls_of(db, symbol.id):
        dispatch = "super" if _is_super_call(occ) else "dynamic" if occ.roles & _DYNAMIC else "static"
        sites.append(CallSite(occ, caller, symbol.id, dispatch))
    for base in overridden_bases(db, symbol.id):
        for occ, caller in _calls_of(db, base):
            if occ.roles & _DYNAMIC and not _is_super_call(occ):
                sites.append(CallSite(occ, caller, base, "dynamic"))
    return _unique(sites)


def outgoing_calls(db: Database, symbol: SymbolRow) -> list[CallSite]:
    """Explicit calls written in the symbol's body, resolved as the compiler resolved them."""
    sites: list[CallSite] = []
    for relation in db.related_occurrences(symbol.id, Role.REL_CALLEDBY):
        occ = relation.occurrence
        if not occ.roles & _CALL or occ.roles & _IMPLICIT:
            continue
        dispatch = "super" if _is_super_call(occ) else "dynamic" if occ.roles & _DYNAMIC else "static"
        sites.append(CallSite(occ, symbol.id, occ.symbol_id, dispatch))
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
