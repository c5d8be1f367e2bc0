"""The one resolver from a name an agent types to the symbols it means.

Every tool that takes a name (`find_symbol`, `find_references` by name, the CLI's name
arguments) goes through `resolve`. The rules, in docs/tools.md ("Resolving names"):

- a query is a dotted path: qualifiers (modules, types, nested types; generic arguments
  such as `Tree<Element>` are dropped), then a member spelled `name`, `name(labels:)`,
  `name(...)`, `init(…)`, `subscript(…)` or an operator (`+`, `+(_:_:)`); `@Wrapper`
  names the wrapper type;
- the qualifiers must be the end of the candidate's whole path (module, then each
  enclosing type; an extension counts as the type it extends), so `Outer.Inner.member`
  checks `Outer` too, and `Module.Type` works; a member declared in a superclass, an
  adopted protocol or a protocol extension of the named type matches as *inherited*;
- a bare name finds exact names and every labelled form (`cancel` → `cancel()` and the
  enum case `cancel`); labels given in part (`decode(of:)`) match in order, after exact ones;
- candidates are symbols defined in the project, then symbols of the SDK that the project
  uses; parameters and locals only when nothing else matches; extensions, accessors and
  macro-generated helpers never.

Order: project before SDK, direct before inherited, then types, functions and methods,
properties, enum cases, then exact before base-name before partial labels; for a name
typed with a container or with labels, the match comes first of all (exact before
base-name before partial labels, then project, directness, kind). Then a protocol
requirement before its default implementations, a written declaration before a
synthesised one, then the most used, then path, line and USR: the same order every time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from xcindex.indexstore.database import PARAMETER_KIND, Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Property, Role, is_generated_name, kind_name, language_name
from xcindex.swift.lexer import mask
from xcindex.swift.names import Query, labels_match, name_labels, parse_query
from xcindex.swift.source import source_lines
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.shapes import CandidateJson
from xcindex.vocabulary import MatchedBy

MODULE_KIND = 1
EXTENSION_KIND = 9
PROTOCOL_KIND = 8
CLASS_KIND = 7
TYPE_KINDS = frozenset({5, 6, 7, 8, 11})  # enum, struct, class, protocol, typealias
NOMINAL_KINDS = frozenset({5, 6, 7, 8})
FUNCTION_KINDS = frozenset({12, 16, 17, 18, 22, 23})
PROPERTY_KINDS = frozenset({13, 14, 19, 20, 21})
ENUM_CASE_KIND = 15
ACCESSOR_SUBKINDS = frozenset({3, 4, 1000, 1001, 1002, 1003, 1014, 1015, 1016, 1017, 1018})
GENERIC_PARAM_SUBKIND = 1013
SUBSCRIPT_SUBKIND = 1011

_IMPLICIT = int(Role.IMPLICIT)  # an int: IntFlag arithmetic costs in loops over thousands
_SIGNATURE_LIMIT = 160


# --- candidates ----------------------------------------------------------------------------


EXACT, BASE_NAME, PARTIAL_LABELS = MatchedBy.EXACT, MatchedBy.BASE_NAME, MatchedBy.PARTIAL_LABELS
_MATCH_RANK = {EXACT: 0, BASE_NAME: 1, PARTIAL_LABELS: 2}


@dataclass(frozen=True)
class Candidate:
    symbol: SymbolRow
    definition: OccurrenceRow | None
    """None for an SDK symbol (no source here)."""
    container: tuple[str, ...] = ()
    """Enclosing types, outermost first (an extension counts as the type it extends)."""
    container_kind: int | None = None
    module: str = ""
    matched_by: MatchedBy = EXACT
    inherited: bool = False
    uses: int = 0
    local: bool = False
    overrides: frozenset[int] = field(default=frozenset())
    """Symbol ids this one overrides or witnesses (a default implementation: its requirement)."""
    in_extension: bool = False
    hint: str | None = None
    exact_first: bool = False
    """The query named a container or labels: a member named exactly as typed outranks
    members that share only its base name or some labels, whatever their kinds
    (`Node.scalar` is the property, not `case scalar(_:)`). A bare name keeps kinds first,
    so `cancel` lists the methods before the enum case."""

    @property
    def in_project(self) -> bool:
        return self.definition is not None

    @cached_property
    def signature(self) -> str:
        """The declaration's text from its source line (up to its body), read when it is
        shown: `init` has thousands of candidates and a page shows 25."""
        return declaration_text(self.definition)

    @property
    def container_name(self) -> str | None:
        return ".".join(self.container) if self.container else None

    def kind_rank(self) -> int:
        kind = self.symbol.kind
        if kind in TYPE_KINDS and self.symbol.subkind != GENERIC_PARAM_SUBKIND:
            return 0
        if kind in FUNCTION_KINDS or self.symbol.subkind == SUBSCRIPT_SUBKIND:
            return 1
        if kind in PROPERTY_KINDS:
            return 2
        if kind == ENUM_CASE_KIND:
            return 3
        return 4

    def tier(self) -> tuple[int, int, int, int]:
        """What ranks candidates before their use count: equal tiers are equally meant. For
        a name typed with a container or labels, how it matched comes first: exact labels
        beat partial ones before project beats SDK and direct beats inherited (the labelled
        `subscript(position:)` a type inherits from a protocol extension, not its own
        unlabelled `subscript(_:)`, which `position:` matches only in part)."""
        match, kind = _MATCH_RANK[self.matched_by], self.kind_rank()
        project, inherited = 0 if self.in_project else 1, 1 if self.inherited else 0
        if self.exact_first:
            return (match, project, inherited, kind)
        return (project, inherited, kind, match)

    @property
    def synthesized(self) -> bool:
        """Declared by the compiler (a memberwise or Codable initialiser), not in the source."""
        return self.definition is not None and bool(self.definition.roles & _IMPLICIT)

    @property
    def is_requirement(self) -> bool:
        return self.container_kind == PROTOCOL_KIND and not self.in_extension

    def sort_key(self) -> tuple[Any, ...]:
        """Tier, then a protocol requirement before its namesakes (its default
        implementations), a declaration written in the source before a synthesised one,
        then the most used, then where it is declared."""
        occ = self.definition
        return (
            *self.tier(),
            0 if self.is_requirement else 1,
            1 if self.synthesized else 0,
            -self.uses,
            occ.path if occ else "",
            occ.line if occ else 0,
            self.symbol.usr,
        )

    def to_json(self) -> CandidateJson:
        occ = self.definition
        item: CandidateJson = {
            "usr": self.symbol.usr,
            "name": self.symbol.name,
            "kind": kind_name(self.symbol.kind),
            "language": language_name(self.symbol.language),
            "definitionPath": occ.path if occ else None,
            "definitionLine": occ.line if occ else None,
            "container": self.container_name,
            "module": self.module,
            "signature": self.signature,
            "matchedBy": self.matched_by,
        }
        if self.inherited:
            item["inherited"] = True
        if not self.in_project:
            item["inProject"] = False
        if self.hint:
            item["hint"] = self.hint
        return item


@dataclass(frozen=True)
class Resolution:
    query: Query
    candidates: tuple[Candidate, ...]

    @property
    def matched_by(self) -> MatchedBy:
        return self.candidates[0].matched_by if self.candidates else MatchedBy.NONE

    @cached_property
    def single(self) -> tuple[Candidate | None, str | None]:
        return pick_one(self.candidates)


def pick_one(candidates: Sequence[Candidate]) -> tuple[Candidate | None, str | None]:
    """The one symbol a tool that needs one takes, and a note when that took a decision;
    (None, None) when the name is ambiguous. A protocol requirement with its default
    implementations resolves to the requirement; otherwise the first candidate when no
    other is ranked as high (same tier)."""
    if not candidates:
        return None, None
    if len(candidates) == 1:
        return candidates[0], None
    top = [c for c in candidates if _meant_alike(c, candidates[0])]
    requirements = [c for c in top if c.container_kind == PROTOCOL_KIND and not c.in_extension]
    if len(requirements) == 1:
        requirement = requirements[0]
        others = [c for c in top if c is not requirement]
        if others and all(requirement.symbol.id in c.overrides for c in others):
            defaults = ", ".join(c.symbol.usr for c in others if _is_default(c, requirement))
            witnesses = ", ".join(c.symbol.usr for c in others if not _is_default(c, requirement))
            named = " and ".join(
                [f"its default implementation(s) ({defaults})"] * bool(defaults)
                + [f"witness(es) in conforming types ({witnesses})"] * bool(witnesses)
            )
            return requirement, (
                f"'{requirement.symbol.name}' names a protocol requirement and {named}; "
                f"taken: the requirement {requirement.symbol.usr}"
            )
    if len(top) == 1:
        return top[0], None
    return None, None


def _is_default(candidate: Candidate, requirement: Candidate) -> bool:
    """A default implementation of `requirement`: declared in an extension of the protocol
    itself. A conforming type's witness, even one written in an extension of that type
    (`extension Feature: Greeter { func greet() }`), is not one."""
    return (
        candidate.in_extension
        and candidate.container == requirement.container
        and requirement.symbol.id in candidate.overrides
    )


def _meant_alike(one: Candidate, other: Candidate) -> bool:
    """Ranked as high as each other for a tool that needs one symbol: the same
    project-ness, directness and kind group (and, for a qualified name, match)."""
    if one.exact_first:
        return one.tier() == other.tier()
    return one.tier()[:3] == other.tier()[:3]


# --- the resolver --------------------------------------------------------------------------


def _module_of_usr(usr: str) -> str:
    """The module a Swift USR names (`s:10Foundation6BundleC…` → Foundation; `s:S…` → Swift);
    for a Clang USR, `ObjectiveC` or `C` (its USR names no module)."""
    if usr.startswith("s:S"):
        return "Swift"
    match = re.match(r"s:(\d+)", usr)
    if match:
        length = int(match.group(1))
        start = match.end()
        return usr[start : start + length]
    if usr.startswith("c:"):
        return "ObjectiveC" if usr.startswith("c:objc(") else "C"
    return ""


_STANDARD_TYPES = {"SS": "String", "Sa": "Array", "SD": "Dictionary", "Sh": "Set", "Si": "Int", "Sd": "Double",
                   "Sb": "Bool", "Sq": "Optional", "SQ": "Equatable", "SH": "Hashable", "Sl": "Collection",
                   "ST": "Sequence", "SL": "Comparable", "Sf": "Float", "Su": "UInt"}  # fmt: skip


def _sdk_container(usr: str) -> tuple[str, ...]:
    """Best effort: the enclosing type names an SDK USR spells before the member."""
    if not usr.startswith("s:"):
        return ()
    body = usr[2:]
    names: list[str] = []
    if body[:2] in _STANDARD_TYPES:
        names.append(_STANDARD_TYPES[body[:2]])
        body = body[2:]
    elif body.startswith("So"):
        body = body[2:]
    else:
        match = re.match(r"(\d+)", body)
        if not match:
            return ()
        body = body[match.end() + int(match.group(1)) :]  # the module
    while True:
        match = re.match(r"(\d+)", body)
        if not match:
            break
        start = match.end()
        name = body[start : start + int(match.group(1))]
        rest = body[start + len(name) :]
        if not rest or rest[0] not in "CVOP":
            break
        names.append(name)
        body = rest[1:]
    return tuple(names)


class _Facts:
    """What the resolver learns about symbols during one resolution (batched, cached)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.symbols: dict[int, SymbolRow] = {}
        self.definitions: dict[int, OccurrenceRow | None] = {}
        self.parents: dict[int, int | None] = {}
        self.extended: dict[int, int | None] = {}
        self.overrides: dict[int, set[int]] = {}
        self._loaded_last: list[int] = []

    def load(self, ids: Iterable[int]) -> None:
        """Learn the given symbols and, level by level, every type enclosing them: a few
        batched queries per level, whatever the number of candidates."""
        wanted = {i for i in ids if i not in self.definitions}
        while wanted:
            self._load_level(sorted(wanted))
            wanted = set()
            for symbol_id in self._loaded_last:
                owner = self.owner(symbol_id)[0]
                if owner is not None and owner not in self.definitions:
                    wanted.add(owner)

    def _load_level(self, wanted: list[int]) -> None:
        self._loaded_last = wanted
        self.symbols.update(self.db.symbols_by_ids(wanted))
        declarations = self.db.declarations_of(wanted)
        parents = self.db.related_symbol_ids(wanted, Role.REL_CHILDOF)
        overrides = self.db.related_symbol_ids(wanted, Role.REL_OVERRIDEOF)
        new_parents: set[int] = set()
        for symbol_id in wanted:
            written = [o for o in declarations.get(symbol_id, []) if not o.roles & _IMPLICIT]
            self.definitions[symbol_id] = canonical_occurrence(written or declarations.get(symbol_id, []))
            parent = min(parents[symbol_id]) if symbol_id in parents else None
            self.parents[symbol_id] = parent
            self.overrides[symbol_id] = overrides.get(symbol_id, set())
            if parent is not None:
                new_parents.add(parent)
        self.symbols.update(self.db.symbols_by_ids(p for p in new_parents if p not in self.symbols))
        new_extensions = sorted(
            p for p in new_parents if p not in self.extended and self.symbols[p].kind == EXTENSION_KIND
        )
        if new_extensions:
            extended = self.db.related_by(new_extensions, Role.REL_EXTENDEDBY)
            for extension_id in new_extensions:
                targets = extended.get(extension_id)
                self.extended[extension_id] = min(targets) if targets else None

    def owner(self, symbol_id: int) -> tuple[int | None, bool]:
        """The type (or function) that declares the symbol, extensions seen through, and
        whether the declaration is in an extension."""
        parent = self.parents.get(symbol_id)
        if parent is not None and self.symbols[parent].kind == EXTENSION_KIND:
            return self.extended.get(parent), True
        return parent, False

    def path(self, symbol_id: int) -> tuple[tuple[str, ...], int | None, bool]:
        """(enclosing names outermost first, the innermost one's kind, in an extension)."""
        names: list[str] = []
        owner, in_extension = self.owner(symbol_id)
        first_kind: int | None = None
        current = owner
        seen: set[int] = set()
        while current is not None and current not in seen:
            seen.add(current)
            if current not in self.definitions:
                self.load([current])
            symbol = self.symbols.get(current)
            if symbol is None:
                break
            if first_kind is None:
                first_kind = symbol.kind
            if symbol.name:  # an anonymous C struct or union is no part of a name anyone types
                names.append(symbol.name)
            current = self.owner(current)[0]
        return tuple(reversed(names)), first_kind, in_extension


