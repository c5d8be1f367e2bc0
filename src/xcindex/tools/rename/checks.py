"""What plan_rename must refuse, complete or warn about beyond the index's own relations.

Pure functions over the database (and, for attributes, the definition's source line): the
refusals for members the compiler calls by their spelling, the witnesses of a renamed
requirement that the index does not relate to it, and the renames that change meaning
while still building (Codable keys, property-wrapper-derived names, `@objc` selectors).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.vocabulary import RefusalReason, WarningCode

PROTOCOL_KIND = 8
EXTENSION_KIND = 9
CLASS_KIND = 7
STRUCT_KIND = 6
ENUM_KIND = 5
VARIABLE_KIND = 13
INSTANCE_PROPERTY_KIND = 19
CONSTRUCTOR_KIND = 22
DESTRUCTOR_KIND = 23
PARAMETER_KIND = 25
SUBSCRIPT_SUBKIND = 1011
LOCAL_PROPERTY = 1 << 7
TYPE_KINDS = frozenset({ENUM_KIND, STRUCT_KIND, CLASS_KIND, PROTOCOL_KIND})
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


def _parent_of(db: Database, occurrences: Iterable[OccurrenceRow]) -> SymbolRow | None:
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
    parent = _parent_of(db, db.occurrences_of(member.id))
    if parent is not None and parent.kind == EXTENSION_KIND:
        return extended_type(db, parent)
    return parent


def _extensions_of(db: Database, type_symbol: SymbolRow) -> list[SymbolRow]:
    ids = {r.symbol_id for r in db.related_occurrences_of(type_symbol.id, Role.REL_EXTENDEDBY)}
    return [s for s in db.symbols_by_ids(ids).values() if s.kind == EXTENSION_KIND]


def _members_of(db: Database, container: SymbolRow) -> list[SymbolRow]:
    ids = {r.occurrence.symbol_id for r in db.related_occurrences(container.id, Role.REL_CHILDOF)}
    return list(db.symbols_by_ids(ids).values())


def _derived_types(db: Database, base: SymbolRow) -> list[SymbolRow]:
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
    whose name and kind match, and with their overrides, to a fixed point."""
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
            protocol = owner_type(db, symbol)
            if protocol is None or protocol.kind != PROTOCOL_KIND:
                continue
            conformers = _conforming_types(db, protocol)
            found = _matching_members(db, conformers, symbol)
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
    requirements = [s for s in renamed.values() if _declared_in_protocol(db, s)]
    for symbol in renamed.values():
        parent = _parent_of(db, db.occurrences_of(symbol.id))
        if parent is None or parent.kind != EXTENSION_KIND:
            continue
        extended = extended_type(db, parent)
        if extended is None or extended.kind != PROTOCOL_KIND:
            continue
        # A default implementation serves the requirement of its own protocol and those of
        # every refining protocol with the same name and kind, whatever the index relates.
        served = {r.id: r for r in _requirements_witnessed(db, symbol)}
        reach = _inheriting(db, extended)
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
        parent = _parent_of(db, db.occurrences_of(symbol.id))
        if parent is not None and parent.kind == PROTOCOL_KIND:
            names.update(p.name for p in _inheriting(db, parent))
    return names


def _declared_in_protocol(db: Database, symbol: SymbolRow) -> bool:
    parent = _parent_of(db, db.occurrences_of(symbol.id))
    return parent is not None and parent.kind == PROTOCOL_KIND


def _inheriting(db: Database, protocol: SymbolRow) -> list[SymbolRow]:
    """The protocol and every protocol that refines it, transitively."""
    found: dict[int, SymbolRow] = {protocol.id: protocol}
    frontier = [protocol]
    while frontier:
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            for derived in _derived_types(db, current):
                if derived.kind == PROTOCOL_KIND and derived.id not in found:
                    found[derived.id] = derived
                    next_frontier.append(derived)
        frontier = next_frontier
    return list(found.values())


