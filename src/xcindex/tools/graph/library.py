"""Library dispatch narrowed by type: what a witness of a requirement declared outside the
index can be run from (docs/tools.md, "Reach").

A witness of `Equatable.==`, `Hashable.hash(into:)`, `Comparable.<`, `Encodable.encode(to:)`,
`CustomStringConvertible.description` or a Collection requirement is run by library code the
index does not see: `XCTAssertEqual` compares through `==`, `Set.insert` hashes, `sorted()`
compares, string interpolation describes. Library code runs it only on values of the
witness's type that project code hands to it, so what it reaches is code that holds such a
value and hands it on:

- the *handed types*: the witness's type, its subtypes (subclasses; a default
  implementation's conformers), and the types holding one of those (a stored property's or
  an enum case's type names it), to a fixed point;
- the *holders*: code that mentions a handed type (a type annotation, a construction, a
  static member or an enum case of it), and the callers of code whose signature names one
  (a function returning it, a property of it): they are handed a value;
- of the holders, those that hand it on: code calling a *generic entry* to the
  requirement, a function whose generic signature names the requirement's protocol or one
  refining it (read from the index's USRs with the toolchain's `swift-demangle`:
  `XCTAssertEqual<A where A: Swift.Equatable>`, `Swift.Set.insert`, `Swift.Sequence.sorted`),
  the requirement itself, or a generic function of the project calling one of those (`encode<A
  where A: Swift.Encodable>` calling `value.encode(to:)`), which passes on what it is handed.
  A test is such code like any other: for `Ticket.==`, one that mentions `Ticket` and
  calls `XCTAssertEqual` is reached; one that sorts `Priority` values is not (it names no
  type holding a Ticket), and for `Priority.<` it is (`sorted()` is Comparable's entry).
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import (
    extended_types,
    external_callees,
    members_of,
    mentions_in,
    related_through,
    typealiases_naming,
    types_taking_typealiases,
    users_of,
    written_occurrences,
)
from xcindex.indexstore.model import Role
from xcindex.project.toolchain import find_swift_demangle
from xcindex.swift.declarations import scan_declarations
from xcindex.swift.source import source_lines
from xcindex.tools.common import canonical_occurrence
from xcindex.tools.graph.dispatch import (
    EXTENSION_KIND,
    PROPERTY_KINDS,
    PROTOCOL_SUBSTITUTIONS,
    Dispatch,
    requirement_protocol,
)

DEMANGLE_TIMEOUT_S = 30.0
MAX_HANDED_TYPES = 200
"""Handed types at most (a type held by everything would make every holder a candidate)."""
_VALUE_MEMBER_KINDS = frozenset({15, 17, 18, 20, 21})
"""enumConstant, classMethod, staticMethod, classProperty, staticProperty: `.low`, `.zero`."""
_HOLDING_KINDS = PROPERTY_KINDS | {15}
"""A mention held by a property or an enum case is its type (or its payload's)."""
_FUNCTION_KINDS = frozenset({12, 16, 17, 18, 22})
_DESCRIBES = (
    "Swift.print(",
    "Swift.debugPrint(",
    "Swift.dump<",
    "(describing:",
    "(reflecting:",
    "Swift.DefaultStringInterpolation.appendInterpolation<",
)
r"""Library functions that describe any value (through `description` when it has one). A
string interpolation `"\(error)"` is an implicit call to `appendInterpolation<A>(A)`, which
the index records: Yams's YamlErrorTests reach `YamlError.description` only through it."""
_REFINED_BY: dict[str, tuple[str, ...]] = {
    "Swift.Equatable": (
        "Swift.Hashable",
        "Swift.Comparable",
        "Swift.Strideable",
        "Swift.AdditiveArithmetic",
        "Swift.Numeric",
        "Swift.BinaryInteger",
        "Swift.SignedInteger",
        "Swift.UnsignedInteger",
        "Swift.FloatingPoint",
        "Swift.BinaryFloatingPoint",
        "Swift.StringProtocol",
        "Swift.SetAlgebra",
        "Swift.Set",
        "Swift.Dictionary",
    ),
    "Swift.Hashable": ("Swift.StringProtocol", "Swift.BinaryInteger", "Swift.Set", "Swift.Dictionary"),
    "Swift.Comparable": (
        "Swift.Strideable",
        "Swift.BinaryInteger",
        "Swift.FloatingPoint",
        "Swift.StringProtocol",
        "Swift.Range",
        "Swift.ClosedRange",
        "Swift.RangeExpression",
    ),
    "Swift.CustomStringConvertible": ("Swift.LosslessStringConvertible", *_DESCRIBES),
    "Swift.CustomDebugStringConvertible": _DESCRIBES,
}
_COLLECTIONS = (
    "Swift.Sequence",
    "Swift.Collection",
    "Swift.BidirectionalCollection",
    "Swift.RandomAccessCollection",
    "Swift.MutableCollection",
    "Swift.RangeReplaceableCollection",
    "Swift.IteratorProtocol",
    "Swift.LazySequenceProtocol",
)
for _name in _COLLECTIONS:
    _REFINED_BY[_name] = tuple(n for n in _COLLECTIONS if n != _name)


@dataclass(frozen=True)
class LibraryWitness:
    """A changed symbol that witnesses (or overrides) something declared outside the index."""

    symbol_id: int
    bases: frozenset[int]
    """The outside requirements (or methods) it witnesses."""


def library_callers(db: Database, dispatch: Dispatch, witnesses: list[LibraryWitness]) -> set[int]:
    """The code library dispatch can run these witnesses from (the module docstring's rule)."""
    owners = dispatch.owners(w.symbol_id for w in witnesses)
    types = {owner.type_id for owner in owners.values() if owner is not None}
    if not types:
        return set()
    bases = {base for w in witnesses for base in w.bases}
    names = family(db, bases)
    handed = handed_types(db, dispatch, types, containers=names)
    holders = holders_of(db, dispatch, handed)
    if not holders:
        return set()
    return holders & users_of(db, generic_entries(db, bases, names))


def holding(
    db: Database,
    dispatch: Dispatch,
    implementation: int,
    *,
    bases: frozenset[int] = frozenset(),
    enclosing: bool = False,
) -> frozenset[int]:
    """The code holding a value of the implementation's type (or a type handed with it).
    With `bases` (requirements declared outside the index it witnesses): where a call of them
    can run it, the types holding one that conform to their protocols included. With
    `enclosing`: where generic code can be handed it, a nested type handed with the types it
    is declared in (`Int8.AtomicRepresentation` through `Int8`: generic code reaches it as
    `Value.AtomicRepresentation`). Kept until the database changes."""
    owner = dispatch.owners([implementation])[implementation]
    if owner is None:
        return frozenset()
    kept: dict[tuple[int, frozenset[int], bool], frozenset[int]] = db.derived("library.holding", dict)
    key = (owner.type_id, bases, enclosing)
    if key not in kept:
        names = family(db, set(bases)) if bases else None
        handed = handed_types(db, dispatch, {owner.type_id}, containers=names, enclosing=enclosing)
        kept[key] = frozenset(holders_of(db, dispatch, handed))
    return kept[key]


def handed_types(
    db: Database,
    dispatch: Dispatch,
    type_ids: set[int],
    *,
    containers: set[str] | None = None,
    enclosing: bool = False,
) -> set[int]:
    """The types and their subtypes, to a fixed point; with `containers` (protocol names), the
    types holding one (a property's or enum case's type names it) that conform to one of
    those protocols, whose synthesised `==`, `hash(into:)`, `encode(to:)` run their members';
    with `enclosing`, the types each is declared in."""
    found = set(type_ids)
    frontier = set(type_ids)
    while frontier and len(found) < MAX_HANDED_TYPES:
        # A typealias naming one is the same type to its users (`Logger.Metadata` is
        # `[String: MetadataValue]`): code naming the alias holds the value.
        aliases = typealiases_naming(db, frontier)
        following = subtypes(db, frontier) | aliases
        if enclosing:
            following |= {o.type_id for o in dispatch.owners(frontier).values() if o is not None}
            # A protocol extension's alias that conforming types take as their associated
            # type (`Fred.AtomicRepresentation` is AtomicRawRepresentableStorage<Fred>).
            following |= types_taking_typealiases(db, aliases)
        if containers:
            holders = {holder for _used, holder, _p, _l in mentions_in(db, frontier)}
            holding = {h for h in holders if dispatch.kind(h) in _HOLDING_KINDS}
            outer = {o.type_id for o in dispatch.owners(holding).values() if o is not None} - found
            following |= _conforming(db, dispatch, outer, containers)
        frontier = following - found
        found |= frontier
    return found


def _conforming(db: Database, dispatch: Dispatch, type_ids: set[int], names: set[str]) -> set[int]:
    """The types among these that conform to one of the named protocols (directly, through an
    extension, or through a protocol of the project refining it)."""
    if not type_ids:
        return set()
    supertypes = dispatch.supertypes(type_ids)
    usrs = {
        sid: symbol.usr
        for sid, symbol in db.symbols_by_ids({s for f in supertypes.values() for s in f}).items()
    }
    readable = demangled(usrs.values())
    named = {sid for sid, usr in usrs.items() if _protocol_name(usr, readable.get(usr, "")) in names}
    return {type_id for type_id, found in supertypes.items() if found & named}


def subtypes(db: Database, type_ids: set[int]) -> set[int]:
    """The types that name one of these in their inheritance clause (an extension's: the type
    it extends): subclasses, conformers, refining protocols."""
    declaring = {
        other
        for found in related_through(db, type_ids, Role.REL_BASEOF, explicit_only=True).values()
        for other in found
    }
    kinds = db.symbols_by_ids(declaring)
    extensions = {sid for sid, symbol in kinds.items() if symbol.kind == EXTENSION_KIND}
    return (declaring - extensions) | set(extended_types(db, extensions).values())


def holders_of(db: Database, dispatch: Dispatch, types: set[int]) -> set[int]:
    """Code that mentions one of the types (or a static member or enum case of one), and the
    callers of code whose signature names one."""
    values = {
        occ.symbol_id
        for type_id in types
        for occ in members_of(db, type_id)
        if dispatch.kind(occ.symbol_id) in _VALUE_MEMBER_KINDS
    }
    mentions = mentions_in(db, types | values)
    holders = {holder for _used, holder, _path, _line in mentions}
    returning = _returning(db, dispatch, [(h, p, line) for used, h, p, line in mentions if used in types])
    return holders | (users_of(db, returning) if returning else set())


def _returning(db: Database, dispatch: Dispatch, mentions: list[tuple[int, str, int]]) -> set[int]:
    """The holders whose mention of a type is in their signature: a property's or enum case's
    type, a function's parameters or result (from its definition line to its body's brace)."""
    found = {holder for holder, _p, _l in mentions if dispatch.kind(holder) in _HOLDING_KINDS}
    functions = {holder for holder, _p, _l in mentions if dispatch.kind(holder) in _FUNCTION_KINDS}
    definitions = {
        sid: canonical_occurrence(occs) for sid, occs in written_occurrences(db, functions - found).items()
    }
    heads: dict[tuple[str, int], int] = {}
    for holder, path, line in mentions:
        definition = definitions.get(holder)
        if definition is None or definition.path != path or holder in found:
            continue
        if line == definition.line:
            found.add(holder)
            continue
        key = (path, definition.line)
        if key not in heads:
            heads[key] = _body_line(path, definition.line)
        if definition.line <= line <= heads[key]:
            found.add(holder)
    return found


def _body_line(path: str, name_line: int) -> int:
    """The line of the body's brace of the declaration named on `name_line` (its last line
    when it has no body; the name line when the scan finds none)."""
    return _body_lines(source_lines(path)).get(name_line, name_line)


@lru_cache(maxsize=64)
def _body_lines(lines: tuple[str, ...]) -> dict[int, int]:
    """Each declaration's name line → its body's brace line (one scan per file's text)."""
    found: dict[int, int] = {}
    for decl in scan_declarations("\n".join(lines)):
        found.setdefault(decl.name_line, decl.body_line or decl.end)
    return found


def family(db: Database, bases: set[int]) -> set[str]:
    """The protocols (qualified names: `Swift.Equatable`) whose requirements these are, and
    those a library signature can name to require one of them (`Swift.Hashable` for
    Equatable: a Set compares its elements)."""
    usrs = {sid: symbol.usr for sid, symbol in db.symbols_by_ids(bases).items()}
    readable = demangled(usrs.values())
    names: set[str] = set()
    for sid, usr in usrs.items():
        context = _context(readable.get(usr, ""), db.symbols_by_ids([sid])[sid].name) or _token_name(usr)
        if context:
            names.add(context)
            names.update(_REFINED_BY.get(context, ()))
    return names


def generic_entries(db: Database, bases: set[int], names: set[str]) -> set[int]:
    """Where the library can be handed a value to run these requirements on: the
    requirements themselves; the library's callees whose signature names their protocols (or
    one refining them: `Swift.Set` and `Swift.Dictionary` hash their elements and keys, as
    `family` names them); and the project's generic functions that call one of those
    (`encode<A where A: Swift.Encodable>` calling `value.encode(to:)`), which pass on what
    they are handed."""
    callees = db.derived("library.external_callees", lambda: external_callees(db))
    readable = demangled(callees.values())
    found = set(bases)
    if names:
        pattern = re.compile("|".join(_whole(name) for name in sorted(names)))
        tokens = tuple(t for t, name in PROTOCOL_SUBSTITUTIONS.items() if f"Swift.{name}" in names)
        for sid, usr in callees.items():
            text = readable.get(usr, "")
            if (text and pattern.search(text)) or (not text and any(t in usr[2:] for t in tokens)):
                found.add(sid)
    wrappers = users_of(db, found)
    wrapper_usrs = {sid: symbol.usr for sid, symbol in db.symbols_by_ids(wrappers).items()}
    wrapper_text = demangled(wrapper_usrs.values())
    return found | {sid for sid, usr in wrapper_usrs.items() if _GENERIC.search(wrapper_text.get(usr, ""))}


def _whole(name: str) -> str:
    """A pattern for `name` as a whole name: not inside a longer one (`Swift.Equatable` is not
    `Swift.EquatableThing`); a name ending in punctuation (`Swift.dump<`, `Swift.print(`) is
    followed by anything."""
    before = r"(?<![\w.])" if name[:1].isalnum() else ""
    after = r"(?![\w])" if name[-1:].isalnum() else ""
    return before + re.escape(name) + after


_GENERIC = re.compile(r"[<(: ]A[>),.: ]")
"""A generic parameter in a demangled signature (`<A where A: …>`, `(A)`, `A.Element`)."""


def _context(text: str, member: str) -> str | None:
    """`Swift.Equatable` out of `static Swift.Equatable.== infix(A, A) -> Swift.Bool` (the
    member's base name is the index's)."""
    base = member.split("(")[0]
    at = text.find(f".{base}")
    if at <= 0:
        return None
    context = text[:at].split(" ")[-1]
    return context or None


def _token_name(usr: str) -> str | None:
    """The protocol's readable name from a requirement's USR, when swift-demangle is missing."""
    token = requirement_protocol(usr)
    return None if token is None else _readable(token)


def _protocol_name(usr: str, readable: str) -> str | None:
    """A protocol's readable name: swift-demangle's, else read from its USR (`s:SQ`,
    `s:…P`)."""
    if readable:
        return readable
    token = usr[2:] if usr.startswith("s:") else ""
    if token in PROTOCOL_SUBSTITUTIONS:
        return _readable(token)
    return _readable(token[:-1]) if token.endswith("P") else None


def _readable(token: str) -> str:
    """`Swift.Equatable` for `SQ`, `Logging.LogHandler` for `7Logging10LogHandler`."""
    if token in PROTOCOL_SUBSTITUTIONS:
        return f"Swift.{PROTOCOL_SUBSTITUTIONS[token]}"
    parts: list[str] = []
    at = 0
    if token.startswith("s") and token[1:2].isdigit():
        parts.append("Swift")
        at = 1
    while at < len(token):
        end = at
        while end < len(token) and token[end].isdigit():
            end += 1
        length = int(token[at:end] or 0)
        if length == 0:
            break
        parts.append(token[end : end + length])
        at = end + length + (1 if token[end + length : end + length + 1] in ("V", "C", "O") else 0)
    return ".".join(parts)


_demangled: dict[str, str] = {}
_demangle_lock = threading.Lock()


def demangled(usrs: Iterable[str]) -> dict[str, str]:
    """USR → the toolchain's reading of it (`XCTest.XCTAssertEqual<A where A:
    Swift.Equatable>(…)`), '' when it cannot read it (or there is no swift-demangle). Kept
    for the process: a USR always reads the same."""
    wanted = {usr for usr in usrs if usr.startswith("s:")}
    with _demangle_lock:
        todo = sorted(usr for usr in wanted if usr not in _demangled)
        if todo:
            tool = find_swift_demangle()
            lines: list[str] = []
            if tool is not None:
                try:
                    result = subprocess.run(
                        [str(tool)],
                        input="\n".join("$s" + usr[2:] for usr in todo) + "\n",
                        capture_output=True,
                        text=True,
                        timeout=DEMANGLE_TIMEOUT_S,
                        check=False,
                    )
                    lines = result.stdout.split("\n")
                except (OSError, subprocess.TimeoutExpired):
                    lines = []
            for index, usr in enumerate(todo):
                line = lines[index] if index < len(lines) else ""
                _demangled[usr] = "" if line.startswith("$s") else line
        return {usr: _demangled.get(usr, "") for usr in wanted}