def declaration_text(occ: OccurrenceRow | None) -> str:
    """The declaration's text from the source, up to its body, at most 160 characters. A head
    written over several lines (`func decode<T>(_ type: T.Type,` / `from yaml: String,` / `…)
    throws -> T where …`) is joined: its first line alone does not tell overloads apart."""
    if occ is None:
        return ""
    lines = source_lines(occ.path)
    if not 0 < occ.line <= len(lines):
        return ""
    text = _declaration_head(lines, occ.line - 1)
    return text if len(text) <= _SIGNATURE_LIMIT else text[: _SIGNATURE_LIMIT - 1] + "…"


_CONTINUATIONS = (")", "]", "->", "throws", "rethrows", "async", "where")
"""A line starting so continues the declaration head above it, brackets balanced or not."""
_HEAD_LINES = 12
_SPACE_AFTER_OPEN = re.compile(r"([(\[])\s+")
_SPACE_BEFORE_CLOSE = re.compile(r"\s+([)\]])")


def _declaration_head(lines: Sequence[str], start: int) -> str:
    """The head from line `start` on: the lines joined while a parenthesis or bracket is open
    or the next line continues it, cut at the body's `{`. Brackets and braces are read from
    `mask`'s text, so none inside a string or a comment counts; the words are the source's."""
    written = lines[start : start + _HEAD_LINES]
    parts: list[str] = []
    depth = 0
    # Not strict: trailing empty lines are dropped by the join and split, and never matter.
    for offset, (line, code) in enumerate(zip(written, mask("\n".join(written)), strict=False)):
        if offset and depth <= 0 and not code.strip().startswith(_CONTINUATIONS):
            break
        indent = len(code) - len(code.lstrip())
        cut: int | None = None
        for at, char in enumerate(code):
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif char == "{" and depth <= 0 and at > indent:
                cut = at
                break
        parts.append((line if cut is None else line[:cut]).strip())
        if cut is not None:
            break
    text = " ".join(part for part in parts if part)
    return _SPACE_BEFORE_CLOSE.sub(r"\1", _SPACE_AFTER_OPEN.sub(r"\1", text))


