"""find_symbol: candidate symbols for a name, each with its USR and definition site."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, is_generated_name, kind_name
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, canonical_occurrence, freshness_for, split_qualified, symbol_json
from xcindex.tools.shapes import FindSymbolJson, SymbolJson

EXTENSION_KIND = 9


@dataclass(frozen=True)
class SymbolMatch:
    symbol: SymbolRow
    definition: OccurrenceRow

    def to_json(self) -> SymbolJson:
        return symbol_json(self.symbol, self.definition)


@dataclass(frozen=True)
class FindSymbolAnswer:
    query: str
    matches: tuple[SymbolMatch, ...]
    matched_by: str  # "exact" | "base_name" | "none"
    freshness: Freshness

    def named_paths(self) -> set[str]:
        return {m.definition.path for m in self.matches}

    def shown(self, budget: int | None = None) -> tuple[SymbolMatch, ...]:
        """The candidates that fit a response budget (all of them without one)."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return self.matches[: fitting(self.matches, lambda m: item_cost(m.to_json()), lists_budget)]

    def to_json(self, budget: int | None = None) -> FindSymbolJson:
        shown = self.shown(budget)
        return {
            "results": [m.to_json() for m in shown],
            "matchedBy": self.matched_by,
            "totalCount": len(self.matches),
            "truncated": len(shown) < len(self.matches),
            **self.freshness.to_json(budget),
        }


def parent_name(db: Database, occurrence: OccurrenceRow) -> str | None:
    """The name of the type (or extended type) a definition is a member of."""
    for roles, symbol_id in db.relations_of([occurrence.id]).get(occurrence.id, []):
        if roles & Role.REL_CHILDOF:
            parent = db.symbols_by_ids([symbol_id]).get(symbol_id)
            if parent is not None:
                return parent.name
    return None


def resolve_symbols(db: Database, symbol_name: str) -> tuple[list[SymbolMatch], str]:
    """Exact name first; a bare method name also finds its labelled forms; `Type.member`
    keeps only members of that type. System symbols (no definition here), extensions and
    macro-generated helpers are dropped."""
    parent, member = split_qualified(symbol_name)
    matched_by = "exact"
    candidates = db.symbols_by_name(member)
    if not candidates and "(" not in member:
        candidates = db.symbols_by_base_name(member)
        matched_by = "base_name"
    matches: dict[str, SymbolMatch] = {}
    for symbol in candidates:
        if symbol.kind == EXTENSION_KIND or is_generated_name(symbol.name):
            # An extension is named after the type it extends; the type itself answers.
            continue
        definition = canonical_occurrence(db.occurrences_of(symbol.id))
        if definition is None:
            continue
        if parent is not None and parent_name(db, definition) != parent:
            continue
        matches.setdefault(symbol.usr, SymbolMatch(symbol, definition))
    ordered = [matches[usr] for usr in sorted(matches)]
    return ordered, matched_by if ordered else "none"


def find_symbol(db: Database, symbol_name: str) -> FindSymbolAnswer:
    matches, matched_by = resolve_symbols(db, symbol_name)
    freshness = freshness_for(db, (m.definition for m in matches), empty=not matches)
    return FindSymbolAnswer(symbol_name, tuple(matches), matched_by, freshness)


def render_find_symbol(answer: FindSymbolAnswer, budget: int | None = None) -> str:
    if not answer.matches:
        lines = [
            f"No symbol named '{answer.query}' is defined in this index ({answer.freshness.completeness})."
        ]
        if "(" not in answer.query:
            lines.append("Swift methods are named with their labels, e.g. fetchUser(id:).")
    else:
        shown = answer.shown(budget)
        how = " (matched by base name)" if answer.matched_by == "base_name" else ""
        lines = [f"{len(answer.matches)} symbol(s) named '{answer.query}'{how}:"]
        for match in shown:
            lines.append(
                f"- {match.symbol.name} [{kind_name(match.symbol.kind)}] usr={match.symbol.usr}"
                f" at {match.definition.path}:{match.definition.line}"
            )
        if len(shown) < len(answer.matches):
            lines.append(
                f"(showing {len(shown)} of {len(answer.matches)} to stay within the response budget; "
                "narrow the name with labels or Type.member(label:), or list them all in a shell: "
                f"xcindex symbol '{answer.query}' --project <projectPath> --json)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


class FindSymbolArgs(LocationArgs):
    tool = "find_symbol"

    symbol_name: Text = Field(
        description="fetchUser(id:), a bare fetchUser (every labelled form), or UserService.fetchUser(id:)."
    )


def query_find_symbol(db: Database, args: FindSymbolArgs) -> FindSymbolAnswer:
    return find_symbol(db, args.symbol_name)
