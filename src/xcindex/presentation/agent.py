"""The text an agent reads beside each tool's structured content, within a response budget."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from xcindex.presentation.text import (
    render_blast_radius,
    render_call_hierarchy,
    render_change_impact,
    render_conformances,
    render_definition,
    render_find_symbol,
    render_plan,
    render_plan_compact,
    render_sites,
    render_status,
    render_type_hierarchy,
    render_wait_for_fresh,
)
from xcindex.tools.budget import fitting, json_size
from xcindex.tools.rename.plan import RenamePlan

COMPACT_HEADROOM_CHARS = 6_000
"""What a compact plan's text needs besides its `line:column` lists (headers, warnings, counts)."""


def find_symbol(answer: Any, budget: int | None) -> str:
    return render_find_symbol(answer, budget)


def references(answer: Any, budget: int | None) -> str:
    return render_sites(answer, "reference(s)", budget)


def overrides(answer: Any, budget: int | None) -> str:
    return render_sites(answer, "override(s)", budget)


def definition(answer: Any, budget: int | None) -> str:
    return render_definition(answer, budget)


def conformances(answer: Any, budget: int | None) -> str:
    return render_conformances(answer, budget)


def blast_radius(answer: Any, budget: int | None) -> str:
    return render_blast_radius(answer, budget)


def status(answer: Any, budget: int | None) -> str:
    return render_status(answer, budget)


def wait_for_fresh(answer: Any, budget: int | None) -> str:
    return render_wait_for_fresh(answer, budget)


def fit_plan(plan: RenamePlan, budget: int | None) -> RenamePlan:
    """The page of a plan that fits a response budget together with its text: fewer ranges
    (the answer's `nextOffset` says where the rest starts) when the whole page would not."""
    if budget is None:
        return plan
    page = plan.shown()
    without_ranges = json_size(replace(plan, ranges=()).to_json())
    if 2 * (without_ranges + sum(json_size(r.to_json()) + 1 for r in page)) <= budget:
        return plan
    # The structured ranges, and one short `line:column` each in the compact text.
    allowed = budget - 2 * without_ranges - COMPACT_HEADROOM_CHARS
    count = fitting(page, lambda r: json_size(r.to_json()) + 16, max(allowed, 0))
    return replace(plan, max_ranges=max(count, 1))


def plan_rename(answer: Any, budget: int | None) -> str:
    """The plan's JSON, fenced and key-sorted, as the contract has it, when it fits the
    budget beside the structured content; else the same page compactly, per file and tier."""
    plan = fit_plan(answer, budget)
    fenced = render_plan(plan)
    if budget is None or len(fenced) + json_size(plan.to_json()) <= budget:
        return fenced
    return render_plan_compact(plan, budget)


def call_hierarchy(answer: Any, budget: int | None) -> str:
    return render_call_hierarchy(answer, budget)


def type_hierarchy(answer: Any, budget: int | None) -> str:
    return render_type_hierarchy(answer, budget)


def change_impact(answer: Any, budget: int | None) -> str:
    return render_change_impact(answer, budget)
