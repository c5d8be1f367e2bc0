"""Renames that build but change meaning: Codable keys, property-wrapper-derived names,
`@objc` selectors (plan_rename's warnings). Read from the database and, for attributes, the
definition's source lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.tools.rename.structure import (
    CLASS_KIND,
    ENUM_KIND,
    STRUCT_KIND,
    adopted_protocols,
    extensions_of,
    members_of,
    owner_type,
)
from xcindex.vocabulary import WarningCode

INSTANCE_PROPERTY_KIND = 19
_ENCODABLE, _DECODABLE = "s:SE", "s:Se"
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


def _codable_directions(db: Database, type_symbol: SymbolRow) -> tuple[bool, bool]:
    """Whether the type is Encodable, and whether it is Decodable, as far as the index shows
    (in its declaration or an extension, directly, through `Codable` or a refining protocol)."""
    adopted = adopted_protocols(db, [type_symbol])

    def adopts(usr: str) -> bool:
        protocol = db.symbol_by_usr(usr)
        return protocol is not None and protocol.id in adopted

    return adopts(_ENCODABLE), adopts(_DECODABLE)


def _written(db: Database, symbol: SymbolRow) -> bool:
    return any(
        o.roles & Role.DEFINITION and not o.roles & Role.IMPLICIT for o in db.occurrences_of(symbol.id)
    )


def coding_key_change(db: Database, owner: SymbolRow, name: str) -> str | None:
    """How renaming the stored property `name` changes `owner`'s coding, or None when it does
    not. A key is synthesised from the property's name when the compiler synthesises
    `encode(to:)` or `init(from:)` (a direction the type conforms to and does not implement
    by hand) and no `CodingKeys` is written, or when hand-written code names a `CodingKeys`
    the compiler then makes; a written `CodingKeys` case maps the property by its name when
    a direction is synthesised. Hand-written coding with unkeyed containers has no key."""
    encodable, decodable = _codable_directions(db, owner)
    if not (encodable or decodable):
        return None
    members = [m for container in (owner, *extensions_of(db, owner)) for m in members_of(db, container)]
    hand_encode = any(m.name == "encode(to:)" and _written(db, m) for m in members)
    hand_decode = any(m.name == "init(from:)" and _written(db, m) for m in members)
    synthesised = (encodable and not hand_encode) or (decodable and not hand_decode)
    keys = [m for m in members if m.name == "CodingKeys"]
    written_keys = [k for k in keys if _written(db, k)]
    if written_keys:
        if synthesised and any(case.name == name for key in written_keys for case in members_of(db, key)):
            return (
                f"{name} is a stored property of Codable {owner.name}, whose written CodingKeys.{name} maps it "
                "by name for the synthesised coding: rename that case too (the encoded key changes) or keep "
                f'the key with a raw value (`case <newName> = "{name}"`); the plan renames neither, and '
                "without one of them it does not build."
            )
        return None
    if synthesised or keys:
        return (
            f"{name} is a stored property of Codable {owner.name} (no CodingKeys written): its synthesized "
            "coding key, and so the encoded format, changes with the name."
        )
    return None


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
        change = coding_key_change(db, owner, symbol.name)
        if change is not None:
            keyed = _coding_key_sites(db, owner, symbol.name)
            sites = ", ".join(f"{o.path}:{o.line}:{o.column}" for o in keyed)
            warnings.append(
                (
                    WarningCode.CODABLE_KEY_RENAMED,
                    change + (f" Uses of the key the index shows (not renamed): {sites}." if sites else ""),
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
    for member in members_of(db, owner):
        if member.name != "CodingKeys":
            continue
        for case in members_of(db, member):
            if case.name == name:
                sites.extend(o for o in db.occurrences_of(case.id) if not o.roles & Role.IMPLICIT)
    return sorted(sites, key=lambda o: (o.path, o.line, o.column))