def _conforming_types(db: Database, protocol: SymbolRow) -> dict[int, SymbolRow]:
    """The protocol and every type reached from it by inheritance (conformers, their
    subclasses, refining protocols and their conformers)."""
    types: dict[int, SymbolRow] = {protocol.id: protocol}
    frontier = [protocol]
    while frontier:
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            for derived in _derived_types(db, current):
                if derived.id not in types and derived.kind in TYPE_KINDS:
                    types[derived.id] = derived
                    next_frontier.append(derived)
        frontier = next_frontier
    return types


def _matching_members(db: Database, types: dict[int, SymbolRow], requirement: SymbolRow) -> list[SymbolRow]:
    """Same name and kind, in the types (their extensions included)."""
    wanted_kind = _static_kind(requirement.kind)
    found: list[SymbolRow] = []
    for type_symbol in types.values():
        containers = [type_symbol, *_extensions_of(db, type_symbol)]
        for container in containers:
            for member in _members_of(db, container):
                if member.name == requirement.name and _static_kind(member.kind) == wanted_kind:
                    found.append(member)
    return found


def _declared_here(db: Database, symbol: SymbolRow) -> bool:
    """Whether the index holds the symbol's own definition (not only uses of an SDK one)."""
    return any(o.roles & Role.DEFINITION for o in db.occurrences_of(symbol.id))


def _adopted_protocols(db: Database, types: Iterable[SymbolRow]) -> set[int]:
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
        for container in [current, *_extensions_of(db, current)]:
            for relation in db.related_occurrences(container.id, Role.REL_BASEOF):
                base_id = relation.occurrence.symbol_id
                base = db.symbols_by_ids([base_id]).get(base_id)
                if base is not None and base.kind == PROTOCOL_KIND and base.id not in adopted:
                    adopted.add(base.id)
                    frontier.append(base)
    return adopted


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
        parent = _parent_of(db, db.occurrences_of(member.id))
        if parent is None or parent.kind != EXTENSION_KIND:
            continue
        extended = extended_type(db, parent)
        if extended is None or extended.kind != PROTOCOL_KIND or extended.id in types:
            continue
        if adopted is None:
            adopted = _adopted_protocols(db, types.values())
        if extended.id in adopted:
            found.append(member)
            continue
        if _declared_here(db, extended):
            continue
        if sdk_conformer is None:
            sdk_conformer = any(t.kind != PROTOCOL_KIND and not _declared_here(db, t) for t in types.values())
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


# --- meaning that changes while it builds ----------------------------------------------

_CODABLE_USRS = ("s:SE", "s:Se", "s:s7Codablea")
_NOT_WRAPPERS = frozenset(
    {
        "MainActor",
        "Sendable",
        "TaskLocal",
        "UIApplicationMain",
        "NSApplicationMain",
        "IBOutlet",
        "IBAction",
        "IBInspectable",
        "GKInspectable",
        "NSManaged",
        "NSCopying",
        "Test",
        "Suite",
        "Observable",
        "ObservationIgnored",
        "ObservationTracked",
    }
)
_ATTRIBUTE = re.compile(r"@([A-Z][A-Za-z0-9_]*)")
_ATTRIBUTE_NAME = re.compile(r"\s*@[A-Za-z_][A-Za-z0-9_.]*(<[^>\n]*>)?")
ATTRIBUTE_LINES_ABOVE = 12
"""How far above a definition its attribute lines are looked for."""


def attributes_only(text: str) -> bool:
    """`text` is one or more attributes and nothing else (`@Option(name: .long,\n help: "…")`,
    `@MainActor @objc`); false for a declaration (`@Flag var verbose = false`)."""
    rest = text
    matched = False
    while match := _ATTRIBUTE_NAME.match(rest):
        matched = True
        rest = rest[match.end() :]
        if rest.startswith("("):
            depth = 0
            for index, char in enumerate(rest):
                depth += (char == "(") - (char == ")")
                if depth == 0:
                    rest = rest[index + 1 :]
                    break
            else:
                return False
    return matched and not rest.strip()


def _conforms_to_codable(db: Database, type_symbol: SymbolRow) -> bool:
    codable_ids = {s.id for usr in _CODABLE_USRS if (s := db.symbol_by_usr(usr)) is not None}
    for codable in codable_ids:
        for relation in db.related_occurrences_of(codable, Role.REL_BASEOF):
            target = db.symbols_by_ids([relation.symbol_id]).get(relation.symbol_id)
            if target is not None and target.kind == EXTENSION_KIND:
                target = extended_type(db, target)
            if target is not None and target.id == type_symbol.id:
                return True
    return False


