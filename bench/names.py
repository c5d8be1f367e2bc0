"""The name-resolution suite: names an agent types, scored per form against the resolver.

The queries and what each one means come from outside xcindex: `tests/truth/name_cases.py`
generates them from an independent dump of the index store (`tests/truth/store_dump.py`,
libIndexStore read by a small C program), for every symbol a project declares in its
source, in five forms: `bare` (`send`), `Type.member` (`NameClient.send`),
`Type.member(labels:)` (`NameClient.send(_:)`), `Module.Type.member(labels:)`
(`CanaryCore.NameClient.send(_:)`) and `Subclass.member(labels:)` (through a type that
inherits or adopts the member's type without declaring the member).

A query is a hit@1 when the symbol is the resolver's first candidate and a hit@any when it
is among the candidates. A query text can mean several symbols (it was generated for each
of them: overloads named without labels, a requirement and its default implementation, a
property and an enum case); `ties` counts the misses at 1 whose first candidate is one of
those other symbols. Nothing the resolver says about its own ranking excuses a miss.

Per symbol, hit@1 cannot exceed the `ceiling`: a name that k symbols share is first for at
most one of them, so the best any resolver can do is the number of distinct names over the
number of queries. Per name, `hit@1 per name` counts the distinct names whose first
candidate is one of the symbols the name was generated for.

Run: `python -m bench.names STORE [STORE ...] [--misses]` (absolute index store paths; each
is dumped, and ingested into the cache folder, first). Prints a Markdown table per store.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from tests.truth.name_cases import FORMS, QUALIFIED, Case, denoted, generate_cases
from tests.truth.store_dump import live
from xcindex.engine import Engine
from xcindex.indexstore.database import Database
from xcindex.tools.resolve import Resolution, resolve

__all__ = ["FORMS", "QUALIFIED", "markdown", "run_suite", "score"]


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


def score(
    db: Database, cases: list[Case], resolver: Callable[[Database, str], Resolution] = resolve
) -> dict[str, FormScore]:
    scores = {form: FormScore() for form in FORMS}
    cache: dict[str, list[str]] = {}
    meant = denoted(cases)
    for case in cases:
        usrs = cache.get(case.query)
        if usrs is None:
            usrs = cache[case.query] = [c.symbol.usr for c in resolver(db, case.query).candidates]
        result = scores[case.form]
        result.cases += 1
        if usrs and usrs[0] == case.usr:
            result.hit1 += 1
        elif case.usr in usrs:
            if usrs[0] in meant[case.query]:
                result.ties += 1
                why = "meant too"
            else:
                why = "not meant by this name"
            result.misses.append(
                f"at {usrs.index(case.usr) + 1}: {case.query} -> {case.usr} (first: {usrs[0]}, {why})"
            )
        if case.usr in usrs:
            result.hit_any += 1
        else:
            result.misses.insert(0, f"not found: {case.query} -> {case.usr}")
    for form in FORMS:
        queries = {case.query for case in cases if case.form == form}
        scores[form].names = len(queries)
        scores[form].name_hit1 = sum(1 for q in queries if cache[q][:1] and cache[q][0] in meant[q])
        # The misses a tie does not explain first: they are what a reader needs to see.
        scores[form].misses.sort(key=lambda line: "meant too" in line)
    return scores


def _suite(db: Database, cases: list[Case]) -> dict[str, Any]:
    scores = score(db, cases)
    return {
        "symbols": len({c.usr for c in cases}),
        "forms": {form: scores[form].to_json() for form in FORMS},
    }


async def run_suite(engine: Engine, store: Path) -> dict[str, Any]:
    """Generate the cases from the store's independent dump, then score xcindex on them."""
    cases = await anyio.to_thread.run_sync(lambda: generate_cases(live(store)))
    result: dict[str, Any] = await engine._core.run_query(
        partial(_suite, cases=cases), index_store_path=str(store)
    )
    return result


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
            result = await run_suite(engine, Path(store))
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
