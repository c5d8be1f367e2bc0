"""Batched reads for the call and type graphs (tools/call_graph.py, call_hierarchy,
change_impact): one query for many symbols, or one query for every call of a symbol,
where the Database's own methods take one symbol or build an object per row.

Kept apart from database.py so the two can change without conflict; every query reads
through the same live-unit join. Call sites come back as plain tuples (`CallRow`): a hub
function has tens of thousands, and only the page an answer shows becomes objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from xcindex.indexstore.database import Database, OccurrenceRow
from xcindex.indexstore.model import Role
from xcindex.indexstore.queries import _OCC_SELECT, RECORD_OCCURRENCES, STATED_RELATIONS, by_symbol_clause

_WRITTEN = int(Role.DEFINITION | Role.DECLARATION)
_IMPLICIT = int(Role.IMPLICIT)
_CALL = int(Role.CALL)
_DYNAMIC = int(Role.DYNAMIC)
_CALLED_BY = int(Role.REL_CALLEDBY)
_CONTAINED_BY = int(Role.REL_CONTAINEDBY)
_OVERRIDE_OF = int(Role.REL_OVERRIDEOF)
_EXTENDED_BY = int(Role.REL_EXTENDEDBY)
_CHILD_OF = int(Role.REL_CHILDOF)
_BASE_OF = int(Role.REL_BASEOF)
_RECEIVED_BY = int(Role.REL_RECEIVEDBY)
_USE = int(Role.REFERENCE | Role.CALL)
_CHUNK = 500
GENERIC_PARAMETER_SUBKIND = 1013
"""swiftGenericTypeParam: a generic parameter, child of what declares it."""
POSITION_LINE_SHIFT = 21
"""A call's position as one integer: line << 21 | column (columns stay under 2 million)."""

_CALLER_RELATION = (
    # The calling symbol: the calledBy relation, else (a call in a property's initializer,
    # a global's) the containedBy one. An occurrence's roles carry its relations' roles.
    f"JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & (CASE WHEN (o.roles & {_CALLED_BY}) != 0"
    f" THEN {_CALLED_BY} ELSE {_CONTAINED_BY} END)) != 0"
)
_LIVE = " JOIN unit_records ur ON ur.record_id = o.record_id JOIN units u ON u.id = ur.unit_id AND u.live = 1"
_RECEIVER = (
    f"COALESCE((SELECT rr.symbol_id FROM relations rr WHERE rr.occurrence_id = o.id AND (rr.roles & {_RECEIVED_BY}) != 0"
    " ORDER BY rr.symbol_id LIMIT 1), 0)"
)
"""The type a call is made on, when the index says (`receivedBy`: a class or an existential
receiver; none on a generic parameter, `Self` or a metatype): 0 when it does not."""
_CALL_COLUMNS = (
    f"rel.symbol_id, o.symbol_id, o.id, o.roles, ur.file_id, o.line, o.col, u.module, u.mtime_ns, {_RECEIVER}"
)
_EXPLICIT_CALL = f"(o.roles & {_CALL}) != 0 AND (o.roles & {_IMPLICIT}) = 0"
"""Explicit calls: this also leaves out every call a macro expansion makes (Swift Testing's
`$s…` helpers), whose occurrences are implicit."""
_WRITTEN_USE = f"(o.roles & {_USE}) != 0 AND (o.roles & {_WRITTEN}) = 0 AND (o.roles & {_IMPLICIT}) = 0"
"""Uses written in the source: a call or a reference (a property read), neither a declaration nor
implicit."""
_GENERATED = "(substr({0}.name, 1, 1) = '$' OR instr({0}.name, ':$s') > 0)"
"""model.is_generated_name, in SQL."""


class CallRow(NamedTuple):
    """One explicit call site: who calls, what the call names, where (a file id), how."""

    caller_id: int
    callee_id: int
    occurrence_id: int
    roles: int
    file_id: int
    line: int
    column: int
    module: str
    unit_mtime_ns: int
    receiver_id: int
    """The `receivedBy` type, 0 when the index names none."""


