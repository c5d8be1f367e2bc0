"""What a rename must change besides the symbol asked about: the override chain's roots (asked
about a witness, the requirement is renamed), everything that overrides or witnesses them,
and the witnesses the index does not relate (checks.complete_witnesses).

A witness can be related to its requirement only at a conformance declared away from it
(an implicit occurrence there: docs/tools.md, "Implicit occurrences"). Such a witness is
renamed when its declaration is written in the project; one whose declaration is not (an
SDK member, or one the compiler synthesises) cannot be, and the plan is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcindex.indexstore.database import Database, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.tools.references import Site, overriding_sites
from xcindex.tools.rename.checks import WitnessCompletion, complete_witnesses
from xcindex.vocabulary import WarningCode


@dataclass
class Reach:
    renamed: dict[int, SymbolRow]
    completion: WitnessCompletion
    unwritten: dict[int, Site] = field(default_factory=dict)
    """Witnesses with no declaration written here, anchored at the conformance that makes them one."""
    implied: dict[int, Site] = field(default_factory=dict)
    """Witnesses written here that only a conformance declared elsewhere relates to the requirement."""
    warnings: list[tuple[WarningCode, str]] = field(default_factory=list)

    def unwritten_text(self) -> str:
        """`Double.magnitude (the conformance at path:line:column)`, one per witness."""
        return ", ".join(
            sorted(
                f"{_owner(site)}{site.symbol.name} (the conformance at "
                f"{site.occurrence.path}:{site.occurrence.line}:{site.occurrence.column})"
                for site in self.unwritten.values()
            )
        )


def _owner(site: Site) -> str:
    found = next((c.conforming_type for c in site.conformances if c.conforming_type), None)
    return f"{found}." if found else ""


def rename_reach(db: Database, roots: list[SymbolRow]) -> Reach:
    """The symbols renamed together with `roots` (see the module docstring)."""
    reach = Reach({}, WitnessCompletion({}, frozenset(), []))

    def overriders(base: SymbolRow) -> list[SymbolRow]:
        found: list[SymbolRow] = []
        for site in overriding_sites(db, base):
            if site.occurrence.roles & Role.IMPLICIT:
                reach.unwritten.setdefault(site.symbol.id, site)
                continue
            if site.conformances and not site.occurrence.roles & Role.REL_OVERRIDEOF:
                reach.implied.setdefault(site.symbol.id, site)
            found.append(site.symbol)
        return found

    renamed = reach.renamed
    for root in roots:
        renamed[root.id] = root
        for symbol in overriders(root):
            renamed[symbol.id] = symbol
    reach.completion = complete_witnesses(db, renamed, overriders)
    for default, requirements in reach.completion.shared:
        for requirement in [r for r in requirements if r.id not in renamed]:
            renamed[requirement.id] = requirement
            for symbol in overriders(requirement):
                renamed.setdefault(symbol.id, symbol)
        names = ", ".join(sorted({r.name + " of " + r.usr for r in requirements}))
        reach.warnings.append(
            (
                WarningCode.SHARED_DEFAULT_IMPLEMENTATION,
                f"{default.name} ({default.usr}) is the default implementation of {len(requirements)} "
                f"requirements ({names}): all of them and their witnesses are renamed together.",
            )
        )
    for site in reach.implied.values():
        elsewhere = [c for c in site.conformances if c.occurrence.module != site.occurrence.module]
        if elsewhere:
            where = ", ".join(c.text() for c in elsewhere)
            reach.warnings.append(
                (
                    WarningCode.WITNESS_IN_OTHER_MODULE,
                    f"{_owner(site)}{site.symbol.name} ({site.occurrence.module}, "
                    f"{site.occurrence.path}:{site.occurrence.line}:{site.occurrence.column}) is renamed: it "
                    f"witnesses the requirement only through the conformance of {where}, declared in "
                    f"{', '.join(sorted({c.occurrence.module for c in elsewhere}))}. The rename changes "
                    f"{site.occurrence.module}'s API for that module's sake.",
                )
            )
    return reach
