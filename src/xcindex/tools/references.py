"""find_references, find_definition and find_overrides.

Occurrences come from live units only (a unit superseded by a newer one for the same
file, or whose file is gone, answers nothing). Implicit occurrences (compiler-synthesised
uses with no text at that position, and macro expansions) are left out: every reported
site is a place where the name is written in the source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from pydantic import Field, StrictInt, model_validator

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, is_generated_name, role_names
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, RESPONSE_BUDGET_TOKENS, fitting, item_cost
from xcindex.tools.common import Freshness, canonical_occurrence, freshness_for, occurrence_json
from xcindex.tools.find_symbol import resolve_symbols
from xcindex.tools.shapes import DefinitionJson, OccurrenceJson, SitesJson

DEFAULT_MAX_RESULTS = 100
MAX_RESULTS = 500


@dataclass(frozen=True)
class Site:
    symbol: SymbolRow
    occurrence: OccurrenceRow

    def to_json(self) -> OccurrenceJson:
        return occurrence_json(self.symbol, self.occurrence)

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.occurrence.path, self.occurrence.line, self.occurrence.column)


@dataclass(frozen=True)
class SitesAnswer:
    """A list of sites with its cap: `total` counts every site, `sites` at most `limit`."""

    query: str
    symbols: tuple[SymbolRow, ...]
    sites: tuple[Site, ...]
    total: int
    truncated: bool
    freshness: Freshness

    def named_paths(self) -> set[str]:
        return {site.occurrence.path for site in self.sites}

    def shown(self, budget: int | None = None) -> tuple[Site, ...]:
        """The sites that fit a response budget (all of them without one)."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return self.sites[: fitting(self.sites, lambda site: item_cost(site.to_json()), lists_budget)]

    def to_json(self, budget: int | None = None) -> SitesJson:
        shown = self.shown(budget)
        return {
            "results": [site.to_json() for site in shown],
            "totalCount": self.total,
            "truncated": self.truncated or len(shown) < len(self.sites),
            "symbols": [{"usr": s.usr, "name": s.name} for s in self.symbols[:MAX_RESULTS]],
            **self.freshness.to_json(budget),
        }


@dataclass(frozen=True)
class DefinitionAnswer:
    usr: str
    site: Site | None
    freshness: Freshness

    def named_paths(self) -> set[str]:
        return {self.site.occurrence.path} if self.site else set()

    def to_json(self, budget: int | None = None) -> DefinitionJson:
        return {"result": self.site.to_json() if self.site else None, **self.freshness.to_json(budget)}


def source_occurrences(db: Database, symbol: SymbolRow) -> list[OccurrenceRow]:
    """Occurrences written in the source: no implicit ones, none inside macro expansions."""
    return [occ for occ in db.occurrences_of(symbol.id) if not occ.roles & Role.IMPLICIT]


def dedupe_and_sort(sites: Iterable[Site]) -> list[Site]:
    """One site per (path, line, column), sorted by path, line, column. Roles of the same
    symbol at one place are merged (the index can record a site once per unit)."""
    by_key: dict[tuple[str, int, int], Site] = {}
    for site in sites:
        existing = by_key.get(site.key)
        if existing is None:
            by_key[site.key] = site
        elif existing.symbol.id == site.symbol.id and existing.occurrence.roles != site.occurrence.roles:
            merged = replace(existing.occurrence, roles=existing.occurrence.roles | site.occurrence.roles)
            by_key[site.key] = Site(existing.symbol, merged)
    return [by_key[key] for key in sorted(by_key)]


def capped(query: str, db: Database, symbols: list[SymbolRow], sites: list[Site], limit: int) -> SitesAnswer:
    shown = sites[:limit]
    freshness = freshness_for(db, (s.occurrence for s in shown), empty=not sites)
    return SitesAnswer(query, tuple(symbols), tuple(shown), len(sites), len(sites) > limit, freshness)


def symbols_for(db: Database, symbol_name: str | None, usr: str | None) -> list[SymbolRow]:
    if usr is not None:
        symbol = db.symbol_by_usr(usr)
        return [symbol] if symbol is not None else []
    assert symbol_name is not None
    return [match.symbol for match in resolve_symbols(db, symbol_name)[0]]


def find_references(
    db: Database,
    *,
    symbol_name: str | None = None,
    usr: str | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
) -> SitesAnswer:
    symbols = symbols_for(db, symbol_name, usr)
    sites = dedupe_and_sort(Site(symbol, occ) for symbol in symbols for occ in source_occurrences(db, symbol))
    return capped(usr or symbol_name or "", db, symbols, sites, max_results)


def find_definition(db: Database, usr: str) -> DefinitionAnswer:
    symbol = db.symbol_by_usr(usr)
    site: Site | None = None
    if symbol is not None:
        definition = canonical_occurrence(source_occurrences(db, symbol))
        if definition is not None:
            site = Site(symbol, definition)
    freshness = freshness_for(db, [site.occurrence] if site else [], empty=site is None)
    return DefinitionAnswer(usr, site, freshness)


