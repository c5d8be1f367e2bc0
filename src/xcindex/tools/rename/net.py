"""plan_rename's safety net: every written occurrence of the old name no range covers.

The whole-tree scan (scan.py) finds them; here they are judged: code where no renamed
symbol is visible (visibility.py: a module that cannot see it) is counted and not listed;
argument, tuple and parameter labels are listed apart (`label`); the rest of the code is
listed as unproven (`code`, `local_conformance`), and comments and literals as text
mentions. Every one is listed, paged by the plan (answer.py).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from xcindex.indexstore.database import Database
from xcindex.project.realpaths import RealPaths
from xcindex.tools.rename.answer import RenamePlan, with_warnings
from xcindex.tools.rename.checks import requirement_protocols
from xcindex.tools.rename.names import base_name, is_identifier
from xcindex.tools.rename.scan import local_conformances, scan_tree, unproven_warnings
from xcindex.tools.rename.visibility import Visibility


def with_safety_net(db: Database, plan: RenamePlan, root: Path | None) -> RenamePlan:
    """Add every occurrence of the old name under the project root that no range covers
    (see the module docstring)."""
    if plan.refusal is not None or not plan.old_name or root is None:
        return plan
    name = base_name(plan.old_name)
    if not is_identifier(name):
        return plan
    covered = {(os.path.realpath(r.path), r.line, r.column) for r in plan.ranges}
    by_real: dict[str, str] = {}
    real_path = RealPaths()
    for path, *_rest in db.live_files():
        by_real.setdefault(real_path(path), path)

    def indexed_positions(real: str) -> set[tuple[int, int]] | None:
        path = by_real.get(real)
        if path is None:
            return None
        return db.positions_in_file(path)

    found = scan_tree(root, name, covered, indexed_positions)
    usrs = [usr for usr, *_where in plan.definitions]
    protocols = requirement_protocols(db, usrs)
    local = local_conformances(found.unproven, protocols, indexed_positions)
    renamed = [symbol for usr in usrs if (symbol := db.symbol_by_usr(usr)) is not None]
    visibility = Visibility(db, renamed)
    visible = [m for m in found.unproven if visibility.can_see(os.path.realpath(m.path))]
    unproven = tuple(sorted((*visible, *local), key=lambda m: m.key))
    plan = replace(
        plan,
        unproven=unproven,
        text_mentions=found.text_mentions,
        not_visible_count=len(found.unproven) - len(visible),
    )
    warnings = unproven_warnings(name, unproven, plan.not_visible_count)
    return with_warnings(plan, warnings) if warnings else plan
