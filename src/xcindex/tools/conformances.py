"""find_conformances: the types that conform to a protocol, from the index's `baseOf`.

The index records the type → protocol link directly: the mention of the protocol in an
inheritance clause carries a `baseOf` relation to the conforming type, or to the extension
when the conformance is declared in one. So marker protocols, conformers that rely only on
default implementations, and conformances in extensions are all found (the original
walked requirement witnesses and missed those). A conformance declared in an extension is
anchored at the extension's header; a refining protocol's conformers are included too, and
so are the subclasses of a conforming class (they conform by inheritance: `inheritedFrom`
names the class that declares the conformance; anchored at the subclass's declaration).
Lists are paged (`offset`, `nextOffset`) in one order: path, line, column.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, StrictInt

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, kind_name
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, freshness_for, occurrence_json
from xcindex.tools.shapes import ConformanceJson, ConformancesJson

EXTENSION_KIND = 9
PROTOCOL_KIND = 8
CLASS_KIND = 7


@dataclass(frozen=True)
class Conformance:
    type_symbol: SymbolRow
    anchor: OccurrenceRow
    via_extension: bool
    via_protocol: str | None
    """Set when the type conforms through a protocol that refines the one asked about."""
    inherited_from: str | None = None
    """Set for a subclass of a conforming class: the class that declares the conformance."""

    def to_json(self) -> ConformanceJson:
        return {
            **occurrence_json(self.type_symbol, self.anchor),
            "conformingType": self.type_symbol.name,
            "conformingTypeKind": kind_name(self.type_symbol.kind),
            "viaExtension": self.via_extension,
            "viaProtocol": self.via_protocol,
            "inheritedFrom": self.inherited_from,
        }

    def how(self) -> str:
        text = "in an extension" if self.via_extension else "in its declaration"
        if self.inherited_from:
            text = f"inherited from {self.inherited_from}"
        if self.via_protocol:
            text += f", through {self.via_protocol}"
        return text


@dataclass(frozen=True)
class ConformancesAnswer:
    usr: str
    protocol: SymbolRow | None
    conformances: tuple[Conformance, ...]
    """Every conformance, in order; a page shows `conformances[offset:]` (as many as fit)."""
    freshness: Freshness
    offset: int = 0

    def named_paths(self) -> set[str]:
        return {c.anchor.path for c in self.conformances[self.offset :]}

    def shown(self, budget: int | None = None) -> tuple[Conformance, ...]:
        """The conformances of this page that fit a response budget (all without one)."""
        page = self.conformances[self.offset :]
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return page[: fitting(page, lambda c: item_cost(c.to_json()), lists_budget)]

    def next_offset(self, budget: int | None = None) -> int | None:
        end = self.offset + len(self.shown(budget))
        return end if end < len(self.conformances) else None

    def to_json(self, budget: int | None = None) -> ConformancesJson:
        shown = self.shown(budget)
        next_offset = self.next_offset(budget)
        answer: ConformancesJson = {
            **self.freshness.to_json(budget),  # type: ignore[typeddict-item]  # optional keys set below
            "results": [c.to_json() for c in shown],
            "totalCount": len(self.conformances),
            "truncated": next_offset is not None,
        }
        if next_offset is not None:
            answer["nextOffset"] = next_offset
        return answer


def _declared_where(candidates: list[OccurrenceRow], mention: OccurrenceRow) -> OccurrenceRow | None:
    """Of a type's declarations (or an extension's headers), the one `mention` (the protocol
    named in an inheritance clause) belongs to: in the mention's file, the nearest before
    it; else the first in that file; else the smallest place elsewhere.

    One symbol can be declared in several live files (two copies of a package in one
    store, a file and its duplicate: an extension's USR is the same wherever it is written),
    so the anchor is chosen by place, never by the database's row order, which a rebuild of
    the other file changes."""
    if not candidates:
        return None
    same_file = [c for c in candidates if c.path == mention.path]
    before = [c for c in same_file if (c.line, c.column) <= (mention.line, mention.column)]
    if before:
        return max(before, key=lambda c: (c.line, c.column))
    return min(same_file or candidates, key=lambda c: (c.path, c.line, c.column))


def _extended_type(
    db: Database, extension_id: int, mention: OccurrenceRow
) -> tuple[SymbolRow, OccurrenceRow] | None:
    """The type an extension extends, and its mention in the extension's header."""
    header = _declared_where(
        [r.occurrence for r in db.related_occurrences(extension_id, Role.REL_EXTENDEDBY)], mention
    )
    if header is None:
        return None
    return db.symbols_by_ids([header.symbol_id])[header.symbol_id], header


def direct_conformances(db: Database, protocol: SymbolRow) -> list[tuple[SymbolRow, OccurrenceRow, bool]]:
    results: list[tuple[SymbolRow, OccurrenceRow, bool]] = []
    for relation in db.related_occurrences_of(protocol.id, Role.REL_BASEOF):
        related = db.symbols_by_ids([relation.symbol_id])[relation.symbol_id]
        if related.kind == EXTENSION_KIND:
            extended = _extended_type(db, related.id, relation.occurrence)
            if extended is not None:
                results.append((extended[0], extended[1], True))
            continue
        occurrences = db.occurrences_of(related.id)
        declared = [o for o in occurrences if o.roles & Role.DEFINITION] or [
            o for o in occurrences if o.roles & Role.DECLARATION
        ]
        anchor = _declared_where(declared, relation.occurrence)
        if anchor is not None:
            results.append((related, anchor, False))
    return results


def _subclasses(
    db: Database, class_symbol: SymbolRow, max_depth: int
) -> list[tuple[SymbolRow, OccurrenceRow]]:
    """Every subclass of a class (transitively), anchored at its declaration."""
    found: list[tuple[SymbolRow, OccurrenceRow]] = []
    seen = {class_symbol.id}
    frontier = [class_symbol]
    for _ in range(max_depth):
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            for subclass, anchor, via_extension in direct_conformances(db, current):
                if via_extension or subclass.kind != CLASS_KIND or subclass.id in seen:
                    continue
                seen.add(subclass.id)
                found.append((subclass, anchor))
                next_frontier.append(subclass)
        if not next_frontier:
            break
        frontier = next_frontier
    return found


def find_conformances(db: Database, usr: str, *, max_depth: int = 16, offset: int = 0) -> ConformancesAnswer:
    protocol = db.symbol_by_usr(usr)
    found: dict[tuple[int, str, int, int], Conformance] = {}
    if protocol is not None:
        frontier: list[tuple[SymbolRow, str | None]] = [(protocol, None)]
        seen = {protocol.id}
        for _ in range(max_depth):
            next_frontier: list[tuple[SymbolRow, str | None]] = []
            for current, via in frontier:
                for type_symbol, anchor, via_extension in direct_conformances(db, current):
                    if type_symbol.kind == PROTOCOL_KIND:
                        if type_symbol.id not in seen:
                            seen.add(type_symbol.id)
                            next_frontier.append((type_symbol, via or type_symbol.name))
                        continue
                    key = (type_symbol.id, anchor.path, anchor.line, anchor.column)
                    found.setdefault(key, Conformance(type_symbol, anchor, via_extension, via))
            if not next_frontier:
                break
            frontier = next_frontier
        declared = {c.type_symbol.id for c in found.values()}
        for conformer in sorted(
            {c.type_symbol.id: c for c in found.values() if c.type_symbol.kind == CLASS_KIND}.values(),
            key=lambda c: c.type_symbol.usr,
        ):
            for subclass, anchor in _subclasses(db, conformer.type_symbol, max_depth):
                if subclass.id in declared:
                    continue  # it declares the conformance itself (or got it from a nearer class)
                declared.add(subclass.id)
                key = (subclass.id, anchor.path, anchor.line, anchor.column)
                found.setdefault(
                    key,
                    Conformance(subclass, anchor, False, conformer.via_protocol, conformer.type_symbol.name),
                )
    ordered = sorted(found.values(), key=lambda c: (c.anchor.path, c.anchor.line, c.anchor.column))
    page = ordered[offset:]
    freshness = freshness_for(db, (c.anchor for c in page), empty=not ordered)
    return ConformancesAnswer(usr, protocol, tuple(ordered), freshness, offset)


class FindConformancesArgs(LocationArgs):
    tool = "find_conformances"

    usr: Text = Field(description="The protocol's usr, from find_symbol.")
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")


def query_find_conformances(db: Database, args: FindConformancesArgs) -> ConformancesAnswer:
    return find_conformances(db, args.usr, offset=args.offset)
