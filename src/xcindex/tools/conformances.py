"""find_conformances: the types that conform to a protocol, from the index's `baseOf`.

The index records the type → protocol link directly: the mention of the protocol in an
inheritance clause carries a `baseOf` relation to the conforming type, or to the extension
when the conformance is declared in one. So marker protocols, conformers that rely only on
default implementations, and conformances in extensions are all found (the original
walked requirement witnesses and missed those). A conformance declared in an extension is
anchored at the extension's header; a refining protocol's conformers are included too.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, kind_name
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, canonical_occurrence, freshness_for, occurrence_json
from xcindex.tools.shapes import ConformanceJson, ConformancesJson

EXTENSION_KIND = 9
PROTOCOL_KIND = 8


@dataclass(frozen=True)
class Conformance:
    type_symbol: SymbolRow
    anchor: OccurrenceRow
    via_extension: bool
    via_protocol: str | None
    """Set when the type conforms through a protocol that refines the one asked about."""

    def to_json(self) -> ConformanceJson:
        return {
            **occurrence_json(self.type_symbol, self.anchor),
            "conformingType": self.type_symbol.name,
            "conformingTypeKind": kind_name(self.type_symbol.kind),
            "viaExtension": self.via_extension,
            "viaProtocol": self.via_protocol,
        }


@dataclass(frozen=True)
class ConformancesAnswer:
    usr: str
    protocol: SymbolRow | None
    conformances: tuple[Conformance, ...]
    freshness: Freshness

    def named_paths(self) -> set[str]:
        return {c.anchor.path for c in self.conformances}

    def shown(self, budget: int | None = None) -> tuple[Conformance, ...]:
        """The conformances that fit a response budget (all of them without one)."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        count = fitting(self.conformances, lambda c: item_cost(c.to_json()), lists_budget)
        return self.conformances[:count]

    def to_json(self, budget: int | None = None) -> ConformancesJson:
        shown = self.shown(budget)
        return {
            "results": [c.to_json() for c in shown],
            "totalCount": len(self.conformances),
            "truncated": len(shown) < len(self.conformances),
            **self.freshness.to_json(budget),
        }


def _extended_type(db: Database, extension_id: int) -> tuple[SymbolRow, OccurrenceRow] | None:
    """The type an extension extends, and its mention in the extension's header."""
    for relation in db.related_occurrences(extension_id, Role.REL_EXTENDEDBY):
        occ = relation.occurrence
        return db.symbols_by_ids([occ.symbol_id])[occ.symbol_id], occ
    return None


def direct_conformances(db: Database, protocol: SymbolRow) -> list[tuple[SymbolRow, OccurrenceRow, bool]]:
    results: list[tuple[SymbolRow, OccurrenceRow, bool]] = []
    for relation in db.related_occurrences_of(protocol.id, Role.REL_BASEOF):
        related = db.symbols_by_ids([relation.symbol_id])[relation.symbol_id]
        if related.kind == EXTENSION_KIND:
            extended = _extended_type(db, related.id)
            if extended is not None:
                results.append((extended[0], extended[1], True))
            continue
        anchor = canonical_occurrence(db.occurrences_of(related.id))
        if anchor is not None:
            results.append((related, anchor, False))
    return results


def find_conformances(db: Database, usr: str, *, max_depth: int = 16) -> ConformancesAnswer:
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
    ordered = sorted(found.values(), key=lambda c: (c.anchor.path, c.anchor.line, c.anchor.column))
    freshness = freshness_for(db, (c.anchor for c in ordered), empty=not ordered)
    return ConformancesAnswer(usr, protocol, tuple(ordered), freshness)


def render_conformances(answer: ConformancesAnswer, budget: int | None = None) -> str:
    name = answer.protocol.name if answer.protocol else answer.usr
    if answer.protocol is None:
        lines = [f"No protocol with USR {answer.usr} in this index: use find_symbol to get its usr."]
    elif not answer.conformances:
        lines = [f"No type conforms to {name} in this index ({answer.freshness.completeness})."]
    else:
        shown = answer.shown(budget)
        lines = [f"{len(answer.conformances)} type(s) conform to {name}:"]
        for c in shown:
            how = "in an extension" if c.via_extension else "in its declaration"
            if c.via_protocol:
                how += f", through {c.via_protocol}"
            lines.append(
                f"- {c.type_symbol.name} ({how}) at {c.anchor.path}:{c.anchor.line}:{c.anchor.column}"
            )
        if len(shown) < len(answer.conformances):
            lines.append(
                f"(showing {len(shown)} of {len(answer.conformances)}, by path, to stay within the response "
                f"budget; list them all in a shell: xcindex conformances {answer.usr} "
                "--project <projectPath> --json)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


class FindConformancesArgs(LocationArgs):
    tool = "find_conformances"

    usr: Text = Field(description="The protocol's usr, from find_symbol.")


def query_find_conformances(db: Database, args: FindConformancesArgs) -> ConformancesAnswer:
    return find_conformances(db, args.usr)