def _is_local(symbol: SymbolRow) -> bool:
    return (
        symbol.kind == PARAMETER_KIND
        or bool(symbol.properties & Property.LOCAL)
        or symbol.subkind == GENERIC_PARAM_SUBKIND
    )


def _named(db: Database, query: Query) -> list[tuple[SymbolRow, MatchedBy]]:
    """Symbols whose name matches the member, and how."""
    found: dict[int, tuple[SymbolRow, MatchedBy]] = {}
    if query.labels is None:
        for symbol in db.symbols_by_name(query.base):
            found[symbol.id] = (symbol, EXACT)
    for symbol in db.symbols_by_base_name(query.base):
        if symbol.id in found:
            continue
        _, have = name_labels(symbol.name)
        if query.labels is None:
            found[symbol.id] = (symbol, BASE_NAME)
        elif have == query.labels:
            found[symbol.id] = (symbol, EXACT)
        elif have is not None and labels_match(query.labels, have, subscript=query.base == "subscript"):
            found[symbol.id] = (symbol, PARTIAL_LABELS)
    return list(found.values())


def _ends_with(path: Sequence[str], qualifiers: Sequence[str]) -> bool:
    return len(qualifiers) <= len(path) and tuple(path[len(path) - len(qualifiers) :]) == tuple(qualifiers)


