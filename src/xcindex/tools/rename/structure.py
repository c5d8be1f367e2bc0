"""The type structure the rename checks read from the index: who declares a member, a
type's extensions and members, what inherits from it and what it adopts.

Pure functions over the database, shared by the witness completion (checks.py), the
warnings about meaning (meaning.py) and the collision check (collisions.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role

PROTOCOL_KIND = 8
EXTENSION_KIND = 9
CLASS_KIND = 7
STRUCT_KIND = 6
ENUM_KIND = 5
TYPE_KINDS = frozenset({ENUM_KIND, STRUCT_KIND, CLASS_KIND, PROTOCOL_KIND})


def parent_of(db: Database, occurrences: Iterable[OccurrenceRow]) -> SymbolRow | None:
    """The type or extension a member is declared in (its definition's `childOf`)."""
    for occ in occurrences:
        if not occ.roles & (Role.DEFINITION | Role.DECLARATION):
            continue
        for roles, sid in db.relations_of([occ.id]).get(occ.id, []):
            if roles & Role.REL_CHILDOF:
                return db.symbols_by_ids([sid]).get(sid)
    return None


def extended_type(db: Database, extension: SymbolRow) -> SymbolRow | None:
    for relation in db.related_occurrences(extension.id, Role.REL_EXTENDEDBY):
        occ = relation.occurrence
        return db.symbols_by_ids([occ.symbol_id]).get(occ.symbol_id)
    return None


def owner_type(db: Database, member: SymbolRow) -> SymbolRow | None:
    """The type declaring a member, through an extension when it is declared in one."""
    parent = parent_of(db, db.occurrences_of(member.id))
    if parent is not None and parent.kind == EXTENSION_KIND:
        return extended_type(db, parent)
    return parent


def extensions_of(db: Database, type_symbol: SymbolRow) -> list[SymbolRow]:
    ids = {r.symbol_id for r in db.related_occurrences_of(type_symbol.id, Role.REL_EXTENDEDBY)}
    return [s for s in db.symbols_by_ids(ids).values() if s.kind == EXTENSION_KIND]


def members_of(db: Database, container: SymbolRow) -> list[SymbolRow]:
    ids = {r.occurrence.symbol_id for r in db.related_occurrences(container.id, Role.REL_CHILDOF)}
    return list(db.symbols_by_ids(ids).values())


def derived_types(db: Database, base: SymbolRow) -> list[SymbolRow]:
    """Types (and protocols) that name `base` in an inheritance clause, directly."""
    found: dict[int, SymbolRow] = {}
    for relation in db.related_occurrences_of(base.id, Role.REL_BASEOF):
        related = db.symbols_by_ids([relation.symbol_id]).get(relation.symbol_id)
        if related is None:
            continue
        if related.kind == EXTENSION_KIND:
            related = extended_type(db, related)
        if related is not None and related.id != base.id:
            found[related.id] = related
    return list(found.values())


def declared_in_protocol(db: Database, symbol: SymbolRow) -> bool:
    parent = parent_of(db, db.occurrences_of(symbol.id))
    return parent is not None and parent.kind == PROTOCOL_KIND


def inheriting(db: Database, protocol: SymbolRow) -> list[SymbolRow]:
    """The protocol and every protocol that refines it, transitively."""
    found: dict[int, SymbolRow] = {protocol.id: protocol}
    frontier = [protocol]
    while frontier:
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            for derived in derived_types(db, current):
                if derived.kind == PROTOCOL_KIND and derived.id not in found:
                    found[derived.id] = derived
                    next_frontier.append(derived)
        frontier = next_frontier
    return list(found.values())


def declared_here(db: Database, symbol: SymbolRow) -> bool:
    """Whether the index holds the symbol's own definition (not only uses of an SDK one)."""
    return any(o.roles & Role.DEFINITION for o in db.occurrences_of(symbol.id))


def adopted_protocols(db: Database, types: Iterable[SymbolRow]) -> set[int]:
    """Protocols the types name in an inheritance clause (theirs or their extensions'),
    and those protocols' own bases, as far as the index records them."""
    adopted: set[int] = set()
    frontier = list(types)
    seen: set[int] = set()
    while frontier:
        current = frontier.pop()
        if current.id in seen:
            continue
        seen.add(current.id)
        for container in [current, *extensions_of(db, current)]:
            for relation in db.related_occurrences(container.id, Role.REL_BASEOF):
                base_id = relation.occurrence.symbol_id
                base = db.symbols_by_ids([base_id]).get(base_id)
                if base is not None and base.kind == PROTOCOL_KIND and base.id not in adopted:
                    adopted.add(base.id)
                    frontier.append(base)
    return adopted


def supertypes(db: Database, type_symbol: SymbolRow) -> list[SymbolRow]:
    """Superclasses and adopted protocols, as the type's (and its extensions') inheritance
    clauses name them, and theirs in turn: what a member of the type can be inherited from."""
    found: dict[int, SymbolRow] = {}
    frontier = [type_symbol]
    seen = {type_symbol.id}
    while frontier:
        current = frontier.pop()
        for container in [current, *extensions_of(db, current)]:
            for relation in db.related_occurrences(container.id, Role.REL_BASEOF):
                base_id = relation.occurrence.symbol_id
                if base_id in seen:
                    continue
                seen.add(base_id)
                base = db.symbols_by_ids([base_id]).get(base_id)
                if base is not None and base.kind in TYPE_KINDS:
                    found[base.id] = base
                    frontier.append(base)
    return list(found.values())