def _has_explicit_coding_keys(db: Database, type_symbol: SymbolRow) -> bool:
    for member in _members_of(db, type_symbol):
        if member.name == "CodingKeys" and any(
            not o.roles & Role.IMPLICIT for o in db.occurrences_of(member.id)
        ):
            return True
    return False


def semantic_warnings(
    db: Database,
    renamed: Iterable[SymbolRow],
    definition_text: Callable[[OccurrenceRow], str],
) -> list[tuple[WarningCode, str]]:
    """Renames that build but change behaviour: Codable keys, wrapper-derived names, selectors."""
    warnings: list[tuple[WarningCode, str]] = []
    for symbol in renamed:
        occurrences = db.occurrences_of(symbol.id)
        definitions = [o for o in occurrences if o.roles & Role.DEFINITION and not o.roles & Role.IMPLICIT]
        if not definitions:
            continue
        definition = min(definitions, key=lambda o: (o.path, o.line, o.column))
        where = f"{definition.path}:{definition.line}:{definition.column}"
        text = definition_text(definition)
        if "@objc" in text:
            warnings.append(
                (
                    WarningCode.OBJC_SELECTOR,
                    f"{symbol.name} at {where} is @objc: its selector changes with the name "
                    "(#selector, key-value observing and Objective-C callers spelled by string break).",
                )
            )
        if symbol.kind != INSTANCE_PROPERTY_KIND:
            continue
        wrappers = [name for name in _ATTRIBUTE.findall(text) if name not in _NOT_WRAPPERS]
        if wrappers:
            warnings.append(
                (
                    WarningCode.PROPERTY_WRAPPER_DERIVED_NAME,
                    f"{symbol.name} at {where} is wrapped by @{wrappers[0]}, which may derive an outside "
                    "name from the property's (a command-line option, a defaults key): it changes too.",
                )
            )
        owner = owner_type(db, symbol)
        if (
            owner is None
            or owner.kind not in (STRUCT_KIND, CLASS_KIND, ENUM_KIND)
            or _is_computed(text, symbol.name)
        ):
            continue
        if _conforms_to_codable(db, owner) and not _has_explicit_coding_keys(db, owner):
            keyed = _coding_key_sites(db, owner, symbol.name)
            sites = ", ".join(f"{o.path}:{o.line}:{o.column}" for o in keyed)
            warnings.append(
                (
                    WarningCode.CODABLE_KEY_RENAMED,
                    f"{symbol.name} is a stored property of Codable {owner.name} (no CodingKeys): its "
                    "synthesized coding key, and so the encoded format, changes with the name."
                    + (f" Uses of the key the index shows (not renamed): {sites}." if sites else ""),
                )
            )
            if keyed:
                warnings.append(
                    (
                        WarningCode.STRING_KEYED_LOOKUP,
                        f"{len(keyed)} site(s) look {symbol.name} up by its coding key: {sites}.",
                    )
                )
    return warnings


def _is_computed(text: str, name: str) -> bool:
    """`var name: T { … }` (no initial value before the brace) is not encoded."""
    match = re.search(rf"\b(?:var|let)\s+{re.escape(name)}\b([^\n]*)", text)
    if match is None:
        return False
    rest = match.group(1)
    brace = rest.find("{")
    return brace >= 0 and "=" not in rest[:brace]


def _coding_key_sites(db: Database, owner: SymbolRow, name: str) -> list[OccurrenceRow]:
    """Written uses of the synthesized `CodingKeys.<name>` case (`forKey: .name`)."""
    sites: list[OccurrenceRow] = []
    for member in _members_of(db, owner):
        if member.name != "CodingKeys":
            continue
        for case in _members_of(db, member):
            if case.name == name:
                sites.extend(o for o in db.occurrences_of(case.id) if not o.roles & Role.IMPLICIT)
    return sorted(sites, key=lambda o: (o.path, o.line, o.column))