def _supertypes(db: Database, type_ids: Iterable[int], limit: int = 32) -> set[int]:
    """Superclasses, adopted protocols (also through extensions) and refined protocols."""
    found: set[int] = set()
    frontier = set(type_ids)
    for _ in range(limit):
        if not frontier:
            break
        extensions = db.relating_symbol_ids(sorted(frontier), Role.REL_EXTENDEDBY)
        holders = sorted(frontier | {e for ids in extensions.values() for e in ids})
        direct = db.related_by(holders, Role.REL_BASEOF)
        supers = {s for ids in direct.values() for s in ids} - found
        found |= supers
        frontier = supers
    return found


def resolve(db: Database, text: str, *, _inherit: bool = True) -> Resolution:
    """The candidates for a typed name, in the order documented in the module docstring."""
    query = parse_query(text)
    if not query.base:
        return Resolution(query, ())
    facts = _Facts(db)
    named = [
        (symbol, how)
        for symbol, how in _named(db, query)
        if symbol.kind not in (EXTENSION_KIND, MODULE_KIND)
        and symbol.subkind not in ACCESSOR_SUBKINDS
        and not is_generated_name(symbol.name)
        and (not query.types_only or symbol.kind in NOMINAL_KINDS)
    ]
    if query.qualifiers and len(named) > _PREFILTER_FROM:
        named = _under_qualifier(db, query, named)
    facts.load(symbol.id for symbol, _ in named)
    uses = db.written_use_counts([symbol.id for symbol, _ in named])
    modules: set[str] | None = None

    def project_modules() -> set[str]:
        nonlocal modules
        if modules is None:
            modules = {module for _path, _mtime, module, _target, _test in db.live_files()}
        return modules

    owner_types: set[int] | None = None
    candidates: list[Candidate] = []
    for symbol, how in named:
        definition = facts.definitions.get(symbol.id)
        if definition is None and not uses.get(symbol.id):
            continue  # neither defined nor used here (a dead unit, a generated file)
        if definition is None and _module_of_usr(symbol.usr) in project_modules():
            continue  # the project's own, its definition unreadable: not an SDK symbol
        if definition is not None:
            container, container_kind, in_extension = facts.path(symbol.id)
            modules = {definition.module}
            root = _root_type(facts, symbol.id)
            root_definition = facts.definitions.get(root) if root is not None else None
            if root_definition is not None:
                modules.add(root_definition.module)
        else:
            container, container_kind, in_extension = _sdk_container(symbol.usr), None, False
            modules = {_module_of_usr(symbol.usr)}
        inherited = False
        if query.qualifiers and not any(_ends_with((m, *container), query.qualifiers) for m in modules):
            if not _inherit:
                continue
            if owner_types is None:
                owner_types = _qualifier_supertypes(db, query)
            owner, _ = facts.owner(symbol.id)
            declared_in_super = (owner is not None and owner in owner_types) or (
                definition is None and bool(container) and container[-1] in _names(db, owner_types)
            )
            if not declared_in_super:
                continue
            inherited = True
        candidates.append(
            Candidate(
                symbol=symbol,
                definition=definition,
                container=container,
                container_kind=container_kind,
                module=min(modules) if definition is None else definition.module,
                matched_by=how,
                inherited=inherited,
                uses=uses.get(symbol.id, 0),
                local=_is_local(symbol),
                overrides=frozenset(facts.overrides.get(symbol.id, ())),
                in_extension=in_extension,
                exact_first=bool(query.qualifiers) or query.labels is not None,
            )
        )
    direct_names = {c.symbol.name for c in candidates if not c.inherited}
    candidates = [c for c in candidates if not (c.inherited and c.symbol.name in direct_names)]
    if any(not c.local for c in candidates):
        candidates = [c for c in candidates if not c.local]
    by_usr: dict[str, Candidate] = {}
    for candidate in sorted(candidates, key=Candidate.sort_key):
        by_usr.setdefault(candidate.symbol.usr, candidate)
    ordered = _with_hints(list(by_usr.values()))
    return Resolution(query, tuple(ordered))


