"""What each index tool should answer for a USR, from the independent reader's live view
alone (store_dump.live): the documented rules of docs/tools.md written again over the dump,
sharing no code with xcindex.

Sites are (path, line, UTF-8 column). The rules, tool by tool:

- find_references(usr): every written (not implicit) occurrence of the symbol, one per
  site, its reported roles merged; for an initialiser also its implicit calls where a
  written occurrence of the type it constructs stands (a property-wrapper attribute).
- find_definition(usr): the written definition, else declaration, first by site.
- find_overrides(usr): what overrides or witnesses it, transitively, through `overrideOf`
  relations the source states (on a written declaration, or on an implicit occurrence that
  declares nothing: a witness recorded at a conformance); each symbol at its written
  declarations carrying such a relation, else at its own definition, else at its first
  conformance; its conformances beside it (with the conforming type's name); macro helpers
  (`$s…` names) left out.
- find_conformances(protocol): the types whose inheritance clause names it (`baseOf` on a
  mention of it; an extension's clause names the extended type, anchored at the
  extension's header), through refining protocols (viaProtocol: the first one), and the
  subclasses of conforming classes (inheritedFrom), anchored at their declarations.
- type_hierarchy(type, depth 1): the supertypes and subtypes one inheritance clause away,
  each link anchored at the mention that states it (implicit ones that declare nothing
  count: a composition typealias's protocols).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.truth.store_dump import (
    BASE_OF,
    CALL,
    CHILD_OF,
    CLASS,
    CONSTRUCTOR,
    CONTAINED_BY,
    DECLARATION,
    DEFINITION,
    EXTENDED_BY,
    EXTENSION,
    IMPLICIT,
    OVERRIDE_OF,
    PROTOCOL,
    LiveIndex,
    LiveOccurrence,
)

Where = tuple[str, int, int]
REPORTED = {
    DEFINITION: "definition",
    DECLARATION: "declaration",
    1 << 2: "reference",
    CALL: "call",
    1 << 3: "read",
    1 << 4: "write",
    OVERRIDE_OF: "overrideOf",
}
"""The roles a site reports (docs/tools.md), by bit."""


def reported(roles: int) -> frozenset[str]:
    names = {name for bit, name in REPORTED.items() if roles & bit}
    if roles & IMPLICIT:
        names.add("implicit")
    return frozenset(names)


def stated(occurrence: LiveOccurrence) -> bool:
    """Its relations are the source's: all but a synthesised (implicit) declaration's."""
    return not (occurrence.implicit and occurrence.declares)


def is_generated(name: str) -> bool:
    return name.startswith("$") or ":$s" in name


def references(truth: LiveIndex, usr: str) -> dict[Where, frozenset[str]]:
    sites: dict[Where, int] = {}
    occurrences = truth.occurrences.get(usr, [])
    for o in occurrences:
        if not o.implicit:
            sites[o.where] = sites.get(o.where, 0) | o.roles
    symbol = truth.symbols.get(usr)
    if symbol is not None and symbol.kind == CONSTRUCTOR:
        spots = {
            o.where
            for constructed in _constructed(truth, usr)
            for o in truth.occurrences.get(constructed, [])
            if not o.implicit
        }
        for o in occurrences:
            if o.implicit and o.roles & CALL and o.where in spots:
                sites[o.where] = sites.get(o.where, 0) | o.roles
    return {where: reported(roles) for where, roles in sites.items()}


def _constructed(truth: LiveIndex, usr: str) -> set[str]:
    types: set[str] = set()
    for parent in truth.related(usr, CHILD_OF):
        symbol = truth.symbols.get(parent)
        if symbol is not None and symbol.kind == EXTENSION:
            types |= {e.usr for e in truth.edges_to.get(parent, []) if e.roles & EXTENDED_BY}
        else:
            types.add(parent)
    return types


def definition(truth: LiveIndex, usr: str) -> Where | None:
    found = truth.definition(usr)
    return found.where if found is not None else None


@dataclass(frozen=True)
class Override:
    usr: str
    anchor: Where
    conformances: frozenset[tuple[Where, str | None]]


def overrides(truth: LiveIndex, base: str, max_depth: int = 32) -> set[Override]:
    declared: dict[str, set[Where]] = {}
    conformances: dict[str, dict[Where, LiveOccurrence]] = {}
    seen, frontier = {base}, [base]
    for _ in range(max_depth):
        following: list[str] = []
        for current in frontier:
            for edge in truth.edges_to.get(current, []):
                occurrence = edge.occurrence
                if not edge.roles & OVERRIDE_OF or edge.usr == base or not stated(occurrence):
                    continue
                if occurrence.implicit:
                    conformances.setdefault(edge.usr, {})[occurrence.where] = occurrence
                elif occurrence.declares:
                    declared.setdefault(edge.usr, set()).add(occurrence.where)
                else:
                    continue
                if edge.usr not in seen:
                    seen.add(edge.usr)
                    following.append(edge.usr)
        if not following:
            break
        frontier = following
    found: set[Override] = set()
    for usr in seen - {base}:
        symbol = truth.symbols.get(usr)
        if symbol is None or is_generated(symbol.name):
            continue
        at = sorted(conformances.get(usr, {}).values(), key=lambda o: o.where)
        beside = frozenset((o.where, _container_name(truth, o)) for o in at)
        anchors = declared.get(usr) or (
            {own} if (own := definition(truth, usr)) else {o.where for o in at[:1]}
        )
        found |= {Override(usr, anchor, beside) for anchor in anchors}
    return found


def _container_name(truth: LiveIndex, occurrence: LiveOccurrence) -> str | None:
    for relation in occurrence.relations:
        if relation.roles & CONTAINED_BY and relation.usr in truth.symbols:
            return truth.symbols[relation.usr].name
    return None


@dataclass(frozen=True)
class Conformance:
    usr: str
    anchor: Where
    via_extension: bool
    via_protocol: str | None
    inherited_from: str | None


def _nearest(candidates: list[LiveOccurrence], mention: LiveOccurrence) -> LiveOccurrence | None:
    """Of a type's declarations (an extension's headers), the one a mention belongs to: in its
    file, the nearest before it, else the first there; else the first anywhere."""
    if not candidates:
        return None
    same = [c for c in candidates if c.path == mention.path]
    before = [c for c in same if (c.line, c.column) <= (mention.line, mention.column)]
    if before:
        return max(before, key=lambda c: (c.line, c.column))
    return min(same or candidates, key=lambda c: c.where)


def _direct(truth: LiveIndex, protocol: str) -> list[tuple[str, LiveOccurrence, bool]]:
    found: list[tuple[str, LiveOccurrence, bool]] = []
    for edge in truth.edges_from.get(protocol, []):
        if not edge.roles & BASE_OF:
            continue
        related = truth.symbols.get(edge.related)
        if related is None:
            continue
        if related.kind == EXTENSION:
            headers = [e.occurrence for e in truth.edges_to.get(related.usr, []) if e.roles & EXTENDED_BY]
            header = _nearest(headers, edge.occurrence)
            if header is not None:
                found.append((header.usr, header, True))
            continue
        occurrences = truth.occurrences.get(related.usr, [])
        declared = [o for o in occurrences if o.roles & DEFINITION] or [
            o for o in occurrences if o.roles & DECLARATION
        ]
        anchor = _nearest(declared, edge.occurrence)
        if anchor is not None:
            found.append((related.usr, anchor, False))
    return found


def conformances(truth: LiveIndex, protocol: str, max_depth: int = 16) -> set[Conformance]:
    found: dict[tuple[str, Where], Conformance] = {}
    seen = {protocol}
    frontier: list[tuple[str, str | None]] = [(protocol, None)]
    for _ in range(max_depth):
        following: list[tuple[str, str | None]] = []
        for current, via in frontier:
            for usr, anchor, via_extension in _direct(truth, current):
                if truth.symbols[usr].kind == PROTOCOL:
                    if usr not in seen:
                        seen.add(usr)
                        following.append((usr, via or truth.symbols[usr].name))
                    continue
                found.setdefault(
                    (usr, anchor.where), Conformance(usr, anchor.where, via_extension, via, None)
                )
        if not following:
            break
        frontier = following
    declared = {c.usr for c in found.values()}
    classes = {c.usr: c for c in found.values() if truth.symbols[c.usr].kind == CLASS}
    for usr in sorted(classes):
        conformer = classes[usr]
        seen_classes, queue = {usr}, [usr]
        for _ in range(max_depth):
            following_classes: list[str] = []
            for current in queue:
                for sub, anchor, via_extension in _direct(truth, current):
                    if via_extension or truth.symbols[sub].kind != CLASS or sub in seen_classes:
                        continue
                    seen_classes.add(sub)
                    following_classes.append(sub)
                    if sub in declared:
                        continue
                    declared.add(sub)
                    found.setdefault(
                        (sub, anchor.where),
                        Conformance(
                            sub, anchor.where, False, conformer.via_protocol, truth.symbols[usr].name
                        ),
                    )
            if not following_classes:
                break
            queue = following_classes
    return set(found.values())


def supertypes(truth: LiveIndex, usr: str) -> set[tuple[str, Where, bool]]:
    """(supertype, the mention stating it, declared in an extension)."""
    found = {
        (e.usr, e.occurrence.where, False)
        for e in truth.edges_to.get(usr, [])
        if e.roles & BASE_OF and stated(e.occurrence)
    }
    for extension in truth.related(usr, EXTENDED_BY):
        found |= {
            (e.usr, e.occurrence.where, True)
            for e in truth.edges_to.get(extension, [])
            if e.roles & BASE_OF and stated(e.occurrence)
        }
    return found


def subtypes(truth: LiveIndex, usr: str) -> set[tuple[str, Where, bool]]:
    """(subtype, the mention of `usr` stating it, declared in an extension)."""
    found: set[tuple[str, Where, bool]] = set()
    for edge in truth.edges_from.get(usr, []):
        if not edge.roles & BASE_OF or not stated(edge.occurrence):
            continue
        related = truth.symbols.get(edge.related)
        if related is not None and related.kind == EXTENSION:
            extended = sorted(e.usr for e in truth.edges_to.get(related.usr, []) if e.roles & EXTENDED_BY)
            if extended:
                found.add((extended[0], edge.occurrence.where, True))
        else:
            found.add((edge.related, edge.occurrence.where, False))
    return found
