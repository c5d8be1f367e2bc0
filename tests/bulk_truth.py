"""Every USR of a store, every index tool, against the independent reader (tests/truth).

The expected side is `tests/truth/expect.py` over the dump alone; the actual side is the
tools' own functions, run in one query on the Engine's database (the code an MCP call runs
after resolving its arguments, without a round trip per USR). A discrepancy is a USR whose
answer differs, with what only one side has.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.truth import expect
from tests.truth.expect_calls import Calls, Edge
from tests.truth.store_dump import CLASS, ENUM, PROTOCOL, STRUCT, LiveIndex, live
from xcindex.engine import Engine
from xcindex.indexstore.database import Database
from xcindex.tools.conformances import find_conformances
from xcindex.tools.graph.call_hierarchy import call_hierarchy
from xcindex.tools.graph.type_hierarchy import type_hierarchy
from xcindex.tools.references import find_definition, find_overrides, find_references

EVERYTHING = 10**9
NOMINAL = frozenset({CLASS, ENUM, PROTOCOL, STRUCT})


@dataclass
class Discrepancy:
    tool: str
    usr: str
    expected_only: list[Any]
    actual_only: list[Any]


@dataclass
class BulkResult:
    usrs: int = 0
    checks: dict[str, int] = field(default_factory=dict)
    """Questions asked per tool."""
    sites: int = 0
    """Reference sites compared."""
    discrepancies: list[Discrepancy] = field(default_factory=list)
    seconds: float = 0.0

    def by_tool(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for found in self.discrepancies:
            counts[found.tool] = counts.get(found.tool, 0) + 1
        return counts


def _where(answer: dict[str, Any]) -> tuple[str, int, int]:
    return (answer["path"], answer["line"], answer["column"])


def _actual(db: Database, truth: LiveIndex, usrs: list[str]) -> dict[str, dict[str, Any]]:
    """Each tool's answer for each USR, reduced to what expect.py states."""
    found: dict[str, dict[str, Any]] = {}
    for usr in usrs:
        answers: dict[str, Any] = {}
        references = find_references(db, usr=usr, max_results=EVERYTHING).to_json()
        answers["references"] = {_where(dict(r)): frozenset(r["roles"]) for r in references["results"]}
        definition = find_definition(db, usr).to_json()["result"]
        answers["definition"] = _where(dict(definition)) if definition else None
        answers["overrides"] = {
            expect.Override(
                r["usr"],
                _where(dict(r)),
                frozenset((_where(dict(c)), c["conformingType"]) for c in r.get("conformanceSites", [])),
            )
            for r in find_overrides(db, usr, max_results=EVERYTHING).to_json()["results"]
        }
        kind = truth.symbols[usr].kind
        if kind == PROTOCOL:
            answers["conformances"] = {
                expect.Conformance(
                    c.type_symbol.usr,
                    (c.anchor.path, c.anchor.line, c.anchor.column),
                    c.via_extension,
                    c.via_protocol,
                    c.inherited_from,
                )
                for c in find_conformances(db, usr).conformances
            }
        if kind in NOMINAL:
            for direction in ("supertypes", "subtypes"):
                links = type_hierarchy(db, usr=usr, direction=direction, depth=1).links
                answers[direction] = {
                    (
                        (link.supertype if direction == "supertypes" else link.subtype).symbol.usr,
                        (link.anchor.path, link.anchor.line, link.anchor.column),
                        link.via_extension,
                    )
                    for link in links
                }
        found[usr] = answers
    return found


def _expected(truth: LiveIndex, usr: str) -> dict[str, Any]:
    answers: dict[str, Any] = {
        "references": expect.references(truth, usr),
        "definition": expect.definition(truth, usr),
        "overrides": expect.overrides(truth, usr),
    }
    kind = truth.symbols[usr].kind
    if kind == PROTOCOL:
        answers["conformances"] = expect.conformances(truth, usr)
    if kind in NOMINAL:
        answers["supertypes"] = expect.supertypes(truth, usr)
        answers["subtypes"] = expect.subtypes(truth, usr)
    return answers