def written_occurrences(db: Database, symbol_ids: Iterable[int]) -> dict[int, list[OccurrenceRow]]:
    """Each symbol's explicit definitions and declarations in live units."""
    wanted = sorted(set(symbol_ids))
    found: dict[int, list[OccurrenceRow]] = {}
    for chunk in _chunks(wanted):
        marks = ",".join("?" * len(chunk))
        rows = db._conn.execute(
            _OCC_SELECT + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & ?) != 0 AND (o.roles & ?) = 0",
            [*chunk, _WRITTEN, _IMPLICIT],
        )
        for row in rows:
            occ = OccurrenceRow(*row)
            found.setdefault(occ.symbol_id, []).append(occ)
    return found


@dataclass(frozen=True)
class CallPlaces:
    """Every call of a symbol, as four parallel lists of integers: the calling symbol, the
    occurrence, the file and the position (line << 21 | column). All that grouping,
    ordering and counting a hub function's callers needs; the rest is read for the page
    shown. Integers, not a row object per call: a hub has tens of thousands of calls, and
    tuples that many would make every garbage collection during the answer walk them."""

    callers: list[int]
    occurrences: list[int]
    files: list[int]
    positions: list[int]


def call_places_of(db: Database, symbol_id: int) -> CallPlaces:
    """Every explicit call of the symbol, with the calling symbol: one query, one row."""
    row = db._conn.execute(
        "SELECT group_concat(rel.symbol_id || ' ' || o.id || ' ' || ur.file_id || ' ' || "
        f"((o.line << {POSITION_LINE_SHIFT}) | o.col), ' ') FROM occurrences o "
        + _CALLER_RELATION
        + _LIVE
        + f" WHERE o.symbol_id = ? AND {_EXPLICIT_CALL}",
        (symbol_id,),
    ).fetchone()
    values = list(map(int, row[0].split())) if row and row[0] else []
    return CallPlaces(values[0::4], values[1::4], values[2::4], values[3::4])


def calls_at(db: Database, occurrence_ids: Iterable[int]) -> list[CallRow]:
    """The call sites at these occurrences, in full (every calling symbol of each)."""
    found: list[CallRow] = []
    for chunk in _chunks(sorted(set(occurrence_ids))):
        marks = ",".join("?" * len(chunk))
        rows = db._conn.execute(
            f"SELECT {_CALL_COLUMNS} FROM occurrences o "
            + _CALLER_RELATION
            + _LIVE
            + f" WHERE o.id IN ({marks})",
            chunk,
        )
        found += [CallRow(*row) for row in rows]
    return found


def calls_of(db: Database, callee_ids: Iterable[int], *, uses: bool = False) -> list[CallRow]:
    """Every explicit call of these symbols, in full (for the dispatch calls of a few bases:
    a hub's own calls are read with call_places_of). `uses`: every written use (a property
    read is a reference of the property; its getter's call is implicit)."""
    found: list[CallRow] = []
    which = _WRITTEN_USE if uses else _EXPLICIT_CALL
    for chunk in _chunks(sorted(set(callee_ids))):
        marks = ",".join("?" * len(chunk))
        rows = db._conn.execute(
            f"SELECT DISTINCT {_CALL_COLUMNS} FROM occurrences o "
            + _CALLER_RELATION
            + _LIVE
            + f" WHERE o.symbol_id IN ({marks}) AND {which}",
            chunk,
        )
        found += [CallRow(*row) for row in rows]
    return found


def calls_from(db: Database, caller_id: int) -> list[CallRow]:
    """Every explicit call the symbol makes: looked for only in the records that define it
    (a body is written where its declaration is), not across the whole relations table."""
    rows = db._conn.execute(
        f"SELECT DISTINCT {_CALL_COLUMNS} FROM occurrences d"
        + RECORD_OCCURRENCES.format(record="d.record_id")
        + " "
        + _CALLER_RELATION
        + " AND rel.symbol_id = d.symbol_id"
        + _LIVE
        + f" WHERE d.symbol_id = ? AND (d.roles & ?) != 0 AND {_EXPLICIT_CALL}",
        (caller_id, _WRITTEN),
    )
    return [CallRow(*row) for row in rows]


