"""Which calls dispatch routes to an override or witness, and which implementations a given
call can run: the one rule call_hierarchy, change_impact and blast_radius share
(docs/tools.md, "Reach").

A call is a *dispatch point* when it names a protocol requirement (whatever its roles:
Swift 6.3 marks `T.scale(x)` and `Self.scale(x)` with `call` alone, adding `dynamic` only
when `self` is implicit), or when the compiler marks it `dynamic` and it names a member
declared in a class's body. A member declared in an extension, a protocol's included, is
dispatched statically: calling `runTwice()` of `extension Runner` runs that method and no
other, whatever the index's `dynamic` says.

A dispatch point can run an implementation only when the receiver can be of the
implementation's type: the type the index names (`receivedBy`: a class or an existential
receiver) must be that type or one of its supertypes, and a call on `self` (written, or
implicit) in an extension of protocol P has receiver P, so it runs no method of a type that
does not conform to P. Where the index names no receiver (a generic parameter, `T.` or a
metatype) every implementation the requirement has stays possible. A default
implementation (a member of a protocol extension) is never ruled out on its receiver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xcindex.indexstore.database import Database
from xcindex.indexstore.graph_queries import (
    CallRow,
    direct_supertypes,
    extended_types,
    extensions_of,
    file_paths,
    related_through,
)
from xcindex.indexstore.model import Role
from xcindex.swift.source import source_line

ENUM_KIND, STRUCT_KIND, CLASS_KIND, PROTOCOL_KIND, EXTENSION_KIND = 5, 6, 7, 8, 9
TYPE_KINDS = frozenset({ENUM_KIND, STRUCT_KIND, CLASS_KIND, PROTOCOL_KIND})
PROPERTY_KINDS = frozenset({13, 19, 20, 21})
"""variable, instanceProperty, classProperty, staticProperty: an accessor's parent."""
_DYNAMIC = int(Role.DYNAMIC)
PROTOCOL_SUBSTITUTIONS = {
    "SB": "BinaryFloatingPoint",
    "SE": "Encodable",
    "Se": "Decodable",
    "SF": "FloatingPoint",
    "SG": "RandomNumberGenerator",
    "SH": "Hashable",
    "Sj": "Numeric",
    "SK": "BidirectionalCollection",
    "Sk": "RandomAccessCollection",
    "SL": "Comparable",
    "Sl": "Collection",
    "SM": "MutableCollection",
    "Sm": "RangeReplaceableCollection",
    "SQ": "Equatable",
    "ST": "Sequence",
    "St": "IteratorProtocol",
    "SU": "UnsignedInteger",
    "SX": "RangeExpression",
    "Sx": "Strideable",
    "SY": "RawRepresentable",
    "Sy": "StringProtocol",
    "SZ": "SignedInteger",
    "Sz": "BinaryInteger",
}
"""The standard library's protocols that Swift's mangling spells as a two-letter
substitution, by their names (in module Swift)."""
_MAX_DEPTH = 32


@dataclass(frozen=True)
class Owner:
    """The type a member belongs to: its declaring type, or the type its extension extends."""

    type_id: int
    kind: int
    in_extension: bool

    @property
    def is_requirement_owner(self) -> bool:
        """The member is a protocol's requirement (declared in the protocol's own body)."""
        return self.kind == PROTOCOL_KIND and not self.in_extension


def requirement_protocol(usr: str) -> str | None:
    """The protocol, mangled (`SQ`, `s23CustomStringConvertible`, `7Atomics13AtomicStorage`),
    whose requirement a USR names; None for a member of a type or of an extension (a
    protocol extension's `…PAAE…`), and for what this reading does not follow. For symbols
    the index declares nowhere (the standard library's, an SDK's): their USR is all it says."""
    if not usr.startswith("s:"):
        return None
    text = usr[2:]
    if text[:2] in PROTOCOL_SUBSTITUTIONS and text[2:3].isdigit():
        return text[:2]
    at = 1 if text.startswith("s") and text[1:2].isdigit() else 0
    while at < len(text) and text[at].isdigit():
        end = at
        while end < len(text) and text[end].isdigit():
            end += 1
        length = int(text[at:end])
        if length == 0:
            return None  # a word substitution: not read here
        at = end + length
        if text[at : at + 1] == "P" and text[at + 1 : at + 2].isdigit():
            return text[:at]
        if text[at : at + 1] in ("V", "C", "O"):
            at += 1
    return None


def dispatches(owner: Owner | None, roles: int, usr: str) -> bool:
    """Whether a call of this callee is a dispatch point (the module docstring's rule). A
    callee the index declares nowhere is judged by its roles and its USR."""
    if owner is None:
        return bool(roles & _DYNAMIC) or requirement_protocol(usr) is not None
    if owner.in_extension:
        return False
    return owner.kind == PROTOCOL_KIND or bool(roles & _DYNAMIC)


