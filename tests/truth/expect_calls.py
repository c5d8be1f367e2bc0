"""What call_hierarchy should answer, from the independent reader's live view alone: the
rules of docs/tools.md ("Call hierarchy", "Dispatch", "Library dispatch") written again over
the dump, sharing no code with xcindex.

- A call site is a written occurrence with the `call` role; its caller is the symbol its
  `calledBy` relation names (else its `containedBy`); one site per (caller, place).
- A member's owner is the type its declaration is a child of (an accessor's: its
  property's), or the type an extension it is a child of extends.
- A dispatch point is a call of a protocol requirement (a member declared in a protocol's own
  body; for a callee declared nowhere, a USR whose context is a protocol and whose next part
  is the member's name), or a `dynamic` call of a member not declared in an extension.
- It can run an implementation unless the receiver is known and the implementation's owner
  is a concrete type that is not the receiver nor one of its subtypes. The receiver is the
  site's `receivedBy` type, else, for a call on `self` (written, or implicit) in a protocol's
  extension, that protocol.
- Through a base declared outside the index, it runs the implementation only when its caller
  holds a value of the implementation's type: mentions a handed type (the owner, its
  subtypes, the typealiases whose declared type names one (`typealias Metadata = [String:
  MetadataValue]`: a written reference on the alias's definition line, after its name), the
  types with a property or enum case of one that conform to the base's protocol or one
  refining it), an enum case or static member declared in one's body, or uses something
  whose signature names a handed type.
- Incoming at level n+1 lists the callers of each symbol first met at level n (the root at
  level 0), grouped; every symbol is expanded once, at the shallowest level; a caller on
  the path of the symbol it calls is a cycle, and not expanded. Outgoing is the mirror:
  callees with a written declaration, and for each dispatch point the overrides and
  witnesses (with a written declaration) it can run.
- Macro helpers (`$s…`) are in no answer; a site's dispatch is `dynamic` at a dispatch
  point, else `super` for a method called right after `super.`, else `static`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypeVar, cast

from tests.truth.store_dump import (
    BASE_OF,
    CALL,
    CALLED_BY,
    CHILD_OF,
    CONTAINED_BY,
    DECLARATION,
    DEFINITION,
    EXTENDED_BY,
    EXTENSION,
    OVERRIDE_OF,
    PROTOCOL,
    RELATIONS,
    LiveIndex,
    LiveOccurrence,
)

Where = tuple[str, int, int]
T = TypeVar("T")
DYNAMIC = 1 << 6
RECEIVED_BY = RELATIONS["receivedBy"]
TYPE_KINDS = {5, 6, 7, 8}
PROPERTY_KINDS = {13, 19, 20, 21}
VALUE_MEMBERS = {15, 17, 18, 20, 21}
FUNCTIONS = {12, 16, 17, 18, 22}
SUPER_CALLABLE = {16, 17, 22}
SUBSTITUTED_PROTOCOLS = frozenset(
    {"SB", "SE", "Se", "SF", "SG", "SH", "Sj", "SK", "Sk", "SL", "Sl", "SM"}
    | {"Sm", "SQ", "ST", "St", "SU", "SX", "Sx", "SY", "Sy", "SZ", "Sz"}
)

TYPEALIAS = 11
"""libIndexStore's symbol kind of a typealias."""


@dataclass(frozen=True)
class Edge:
    """One site of one group: (level, caller, callee, where, dispatch, the usr it resolves to)."""

    level: int
    caller: str
    callee: str
    where: Where
    dispatch: str
    resolves_to: str
    via_dispatch: bool


@dataclass(frozen=True)
class Site:
    caller: str
    callee: str
    occurrence: LiveOccurrence


def is_generated(name: str) -> bool:
    return name.startswith("$") or ":$s" in name


