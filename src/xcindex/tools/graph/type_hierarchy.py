"""type_hierarchy: the supertypes or subtypes of a type, a few levels deep.

Read from the index's `baseOf` relations: the mention of a superclass or protocol in an
inheritance clause carries `baseOf` to the type being declared, or to the extension when
the clause is an extension's (`extension Circle: Measurable`), which `extendedBy` leads
back to the type. Each link is anchored at that mention (the clause where it is
declared) and says whether it is inheritance, a protocol refinement or a conformance, and
whether an extension declares it. A composition typealias in a clause (`Codable`) is
recorded as implicit mentions of the protocols it stands for (`Encodable`, `Decodable`) at
its name: those are links too (model.states_relations). Types declared inside function bodies are not in the
index; subtypes lists them apart (`localSubtypes`, found in the source at the index's
reference to the type, tools/local_types.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, StrictInt, model_validator

from xcindex.indexstore.database import Database, OccurrenceRow
from xcindex.indexstore.model import Role, states_relations
from xcindex.tools.arguments import LocationArgs, Text
from xcindex.tools.budget import LISTS_BUDGET_CHARS, fitting, item_cost
from xcindex.tools.common import Freshness, freshness_for
from xcindex.tools.graph.call_graph import SymbolSite, symbol_for, symbol_sites
from xcindex.tools.graph.local_types import LocalSubtype, local_subtypes
from xcindex.tools.shapes import TypeHierarchyJson, TypeLinkJson

MAX_DEPTH = 5
MAX_LINKS = 500
MAX_LOCAL_SUBTYPES = 100
CLASS_KIND, PROTOCOL_KIND, EXTENSION_KIND = 7, 8, 9


@dataclass(frozen=True)
class TypeLink:
    level: int
    subtype: SymbolSite
    supertype: SymbolSite
    anchor: OccurrenceRow
    via_extension: bool

    @property
    def relation(self) -> str:
        if self.subtype.symbol.kind == PROTOCOL_KIND and self.supertype.symbol.kind == PROTOCOL_KIND:
            return "refines"
        if self.supertype.symbol.kind == PROTOCOL_KIND:
            return "conforms"
        return "inherits"

    def to_json(self) -> TypeLinkJson:
        return {
            "level": self.level,
            "subtype": self.subtype.to_json(),
            "supertype": self.supertype.to_json(),
            "path": self.anchor.path,
            "line": self.anchor.line,
            "column": self.anchor.column,
            "viaExtension": self.via_extension,
            "relation": self.relation,
        }


@dataclass(frozen=True)
class TypeHierarchyAnswer:
    query: str
    root: SymbolSite | None
    direction: str
    depth: int
    links: tuple[TypeLink, ...]
    truncated: bool
    freshness: Freshness
    local_subtypes: tuple[LocalSubtype, ...] = ()

    def named_paths(self) -> set[str]:
        return {link.anchor.path for link in self.links} | {
            local.mention.path for local in self.local_subtypes
        }

    def shown(self, budget: int | None = None) -> tuple[TypeLink, ...]:
        lists_budget = None if budget is None else min(budget, LISTS_BUDGET_CHARS)
        return self.links[: fitting(self.links, lambda link: item_cost(link.to_json()), lists_budget)]

    def to_json(self, budget: int | None = None) -> TypeHierarchyJson:
        shown = self.shown(budget)
        return {
            "root": self.root.to_json() if self.root else None,
            "direction": self.direction,
            "depth": self.depth,
            "links": [link.to_json() for link in shown],
            "linkCount": len(self.links),
            "localSubtypes": [local.to_json() for local in self.local_subtypes[:MAX_LOCAL_SUBTYPES]],
            "truncated": self.truncated or len(shown) < len(self.links),
            **self.freshness.to_json(budget),
        }


def _extended_type(db: Database, extension_id: int) -> int | None:
    for relation in db.related_occurrences(extension_id, Role.REL_EXTENDEDBY):
        return relation.occurrence.symbol_id
    return None


def supertypes_of(db: Database, type_id: int) -> list[tuple[int, OccurrenceRow, bool]]:
    """(supertype, the mention in the inheritance clause, declared in an extension)."""
    found = [
        (r.occurrence.symbol_id, r.occurrence, False)
        for r in db.related_occurrences(type_id, Role.REL_BASEOF)
    ]
    for ext in db.related_occurrences_of(type_id, Role.REL_EXTENDEDBY):
        found += [
            (r.occurrence.symbol_id, r.occurrence, True)
            for r in db.related_occurrences(ext.symbol_id, Role.REL_BASEOF)
        ]
    return [item for item in found if states_relations(item[1].roles)]


def subtypes_of(db: Database, type_id: int) -> list[tuple[int, OccurrenceRow, bool]]:
    """(subtype, the mention of the type in its inheritance clause, declared in an extension)."""
    found: list[tuple[int, OccurrenceRow, bool]] = []
    for relation in db.related_occurrences_of(type_id, Role.REL_BASEOF):
        if not states_relations(relation.occurrence.roles):
            continue
        related = db.symbols_by_ids([relation.symbol_id]).get(relation.symbol_id)
        if related is not None and related.kind == EXTENSION_KIND:
            extended = _extended_type(db, related.id)
            if extended is not None:
                found.append((extended, relation.occurrence, True))
        else:
            found.append((relation.symbol_id, relation.occurrence, False))
    return found


def type_hierarchy(
    db: Database,
    *,
    usr: str | None = None,
    symbol_name: str | None = None,
    direction: str = "supertypes",
    depth: int = 1,
) -> TypeHierarchyAnswer:
    symbol = symbol_for(db, usr, symbol_name)
    query = usr or symbol_name or ""
    if symbol is None:
        return TypeHierarchyAnswer(
            query, None, direction, depth, (), False, freshness_for(db, [], empty=True)
        )
    sites: dict[int, SymbolSite] = symbol_sites(db, [symbol.id])
    root = sites[symbol.id]
    links: list[TypeLink] = []
    seen_links: set[tuple[int, int, str, int, int]] = set()
    visited = {symbol.id}
    frontier = [symbol.id]
    truncated = False
    up = direction == "supertypes"
    for level in range(1, depth + 1):
        following: list[int] = []
        related_of = {
            current: supertypes_of(db, current) if up else subtypes_of(db, current) for current in frontier
        }
        sites.update(
            symbol_sites(db, {other for found in related_of.values() for other, *_ in found} - set(sites))
        )
        for current in frontier:
            for other_id, anchor, via_extension in sorted(
                related_of[current], key=lambda item: (item[1].path, item[1].line, item[1].column)
            ):
                other, this = sites.get(other_id), sites.get(current)
                if other is None or this is None:
                    continue
                key = (current, other_id, anchor.path, anchor.line, anchor.column)
                if key in seen_links:
                    continue
                seen_links.add(key)
                if len(links) >= MAX_LINKS:
                    truncated = True
                    break
                sub, sup = (this, other) if up else (other, this)
                links.append(TypeLink(level, sub, sup, anchor, via_extension))
                if other_id not in visited:
                    visited.add(other_id)
                    following.append(other_id)
        frontier = following
        if not frontier:
            break
    local: list[LocalSubtype] = []
    if not up:  # what the index cannot say: types declared in function bodies
        for type_id in dict.fromkeys([symbol.id, *(link.subtype.symbol.id for link in links)]):
            if sites[type_id].symbol.kind in (CLASS_KIND, PROTOCOL_KIND):
                local += local_subtypes(db, type_id)
    named = [link.anchor for link in links] + [found.mention for found in local]
    freshness = freshness_for(db, named, empty=not named)
    return TypeHierarchyAnswer(
        query, root, direction, depth, tuple(links), truncated, freshness, tuple(local)
    )


class TypeHierarchyArgs(LocationArgs):
    tool = "type_hierarchy"

    usr: Text | None = Field(None, description="The type's usr, from find_symbol (preferred).")
    symbol_name: Text | None = Field(
        None, description="A type name find_symbol resolves to exactly one symbol."
    )
    direction: Literal["supertypes", "subtypes"] = Field(
        "supertypes",
        description="supertypes: what it inherits from, conforms to or refines; subtypes: what inherits from "
        "it, conforms to it or refines it.",
    )
    depth: StrictInt = Field(1, ge=1, le=MAX_DEPTH, description="How many levels to follow.")

    @model_validator(mode="after")
    def _one_subject(self) -> TypeHierarchyArgs:
        if (self.symbol_name is None) == (self.usr is None):
            raise ValueError("give exactly one of 'symbolName' or 'usr'")
        return self


def query_type_hierarchy(db: Database, args: TypeHierarchyArgs) -> TypeHierarchyAnswer:
    return type_hierarchy(
        db, usr=args.usr, symbol_name=args.symbol_name, direction=args.direction, depth=args.depth
    )