class Dispatch:
    """Owners and supertypes, read as asked and kept for one question."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._owners: dict[int, Owner | None] = {}
        self._supertypes: dict[int, frozenset[int]] = {}
        self._kinds: dict[int, int] = {}

    # --- owners ---------------------------------------------------------------------------

    def owners(self, symbol_ids: Iterable[int]) -> dict[int, Owner | None]:
        """Each symbol's owner (an accessor's is its property's), None for a global or a
        symbol the index declares nowhere."""
        asked = list(symbol_ids)
        wanted = {sid for sid in asked if sid not in self._owners}
        if wanted:
            parents = {
                sid: min(found) for sid, found in related_through(self.db, wanted, Role.REL_CHILDOF).items()
            }
            self._learn_kinds(parents.values())
            properties = {p for p in parents.values() if self._kinds.get(p) in PROPERTY_KINDS}
            if properties:
                above = {
                    p: min(found)
                    for p, found in related_through(self.db, properties, Role.REL_CHILDOF).items()
                }
                parents = {sid: above.get(p, p) if p in properties else p for sid, p in parents.items()}
                self._learn_kinds(parents.values())
            extensions = {p for p in parents.values() if self._kinds.get(p) == EXTENSION_KIND}
            extended = extended_types(self.db, extensions) if extensions else {}
            self._learn_kinds(extended.values())
            for sid in wanted:
                parent = parents.get(sid)
                if parent is None:
                    self._owners[sid] = None
                elif parent in extensions:
                    target = extended.get(parent)
                    self._owners[sid] = (
                        None if target is None else Owner(target, self._kinds.get(target, 0), True)
                    )
                elif self._kinds.get(parent) in TYPE_KINDS:
                    self._owners[sid] = Owner(parent, self._kinds[parent], False)
                else:
                    self._owners[sid] = None
        return {sid: self._owners.get(sid) for sid in asked}

    def kind(self, symbol_id: int) -> int:
        self._learn_kinds([symbol_id])
        return self._kinds.get(symbol_id, 0)

    def kinds(self, symbol_ids: Iterable[int]) -> dict[int, int]:
        """Each symbol's kind (0 for one the index does not declare), read in one batch."""
        asked = list(symbol_ids)
        self._learn_kinds(asked)
        return {sid: self._kinds.get(sid, 0) for sid in asked}

    def _learn_kinds(self, symbol_ids: Iterable[int]) -> None:
        # Not `set(ids) - self._kinds.keys()`: that walks every key known so far, on each
        # call (a hub file's reach asked 40,000 times: 6 s at the benchmark's L).
        wanted = {sid for sid in symbol_ids if sid not in self._kinds}
        if wanted:
            self._kinds.update((sid, symbol.kind) for sid, symbol in self.db.symbols_by_ids(wanted).items())

    # --- types ----------------------------------------------------------------------------

    def supertypes(self, type_ids: Iterable[int]) -> dict[int, frozenset[int]]:
        """Each type's supertypes, transitively: superclasses, protocols it conforms to (in
        its declaration or an extension), the protocols those refine."""
        asked = list(type_ids)
        wanted = {type_id for type_id in asked if type_id not in self._supertypes}
        if wanted:
            direct: dict[int, set[int]] = {}
            frontier = set(wanted)
            for _ in range(_MAX_DEPTH):
                todo = {type_id for type_id in frontier if type_id not in direct}
                if not todo:
                    break
                extensions = extensions_of(self.db, todo)
                declared = direct_supertypes(
                    self.db, todo | {e for found in extensions.values() for e in found}
                )
                for type_id in todo:
                    sources = {type_id, *extensions.get(type_id, ())}
                    direct[type_id] = {s for source in sources for s in declared.get(source, ())} - {type_id}
                frontier = {s for type_id in todo for s in direct[type_id]}
            for type_id in wanted:
                seen: set[int] = set()
                stack = list(direct.get(type_id, ()))
                while stack:
                    found = stack.pop()
                    if found not in seen and found != type_id:
                        seen.add(found)
                        stack.extend(direct.get(found, ()))
                self._supertypes[type_id] = frozenset(seen)
        return {type_id: self._supertypes[type_id] for type_id in asked}

    def can_run(self, implementation: Owner | None, receiver: int) -> bool:
        """Whether a dispatch point on a receiver of type `receiver` (0: unknown) can run an
        implementation owned as given."""
        if receiver == 0 or implementation is None or implementation.kind == PROTOCOL_KIND:
            return True
        if receiver == implementation.type_id or self.kind(receiver) not in TYPE_KINDS:
            return True
        return receiver in self.supertypes([implementation.type_id])[implementation.type_id]

    # --- call sites -----------------------------------------------------------------------

    def receivers(self, rows: list[CallRow]) -> dict[int, int]:
        """occurrence → the receiver's type, 0 when unknown: the index's `receivedBy`, else,
        for a call on `self` (written or implicit) in a protocol or one of its extensions,
        that protocol."""
        found = {row.occurrence_id: row.receiver_id for row in rows}
        unnamed = [row for row in rows if row.receiver_id == 0]
        if not unnamed:
            return found
        callers = self.owners(row.caller_id for row in unnamed)
        in_protocols = [
            row for row in unnamed if (owner := callers.get(row.caller_id)) and owner.kind == PROTOCOL_KIND
        ]
        paths = file_paths(self.db, {row.file_id for row in in_protocols})
        for row in in_protocols:
            owner = callers[row.caller_id]
            assert owner is not None
            if on_self(source_line(paths.get(row.file_id, ""), row.line), row.column):
                found[row.occurrence_id] = owner.type_id
        return found

    def is_dispatch_point(self, row: CallRow, callee_usr: str) -> bool:
        owner = self.owners([row.callee_id])[row.callee_id]
        return dispatches(owner, row.roles, callee_usr)


def on_self(text: str, column: int) -> bool:
    """Whether the call whose name starts at this UTF-8 column is made on `self`: written
    (`self.`, `Self.`) or implicit (no receiver before the name). An operator is not read."""
    data = text.encode("utf-8")
    name = data[max(column - 1, 0) : max(column - 1, 0) + 1].decode("utf-8", "replace")
    if not (name.isalpha() or name == "_"):
        return False
    before = data[: max(column - 1, 0)].decode("utf-8", "replace").rstrip()
    if before.endswith(("self.", "Self.")):
        word = before[:-5]
        return not (word and (word[-1].isalnum() or word[-1] in "_."))
    return not before.endswith(".")
