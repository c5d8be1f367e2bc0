"""The text an agent reads beside each tool's structured content, within a response budget."""

from __future__ import annotations

from typing import Any

from xcindex.tools.blast_radius import render_blast_radius
from xcindex.tools.call_hierarchy import render_call_hierarchy
from xcindex.tools.change_impact import render_change_impact
from xcindex.tools.conformances import render_conformances
from xcindex.tools.find_symbol import render_find_symbol
from xcindex.tools.plan_rename import render_plan
from xcindex.tools.references import render_definition, render_sites
from xcindex.tools.status import render_status
from xcindex.tools.type_hierarchy import render_type_hierarchy
from xcindex.tools.wait_for_fresh import render_wait_for_fresh


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
    """The plan's JSON, fenced and key-sorted: the contract fixes its shape."""
    return render_plan(answer)


def call_hierarchy(answer: Any, budget: int | None) -> str:
    return render_call_hierarchy(answer, budget)


def type_hierarchy(answer: Any, budget: int | None) -> str:
    return render_type_hierarchy(answer, budget)


def change_impact(answer: Any, budget: int | None) -> str:
    return render_change_impact(answer, budget)