def requirement_usr(usr: str) -> bool:
    """A USR of a protocol's requirement, read from its mangling alone."""
    if not usr.startswith("s:"):
        return False
    text = usr[2:]
    if text[:2] in SUBSTITUTED_PROTOCOLS and text[2:3].isdigit():
        return True
    at = 1 if text[:1] == "s" and text[1:2].isdigit() else 0
    while at < len(text) and text[at].isdigit():
        digits = ""
        while at < len(text) and text[at].isdigit():
            digits += text[at]
            at += 1
        if int(digits) == 0:
            return False
        at += int(digits)
        if text[at : at + 1] == "P" and text[at + 1 : at + 2].isdigit():
            return True
        if text[at : at + 1] in ("V", "C", "O"):
            at += 1
    return False


_REFINING = {
    "SQ": {"SQ", "SH", "SL", "Sx", "Sz", "SZ", "SU", "SF", "SB", "Sj", "Sy"},
    "SH": {"SH", "Sy", "Sz"},
    "SL": {"SL", "Sx", "Sz", "SF", "Sy"},
}
"""Equatable, Hashable, Comparable and the standard protocols refining them, as mangled."""


def protocols(requirement: str) -> set[str]:
    """The USRs of the protocol whose requirement this is, and of those refining it."""
    text = requirement[2:]
    if text[:2] in SUBSTITUTED_PROTOCOLS:
        return {f"s:{token}" for token in _REFINING.get(text[:2], {text[:2]})}
    at = text.find("P")
    while at != -1 and not text[at + 1 : at + 2].isdigit():
        at = text.find("P", at + 1)
    return {f"s:{text[: at + 1]}"} if at != -1 else set()


