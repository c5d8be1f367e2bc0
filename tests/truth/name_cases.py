"""The names an agent types for each symbol a project declares, generated from the
independent dump alone (store_dump.py), never from xcindex.

For every symbol declared in the source of a live file (a written, not implicit, definition
or declaration; no parameters, locals, generic parameters, accessors, extensions, anonymous
C members, and no macro expansion's helpers, whose names start with `$`):

- `bare`: the base name (`send`);
- `Type.member`: the innermost enclosing type and the base name (`NameClient.send`);
- `Type.member(labels:)`: the same with the full name, for a labelled member;
- `Module.Type.member(labels:)`: the module of the file that declares it, every enclosing
  type and the full name (`CanaryCore.NameClient.send(_:)`; `CanaryCore.greetAll(_:)` at
  the top level); none for a C target, whose units name no module;
- `Subclass.member(labels:)`: for a member of a class or a protocol (initialisers left
  out: a subclass's inherited initialiser is its own symbol), through the first (by USR)
  project type that directly inherits or adopts that type, in its declaration or in an
  extension, and declares no member of the same name itself, implicitly or not. Such a
  name means every member of that name the type inherits: declared in any of its
  supertypes (superclasses, adopted and refined protocols, their extensions), less a class
  member that another class member there overrides (Swift's lookup drops it); a protocol
  requirement stays beside its default implementations and witnesses. A case is made for
  each of them (`Hyacinth.AtomicRepresentation` in swift-atomics: the associated type of
  `AtomicValue`, adopted through `AtomicOptionalWrappable`, and the typealias of an
  extension of `RawRepresentable`).

The enclosing types come from `childOf` relations (an extension stands for the type it
extends, by its `extendedBy` relation), inheritance from `baseOf` relations, modules from
the units. A name can mean several symbols (overloads named without labels, a requirement
and its default implementation, a property and an enum case): `denoted` says which, and a
resolver can put at most one of them first.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.truth.store_dump import (
    ACCESSOR_SUBKINDS,
    BASE_OF,
    CHILD_OF,
    CLASS,
    CONSTRUCTOR,
    ENUM,
    EXTENDED_BY,
    EXTENSION,
    GENERIC_TYPE_PARAM,
    LOCAL,
    OVERRIDE_OF,
    PARAMETER,
    PROTOCOL,
    STRUCT,
    LiveIndex,
    LiveOccurrence,
    Symbol,
)

FORMS = (
    "bare",
    "Type.member",
    "Type.member(labels:)",
    "Module.Type.member(labels:)",
    "Subclass.member(labels:)",
)
QUALIFIED = FORMS[1:]
CONCRETE_TYPES = frozenset({ENUM, STRUCT, CLASS})


@dataclass(frozen=True)
class Case:
    form: str
    query: str
    usr: str


@dataclass(frozen=True)
class Declared:
    symbol: Symbol
    definition: LiveOccurrence
    """The written definition, else declaration, first in (path, line, column)."""
    owner: str | None
    """The enclosing type or function (an extension: the type it extends)."""
    container: tuple[str, ...]
    """The names of the enclosing types, outermost first (unnamed C records left out)."""


class Facts:
    """Owners and inheritance from the dump's relations."""

    def __init__(self, index: LiveIndex) -> None:
        self.index = index
        self.parent: dict[str, str] = {}
        self.extended: dict[str, str] = {}
        self.extensions: dict[str, set[str]] = {}
        for usr, edges in index.edges_from.items():
            parents = sorted({e.related for e in edges if e.roles & CHILD_OF and e.occurrence.declares})
            if parents:
                self.parent[usr] = parents[0]
            for edge in edges:
                if edge.roles & EXTENDED_BY:
                    self.extended.setdefault(edge.related, usr)
        for extension, target in self.extended.items():
            self.extensions.setdefault(target, set()).add(extension)

    def kind(self, usr: str) -> int | None:
        symbol = self.index.symbols.get(usr)
        return symbol.kind if symbol else None

    def owner(self, usr: str) -> str | None:
        parent = self.parent.get(usr)
        if parent is not None and self.kind(parent) == EXTENSION:
            return self.extended.get(parent)
        return parent

    def container(self, usr: str) -> tuple[str, ...]:
        names: list[str] = []
        seen = {usr}
        current = self.owner(usr)
        while current is not None and current not in seen:
            seen.add(current)
            symbol = self.index.symbols.get(current)
            if symbol is not None and symbol.name:
                names.append(symbol.name)
            current = self.owner(current)
        return tuple(reversed(names))

    def heirs(self, usr: str) -> list[str]:
        """Project enums, structs and classes that name `usr` in their inheritance clause or
        in that of one of their extensions, by USR."""
        found: set[str] = set()
        for subtype in self.index.related(usr, BASE_OF):
            target = self.extended.get(subtype) if self.kind(subtype) == EXTENSION else subtype
            if target is not None and self.kind(target) in CONCRETE_TYPES and self.index.declarations(target):
                found.add(target)
        return sorted(found)

    def holders(self, usr: str) -> set[str]:
        """The type and its extensions."""
        return {usr} | self.extensions.get(usr, set())

    def member_names(self, usr: str) -> set[str]:
        """Names of everything declared in the type or its extensions, implicit members too."""
        return {
            self.index.symbols[child].name
            for holder in self.holders(usr)
            for child in self.index.relating(holder, CHILD_OF)
            if child in self.index.symbols
        }

    def supertypes(self, usr: str) -> set[str]:
        """The superclasses, adopted protocols and the protocols they refine, named in the
        inheritance clauses of the type, of its extensions, and so on up. An enum's raw type
        (`enum Fred: Int`) is named there too, and is none of them."""
        found: set[str] = set()
        frontier = {usr}
        while frontier:
            bases = {
                base
                for t in frontier
                for h in self.holders(t)
                for base in self.index.relating(h, BASE_OF)
                if self.kind(base) == PROTOCOL or self.kind(base) == self.kind(t) == CLASS
            }
            frontier = bases - found - {usr}
            found |= frontier
        return found


