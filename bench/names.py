"""The name-resolution suite: queries generated from the index itself, scored per form.

For every symbol a project declares in its source (no parameters, locals, accessors,
extensions, compiler-synthesised or macro-generated declarations), the names an agent
would type for it:

- `bare`: the base name (`send`), which also names every overload and namesake;
- `Type.member`: the innermost enclosing type and the base name (`NameClient.send`);
- `Type.member(labels:)`: the same with the full name (`NameClient.send(_:)`);
- `Module.Type.member(labels:)`: the module and the whole path (`CanaryCore.NameClient.send(_:)`);
  for a top-level declaration, `Module.name`;
- `Subclass.member(labels:)`: through a type that inherits the member without declaring it
  (a subclass of its class, or a conformer of its protocol that relies on a protocol
  extension; initialisers are left out: a subclass's inherited initialiser is its own symbol).

A query is a hit@1 when the symbol is the resolver's first candidate and a hit@any when it
is among the candidates. `ties` counts the misses at 1 where the name is ambiguous as typed:
the first candidate is a symbol the same name was generated for too (`Node.scalar` for the
property and for `case scalar(_:)`), or one ranked exactly as high (overloads named without
labels, a requirement and its default implementation).

Per symbol, hit@1 cannot exceed the `ceiling`: a name that k symbols share is first for at
most one of them, so the best any resolver can do is the number of distinct names over the
number of queries. Per name, `hit@1 per name` counts the distinct names whose first
candidate is one of the symbols the name was generated for: what an agent typing that name
gets first is a symbol it can mean.

Run: `python -m bench.names STORE [STORE ...]` (absolute index store paths; each is
ingested into the cache folder first). Prints a Markdown table per store.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from xcindex.engine import Engine
from xcindex.indexstore.database import Database, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.swift.names import name_labels
from xcindex.tools.resolve import (
    ACCESSOR_SUBKINDS,
    CLASS_KIND,
    NOMINAL_KINDS,
    PROTOCOL_KIND,
    Resolution,
    _Facts,
    resolve,
)

FORMS = (
    "bare",
    "Type.member",
    "Type.member(labels:)",
    "Module.Type.member(labels:)",
    "Subclass.member(labels:)",
)
QUALIFIED = FORMS[1:]
CONSTRUCTOR_KIND = 22


@dataclass(frozen=True)
class Case:
    form: str
    query: str
    usr: str


@dataclass
class FormScore:
    cases: int = 0
    hit1: int = 0
    hit_any: int = 0
    ties: int = 0
    names: int = 0
    name_hit1: int = 0
    misses: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "names": self.names,
            "ceiling": round(self.names / self.cases, 4) if self.cases else None,
            "hit@1 per name": round(self.name_hit1 / self.names, 4) if self.names else None,
            "hits@1": self.hit1,
            "hits@any": self.hit_any,
            "hit@1": round(self.hit1 / self.cases, 4) if self.cases else None,
            "hit@any": round(self.hit_any / self.cases, 4) if self.cases else None,
            "ties": self.ties,
            "missExamples": self.misses[:10],
        }


def project_symbols(db: Database) -> list[SymbolRow]:
    """Symbols declared in the project's source (what `declared_symbol_ids` keeps), its
    own C headers included."""
    paths = db.live_source_files()
    ids = db.declared_symbol_ids(paths)
    symbols = db.symbols_by_ids(ids)
    return sorted(
        (
            s
            for s in symbols.values()
            if s.kind != 9
            and s.subkind not in ACCESSOR_SUBKINDS | {1013}
            and s.name  # no anonymous C members
        ),
        key=lambda s: s.usr,
    )


def generate_cases(db: Database) -> list[Case]:
    symbols = project_symbols(db)
    facts = _Facts(db)
    facts.load(s.id for s in symbols)
    owners: dict[int, int | None] = {s.id: facts.owner(s.id)[0] for s in symbols}
    members: dict[int, set[str]] = {}
    for symbol in symbols:
        owner = owners[symbol.id]
        if owner is not None:
            members.setdefault(owner, set()).add(symbol.name)
    owner_ids = sorted({o for o in owners.values() if o is not None})
    facts.load(owner_ids)
    subtypes = _direct_subtypes(db, owner_ids)
    facts.load(s.id for heirs in subtypes.values() for s in heirs)
    cases: list[Case] = []
    for symbol in symbols:
        definition = facts.definitions.get(symbol.id)
        if definition is None:
            continue
        container, _kind, _ = facts.path(symbol.id)
        base = name_labels(symbol.name)[0]
        labelled = "(" in symbol.name
        cases.append(Case("bare", base, symbol.usr))
        if container:
            cases.append(Case("Type.member", f"{container[-1]}.{base}", symbol.usr))
            if labelled:
                cases.append(Case("Type.member(labels:)", f"{container[-1]}.{symbol.name}", symbol.usr))
        if definition.module:  # a C target's units name no module
            path = ".".join((definition.module, *container, symbol.name))
            cases.append(Case("Module.Type.member(labels:)", path, symbol.usr))
        owner = owners[symbol.id]
        owner_symbol = facts.symbols.get(owner) if owner is not None else None
        if (
            owner is not None
            and owner_symbol is not None
            and owner_symbol.kind in (CLASS_KIND, PROTOCOL_KIND)
            and symbol.kind != CONSTRUCTOR_KIND
        ):
            heirs = [
                s
                for s in subtypes.get(owner, [])
                if symbol.name not in members.get(s.id, set()) and facts.definitions.get(s.id) is not None
            ]
            if heirs:
                cases.append(Case("Subclass.member(labels:)", f"{heirs[0].name}.{symbol.name}", symbol.usr))
    return cases


def _direct_subtypes(db: Database, type_ids: list[int]) -> dict[int, list[SymbolRow]]:
    """Types that inherit from or adopt each type (an extension's adopter: the extended type)."""
    relating = db.relating_symbol_ids(type_ids, Role.REL_BASEOF)
    all_ids = {i for ids in relating.values() for i in ids}
    rows = db.symbols_by_ids(all_ids)
    extensions = [i for i, s in rows.items() if s.kind == 9]
    extended = db.related_by(extensions, Role.REL_EXTENDEDBY) if extensions else {}
    rows.update(db.symbols_by_ids({t for ids in extended.values() for t in ids}))
    result: dict[int, list[SymbolRow]] = {}
    for type_id, ids in relating.items():
        heirs: dict[int, SymbolRow] = {}
        for related in ids:
            targets = sorted(extended.get(related, set())) if rows[related].kind == 9 else [related]
            for target in targets:
                if rows[target].kind in NOMINAL_KINDS and rows[target].kind != PROTOCOL_KIND:
                    heirs[target] = rows[target]
        result[type_id] = sorted(heirs.values(), key=lambda s: s.usr)
    return result


def score(
    db: Database, cases: list[Case], resolver: Callable[[Database, str], Resolution] = resolve
) -> dict[str, FormScore]:
    scores = {form: FormScore() for form in FORMS}
    cache: dict[str, Resolution] = {}
    denoted: dict[tuple[str, str], set[str]] = {}
    for case in cases:
        denoted.setdefault((case.form, case.query), set()).add(case.usr)
    for case in cases:
        resolution = cache.get(case.query)
        if resolution is None:
            resolution = cache[case.query] = resolver(db, case.query)
        result = scores[case.form]
        result.cases += 1
        usrs = [c.symbol.usr for c in resolution.candidates]
        if usrs and usrs[0] == case.usr:
            result.hit1 += 1
        elif case.usr in usrs:
            expected = resolution.candidates[usrs.index(case.usr)]
            shared = usrs[0] in denoted[(case.form, case.query)]
            if shared or expected.tier() == resolution.candidates[0].tier():
                result.ties += 1
            if len(result.misses) < 50:
                result.misses.append(
                    f"at {usrs.index(case.usr) + 1}: {case.query} -> {case.usr} (first: {usrs[0]})"
                )
        if case.usr in usrs:
            result.hit_any += 1
        elif len(result.misses) < 50:
            result.misses.insert(0, f"not found: {case.query} -> {case.usr}")
    for (form, query), meant in denoted.items():
        first = cache[query].candidates[:1]
        scores[form].names += 1
        if first and first[0].symbol.usr in meant:
            scores[form].name_hit1 += 1
    return scores


def run_suite(db: Database) -> dict[str, Any]:
    cases = generate_cases(db)
    scores = score(db, cases)
    return {
        "symbols": len({c.usr for c in cases}),
        "forms": {form: scores[form].to_json() for form in FORMS},
    }


def markdown(name: str, result: dict[str, Any]) -> str:
    lines = [
        f"**{name}** ({result['symbols']} symbols)",
        "",
        "| form | queries | hit@1 | ceiling | hit@any | ties at 1 | names | hit@1 per name |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for form, data in result["forms"].items():
        if not data["cases"]:
            lines.append(f"| `{form}` | 0 | - | - | - | - | 0 | - |")
            continue
        lines.append(
            f"| `{form}` | {data['cases']} | {data['hit@1'] * 100:.1f} % | {data['ceiling'] * 100:.1f} % "
            f"| {data['hit@any'] * 100:.1f} % | {data['ties']} | {data['names']} "
            f"| {data['hit@1 per name'] * 100:.1f} % |"
        )
    return "\n".join(lines)


async def measure(stores: list[str], misses: bool = False) -> dict[str, dict[str, Any]]:
    """Run the suite on each store, printing each table as soon as it is measured."""
    results: dict[str, dict[str, Any]] = {}
    async with Engine() as engine:
        for store in stores:
            started = anyio.current_time()
            result = await engine._core.run_query(run_suite, index_store_path=store)
            result["seconds"] = round(anyio.current_time() - started, 1)
            results[store] = result
            sys.stdout.write(markdown(store, result) + f"\n\n({result['seconds']} s)\n\n")
            if misses:
                for form, data in result["forms"].items():
                    for miss in data["missExamples"]:
                        sys.stdout.write(f"  miss [{form}] {miss}\n")
            sys.stdout.flush()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="+", help="absolute index store paths")
    parser.add_argument("--misses", action="store_true", help="list up to 10 misses per form")
    args = parser.parse_args(argv)
    anyio.run(measure, args.stores, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