class Calls:
    """The call graph of a live view, and call_hierarchy's answers over it."""

    def __init__(self, truth: LiveIndex) -> None:
        self.truth = truth
        self._lines: dict[str, list[str]] = {}
        self._holders: dict[str, set[str]] = {}
        self._memo: dict[tuple[str, str], object] = {}

    # --- sites ------------------------------------------------------------------------------

    @cached_property
    def sites(self) -> list[Site]:
        found: dict[tuple[str, str, Where], Site] = {}
        for occurrence in self.truth.all_occurrences():
            if not occurrence.roles & CALL or occurrence.implicit:
                continue
            role = CALLED_BY if occurrence.roles & CALLED_BY else CONTAINED_BY
            for relation in occurrence.relations:
                if relation.roles & role:
                    key = (relation.usr, occurrence.usr, occurrence.where)
                    found.setdefault(key, Site(relation.usr, occurrence.usr, occurrence))
        return list(found.values())

    @cached_property
    def by_callee(self) -> dict[str, list[Site]]:
        grouped: dict[str, list[Site]] = {}
        for site in self.sites:
            grouped.setdefault(site.callee, []).append(site)
        return grouped

    @cached_property
    def by_caller(self) -> dict[str, list[Site]]:
        grouped: dict[str, list[Site]] = {}
        for site in self.sites:
            grouped.setdefault(site.caller, []).append(site)
        return grouped

    def written(self, usr: str) -> bool:
        return self._memoized("written", usr, self._written)

    def _written(self, usr: str) -> bool:
        return any(
            o.roles & (DEFINITION | DECLARATION) and not o.implicit
            for o in self.truth.occurrences.get(usr, ())
        )

    def name(self, usr: str) -> str:
        symbol = self.truth.symbols.get(usr)
        return symbol.name if symbol else ""

    def kind(self, usr: str) -> int:
        symbol = self.truth.symbols.get(usr)
        return symbol.kind if symbol else 0

    # --- owners and types -------------------------------------------------------------------

    def _memoized(self, what: str, usr: str, compute: Callable[[str], T]) -> T:
        key = (what, usr)
        if key not in self._memo:
            self._memo[key] = compute(usr)
        return cast(T, self._memo[key])

    def owner(self, usr: str) -> tuple[str, bool] | None:
        return self._memoized("owner", usr, self._owner)

    def supertypes(self, usr: str) -> set[str]:
        return self._memoized("supertypes", usr, self._supertypes)

    def bases(self, usr: str) -> set[str]:
        return self._memoized("bases", usr, self._bases)

    def overriders(self, usr: str) -> set[str]:
        return self._memoized("overriders", usr, self._overriders)

    def incoming(self, usr: str) -> dict[str, list[Site]]:
        return self._memoized("incoming", usr, self._incoming)

    def outgoing(self, usr: str) -> dict[str, list[Site]]:
        return self._memoized("outgoing", usr, self._outgoing)

    def _owner(self, usr: str) -> tuple[str, bool] | None:
        """(the owning type, declared in an extension), None for a global or a stranger."""
        parents = sorted(self.truth.related(usr, CHILD_OF))
        if not parents:
            return None
        parent = parents[0]
        if self.kind(parent) in PROPERTY_KINDS:
            above = sorted(self.truth.related(parent, CHILD_OF))
            if not above:
                return None
            parent = above[0]
        if self.kind(parent) == EXTENSION:
            extended = sorted(e.usr for e in self.truth.edges_to.get(parent, []) if e.roles & EXTENDED_BY)
            return (extended[0], True) if extended else None
        return (parent, False) if self.kind(parent) in TYPE_KINDS else None

    def _supertypes(self, usr: str) -> set[str]:
        found: set[str] = set()
        stack = [usr]
        while stack:
            current = stack.pop()
            declaring = {current} | self.truth.related(current, EXTENDED_BY)
            for each in declaring:
                for edge in self.truth.edges_to.get(each, []):
                    stated = not (edge.occurrence.implicit and edge.occurrence.declares)
                    if edge.roles & BASE_OF and stated and edge.usr not in found and edge.usr != usr:
                        found.add(edge.usr)
                        stack.append(edge.usr)
        return found

    def subtypes(self, usr: str) -> set[str]:
        found: set[str] = set()
        for edge in self.truth.edges_from.get(usr, []):
            if not edge.roles & BASE_OF or edge.occurrence.implicit:
                continue
            if self.kind(edge.related) == EXTENSION:
                found |= {e.usr for e in self.truth.edges_to.get(edge.related, []) if e.roles & EXTENDED_BY}
            else:
                found.add(edge.related)
        return found

    def _bases(self, usr: str) -> set[str]:
        """What it overrides or witnesses, transitively (stated relations)."""
        found: set[str] = set()
        stack = [usr]
        while stack:
            current = stack.pop()
            for edge in self.truth.edges_from.get(current, []):
                stated = not (edge.occurrence.implicit and edge.occurrence.declares)
                if edge.roles & OVERRIDE_OF and stated and edge.related not in found and edge.related != usr:
                    found.add(edge.related)
                    stack.append(edge.related)
        return found

    def _overriders(self, usr: str) -> set[str]:
        found: set[str] = set()
        stack = [usr]
        while stack:
            current = stack.pop()
            for edge in self.truth.edges_to.get(current, []):
                stated = not (edge.occurrence.implicit and edge.occurrence.declares)
                if edge.roles & OVERRIDE_OF and stated and edge.usr not in found and edge.usr != usr:
                    found.add(edge.usr)
                    stack.append(edge.usr)
        return {u for u in found if not is_generated(self.name(u))}

    # --- dispatch ---------------------------------------------------------------------------

    def dispatch_point(self, site: Site) -> bool:
        owner = self.owner(site.callee)
        dynamic = bool(site.occurrence.roles & DYNAMIC)
        if owner is None:
            return dynamic or requirement_usr(site.callee)
        if owner[1]:
            return False
        return self.kind(owner[0]) == PROTOCOL or dynamic

    def receiver(self, site: Site) -> str | None:
        for relation in site.occurrence.relations:
            if relation.roles & RECEIVED_BY:
                return relation.usr
        owner = self.owner(site.caller)
        if owner is not None and self.kind(owner[0]) == PROTOCOL and self.on_self(site.occurrence):
            return owner[0]
        return None

    def can_run(self, implementation: str, site: Site) -> bool:
        receiver = self.receiver(site)
        owner = self.owner(implementation)
        if receiver is None or owner is None or self.kind(owner[0]) == PROTOCOL:
            return True
        if receiver == owner[0] or self.kind(receiver) not in TYPE_KINDS:
            return True
        return receiver in self.supertypes(owner[0])

    def runs(self, implementation: str, site: Site) -> bool:
        """A site of one of the implementation's bases runs it (the module docstring)."""
        if not self.dispatch_point(site) or not self.can_run(implementation, site):
            return False
        return self.written(site.callee) or site.caller in self.holders(implementation, site.callee)

    # --- library narrowing ------------------------------------------------------------------

    def holders(self, implementation: str, base: str) -> set[str]:
        owner = self.owner(implementation)
        if owner is None:
            return set()
        key = f"{owner[0]} {base}"
        if key not in self._holders:
            self._holders[key] = self._holding(owner[0], protocols(base))
        return self._holders[key]

    def aliases_naming(self, usr: str) -> set[str]:
        """The typealiases whose definition line names `usr` after the alias's own name."""
        return {
            alias.usr
            for o in self.truth.occurrences.get(usr, ())
            if not o.declares and not o.implicit
            for alias in self.definitions_on(o.path, o.line)
            if alias.column < o.column and self.kind(alias.usr) == TYPEALIAS
        }

    def definitions_on(self, path: str, line: int) -> list[LiveOccurrence]:
        return self._definitions_by_line.get((path, line), [])

    @cached_property
    def _definitions_by_line(self) -> dict[tuple[str, int], list[LiveOccurrence]]:
        found: dict[tuple[str, int], list[LiveOccurrence]] = {}
        for o in self.truth.all_occurrences():
            if o.declares and not o.implicit:
                found.setdefault((o.path, o.line), []).append(o)
        return found

    def _mentions(self, usrs: set[str], *, implicit: bool = False) -> list[tuple[str, str, LiveOccurrence]]:
        """(mentioned, holder, the mention) for uses with a calledBy/containedBy: written ones
        (and implicit ones too when asked)."""
        found = []
        for usr in usrs:
            for o in self.truth.occurrences.get(usr, ()):
                if (o.implicit and not implicit) or o.declares or not o.roles & (CALL | (1 << 2)):
                    continue
                role = CALLED_BY if o.roles & CALLED_BY else CONTAINED_BY
                found += [(usr, r.usr, o) for r in o.relations if r.roles & role]
        return found

    def _holding(self, type_usr: str, conforming: set[str]) -> set[str]:
        handed, frontier = {type_usr}, {type_usr}
        while frontier and len(handed) < 200:
            following: set[str] = set()
            for usr in frontier:
                following |= self.subtypes(usr) | self.aliases_naming(usr)
            for _used, holder, _o in self._mentions(frontier):
                owner = self.owner(holder) if self.kind(holder) in PROPERTY_KINDS | {15} else None
                if owner is not None and owner[0] not in handed and self.supertypes(owner[0]) & conforming:
                    following.add(owner[0])
            frontier = following - handed
            handed |= frontier
        values = {
            e.usr
            for t in handed
            for e in self.truth.edges_to.get(t, [])
            if e.roles & CHILD_OF
            and e.occurrence.declares
            and not e.occurrence.implicit
            and self.kind(e.usr) in VALUE_MEMBERS
        }
        mentions = self._mentions(handed | values)
        holders = {holder for _u, holder, _o in mentions}
        returning = set()
        for used, holder, o in mentions:
            if used not in handed:
                continue
            if self.kind(holder) in PROPERTY_KINDS | {15} or (
                self.kind(holder) in FUNCTIONS and self.in_signature(holder, o)
            ):
                returning.add(holder)
        return holders | {h for _u, h, _o in self._mentions(returning, implicit=True)}

    def in_signature(self, function: str, mention: LiveOccurrence) -> bool:
        """From the function's definition line to the first line with its body's `{`."""
        definition = self.truth.definition(function)
        if definition is None or definition.path != mention.path or mention.line < definition.line:
            return False
        lines = self.lines(mention.path)
        line = definition.line
        while line <= len(lines) and "{" not in lines[line - 1].split("//")[0]:
            line += 1
        return mention.line <= line

    # --- text -------------------------------------------------------------------------------

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                self._lines[path] = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                self._lines[path] = []
        return self._lines[path]

    def before(self, occurrence: LiveOccurrence) -> str:
        lines = self.lines(occurrence.path)
        text = lines[occurrence.line - 1] if 0 < occurrence.line <= len(lines) else ""
        return text.encode("utf-8")[: occurrence.column - 1].decode("utf-8", "replace").rstrip()

    def on_self(self, occurrence: LiveOccurrence) -> bool:
        lines = self.lines(occurrence.path)
        text = lines[occurrence.line - 1] if 0 < occurrence.line <= len(lines) else ""
        first = text.encode("utf-8")[occurrence.column - 1 : occurrence.column].decode("utf-8", "replace")
        if not (first.isalpha() or first == "_"):
            return False
        before = self.before(occurrence)
        if before.endswith(("self.", "Self.")):
            rest = before[:-5]
            return not rest or not (rest[-1].isalnum() or rest[-1] in "_.")
        return not before.endswith(".")

    def dispatch_of(self, site: Site) -> str:
        if self.dispatch_point(site):
            return "dynamic"
        before = self.before(site.occurrence)
        if self.kind(site.callee) in SUPER_CALLABLE and (
            before.endswith("super.") or before.endswith("super")
        ):
            return "super"
        return "static"

    # --- the hierarchies --------------------------------------------------------------------

    def _incoming(self, usr: str) -> dict[str, list[Site]]:
        """caller → the sites that can run `usr`."""
        found: dict[str, list[Site]] = {}
        for site in self.by_callee.get(usr, []):
            found.setdefault(site.caller, []).append(site)
        for base in self.bases(usr):
            for site in self.by_callee.get(base, []):
                if self.runs(usr, site) and site.occurrence.where not in {
                    s.occurrence.where for s in found.get(site.caller, [])
                }:
                    found.setdefault(site.caller, []).append(site)
        return {caller: sites for caller, sites in found.items() if not is_generated(self.name(caller))}

    def _outgoing(self, usr: str) -> dict[str, list[Site]]:
        """callee → the sites naming it; and an implementation a dispatch point can run (and
        that is not called directly) → those dispatch points."""
        direct: dict[str, list[Site]] = {}
        reached: dict[str, list[Site]] = {}
        for site in self.by_caller.get(usr, []):
            if is_generated(self.name(site.callee)):
                continue
            if self.written(site.callee):
                direct.setdefault(site.callee, []).append(site)
            if not self.dispatch_point(site):
                continue
            for implementation in self.overriders(site.callee):
                if not self.written(implementation) or not self.can_run(implementation, site):
                    continue
                if not self.written(site.callee) and usr not in self.holders(implementation, site.callee):
                    continue
                reached.setdefault(implementation, []).append(site)
        return {**{impl: sites for impl, sites in reached.items() if impl not in direct}, **direct}

    def hierarchy(self, root: str, direction: str, depth: int) -> set[Edge]:
        step = self.incoming if direction == "incoming" else self.outgoing
        edges: set[Edge] = set()
        expanded = {root}
        frontier: list[tuple[str, tuple[str, ...]]] = [(root, (root,))]
        for level in range(1, depth + 1):
            following: list[tuple[str, tuple[str, ...]]] = []
            for node, path in frontier:
                for other, sites in sorted(step(node).items()):
                    caller, callee = (other, node) if direction == "incoming" else (node, other)
                    via = all(s.callee != callee for s in sites)
                    for site in sites:
                        edges.add(
                            Edge(
                                level,
                                caller,
                                callee,
                                site.occurrence.where,
                                self.dispatch_of(site),
                                site.callee,
                                via,
                            )
                        )
                    if other not in path and level < depth and other not in expanded:
                        expanded.add(other)
                        following.append((other, (*path, other)))
            frontier = following
        return edges

    def callables(self) -> list[str]:
        """Every function, method, initializer and accessor the project writes."""
        return sorted(
            usr
            for usr, symbol in self.truth.symbols.items()
            if symbol.kind in FUNCTIONS and not is_generated(symbol.name) and self.written(usr)
        )
