"""Batched reads for the call and type graphs (tools/call_graph.py, call_hierarchy,
change_impact): one query for many symbols where the Database's own methods take one.

Kept apart from database.py (which is being split into modules) so the two can be merged
without conflict; it reads through the same live-unit join.
"""

from __future__ import annotations

from collections.abc import Iterable

from xcindex.indexstore.database import Database, OccurrenceRow
from xcindex.indexstore.model import Role
from xcindex.indexstore.queries import _OCC_SELECT

_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_IMPLICIT = int(Role.IMPLICIT)


def written_occurrences(db: Database, symbol_ids: Iterable[int]) -> dict[int, list[OccurrenceRow]]:
    """Each symbol's explicit definitions and declarations in live units."""
    wanted = sorted(set(symbol_ids))
    found: dict[int, list[OccurrenceRow]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db._conn.execute(
            _OCC_SELECT + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & ?) != 0 AND (o.roles & ?) = 0",
            [*chunk, _WRITTEN, _IMPLICIT],
        )
        for row in rows:
            occ = OccurrenceRow(*row)
            found.setdefault(occ.symbol_id, []).append(occ)
    return found