def declared(facts: Facts) -> dict[str, Declared]:
    """The symbols the project declares in its source, by USR."""
    index = facts.index
    found: dict[str, Declared] = {}
    for usr, symbol in index.symbols.items():
        if (
            not symbol.name
            or symbol.name.startswith("$")
            or symbol.kind in (PARAMETER, EXTENSION)
            or symbol.properties & LOCAL
            or symbol.subkind in ACCESSOR_SUBKINDS
            or symbol.subkind == GENERIC_TYPE_PARAM
        ):
            continue
        definition = index.definition(usr)
        if definition is not None:
            found[usr] = Declared(symbol, definition, facts.owner(usr), facts.container(usr))
    return found


def generate_cases(index: LiveIndex) -> list[Case]:
    facts = Facts(index)
    symbols = declared(facts)
    cases: list[Case] = []
    inherited: dict[str, set[tuple[str, str]]] = {}
    """A `Subclass.member(labels:)` query → (the type it goes through, the member's name)."""
    for usr in sorted(symbols):
        item = symbols[usr]
        name, container = item.symbol.name, item.container
        base = name.partition("(")[0]
        cases.append(Case("bare", base, usr))
        if container:
            cases.append(Case("Type.member", f"{container[-1]}.{base}", usr))
            if "(" in name:
                cases.append(Case("Type.member(labels:)", f"{container[-1]}.{name}", usr))
        if item.definition.module:
            cases.append(
                Case("Module.Type.member(labels:)", ".".join((item.definition.module, *container, name)), usr)
            )
        if (
            item.owner is not None
            and facts.kind(item.owner) in (CLASS, PROTOCOL)
            and item.symbol.kind != CONSTRUCTOR
        ):
            heirs = [h for h in facts.heirs(item.owner) if name not in facts.member_names(h)]
            if heirs:
                query = f"{index.symbols[heirs[0]].name}.{name}"
                inherited.setdefault(query, set()).add((heirs[0], name))
    by_name: dict[str, list[Declared]] = {}
    for item in symbols.values():
        by_name.setdefault(item.symbol.name, []).append(item)
    for query, through in sorted(inherited.items()):
        meant = {usr for heir, name in through for usr in _inherited_members(facts, by_name[name], heir)}
        cases.extend(Case("Subclass.member(labels:)", query, usr) for usr in sorted(meant))
    return cases


def _inherited_members(facts: Facts, namesakes: list[Declared], heir: str) -> set[str]:
    """What `Heir.name` can mean: the namesakes declared in the heir's supertypes, less the
    class members another class member there overrides."""
    supertypes = facts.supertypes(heir)
    found = {
        item.symbol.usr: item
        for item in namesakes
        if item.owner in supertypes and item.symbol.kind != CONSTRUCTOR
    }
    overridden = {
        target
        for usr in found
        for target in facts.index.related(usr, OVERRIDE_OF)
        if target in found and facts.kind(found[target].owner or "") == CLASS
    }
    return set(found) - overridden


def denoted(cases: list[Case]) -> dict[str, set[str]]:
    """Each query → the symbols it was generated for (whatever the form: one text, one meaning)."""
    meant: dict[str, set[str]] = {}
    for case in cases:
        meant.setdefault(case.query, set()).add(case.usr)
    return meant
