"""What plan_rename must refuse or complete beyond the index's own relations.

Pure functions over the database: the refusals for members the compiler calls by their
spelling, and the witnesses of a renamed requirement that the index does not relate to it.
What changes meaning while it builds is in meaning.py, collisions in collisions.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xcindex.indexstore.database import Database, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.tools.rename.structure import (
    EXTENSION_KIND,
    PROTOCOL_KIND,
    TYPE_KINDS,
    adopted_protocols,
    declared_here,
    declared_in_protocol,
    derived_types,
    extended_type,
    extensions_of,
    inheriting,
    members_of,
    owner_type,
    parent_of,
)
from xcindex.vocabulary import RefusalReason

VARIABLE_KIND = 13
CONSTRUCTOR_KIND = 22
DESTRUCTOR_KIND = 23
PARAMETER_KIND = 25
SUBSCRIPT_SUBKIND = 1011
LOCAL_PROPERTY = 1 << 7
_STATIC_KINDS = {17: 18, 20: 21}
"""Class methods and properties witness static requirements alike."""
COMPILER_REQUIRED_NAMES = {
    "appendInterpolation": "string interpolation calls it by name",
    "appendLiteral": "string interpolation calls it by name",
    "callAsFunction": "calling a value as a function uses it",
    "dynamicallyCall": "@dynamicCallable calls it by name",
    "dynamicMember": "@dynamicMemberLookup calls subscript(dynamicMember:) by name",
    "buildBlock": "a result builder calls it by name",
    "buildExpression": "a result builder calls it by name",
    "buildOptional": "a result builder calls it by name",
    "buildIf": "a result builder calls it by name",
    "buildEither": "a result builder calls it by name",
    "buildArray": "a result builder calls it by name",
    "buildLimitedAvailability": "a result builder calls it by name",
    "buildFinalResult": "a result builder calls it by name",
    "buildPartialBlock": "a result builder calls it by name",
    "buildDo": "a result builder calls it by name",
    "wrappedValue": "a property wrapper must spell it so",
    "projectedValue": "a property wrapper's $ projection uses it",
    "CodingKeys": "Codable synthesis looks the enum up by name",
    "encode(to:)": "Codable requires it (Encodable)",
    "unownedExecutor": "custom actor executors are found by name",
}
"""Members the compiler finds by their spelling, not through a relation the index records
(base names, or full names where the base name alone is too common)."""


def refusal_reason(symbol: SymbolRow) -> tuple[RefusalReason, str, str] | None:
    """Why this symbol cannot be renamed at all, with a message and a remediation."""
    base = symbol.name.split("(", 1)[0]
    if (
        symbol.kind in (CONSTRUCTOR_KIND, DESTRUCTOR_KIND)
        or symbol.subkind == SUBSCRIPT_SUBKIND
        or base in ("init", "deinit", "subscript")
    ):
        return (
            RefusalReason.SPECIAL_MEMBER_NOT_RENAMEABLE,
            f"{symbol.name} is an initializer, deinitializer or subscript: its name is a keyword, "
            "not an identifier a rename can change.",
            "Rename its argument labels by hand, or replace it with a named method or static factory.",
        )
    why = COMPILER_REQUIRED_NAMES.get(symbol.name) or COMPILER_REQUIRED_NAMES.get(base)
    if why is None and "dynamicMember:" in symbol.name:
        why = COMPILER_REQUIRED_NAMES["dynamicMember"]
    if why is None and base == "main" and symbol.kind in (17, 18):
        why = "@main calls the static main() by name"
    if why is not None:
        return (
            RefusalReason.COMPILER_REQUIRED_NAME,
            f"{symbol.name} cannot be renamed: {why}; the code would still build or fail far from the rename.",
            "Keep the name; rename the type or the call sites that use it instead.",
        )
    if symbol.kind == PARAMETER_KIND or (symbol.kind == VARIABLE_KIND and symbol.properties & LOCAL_PROPERTY):
        return (
            RefusalReason.LOCAL_SYMBOL_NOT_RENAMEABLE,
            f"{symbol.name} is a parameter or local variable: the index does not record its uses, so a "
            "plan would rename the declaration and miss the body.",
            "Rename it in the editor (its uses are all in one function body).",
        )
    return None


def _static_kind(kind: int) -> int:
    return _STATIC_KINDS.get(kind, kind)


@dataclass(frozen=True)
class WitnessCompletion:
    added: dict[int, SymbolRow]
    """Members added by name and kind (no index relation), by symbol id."""
    in_other_protocols: frozenset[int]
    """Those of `added` declared in an extension of another protocol (SDK ones included)
    that a conforming type adopts, or may adopt where the index cannot say."""
    shared: list[tuple[SymbolRow, list[SymbolRow]]]
    """Default implementations that satisfy more than one requirement, and those requirements."""


def complete_witnesses(
    db: Database,
    renamed: dict[int, SymbolRow],
    overriders: Callable[[SymbolRow], list[SymbolRow]],
    *,
    max_rounds: int = 8,
) -> WitnessCompletion:
    """Grow `renamed` (in place) with the members of every type conforming to a renamed
    requirement's protocol (its extensions, subclasses and refining protocols included)
    whose name and kind match, and with their overrides, to a fixed point. Only a
    requirement (declared in the protocol's body) has witnesses: a member of a protocol
    extension is dispatched statically, and the same-named members of the protocol's own
    extensions are its default implementations (the index relates those) or overloads
    nobody asked to rename."""
    added: dict[int, SymbolRow] = {}
    in_other_protocols: set[int] = set()
    shared: list[tuple[SymbolRow, list[SymbolRow]]] = []
    done: set[int] = set()
    for _ in range(max_rounds):
        grew = False
        for symbol in list(renamed.values()):
            if symbol.id in done:
                continue
            done.add(symbol.id)
            protocol = parent_of(db, db.occurrences_of(symbol.id))
            if protocol is None or protocol.kind != PROTOCOL_KIND:
                continue
            conformers = _conforming_types(db, protocol)
            found = _matching_members(db, conformers, symbol, protocol)
            elsewhere = _other_protocol_witnesses(db, conformers, symbol)
            in_other_protocols.update(m.id for m in elsewhere if m.id not in renamed)
            for member in [*found, *elsewhere]:
                if member.id in renamed:
                    continue
                renamed[member.id] = member
                added[member.id] = member
                for deeper in overriders(member):
                    renamed.setdefault(deeper.id, deeper)
                grew = True
        if not grew:
            break
    requirements = [s for s in renamed.values() if declared_in_protocol(db, s)]
    for symbol in renamed.values():
        parent = parent_of(db, db.occurrences_of(symbol.id))
        if parent is None or parent.kind != EXTENSION_KIND:
            continue
        extended = extended_type(db, parent)
        if extended is None or extended.kind != PROTOCOL_KIND:
            continue
        # A default implementation serves the requirement of its own protocol and those of
        # every refining protocol with the same name and kind, whatever the index relates.
        served = {r.id: r for r in _requirements_witnessed(db, symbol)}
        reach = inheriting(db, extended)
        for requirement in requirements:
            if requirement.name == symbol.name and owner_type(db, requirement) in reach:
                served.setdefault(requirement.id, requirement)
        if len(served) > 1:
            shared.append((symbol, sorted(served.values(), key=lambda r: r.usr)))
    return WitnessCompletion(added, frozenset(in_other_protocols), shared)


def requirement_protocols(db: Database, usrs: Iterable[str]) -> set[str]:
    """Names of the protocols declaring any of these symbols as a requirement, and of every
    protocol refining them: a type adopting one of them needs the renamed witness."""
    names: set[str] = set()
    for usr in usrs:
        symbol = db.symbol_by_usr(usr)
        if symbol is None:
            continue
        parent = parent_of(db, db.occurrences_of(symbol.id))
        if parent is not None and parent.kind == PROTOCOL_KIND:
            names.update(p.name for p in inheriting(db, parent))
    return names


def _conforming_types(db: Database, protocol: SymbolRow) -> dict[int, SymbolRow]:
    """The protocol and every type reached from it by inheritance (conformers, their
    subclasses, refining protocols and their conformers)."""
    types: dict[int, SymbolRow] = {protocol.id: protocol}
    frontier = [protocol]
    while frontier:
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            for derived in derived_types(db, current):
                if derived.id not in types and derived.kind in TYPE_KINDS:
                    types[derived.id] = derived
                    next_frontier.append(derived)
        frontier = next_frontier
    return types


def _matching_members(
    db: Database, types: dict[int, SymbolRow], requirement: SymbolRow, protocol: SymbolRow
) -> list[SymbolRow]:
    """Same name and kind, in the conforming types (their extensions included) and in the
    bodies of refining protocols; not in the requirement's own protocol, nor in any
    protocol's extensions (see complete_witnesses)."""
    wanted_kind = _static_kind(requirement.kind)
    found: list[SymbolRow] = []
    for type_symbol in types.values():
        if type_symbol.id == protocol.id:
            continue
        if type_symbol.kind == PROTOCOL_KIND:
            containers = [type_symbol]
        else:
            containers = [type_symbol, *extensions_of(db, type_symbol)]
        for container in containers:
            for member in members_of(db, container):
                if member.name == requirement.name and _static_kind(member.kind) == wanted_kind:
                    found.append(member)
    return found


def _other_protocol_witnesses(
    db: Database, types: dict[int, SymbolRow], requirement: SymbolRow
) -> list[SymbolRow]:
    """Members with the requirement's name (labels included) and kind declared in an
    extension of a protocol outside its inheritance (`extension FixedWidthInteger { static
    func construct(from:) }` serving `extension Int8: ScalarConstructible {}`). Kept when a
    conforming type adopts that protocol as far as the index shows, or when the protocol is
    an SDK one and some conforming type is an SDK type: the index holds no SDK type's
    conformances, so whether `Int8` is a `FixedWidthInteger` cannot be read from it."""
    wanted_kind = _static_kind(requirement.kind)
    adopted: set[int] | None = None
    sdk_conformer: bool | None = None
    found: list[SymbolRow] = []
    for member in db.symbols_by_name(requirement.name):
        if member.id == requirement.id or _static_kind(member.kind) != wanted_kind:
            continue
        parent = parent_of(db, db.occurrences_of(member.id))
        if parent is None or parent.kind != EXTENSION_KIND:
            continue
        extended = extended_type(db, parent)
        if extended is None or extended.kind != PROTOCOL_KIND or extended.id in types:
            continue
        if adopted is None:
            adopted = adopted_protocols(db, types.values())
        if extended.id in adopted:
            found.append(member)
            continue
        if declared_here(db, extended):
            continue
        if sdk_conformer is None:
            sdk_conformer = any(t.kind != PROTOCOL_KIND and not declared_here(db, t) for t in types.values())
        if sdk_conformer:
            found.append(member)
    return found


def _requirements_witnessed(db: Database, symbol: SymbolRow) -> list[SymbolRow]:
    ids = {
        r.symbol_id
        for r in db.related_occurrences_of(symbol.id, Role.REL_OVERRIDEOF)
        if r.occurrence.roles & (Role.DEFINITION | Role.DECLARATION)
    }
    return sorted(db.symbols_by_ids(ids).values(), key=lambda s: s.usr)