def file_paths(db: Database, file_ids: Iterable[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for chunk in _chunks(sorted(set(file_ids))):
        marks = ",".join("?" * len(chunk))
        found.update(db._conn.execute(f"SELECT id, path FROM files WHERE id IN ({marks})", chunk))
    return found


def overridden(db: Database, symbol_ids: Iterable[int]) -> dict[int, set[int]]:
    """symbol → what it overrides or witnesses (one level), as the index states it
    (model.states_relations): at its written declarations, and at each conformance that
    makes it a witness of a requirement declared elsewhere (an implicit occurrence there).
    These are the dispatch edges: a dynamic call of a base can run the symbol."""
    found: dict[int, set[int]] = {}
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        for symbol_id, base_id in db._conn.execute(
            "SELECT DISTINCT o.symbol_id, rel.symbol_id FROM occurrences o"
            f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_OVERRIDE_OF}) != 0"
            + _LIVE
            + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_OVERRIDE_OF}) != 0 AND {STATED_RELATIONS}",
            chunk,
        ):
            found.setdefault(int(symbol_id), set()).add(int(base_id))
    return found


def overriding(db: Database, symbol_ids: Iterable[int]) -> dict[int, set[int]]:
    """symbol → the symbols that override or witness it (one level), as `overridden` reads
    them: a member declared in one module that witnesses a requirement through a conformance
    declared in another is one, and so is an SDK member (`Double./` through `extension
    Double: Field {}`); a conformer relying on a default implementation adds nothing (the
    default is the witness). Macro-generated helpers are left out."""
    found: dict[int, set[int]] = {}
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        for base_id, symbol_id, generated in db._conn.execute(
            f"SELECT DISTINCT rel.symbol_id, o.symbol_id, {_GENERATED.format('s')} FROM relations rel"
            " JOIN occurrences o ON o.id = rel.occurrence_id"
            + _LIVE
            + " JOIN symbols s ON s.id = o.symbol_id"
            f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & {_OVERRIDE_OF}) != 0"
            + by_symbol_clause(_OVERRIDE_OF)
            + f" AND {STATED_RELATIONS}",
            chunk,
        ):
            if not generated and symbol_id != base_id:
                found.setdefault(int(base_id), set()).add(int(symbol_id))
    return found


def _chunks(items: Sequence[int]) -> list[Sequence[int]]:
    return [items[start : start + _CHUNK] for start in range(0, len(items), _CHUNK)]


def users_of(db: Database, symbol_ids: Iterable[int], *, dynamic_only: bool = False) -> set[int]:
    """The symbols whose code uses (references or calls, not declares) one of these symbols
    (their calledBy/containedBy): one query per 500 symbols. `dynamic_only`: only uses the
    compiler dispatches dynamically."""
    found: set[int] = set()
    dynamic = f" AND (o.roles & {_DYNAMIC}) != 0" if dynamic_only else ""
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        found.update(
            int(row[0])
            for row in db._conn.execute(
                "SELECT DISTINCT rel.symbol_id FROM occurrences o"
                f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_CALLED_BY | _CONTAINED_BY}) != 0"
                + _LIVE
                + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_USE}) != 0 AND (o.roles & {_WRITTEN}) = 0"
                + dynamic,
                chunk,
            )
        )
    return found


def users_by_symbol(db: Database, symbol_ids: Iterable[int]) -> dict[int, set[int]]:
    """`users_of`, per symbol: symbol → the symbols whose code uses it."""
    found: dict[int, set[int]] = {}
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        for symbol_id, user in db._conn.execute(
            "SELECT DISTINCT o.symbol_id, rel.symbol_id FROM occurrences o"
            f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_CALLED_BY | _CONTAINED_BY}) != 0"
            + _LIVE
            + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_USE}) != 0 AND (o.roles & {_WRITTEN}) = 0",
            chunk,
        ):
            found.setdefault(int(symbol_id), set()).add(int(user))
    return found


def related_through(
    db: Database, symbol_ids: Iterable[int], role: Role, *, explicit_only: bool = False
) -> dict[int, set[int]]:
    """symbol → the symbols its occurrences relate to with `role` (accessorOf: the property;
    baseOf: the type or extension declaring it a supertype; childOf: the parent). An
    occurrence's roles include its relations', so the occurrence index picks them out."""
    found: dict[int, set[int]] = {}
    bit = int(role)
    implicit = f" AND (o.roles & {_IMPLICIT}) = 0" if explicit_only else ""
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        for symbol_id, related in db._conn.execute(
            "SELECT DISTINCT o.symbol_id, rel.symbol_id FROM occurrences o"
            f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {bit}) != 0"
            + _LIVE
            + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {bit}) != 0"
            + implicit,
            chunk,
        ):
            found.setdefault(int(symbol_id), set()).add(int(related))
    return found


