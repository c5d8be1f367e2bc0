"""The text an agent reads beside each tool's structured content, within a response budget."""

from __future__ import annotations

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
from xcindex.tools.budget import json_size


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


def plan_rename(answer: Any, budget: int | None) -> str:
    """The plan's JSON, fenced and key-sorted, as the contract has it, when it fits the
    budget beside the structured content; else the same page compactly, per file and tier."""
    plan = answer.fitted(budget)
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