_PREFILTER_FROM = 16
_SWIFT_LANGUAGE = 100


def _under_qualifier(
    db: Database, query: Query, named: list[tuple[SymbolRow, MatchedBy]]
) -> list[tuple[SymbolRow, MatchedBy]]:
    """A cheap first cut for a qualified name whose member is a common name (`compute` in
    each of 1,250 families): keep the symbols declared in a type named like the last
    qualifier, in its extensions or in its supertypes (inherited members), and those the
    cut cannot judge (top level: the qualifier may be a module; C members of anonymous
    records; no declaration here). The whole path is checked afterwards, as for any name."""
    owners = [s.id for s in db.symbols_by_name(query.qualifiers[-1]) if s.kind in NOMINAL_KINDS]
    if not owners:
        return named  # a module, or nothing: no cut
    types = set(owners) | _supertypes(db, owners)
    extensions = db.relating_symbol_ids(sorted(types), Role.REL_EXTENDEDBY)
    allowed = types | {e for ids in extensions.values() for e in ids}
    parents = db.related_symbol_ids([symbol.id for symbol, _ in named], Role.REL_CHILDOF)
    return [
        (symbol, how)
        for symbol, how in named
        if not parents.get(symbol.id) or parents[symbol.id] & allowed or symbol.language != _SWIFT_LANGUAGE
    ]