def extended_types(db: Database, extension_ids: Iterable[int]) -> dict[int, int]:
    """extension → the type it extends (the type's mention in the header carries extendedBy)."""
    found: dict[int, int] = {}
    for chunk in _chunks(sorted(set(extension_ids))):
        marks = ",".join("?" * len(chunk))
        for extension, type_id in db._conn.execute(
            "SELECT rel.symbol_id, o.symbol_id FROM relations rel"
            " JOIN occurrences o ON o.id = rel.occurrence_id"
            + _LIVE
            + f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & {_EXTENDED_BY}) != 0"
            + by_symbol_clause(_EXTENDED_BY),
            chunk,
        ):
            found.setdefault(int(extension), int(type_id))
    return found


def members_of(db: Database, type_id: int) -> list[OccurrenceRow]:
    """The explicit declarations whose parent (childOf) is the type, looked for in the
    records that define the type (its body is written there), not across every relation."""
    rows = db._conn.execute(
        "SELECT DISTINCT o.id, o.symbol_id, o.roles, f.path, o.line, o.col, u.module, u.mtime_ns"
        " FROM occurrences d"
        + RECORD_OCCURRENCES.format(record="d.record_id")
        + f" JOIN relations rel ON rel.occurrence_id = o.id AND rel.symbol_id = d.symbol_id AND (rel.roles & {_CHILD_OF}) != 0"
        + _LIVE
        + " JOIN files f ON f.id = ur.file_id"
        f" WHERE d.symbol_id = ? AND (d.roles & {_WRITTEN}) != 0 AND (o.roles & {_CHILD_OF}) != 0"
        f" AND (o.roles & {_WRITTEN}) != 0 AND (o.roles & {_IMPLICIT}) = 0",
        (type_id,),
    )
    return [OccurrenceRow(*row) for row in rows]


def extensions_of(db: Database, type_ids: Iterable[int]) -> dict[int, set[int]]:
    """type → the extensions of it (the type's mention in an extension's header carries
    extendedBy; an extension of a typealias names the type it stands for implicitly)."""
    found: dict[int, set[int]] = {}
    for chunk in _chunks(sorted(set(type_ids))):
        marks = ",".join("?" * len(chunk))
        for type_id, extension in db._conn.execute(
            "SELECT DISTINCT o.symbol_id, rel.symbol_id FROM occurrences o"
            f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_EXTENDED_BY}) != 0"
            + _LIVE
            + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_EXTENDED_BY}) != 0",
            chunk,
        ):
            found.setdefault(int(type_id), set()).add(int(extension))
    return found


def direct_supertypes(db: Database, declaring_ids: Iterable[int]) -> dict[int, set[int]]:
    """type or extension → what its inheritance clause names (superclass, protocols), as the
    index states it (model.states_relations: a composition typealias's protocols count)."""
    found: dict[int, set[int]] = {}
    for chunk in _chunks(sorted(set(declaring_ids))):
        marks = ",".join("?" * len(chunk))
        for declaring, supertype in db._conn.execute(
            "SELECT DISTINCT rel.symbol_id, o.symbol_id FROM relations rel"
            " JOIN occurrences o ON o.id = rel.occurrence_id"
            + _LIVE
            + f" WHERE rel.symbol_id IN ({marks}) AND (rel.roles & {_BASE_OF}) != 0"
            + by_symbol_clause(_BASE_OF)
            + f" AND {STATED_RELATIONS}",
            chunk,
        ):
            found.setdefault(int(declaring), set()).add(int(supertype))
    return found


_CALLABLE_KINDS = "(12, 16, 17, 18, 22)"
"""function, instance/class/static method, constructor."""
_IMPLICIT_REFERENCE = int(Role.IMPLICIT | Role.REFERENCE)


def external_callees(db: Database) -> dict[int, str]:
    """Symbol id → USR of every symbol the project calls that the index has no declaration
    of (the standard library's, an SDK's, a dependency's): where library code runs. A
    function the compiler uses implicitly counts as called: `for await x in seq` is an
    implicit reference to `AsyncIteratorProtocol.next(isolation:)`, which runs the
    sequence's own `next()`."""
    return dict(
        db._conn.execute(
            "SELECT s.id, s.usr FROM symbols s WHERE EXISTS (SELECT 1 FROM occurrences o"
            f" WHERE o.symbol_id = s.id AND ((o.roles & {_CALL}) != 0 OR ((o.roles & {_IMPLICIT_REFERENCE})"
            f" = {_IMPLICIT_REFERENCE} AND s.kind IN {_CALLABLE_KINDS}))) AND NOT EXISTS (SELECT 1 FROM occurrences o"
            f" WHERE o.symbol_id = s.id AND (o.roles & {_WRITTEN}) != 0)"
        )
    )


