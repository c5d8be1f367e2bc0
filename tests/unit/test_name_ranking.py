"""The resolver's ranking rules, each checked on a pair of candidates that differ in two
rules at once (docs/tools.md, "Resolving names": "Order"): which rule decides is what an
agent notices, since the first candidate is the symbol a tool takes."""

from __future__ import annotations

from xcindex.indexstore.database import OccurrenceRow, SymbolRow
from xcindex.tools.resolve import Candidate, pick_one
from xcindex.vocabulary import MatchedBy

METHOD, PROPERTY, ENUM_CASE, STRUCT = 16, 19, 15, 6
PROTOCOL = 8


def candidate(
    name: str,
    *,
    kind: int = METHOD,
    matched_by: MatchedBy = MatchedBy.EXACT,
    inherited: bool = False,
    in_project: bool = True,
    exact_first: bool = True,
    uses: int = 0,
    line: int = 1,
    container_kind: int | None = STRUCT,
    in_extension: bool = False,
) -> Candidate:
    symbol = SymbolRow(line, f"s:usr{name}{line}", name, kind, 0, 100, 0)
    definition = OccurrenceRow(line, line, 2, "/p/File.swift", line, 5, "Module", 0) if in_project else None
    return Candidate(
        symbol=symbol,
        definition=definition,
        container=("Grid",),
        container_kind=container_kind,
        matched_by=matched_by,
        inherited=inherited,
        uses=uses,
        in_extension=in_extension,
        exact_first=exact_first,
    )


def first(*candidates: Candidate) -> Candidate:
    return min(candidates, key=Candidate.sort_key)


def test_typed_labels_exact_beats_partial_before_direct_beats_inherited() -> None:
    # `Grid.subscript(position:)`: the inherited labelled subscript, not the direct `subscript(_:)`.
    direct = candidate("subscript(_:)", matched_by=MatchedBy.PARTIAL_LABELS, line=2)
    inherited = candidate("subscript(position:)", inherited=True, line=1)
    assert first(direct, inherited) is inherited
    assert pick_one([inherited, direct]) == (inherited, None)


def test_typed_container_exact_beats_base_name_before_direct_beats_inherited() -> None:
    # `Grid.count`: an inherited property named exactly, not the direct method `count(of:)`.
    direct = candidate("count(of:)", matched_by=MatchedBy.BASE_NAME)
    inherited = candidate("count", kind=PROPERTY, inherited=True, line=2)
    assert first(direct, inherited) is inherited


def test_typed_labels_exact_beats_partial_before_project_beats_sdk() -> None:
    # `Array.first(where:)`: the SDK's method, not a project extension's `first(where:or:)`.
    project = candidate("first(where:or:)", matched_by=MatchedBy.PARTIAL_LABELS)
    sdk = candidate("first(where:)", in_project=False, line=2)
    assert first(project, sdk) is sdk


def test_at_the_same_match_project_beats_sdk_and_direct_beats_inherited() -> None:
    project, sdk = candidate("run()", line=2), candidate("run()", in_project=False)
    assert first(project, sdk) is project
    direct = candidate("subscript(_:)", matched_by=MatchedBy.BASE_NAME, line=2)
    inherited = candidate("subscript(position:)", matched_by=MatchedBy.BASE_NAME, inherited=True)
    assert first(direct, inherited) is direct
    assert pick_one([direct, inherited]) == (direct, None)


def test_typed_container_at_the_same_match_the_kind_decides_last() -> None:
    # `Grid.Mode` (both exact): the type before an enum case of the same name.
    case = candidate("Mode", kind=ENUM_CASE)
    nested = candidate("Mode", kind=STRUCT, line=2)
    assert first(case, nested) is nested
    # But directness comes before the kind: a direct case before an inherited type.
    assert first(case, candidate("Mode", kind=STRUCT, inherited=True, line=2)) is case


def test_a_bare_name_keeps_project_then_kinds_before_the_match() -> None:
    # `cancel`: the method (base name) before the enum case named exactly.
    method = candidate("cancel()", matched_by=MatchedBy.BASE_NAME, exact_first=False, line=2)
    case = candidate("cancel", kind=ENUM_CASE, exact_first=False)
    assert first(method, case) is method
    # A project symbol matched by base name before an SDK one named exactly.
    sdk = candidate("cancel", kind=METHOD, in_project=False, exact_first=False)
    assert first(method, sdk) is method


def test_ties_go_to_the_requirement_then_the_written_then_the_most_used() -> None:
    requirement = candidate("run()", container_kind=PROTOCOL, line=3)
    default = candidate("run()", container_kind=PROTOCOL, in_extension=True, uses=9)
    assert first(requirement, default) is requirement
    used, unused = candidate("load()", uses=5, line=2), candidate("load()", uses=1)
    assert first(used, unused) is used