def _root_type(facts: _Facts, symbol_id: int) -> int | None:
    """The outermost type enclosing the symbol (its module is the type's module)."""
    current, _ = facts.owner(symbol_id)
    root = None
    seen: set[int] = set()
    while current is not None and current not in seen:
        seen.add(current)
        root = current
        if current not in facts.definitions:
            facts.load([current])
        current, _ = facts.owner(current)
    return root


def _qualifier_supertypes(db: Database, query: Query) -> set[int]:
    """The supertypes of the types the qualifiers name (for inherited members)."""
    owners = resolve(db, ".".join(query.qualifiers), _inherit=False)
    types = [c.symbol.id for c in owners.candidates if c.symbol.kind in NOMINAL_KINDS]
    return _supertypes(db, types) if types else set()


def _names(db: Database, ids: set[int]) -> set[str]:
    return {symbol.name for symbol in db.symbols_by_ids(ids).values()}


def _with_hints(candidates: list[Candidate]) -> list[Candidate]:
    """A one-line hint where candidates are easy to confuse: overloads (same base name in
    the same type) and a requirement next to its default implementations."""
    by_id = {c.symbol.id: c for c in candidates}
    groups: dict[tuple[tuple[str, ...], str], list[Candidate]] = {}
    for c in candidates:
        groups.setdefault((c.container, name_labels(c.symbol.name)[0]), []).append(c)
    result: list[Candidate] = []
    for c in candidates:
        hint: str | None = None
        requirement = next((by_id[i] for i in sorted(c.overrides) if i in by_id), None)
        if (
            requirement is not None
            and requirement.container_kind == PROTOCOL_KIND
            and _is_default(c, requirement)
        ):
            hint = f"default implementation of the requirement {requirement.symbol.usr}"
        elif c.container_kind == PROTOCOL_KIND and not c.in_extension:
            defaults = [d.symbol.usr for d in candidates if _is_default(d, c)]
            if defaults:
                hint = "protocol requirement; default implementation(s): " + ", ".join(defaults)
        if hint is None:
            group = groups[(c.container, name_labels(c.symbol.name)[0])]
            if len(group) > 1 and c.definition is not None:
                where = f" in {c.container_name}" if c.container else ""
                hint = (
                    f"one of {len(group)} matching overloads of {name_labels(c.symbol.name)[0]}{where}; "
                    f"this one is {c.symbol.name} (line {c.definition.line})"
                )
        result.append(c if hint is None else replace(c, hint=hint))
    return result
