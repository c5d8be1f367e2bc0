"""Whether the new name is already taken where a renamed symbol is declared (plan_rename).

Renaming `static var unit` to `zero` in a type that has a `static var zero` (in its body, in
an extension, inherited from a superclass) gives code that does not build ("invalid
redeclaration", an override without `override`, ambiguous uses). For each renamed symbol
with a written declaration, the members that would share its new full name are looked for
in its type, the type's extensions, its supertypes (superclasses, adopted protocols and
their extensions) and its subclasses; at top level, among the module's top-level symbols.

A clash the compiler refuses is a `name_collision` refusal naming the existing declaration;
one it accepts but that changes what a name means (an overload by parameter or return
types, a member that now shadows a protocol extension's or witnesses an adopted protocol's
requirement) is a `name_overload` warning. SDK supertypes' members are not in the index:
a clash with one is found by the build, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.swift.names import name_labels
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.rename.structure import (
    CLASS_KIND,
    PROTOCOL_KIND,
    derived_types,
    extensions_of,
    members_of,
    owner_type,
    parent_of,
    supertypes,
)
from xcindex.tools.resolve import declaration_text
from xcindex.vocabulary import RefusalReason, WarningCode

_PROPERTY_KINDS = frozenset({13, 14, 19, 20, 21})
_FUNCTION_KINDS = frozenset({12, 16, 17, 18})
_ENUM_CASE_KIND = 15
_TYPE_KINDS = frozenset({5, 6, 7, 8, 11})
_STATIC_KINDS = frozenset({17, 18, 20, 21, _ENUM_CASE_KIND})
"""Class and static members, and enum cases (a case is a static member of its enum)."""


@dataclass(frozen=True)
class Clash:
    renamed: SymbolRow
    existing: SymbolRow
    where: OccurrenceRow
    refused: bool
    why: str

    def text(self) -> str:
        return (
            f"{self.existing.name} is already declared at {self.where.path}:{self.where.line}:{self.where.column} "
            f"({declaration_text(self.where) or self.existing.name}): {self.why}"
        )


def new_full_name(old: str, new_base: str) -> str:
    """`scaled(_:)` renamed `grow` → `grow(_:)`; a property keeps no labels."""
    _base, labels = name_labels(old)
    plain = new_base.strip("`")
    return plain if labels is None else f"{plain}({''.join(f'{label}:' for label in labels)})"


def _group(symbol: SymbolRow) -> str | None:
    """What shares a namespace: values (properties and functions, which clash as `x` and
    `x()`), enum cases, types."""
    if symbol.kind in _TYPE_KINDS:
        return "type"
    if symbol.kind in _PROPERTY_KINDS or symbol.kind in _FUNCTION_KINDS or symbol.kind == _ENUM_CASE_KIND:
        return "value"
    return None


def _same_spelling(one: str, other: str) -> bool:
    """`x` and `x()` are one name to the compiler (a property and a method without arguments)."""
    return one == other or {one, other} == {name_labels(one)[0], name_labels(one)[0] + "()"}


def _signature(text: str, base: str) -> tuple[tuple[str, ...], str] | None:
    """(parameter types, return type) from a declaration's head, spaces removed; None when
    the head cannot be read (cut, or no parameter list)."""
    match = re.search(rf"\b{re.escape(base)}\s*(?:<[^>]*>)?\s*\(", text)
    if match is None:
        return None
    depth, start, params = 0, match.end(), []
    current = ""
    for index in range(start, len(text)):
        char = text[index]
        if char in "([<" and not (char == "<" and depth == 0 and current.endswith("-")):
            depth += 1
        elif char in ")]>":
            if depth == 0 and char == ")":
                params.append(current)
                rest = text[index + 1 :]
                returns = re.search(r"->\s*(.+?)(?:\bwhere\b|$)", rest)
                kinds = tuple(_parameter_type(p) for p in params if p.strip())
                return kinds, re.sub(r"\s+", "", returns.group(1)) if returns else "Void"
            depth -= 1
        elif char == "," and depth == 0:
            params.append(current)
            current = ""
            continue
        current += char
    return None


def _parameter_type(parameter: str) -> str:
    """`_ other: CanaryAmount = .zero` → `CanaryAmount`."""
    _, _, kind = parameter.partition(":")
    return re.sub(r"\s+", "", kind.split("=", 1)[0])


def _is_static(symbol: SymbolRow) -> bool:
    return symbol.kind in _STATIC_KINDS


def _definition(db: Database, symbol: SymbolRow) -> OccurrenceRow | None:
    return canonical_occurrence(o for o in db.occurrences_of(symbol.id) if not o.roles & Role.IMPLICIT)


def _verdict(
    db: Database, renamed: SymbolRow, existing: SymbolRow, how: str, renamed_at: OccurrenceRow
) -> tuple[bool, str] | None:
    """(refused, why) when `existing` would clash with `renamed` under its new name, else
    None. `how`: "own" (the same type or its extensions), "super", "sub" (a subclass),
    "protocol extension" or "requirement" (of an adopted protocol), "top level"."""
    if _group(renamed) != _group(existing):
        return None
    if _group(renamed) == "value" and _is_static(renamed) != _is_static(existing):
        return None  # a static and an instance member may share a name
    functions = renamed.kind in _FUNCTION_KINDS and existing.kind in _FUNCTION_KINDS
    if how == "protocol extension":
        return (
            False,
            "the renamed member would shadow it: calls through the protocol still run the extension's",
        )
    if how == "requirement":
        return False, "the renamed member would witness that requirement of a protocol the type adopts"
    if functions:
        existing_at = _definition(db, existing)
        mine = _signature(declaration_text(renamed_at), name_labels(renamed.name)[0])
        theirs = (
            _signature(declaration_text(existing_at), name_labels(existing.name)[0]) if existing_at else None
        )
        if mine is not None and theirs is not None and mine != theirs:
            return False, (
                "an overload the compiler accepts (the parameter or return types differ), but a call that "
                "does not tell them apart by type becomes ambiguous or picks the other one"
            )
    if how == "super":
        return True, "a member of a superclass: the renamed one would override it without `override`"
    if how == "sub":
        return True, "a member of a subclass: it would override the renamed one without `override`"
    return True, "the renamed declaration would redeclare it (invalid redeclaration)"


def _neighbours(
    db: Database, symbol: SymbolRow, wanted: str, at: OccurrenceRow
) -> list[tuple[SymbolRow, str]]:
    """The declarations that share a namespace with `symbol`, each with how (see _verdict):
    a member's type, extensions, supertypes and subclasses; a top-level symbol's module."""
    owner = owner_type(db, symbol)
    if owner is None:
        if parent_of(db, db.occurrences_of(symbol.id)) is not None:
            return []  # declared in a function body or a C record: not looked for
        return [
            (other, "top level")
            for name in {wanted, name_labels(wanted)[0]}
            for other in db.symbols_by_name(name)
            if parent_of(db, db.occurrences_of(other.id)) is None
            and (where := _definition(db, other)) is not None
            and where.module == at.module
        ]
    found: list[tuple[SymbolRow, str]] = [
        (member, "own")
        for container in (owner, *extensions_of(db, owner))
        for member in members_of(db, container)
    ]
    for base in supertypes(db, owner):
        if base.kind == PROTOCOL_KIND:
            found += [(member, "requirement") for member in members_of(db, base)]
            found += [
                (member, "protocol extension")
                for extension in extensions_of(db, base)
                for member in members_of(db, extension)
            ]
        else:
            found += [
                (member, "super")
                for container in (base, *extensions_of(db, base))
                for member in members_of(db, container)
            ]
    if owner.kind == CLASS_KIND:
        found += [(member, "sub") for sub in _subclasses(db, owner) for member in members_of(db, sub)]
    return found


def _subclasses(db: Database, cls: SymbolRow) -> list[SymbolRow]:
    found: dict[int, SymbolRow] = {}
    frontier = [cls]
    while frontier:
        current = frontier.pop()
        for derived in derived_types(db, current):
            if derived.kind == CLASS_KIND and derived.id not in found:
                found[derived.id] = derived
                frontier.append(derived)
    return list(found.values())


def clashes(db: Database, renamed: Iterable[SymbolRow], new_name: str) -> list[Clash]:
    """Every clash of the new name with a declaration that is not renamed too (module docstring)."""
    moving = {s.id: s for s in renamed}
    found: list[Clash] = []
    for symbol in moving.values():
        at = _definition(db, symbol)
        if at is None:
            continue
        wanted = new_full_name(symbol.name, new_name)
        seen: set[int] = set()
        for other, how in _neighbours(db, symbol, wanted, at):
            if other.id in moving or other.id in seen or not _same_spelling(other.name, wanted):
                continue
            seen.add(other.id)
            where = _definition(db, other)
            verdict = _verdict(db, symbol, other, how, at) if where is not None else None
            if verdict is not None and where is not None:
                found.append(Clash(symbol, other, where, verdict[0], verdict[1]))
    return sorted(found, key=lambda c: (not c.refused, c.where.path, c.where.line, c.where.column))


def collision_report(
    found: list[Clash], new_name: str
) -> tuple[tuple[RefusalReason, str, str] | None, list[tuple[WarningCode, str]]]:
    """The refusal (the first clash the compiler refuses) and the warnings (the others)."""
    refused = [c for c in found if c.refused]
    warnings = [
        (WarningCode.NAME_OVERLOAD, f"Renaming {c.renamed.name} to {new_name}: {c.text()}.")
        for c in found
        if not c.refused
    ]
    if not refused:
        return None, warnings
    first = refused[0]
    more = f" ({len(refused) - 1} more clash(es) of the same kind)" if len(refused) > 1 else ""
    return (
        (
            RefusalReason.NAME_COLLISION,
            f"Renaming {first.renamed.name} to {new_name} does not build: {first.text()}{more}.",
            "Choose another name, or rename or remove the existing declaration first.",
        ),
        warnings,
    )
