"""Read-side queries for name resolution, batched: a bare name like `init` or `request` has
hundreds of candidates, and one query per candidate would make resolution the slowest tool.

A mixin of `Database` (it uses the database's connection), kept apart so that the
database module stays about writing and the per-symbol reads the other tools use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from xcindex.indexstore.model import Role
from xcindex.indexstore.queries import _OCC_SELECT, OccurrenceRow, by_symbol_clause

_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)


def _chunks(ids: Iterable[int], size: int = 500) -> list[list[int]]:
    wanted = sorted(set(ids))
    return [wanted[start : start + size] for start in range(0, len(wanted), size)]


class NameQueries:
    """Batched reads over many symbols at once (see the module docstring)."""

    _conn: sqlite3.Connection

    def declarations_of(self, symbol_ids: Iterable[int]) -> dict[int, list[OccurrenceRow]]:
        """The live definition and declaration occurrences of each symbol."""
        result: dict[int, list[OccurrenceRow]] = {}
        for chunk in _chunks(symbol_ids):
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                _OCC_SELECT + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & ?) != 0",
                [*chunk, _WRITTEN],
            ):
                occurrence = OccurrenceRow(*row)
                result.setdefault(occurrence.symbol_id, []).append(occurrence)
        return result

    def written_use_counts(self, symbol_ids: Iterable[int]) -> dict[int, int]:
        """How many live occurrences of each symbol are written in the source (not
        implicit): how much the project uses it, declarations included."""
        result: dict[int, int] = {}
        for chunk in _chunks(symbol_ids):
            marks = ",".join("?" * len(chunk))
            for symbol_id, count in self._conn.execute(
                "SELECT o.symbol_id, count(DISTINCT o.id) FROM occurrences o"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                f" WHERE o.symbol_id IN ({marks}) AND (o.roles & ?) = 0 GROUP BY o.symbol_id",
                [*chunk, int(Role.IMPLICIT)],
            ):
                result[int(symbol_id)] = int(count)
        return result

    def related_symbol_ids(self, symbol_ids: Sequence[int], role: Role) -> dict[int, set[int]]:
        """For each symbol, the symbols that its live occurrences relate to with `role`
        (for `REL_CHILDOF`: its parents; for `REL_OVERRIDEOF`: what it overrides), from its
        definitions and declarations only."""
        return self._relations_from(symbol_ids, role, written_only=True)

    def relating_symbol_ids(self, symbol_ids: Sequence[int], role: Role) -> dict[int, set[int]]:
        """For each symbol, the symbols whose live occurrences name it in a relation with
        `role`: for `REL_BASEOF` on a type, the types that inherit from it or adopt it
        (the mention in their inheritance clause relates to them); for `REL_EXTENDEDBY`,
        its extensions."""
        return self._relations_from(symbol_ids, role, written_only=False)

    def _relations_from(
        self, symbol_ids: Sequence[int], role: Role, *, written_only: bool
    ) -> dict[int, set[int]]:
        """Symbol → the symbols its live occurrences carry a `role` relation to."""
        written = " AND (o.roles & ?) != 0" if written_only else ""
        result: dict[int, set[int]] = {}
        for chunk in _chunks(symbol_ids):
            marks = ",".join("?" * len(chunk))
            for symbol_id, related in self._conn.execute(
                "SELECT DISTINCT o.symbol_id, rel.symbol_id FROM occurrences o"
                " JOIN relations rel ON rel.occurrence_id = o.id"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                f" WHERE o.symbol_id IN ({marks}) AND (rel.roles & ?) != 0" + written,
                [*chunk, int(role), *([_WRITTEN] if written_only else [])],
            ):
                result.setdefault(int(symbol_id), set()).add(int(related))
        return result

    def related_by(self, symbol_ids: Sequence[int], role: Role) -> dict[int, set[int]]:
        """The reverse of `relating_symbol_ids`: for each symbol S, the symbols whose
        occurrences carry a `role` relation to S (for `REL_BASEOF` on a type: its direct
        supertypes; for `REL_EXTENDEDBY` on an extension: the type it extends)."""
        result: dict[int, set[int]] = {}
        for chunk in _chunks(symbol_ids):
            marks = ",".join("?" * len(chunk))
            for related, symbol_id in self._conn.execute(
                "SELECT DISTINCT rel.symbol_id, o.symbol_id FROM relations rel"
                " JOIN occurrences o ON o.id = rel.occurrence_id"
                " JOIN unit_records ur ON ur.record_id = o.record_id"
                " JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & ?) != 0" + by_symbol_clause(int(role)),
                [*chunk, int(role)],
            ):
                result.setdefault(int(related), set()).add(int(symbol_id))
        return result