def _difference(tool: str, usr: str, want: Any, got: Any) -> Discrepancy | None:
    if want == got:
        return None
    if isinstance(want, dict) and isinstance(got, dict):
        only_want = sorted(f"{k}: {want[k]}" for k in want if got.get(k) != want[k])
        only_got = sorted(f"{k}: {got[k]}" for k in got if want.get(k) != got[k])
    elif isinstance(want, set) and isinstance(got, set):
        only_want, only_got = sorted(map(str, want - got)), sorted(map(str, got - want))
    else:
        only_want, only_got = [str(want)], [str(got)]
    return Discrepancy(tool, usr, only_want, only_got)


async def check_store(
    engine: Engine,
    store: Path,
    *,
    usrs: Iterable[str] | None = None,
    excused: Callable[[Discrepancy], bool] = lambda d: False,
) -> BulkResult:
    """Compare every tool on every USR the dump holds live occurrences of (or `usrs`)."""
    started = time.perf_counter()
    truth = live(store)
    wanted = sorted(usrs if usrs is not None else truth.occurrences)
    actual = await engine._core.run_query(lambda db: _actual(db, truth, wanted), index_store_path=str(store))
    result = BulkResult(usrs=len(wanted))
    for usr in wanted:
        expected = _expected(truth, usr)
        result.sites += len(expected["references"])
        for tool, want in expected.items():
            result.checks[tool] = result.checks.get(tool, 0) + 1
            found = _difference(tool, usr, want, actual[usr].get(tool))
            if found is not None and not excused(found):
                result.discrepancies.append(found)
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class CallsResult:
    """call_hierarchy on every callable of a store, both directions, against expect_calls."""

    questions: int = 0
    edges: int = 0
    """Sites compared (every level)."""
    by_level: dict[int, int] = field(default_factory=dict)
    cut: list[str] = field(default_factory=list)
    """Answers cut short at 500 groups, the documented exception: their level-1 groups are
    compared in full (they come first), their deeper ones must all be expected."""
    paged: list[str] = field(default_factory=list)
    """Answers paged at 100 level-1 groups: what they list must all be expected."""
    discrepancies: list[Discrepancy] = field(default_factory=list)
    seconds: float = 0.0


def _actual_calls(
    db: Database, usrs: list[str], depth: int
) -> dict[tuple[str, str], tuple[set[Edge], bool, bool]]:
    """(usr, direction) → the answer's edges, whether it was cut at 500 groups, whether it is paged."""
    found: dict[tuple[str, str], tuple[set[Edge], bool, bool]] = {}
    for usr in usrs:
        for direction in ("incoming", "outgoing"):
            answer = call_hierarchy(db, usr=usr, direction=direction, depth=depth)
            edges = {
                Edge(
                    group.level,
                    group.caller.symbol.usr,
                    group.callee.symbol.usr,
                    (site.occurrence.path, site.occurrence.line, site.occurrence.column),
                    site.dispatch,
                    resolves_to,
                    group.via_dispatch,
                )
                for group in answer.groups
                for site, resolves_to in group.sites
            }
            found[(usr, direction)] = (edges, answer.truncated, answer.next_offset() is not None)
    return found


async def check_call_hierarchies(engine: Engine, store: Path, *, depth: int = 3) -> CallsResult:
    """Incoming and outgoing, at `depth`, for every function, method, initializer and
    accessor the store's project writes (CallsResult says how cut answers compare)."""
    started = time.perf_counter()
    calls = Calls(live(store))
    usrs = calls.callables()
    actual = await engine._core.run_query(
        lambda db: _actual_calls(db, usrs, depth), index_store_path=str(store)
    )
    result = CallsResult()
    for usr in usrs:
        for direction in ("incoming", "outgoing"):
            want = calls.hierarchy(usr, direction, depth)
            got, cut, paged = actual[(usr, direction)]
            result.questions += 1
            result.edges += len(want)
            for edge in want:
                result.by_level[edge.level] = result.by_level.get(edge.level, 0) + 1
            if paged:
                result.paged.append(f"{direction} {usr}")
                want = want & got
            elif cut:
                result.cut.append(f"{direction} {usr}")
                want = {e for e in want if e.level == 1} | (want & {e for e in got if e.level > 1})
            found = _difference(f"call_hierarchy {direction}", usr, want, got)
            if found is not None:
                result.discrepancies.append(found)
    result.seconds = time.perf_counter() - started
    return result