def mentions_in(db: Database, symbol_ids: Iterable[int]) -> list[tuple[int, int, str, int]]:
    """The written uses of these symbols with the symbol whose code holds each (calledBy,
    else containedBy): (used symbol, holder, path, line)."""
    found: list[tuple[int, int, str, int]] = []
    for chunk in _chunks(sorted(set(symbol_ids))):
        marks = ",".join("?" * len(chunk))
        found += [
            (int(used), int(holder), str(path), int(line))
            for used, holder, path, line in db._conn.execute(
                "SELECT DISTINCT o.symbol_id, rel.symbol_id, f.path, o.line FROM occurrences o "
                + _CALLER_RELATION
                + _LIVE
                + " JOIN files f ON f.id = ur.file_id"
                + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_USE}) != 0 AND (o.roles & {_WRITTEN}) = 0"
                f" AND (o.roles & {_IMPLICIT}) = 0",
                chunk,
            )
        ]
    return found


TYPEALIAS_KIND = 11


def typealiases_naming(db: Database, type_ids: Iterable[int]) -> set[int]:
    """The typealiases whose declared type names one of these types (`typealias Metadata =
    [String: MetadataValue]`): the index records that mention with no relation, on the
    typealias's definition line after its name."""
    found: set[int] = set()
    for chunk in _chunks(sorted(set(type_ids))):
        marks = ",".join("?" * len(chunk))
        found.update(
            int(row[0])
            for row in db._conn.execute(
                # A record's occurrences are the id range [first, last] (there is no index by
                # record): joining on `d.record_id` made SQLite build one for each question
                # (37 ms a chunk at the benchmark's L).
                "SELECT DISTINCT d.symbol_id FROM occurrences o JOIN records r ON r.id = o.record_id"
                " JOIN occurrences d ON d.id BETWEEN r.first_occurrence AND r.last_occurrence"
                " AND d.line = o.line AND d.col < o.col"
                f" JOIN symbols s ON s.id = d.symbol_id AND s.kind = {TYPEALIAS_KIND}"
                + " JOIN unit_records ur ON ur.record_id = o.record_id JOIN units u ON u.id = ur.unit_id AND u.live = 1"
                + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_USE}) != 0 AND (o.roles & {_WRITTEN}) = 0"
                f" AND (d.roles & {_WRITTEN}) != 0",
                chunk,
            )
        )
    return found


def types_taking_typealiases(db: Database, typealias_ids: Iterable[int]) -> set[int]:
    """The types whose conformance takes one of these typealiases as an associated type's
    witness (`extension RawRepresentable where Self: AtomicValue { typealias
    AtomicRepresentation = AtomicRawRepresentableStorage<Self> }` for `enum Fred: Int,
    AtomicValue`): the index records the alias at the type's definition, implicit, contained
    by the type and overriding the requirement."""
    found: set[int] = set()
    for chunk in _chunks(sorted(set(typealias_ids))):
        marks = ",".join("?" * len(chunk))
        found.update(
            int(row[0])
            for row in db._conn.execute(
                "SELECT DISTINCT rel.symbol_id FROM occurrences o"
                f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_CONTAINED_BY}) != 0"
                + _LIVE
                + f" WHERE o.symbol_id IN ({marks}) AND (o.roles & {_IMPLICIT}) != 0"
                f" AND (o.roles & {_OVERRIDE_OF}) != 0",
                chunk,
            )
        )
    return found


def generic_declarations(db: Database) -> set[int]:
    """The symbols that declare generic parameters (a generic type, function or method): the
    parents of the generic parameter symbols."""
    return {
        int(row[0])
        for row in db._conn.execute(
            "SELECT DISTINCT rel.symbol_id FROM symbols s JOIN occurrences o ON o.symbol_id = s.id"
            f" JOIN relations rel ON rel.occurrence_id = o.id AND (rel.roles & {_CHILD_OF}) != 0"
            f" WHERE s.subkind = {GENERIC_PARAMETER_SUBKIND} AND (o.roles & {_CHILD_OF}) != 0"
        )
    }
