"""One plan for the pages of one request: the plan is computed once, for its first page (the
index, sourcekit-lsp, the whole-tree scan: seconds on a real package), and its later pages
(an offset not 0) are cut from it.

A plan is kept under its request without the page (usr, new name, where, whether
sourcekit-lsp was asked) and the store's version (its units folder and newest unit write)
and the files edited this session; it is taken again only while every file it names has
the modification time it had when the plan was made. A handful are kept, the newest used.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass

from xcindex.tools.rename.answer import RenamePlan

MAX_PLANS = 8


@dataclass(frozen=True)
class PlanKey:
    usr: str
    new_name: str
    store: str
    project_root: str | None
    reconciled: bool
    units_mtime_ns: int
    newest_write_ns: int | None
    edited: frozenset[str]


def _mtimes(paths: set[str]) -> dict[str, int | None]:
    found: dict[str, int | None] = {}
    for path in paths:
        try:
            found[path] = os.stat(path).st_mtime_ns
        except OSError:
            found[path] = None
    return found


def named_files(plan: RenamePlan) -> set[str]:
    return {r.path for r in plan.ranges} | {m.path for m in (*plan.unproven, *plan.text_mentions)}


class PlanPages:
    """The plans of recent requests (see the module docstring). Synchronous: stat calls are
    made in the caller's worker thread."""

    def __init__(self) -> None:
        self._plans: OrderedDict[PlanKey, tuple[RenamePlan, dict[str, int | None]]] = OrderedDict()

    def get(self, key: PlanKey) -> RenamePlan | None:
        found = self._plans.get(key)
        if found is None:
            return None
        plan, mtimes = found
        if _mtimes(set(mtimes)) != mtimes:
            del self._plans[key]
            return None
        self._plans.move_to_end(key)
        return plan

    def put(self, key: PlanKey, plan: RenamePlan) -> None:
        self._plans[key] = (plan, _mtimes(named_files(plan)))
        self._plans.move_to_end(key)
        while len(self._plans) > MAX_PLANS:
            self._plans.popitem(last=False)
