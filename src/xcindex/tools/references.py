"""find_references, find_definition and find_overrides.

Occurrences come from live units only (a unit superseded by a newer one for the same
file, or whose file is gone, answers nothing). Implicit occurrences (compiler-synthesised
uses with no text at that position, and macro expansions) are left out: every reported
site is a place where the name is written in the source. One exception, because a reader
counts it as a call: a property-wrapper attribute (`@Wrapper(...) var x`) calls the
wrapper's initialiser, which the index records as an implicit call at the attribute's type
name; such a call is reported (with the role `implicit`) when the wrapper type is written at
that very position. A macro's duplicate (the implicit copy of a use inside `#expect(...)`,
recorded at the macro's `#`) has no type name written there and stays out.

Lists are paged: `offset` skips that many sites of the one order (path, line, column), and
`nextOffset` says where the next page starts while more remain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from pydantic import Field, StrictInt, model_validator

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role, is_generated_name, states_relations
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, canonical_occurrence, freshness_for, occurrence_json
from xcindex.tools.limits import DEFAULT_MAX_RESULTS
from xcindex.tools.resolve import EXTENSION_KIND, resolve
from xcindex.tools.shapes import ConformanceSiteJson, DefinitionJson, OccurrenceJson, SitesJson

MAX_RESULTS = 500
CONSTRUCTOR_KIND = 22


@dataclass(frozen=True)
class ConformanceSite:
    """Where the index records, on an implicit occurrence, that a member witnesses a
    requirement: the conformance (`extension Double: Field {}`), and the conforming type."""

    occurrence: OccurrenceRow
    conforming_type: str | None

    def to_json(self) -> ConformanceSiteJson:
        occ = self.occurrence
        return {
            "path": occ.path,
            "line": occ.line,
            "column": occ.column,
            "conformingType": self.conforming_type,
        }

    def text(self) -> str:
        occ = self.occurrence
        return f"{self.conforming_type or '?'} at {occ.path}:{occ.line}:{occ.column}"


@dataclass(frozen=True)
class Site:
    symbol: SymbolRow
    occurrence: OccurrenceRow
    conformances: tuple[ConformanceSite, ...] = ()
    """For an override or witness: the conformances at which the index says, on an implicit
    occurrence, that the symbol witnesses the requirement (declared away from the witness:
    another file or module, an SDK type made to conform)."""

    def to_json(self) -> OccurrenceJson:
        item = occurrence_json(self.symbol, self.occurrence)
        if self.occurrence.roles & Role.IMPLICIT:
            item["roles"] = [*item["roles"], "implicit"]
        if self.conformances:
            item["conformanceSites"] = [c.to_json() for c in self.conformances]
        return item

    def role_text(self) -> str:
        text = ", ".join(self.to_json()["roles"])
        if self.conformances:
            text += "; witnesses through the conformance of " + ", ".join(c.text() for c in self.conformances)
        return text

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.occurrence.path, self.occurrence.line, self.occurrence.column)


@dataclass(frozen=True)
class SitesAnswer:
    """A page of sites: `total` counts every site, `sites` holds at most `limit` of them
    from `offset` on; `truncated` when more follow this page."""

    query: str
    symbols: tuple[SymbolRow, ...]
    sites: tuple[Site, ...]
    total: int
    truncated: bool
    freshness: Freshness
    offset: int = 0
    note: str | None = None
    """How a name was resolved when that took a decision (for example, a requirement
    and its default implementation)."""
    labels: tuple[tuple[int, str], ...] = ()
    """Symbol id → the name to show for its sites, when symbols of different types are
    answered together (`value` of several types: `Timestamp.value`, `Pair.value`)."""

    def label(self, site: Site) -> str:
        return dict(self.labels).get(site.symbol.id, site.symbol.name)

    def named_paths(self) -> set[str]:
        return {site.occurrence.path for site in self.sites}

    def shown(self, budget: int | None = None) -> tuple[Site, ...]:
        """The sites that fit a response budget (all of them without one)."""
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return self.sites[: fitting(self.sites, lambda site: item_cost(site.to_json()), lists_budget)]

    def next_offset(self, budget: int | None = None) -> int | None:
        """Where the next page starts, while sites remain after what this answer shows."""
        end = self.offset + len(self.shown(budget))
        return end if end < self.total else None

    def to_json(self, budget: int | None = None) -> SitesJson:
        shown = self.shown(budget)
        next_offset = self.next_offset(budget)
        answer: SitesJson = {
            **self.freshness.to_json(budget),  # type: ignore[typeddict-item]  # optional keys set below
            "results": [site.to_json() for site in shown],
            "totalCount": self.total,
            "truncated": next_offset is not None,
            "symbols": [{"usr": s.usr, "name": s.name} for s in self.symbols[:MAX_RESULTS]],
        }
        if next_offset is not None:
            answer["nextOffset"] = next_offset
        if self.note:
            answer["note"] = self.note
        return answer


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
    """Occurrences written in the source: no implicit ones, none inside macro expansions,
    except an initialiser's implicit calls where its type's name is written (a
    property-wrapper attribute; see the module docstring)."""
    occurrences = db.occurrences_of(symbol.id)
    written = [occ for occ in occurrences if not occ.roles & Role.IMPLICIT]
    if symbol.kind != CONSTRUCTOR_KIND:
        return written
    implicit_calls = [occ for occ in occurrences if occ.roles & Role.IMPLICIT and occ.roles & Role.CALL]
    if not implicit_calls:
        return written
    type_spots: set[tuple[str, int, int]] = set()
    for type_id in _constructed_types(db, symbol.id):
        type_spots |= {
            (occ.path, occ.line, occ.column)
            for occ in db.occurrences_of(type_id)
            if not occ.roles & Role.IMPLICIT
        }
    return written + [occ for occ in implicit_calls if (occ.path, occ.line, occ.column) in type_spots]


def _constructed_types(db: Database, constructor_id: int) -> set[int]:
    """The type an initialiser belongs to (through an extension, the extended type)."""
    parents = db.related_symbol_ids([constructor_id], Role.REL_CHILDOF).get(constructor_id, set())
    types: set[int] = set()
    for parent_id, parent in db.symbols_by_ids(parents).items():
        if parent.kind == EXTENSION_KIND:
            types |= db.related_by([parent_id], Role.REL_EXTENDEDBY).get(parent_id, set())
        else:
            types.add(parent_id)
    return types


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
            by_key[site.key] = replace(existing, occurrence=merged)
    return [by_key[key] for key in sorted(by_key)]


def capped(
    query: str,
    db: Database,
    symbols: list[SymbolRow],
    sites: list[Site],
    limit: int,
    offset: int = 0,
    note: str | None = None,
) -> SitesAnswer:
    """The page of `limit` sites from `offset` on (the same order on every page)."""
    shown = sites[offset : offset + limit]
    freshness = freshness_for(db, (s.occurrence for s in shown), empty=not sites)
    return SitesAnswer(
        query, tuple(symbols), tuple(shown), len(sites), offset + limit < len(sites), freshness, offset, note
    )


def symbols_for(
    db: Database, symbol_name: str | None, usr: str | None
) -> tuple[list[SymbolRow], str | None, tuple[tuple[int, str], ...]]:
    """The symbols a query is about: one USR, or the best-ranked candidates of a name (all
    those ranked as high as the first: overloads, a requirement and its default
    implementations), with a note saying which when the name also names others, and the
    names to show when they belong to different types."""
    if usr is not None:
        symbol = db.symbol_by_usr(usr)
        return ([symbol] if symbol is not None else []), None, ()
    assert symbol_name is not None
    if symbol_name.startswith(("s:", "c:")):
        # A USR given as the name (no Swift name starts so): the symbol it is, if any.
        symbol = db.symbol_by_usr(symbol_name)
        if symbol is not None:
            return [symbol], None, ()
    candidates = resolve(db, symbol_name).candidates
    if not candidates:
        return [], None, ()
    chosen = [c for c in candidates if c.tier() == candidates[0].tier()]
    notes = []
    labels: tuple[tuple[int, str], ...] = ()
    containers = {c.container for c in chosen}
    if len(containers) > 1:
        labels = tuple(
            (c.symbol.id, f"{c.container_name}.{c.symbol.name}" if c.container else c.symbol.name)
            for c in chosen
        )
        shown = ", ".join(label for _, label in labels[:8]) + (", …" if len(labels) > 8 else "")
        notes.append(
            f"'{symbol_name}' names {len(chosen)} symbols of different types ranked as high as each other, "
            f"answered together ({shown}); ask by usr or with the type (Type.member) for one of them"
        )
    if len(chosen) < len(candidates):
        notes.append(
            f"'{symbol_name}' also names {len(candidates) - len(chosen)} other symbol(s) ranked lower "
            "(find_symbol lists them; ask by usr for one of them)"
        )
    return [c.symbol for c in chosen], "; ".join(notes) or None, labels


def find_references(
    db: Database,
    *,
    symbol_name: str | None = None,
    usr: str | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    offset: int = 0,
) -> SitesAnswer:
    symbols, note, labels = symbols_for(db, symbol_name, usr)
    if len(symbols) == 1 and symbols[0].kind != CONSTRUCTOR_KIND:
        # One symbol with no implicit sites to add: the page comes from SQL (a hub symbol
        # has tens of thousands of sites; only the page shown is built here).
        symbol = symbols[0]
        total, page = db.written_site_page(symbol.id, max_results, offset)
        shown = [Site(symbol, occ) for occ in page]
        freshness = freshness_for(db, page, empty=total == 0)
        return SitesAnswer(
            usr or symbol_name or "",
            (symbol,),
            tuple(shown),
            total,
            offset + max_results < total,
            freshness,
            offset,
            note,
        )
    sites = dedupe_and_sort(Site(symbol, occ) for symbol in symbols for occ in source_occurrences(db, symbol))
    answer = capped(usr or symbol_name or "", db, symbols, sites, max_results, offset, note)
    return replace(answer, labels=labels) if labels else answer


def find_definition(db: Database, usr: str) -> DefinitionAnswer:
    symbol = db.symbol_by_usr(usr)
    site: Site | None = None
    if symbol is not None:
        # Only its definitions and declarations are read (a hub symbol has thousands of uses).
        declared = db.declarations_of([symbol.id]).get(symbol.id, [])
        definition = canonical_occurrence(occ for occ in declared if not occ.roles & Role.IMPLICIT)
        if definition is not None:
            site = Site(symbol, definition)
    freshness = freshness_for(db, [site.occurrence] if site else [], empty=site is None)
    return DefinitionAnswer(usr, site, freshness)


def overriding_sites(db: Database, base: SymbolRow, *, max_depth: int = 32) -> list[Site]:
    """What overrides (or witnesses) `base`, and what overrides those in turn.

    The index links subclass overrides, protocol witnesses and default implementations in
    protocol extensions alike with `overrideOf`, on the overriding declaration. A witness
    whose conformance is declared away from it (another file or module, an SDK type made
    to conform: `extension Double: Field {}`) has the relation only on an implicit
    occurrence at that conformance (model.states_relations). Each symbol is anchored at
    its written declarations that carry the relation, else at its own definition, else (an
    SDK member) at its first conformance; its conformances are listed beside it. A
    synthesised declaration (an inherited initialiser) is no site; a conformer relying on a
    default implementation adds a conformance to the default.
    """
    declared: dict[int, dict[int, OccurrenceRow]] = {}
    conformances: dict[int, dict[tuple[str, int, int], OccurrenceRow]] = {}
    seen = {base.id}
    frontier = [base.id]
    for _ in range(max_depth):
        next_frontier: list[int] = []
        for symbol_id in frontier:
            for relation in db.related_occurrences(symbol_id, Role.REL_OVERRIDEOF):
                occ = relation.occurrence
                if occ.symbol_id == base.id or not states_relations(occ.roles):
                    continue
                if occ.roles & Role.IMPLICIT:
                    conformances.setdefault(occ.symbol_id, {})[(occ.path, occ.line, occ.column)] = occ
                elif occ.roles & (Role.DEFINITION | Role.DECLARATION):
                    declared.setdefault(occ.symbol_id, {})[occ.id] = occ
                else:
                    continue
                if occ.symbol_id not in seen:
                    seen.add(occ.symbol_id)
                    next_frontier.append(occ.symbol_id)
        if not next_frontier:
            break
        frontier = next_frontier
    symbols = db.symbols_by_ids(seen - {base.id})
    undeclared = [sid for sid in symbols if sid not in declared]
    definitions = db.declarations_of(undeclared) if undeclared else {}
    types = _conforming_types(db, [o for found in conformances.values() for o in found.values()])
    sites: list[Site] = []
    for symbol_id, symbol in symbols.items():
        if is_generated_name(symbol.name):
            continue
        at = sorted(conformances.get(symbol_id, {}).values(), key=lambda o: (o.path, o.line, o.column))
        anchors = list(declared.get(symbol_id, {}).values())
        if not anchors:
            own = canonical_occurrence(
                o for o in definitions.get(symbol_id, []) if not o.roles & Role.IMPLICIT
            )
            anchors = [own] if own is not None else at[:1]
        beside = tuple(ConformanceSite(o, types.get(o.id)) for o in at)
        sites += [Site(symbol, anchor, beside) for anchor in anchors]
    return dedupe_and_sort(sites)


def _conforming_types(db: Database, records: list[OccurrenceRow]) -> dict[int, str]:
    """Occurrence id → the type whose conformance a witness record sits on (its containedBy)."""
    relations = db.relations_of([o.id for o in records])
    contained = {
        occ_id: sid
        for occ_id, found in relations.items()
        for roles, sid in found
        if roles & Role.REL_CONTAINEDBY
    }
    names = db.symbols_by_ids(set(contained.values()))
    return {occ_id: names[sid].name for occ_id, sid in contained.items() if sid in names}


def find_overrides(db: Database, usr: str, *, max_results: int = MAX_RESULTS, offset: int = 0) -> SitesAnswer:
    symbol = db.symbol_by_usr(usr)
    sites = overriding_sites(db, symbol) if symbol is not None else []
    return capped(usr, db, [symbol] if symbol else [], sites, max_results, offset)


class FindReferencesArgs(LocationArgs):
    tool = "find_references"

    symbol_name: Text | None = Field(
        None, description="A name, as find_symbol takes it (every symbol it names)."
    )
    usr: Text | None = Field(None, description="One symbol's usr, from find_symbol (preferred).")
    max_results: StrictInt = Field(
        DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS, description="How many sites to list at most."
    )
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")

    @model_validator(mode="after")
    def _one_subject(self) -> FindReferencesArgs:
        if (self.symbol_name is None) == (self.usr is None):
            raise ValueError("give exactly one of 'symbolName' or 'usr'")
        return self


class UsrArgs(LocationArgs):
    usr: Text = Field(description="The symbol's usr, from find_symbol.")


class FindDefinitionArgs(UsrArgs):
    tool = "find_definition"


class FindOverridesArgs(UsrArgs):
    tool = "find_overrides"

    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")


def query_find_references(db: Database, args: FindReferencesArgs) -> SitesAnswer:
    return find_references(
        db, symbol_name=args.symbol_name, usr=args.usr, max_results=args.max_results, offset=args.offset
    )


def query_find_definition(db: Database, args: FindDefinitionArgs) -> DefinitionAnswer:
    return find_definition(db, args.usr)


def query_find_overrides(db: Database, args: FindOverridesArgs) -> SitesAnswer:
    return find_overrides(db, args.usr, offset=args.offset)