def overriding_sites(db: Database, base: SymbolRow, *, max_depth: int = 32) -> list[Site]:
    """Declarations that override (or witness) `base`, and their overrides in turn.

    The index links subclass overrides, protocol witnesses and default implementations in
    protocol extensions alike with `overrideOf`; implicit witnesses (a conformer relying
    on a default implementation) are not declarations and are left out.
    """
    found: dict[int, Site] = {}
    frontier = [base.id]
    for _ in range(max_depth):
        next_frontier: list[int] = []
        for symbol_id in frontier:
            for relation in db.related_occurrences(symbol_id, Role.REL_OVERRIDEOF):
                occ = relation.occurrence
                if occ.roles & Role.IMPLICIT or not occ.roles & (Role.DEFINITION | Role.DECLARATION):
                    continue
                if occ.id in found or occ.symbol_id == base.id:
                    continue
                symbol = db.symbols_by_ids([occ.symbol_id])[occ.symbol_id]
                if is_generated_name(symbol.name):
                    continue
                found[occ.id] = Site(symbol, occ)
                next_frontier.append(occ.symbol_id)
        if not next_frontier:
            break
        frontier = next_frontier
    return dedupe_and_sort(found.values())


def find_overrides(db: Database, usr: str, *, max_results: int = MAX_RESULTS) -> SitesAnswer:
    symbol = db.symbol_by_usr(usr)
    sites = overriding_sites(db, symbol) if symbol is not None else []
    return capped(usr, db, [symbol] if symbol else [], sites, max_results)


def render_sites(answer: SitesAnswer, what: str, budget: int | None = None) -> str:
    """Counts first, then one line per site grouped by file."""
    if not answer.sites:
        head = f"No {what} for '{answer.query}' ({answer.freshness.completeness})."
        if not answer.symbols:
            head += " No such symbol in this index: check the name (methods need labels) or use find_symbol."
        lines = [head]
    else:
        shown = answer.shown(budget)
        files = sorted({s.occurrence.path for s in shown})
        lines = [f"{answer.total} {what} of '{answer.query}' in {len(files)} file(s):"]
        current = ""
        for site in shown:
            if site.occurrence.path != current:
                current = site.occurrence.path
                lines.append(current)
            occ = site.occurrence
            lines.append(f"  {occ.line}:{occ.column} {site.symbol.name} [{', '.join(role_names(occ.roles))}]")
        overrides = what.startswith("override")
        if len(shown) < len(answer.sites):
            command = (
                "xcindex overrides <usr> --project <projectPath> --json"
                if overrides
                else f"xcindex refs --usr <usr> --project <projectPath> --max-results {MAX_RESULTS} --json"
            )
            lines.append(
                f"(showing {len(shown)} of {answer.total}: that is what fits the response budget of "
                f"~{RESPONSE_BUDGET_TOKENS // 1000}k tokens. Narrow the question (one usr rather than a "
                f"name; blast_radius for files), or list them in a shell: {command})"
            )
        elif answer.truncated and overrides:
            lines.append(f"(showing the first {len(answer.sites)} of {answer.total}, by path)")
        elif answer.truncated:
            lines.append(
                f"(showing {len(answer.sites)} of {answer.total}; ask again with a larger maxResults "
                f"(at most {MAX_RESULTS}) to see the rest)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_definition(answer: DefinitionAnswer, budget: int | None = None) -> str:
    if answer.site is None:
        lines = [f"No definition of {answer.usr} in this index ({answer.freshness.completeness})."]
    else:
        occ = answer.site.occurrence
        lines = [f"{answer.site.symbol.name} is defined at {occ.path}:{occ.line}:{occ.column}"]
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


class FindReferencesArgs(LocationArgs):
    tool = "find_references"

    symbol_name: Text | None = Field(
        None, description="A name, as find_symbol takes it (every symbol it names)."
    )
    usr: Text | None = Field(None, description="One symbol's usr, from find_symbol (preferred).")
    max_results: StrictInt = Field(
        DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS, description="How many sites to list at most."
    )

    @model_validator(mode="after")
    def _one_subject(self) -> FindReferencesArgs:
        if (self.symbol_name is None) == (self.usr is None):
            raise ValueError("Give exactly one of 'symbolName' or 'usr'")
        return self


class UsrArgs(LocationArgs):
    usr: Text = Field(description="The symbol's usr, from find_symbol.")


class FindDefinitionArgs(UsrArgs):
    tool = "find_definition"


class FindOverridesArgs(UsrArgs):
    tool = "find_overrides"


def query_find_references(db: Database, args: FindReferencesArgs) -> SitesAnswer:
    return find_references(db, symbol_name=args.symbol_name, usr=args.usr, max_results=args.max_results)


def query_find_definition(db: Database, args: FindDefinitionArgs) -> DefinitionAnswer:
    return find_definition(db, args.usr)


def query_find_overrides(db: Database, args: FindOverridesArgs) -> SitesAnswer:
    return find_overrides(db, args.usr)
