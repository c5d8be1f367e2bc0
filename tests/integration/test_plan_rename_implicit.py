"""plan_rename on issue 26's fixture cases (Sources/CanaryCore/ImplicitCases.swift and its
tests, expected/README.md): a witness related to its requirement only at a conformance,
an SDK type's witness, one overload of a protocol extension, hand-written unkeyed Codable,
and new names that are already taken. Expected ranges are hand-checked (line and UTF-8
column of each name, read from the files); the last tests apply the plans to copies and
build them, so what a plan claims (it builds, or it would not) is checked by the compiler.
"""

from __future__ import annotations

import os
import subprocess
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, build_package, copy_package, load_expected, swift_executable
from tests.integration.test_tools_against_expected import rel, usr_of
from xcindex.engine import Engine
from xcindex.tools.rename.plan import RenamePlan, base_name

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

CASES = "Sources/CanaryCore/ImplicitCases.swift"
TESTS = "Tests/CanaryCoreTests/ImplicitCasesTests.swift"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def symbols() -> dict[str, dict[str, Any]]:
    return {entry["key"]: entry for entry in load_expected("symbols.json")}


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    async with Engine() as running:
        yield running


async def plan_for(
    engine: Engine, store: Path, symbols: dict[str, dict[str, Any]], key: str, new_name: str
) -> RenamePlan:
    usr = await usr_of(engine, store, symbols[key])
    return await engine.plan_rename(usr, new_name, index_store_path=str(store), reconcile_with_lsp=False)


def ranges_of(plan: RenamePlan) -> set[tuple[str, int, int, int]]:
    return {(rel(r.path), r.line, r.column, r.end_column) for r in plan.ranges}


def codes(plan: RenamePlan) -> list[str]:
    return [str(code) for code, _ in plan.warnings]


async def test_a_witness_related_only_at_a_conformance_in_another_module_is_renamed_and_named(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    # ImplicitCasesTests.swift:8 `    func isEqualSet(to other: Self) -> Bool` (the requirement),
    # :14 `    one.isEqualSet(to: other)`; ImplicitCases.swift:15 `    public func isEqualSet(to
    # other: CanarySet) -> Bool {`, the library's witness, which never names SetChecks.
    plan = await plan_for(engine, canary_store, symbols, "SetChecks.isEqualSet(to:)", "isSameSet")
    assert plan.refusal is None
    assert ranges_of(plan) == {(CASES, 15, 17, 27), (TESTS, 8, 10, 20), (TESTS, 14, 9, 19)}
    [witness] = [r for r in plan.ranges if rel(r.path) == CASES]
    assert [str(reason) for reason in witness.reasons] == ["conformance_witness"]
    [(code, message)] = plan.warnings
    assert code == "witness_in_other_module"
    assert "CanaryCore" in message
    assert "CanaryCoreTests" in message
    assert f"{CANARY.resolve()}/{TESTS}:11:11" in message  # `extension CanarySet: SetChecks {}`
    # Asked about the witness, the plan is the requirement's.
    from_witness = await plan_for(engine, canary_store, symbols, "CanarySet.isEqualSet(to:)", "isSameSet")
    assert ranges_of(from_witness) == ranges_of(plan)


async def test_a_requirement_an_sdk_type_witnesses_is_refused_naming_the_conformance(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    # ImplicitCases.swift:26 `extension Double: CanaryField {}`: Double.magnitude and Double./
    # witness the requirements; renaming them would break that conformance.
    for key, witness in (
        ("CanaryField.magnitude", "Double.magnitude"),
        ("CanaryField./(_:_:)", "Double./(_:_:)"),
    ):
        plan = await plan_for(engine, canary_store, symbols, key, "size")
        assert plan.refusal is not None, key
        assert plan.refusal.reason == "sdk_symbol_rename"
        assert witness in plan.refusal.message
        assert f"{CANARY.resolve()}/{CASES}:26:11" in plan.refusal.message
        assert plan.ranges == ()


async def test_one_overload_in_a_protocol_extension_leaves_its_sibling_alone(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    # ImplicitCases.swift:38 `    public func scaled(_ value: Int) -> Int {` and its one call,
    # :53 `        scaled(value)`; the generic `scaled<T: BinaryInteger>` (line 42) and its call
    # (ImplicitCasesTests.swift:28, on a UInt8) are another symbol nobody asked about.
    plan = await plan_for(engine, canary_store, symbols, "CanaryScaler.scaled(_:)#Int", "multiplied")
    assert plan.refusal is None
    assert ranges_of(plan) == {(CASES, 38, 17, 23), (CASES, 53, 9, 15)}
    assert all(r.reasons == ("direct_reference",) for r in plan.ranges)
    assert plan.warnings == ()


async def test_hand_written_unkeyed_codable_has_no_key_to_warn_about(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    # ImplicitCases.swift:58-77: CanaryPoint encodes and decodes itself with unkeyed
    # containers: renaming `x` changes no key.
    point = await plan_for(engine, canary_store, symbols, "CanaryPoint.x", "horizontal")
    assert point.refusal is None
    assert "codable_key_renamed" not in codes(point)
    # RenameCases.swift:37 `public struct Settings: Codable, Equatable`: synthesised keys.
    settings = await engine.find_symbol("Settings.theme", index_store_path=str(canary_store))
    theme = settings.to_json()["results"][0]["usr"]
    keyed = await engine.plan_rename(
        theme, "look", index_store_path=str(canary_store), reconcile_with_lsp=False
    )
    assert "codable_key_renamed" in codes(keyed)


async def test_a_taken_name_is_refused_or_warned_naming_the_existing_declaration(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    def names(plan: RenamePlan, path: str, line: int, column: int) -> bool:
        return f"{CANARY.resolve()}/{path}:{line}:{column}" in (plan.refusal.message if plan.refusal else "")

    # ImplicitCases.swift:88 `static var unit`; :102 `static var zero`, in an extension.
    unit = await plan_for(engine, canary_store, symbols, "CanaryAmount.unit", "zero")
    assert unit.refusal is not None
    assert unit.refusal.reason == "name_collision"
    assert names(unit, CASES, 102, 23)
    assert "invalid redeclaration" in unit.refusal.message
    assert unit.ranges == ()
    # :117 CanaryRocket.ignite() renamed like the inherited :111 CanaryVessel.launch(), and back.
    ignite = await plan_for(engine, canary_store, symbols, "CanaryRocket.ignite()", "launch")
    assert ignite.refusal is not None
    assert ignite.refusal.reason == "name_collision"
    assert names(ignite, CASES, 111, 15)
    assert "superclass" in ignite.refusal.message
    launch = await plan_for(engine, canary_store, symbols, "CanaryVessel.launch()", "ignite")
    assert launch.refusal is not None
    assert names(launch, CASES, 117, 17)
    assert "subclass" in launch.refusal.message
    # A top-level type named like another type of the module (Shapes.swift:54 `Square`).
    grid = await plan_for(engine, canary_store, symbols, "CanaryGrid", "Square")
    assert grid.refusal is not None
    assert names(grid, "Sources/CanaryCore/Shapes.swift", 54, 20)
    # :92 `adding(_ other: CanaryAmount)` renamed like :96 `plus(_ cents: Int)`: an overload
    # by parameter type the compiler accepts; planned, and warned.
    adding = await plan_for(engine, canary_store, symbols, "CanaryAmount.adding(_:)", "plus")
    assert adding.refusal is None
    assert adding.ranges
    [(code, message)] = adding.warnings
    assert code == "name_overload"
    assert f"{CANARY.resolve()}/{CASES}:96:17" in message
    # A free name: nothing to say.
    free = await plan_for(engine, canary_store, symbols, "CanaryAmount.unit", "one")
    assert free.refusal is None
    assert free.warnings == ()


def apply(ranges: list[tuple[str, int, int, int]], old: str, new: str, copy: Path) -> None:
    """Write `new` over each range (right to left on a line), checking `old` is there."""
    by_file: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for path, line, column, end in ranges:
        by_file[path].append((line, column, end))
    for relative, found in by_file.items():
        file = copy / relative
        lines = file.read_bytes().split(b"\n")
        for line, column, end in sorted(found, reverse=True):
            text = lines[line - 1]
            assert text[column - 1 : end - 1] == old.encode(), (relative, line, text)
            lines[line - 1] = text[: column - 1] + new.encode() + text[end - 1 :]
        file.write_bytes(b"\n".join(lines))


def swift(*args: str, copy: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [swift_executable(), *args, "--package-path", str(copy)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


async def test_the_plans_build_and_keep_the_tests_and_a_refused_one_would_not_build(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Three plans applied to one copy (the witness of a test-target protocol, one overload
    of a protocol extension, a property of hand-written Codable): it builds and every test
    passes. The refused `unit` → `zero`, applied by hand (the ranges of `unit` → `cost`,
    written `zero`), does not build, for the reason the refusal gave."""
    copy = copy_package(CANARY, tmp_path / "SwiftCanary")
    for key, new_name in (
        ("SetChecks.isEqualSet(to:)", "isSameSet"),
        ("CanaryScaler.scaled(_:)#Int", "multiplied"),
        ("CanaryPoint.x", "horizontal"),
    ):
        plan = await plan_for(engine, canary_store, symbols, key, new_name)
        assert plan.refusal is None, key
        apply(sorted(ranges_of(plan)), base_name(plan.old_name or ""), new_name, copy)
    build_package(copy)  # fails the test with the compiler's output if it does not build
    tests = swift("test", "--skip-build", copy=copy)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-4000:]
    assert "ImplicitCasesTests" in tests.stdout + tests.stderr

    collided = copy_package(CANARY, tmp_path / "Collided")
    cost = await plan_for(engine, canary_store, symbols, "CanaryAmount.unit", "cost")
    assert cost.refusal is None
    apply(sorted(ranges_of(cost)), "unit", "zero", collided)
    build = swift("build", "--build-tests", copy=collided)
    assert build.returncode != 0
    assert "invalid redeclaration of 'zero'" in build.stdout + build.stderr


async def test_unproven_sites_are_listed_where_the_symbol_is_visible_and_labels_apart(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    project = str(CANARY)
    # ImplicitCases.swift:141 `func roundedCents(_ cents: Int) -> Int` is internal to CanaryCore,
    # called at :89 and at ImplicitCasesTests.swift:58:39 (`CanaryCore.roundedCents(149)`).
    usr = await usr_of(engine, canary_store, symbols["roundedCents(_:)"])
    plan = await engine.plan_rename(usr, "rounded", project_path=project, reconcile_with_lsp=False)
    assert ranges_of(plan) == {(CASES, 89, 29, 41), (CASES, 141, 6, 18), (TESTS, 58, 39, 51)}
    # ImplicitCasesTests.swift `@testable import`s CanaryCore: its local `roundedCents` (58:13,
    # used at 59:24) could be the function, and is listed. Sources/CanaryFeatures/Rounding.swift
    # cannot see it: its local (3:9, 4:12) is counted, not listed.
    assert {(rel(m.path), m.line, m.column, m.kind) for m in plan.unproven} == {
        (TESTS, 58, 13, "code"),
        (TESTS, 59, 24, "code"),
    }
    assert plan.not_visible_count == 2
    [(code, message)] = plan.warnings
    assert code == "unproven_occurrences"
    assert "2 more in modules that cannot see" in message
    answer = plan.to_json()
    assert (answer["unprovenSiteCount"], answer["notVisibleSiteCount"], answer["unprovenNextOffset"]) == (
        2,
        2,
        None,
    )

    # CanaryPoint.x: the old name stands unproven only as labels of other declarations'
    # arguments (`Vector2D(x: 1, y: 2)`, `CanaryPoint(x: 1, y: 2)` of a hand-written init).
    x = await usr_of(engine, canary_store, symbols["CanaryPoint.x"])
    point = await engine.plan_rename(x, "horizontal", project_path=project, reconcile_with_lsp=False)
    tests = "Tests/CanaryCoreTests/UserServiceTests.swift"
    assert {(rel(m.path), m.line, m.column, m.kind) for m in point.unproven} == {
        ("Sources/CanaryCore/Operators.swift", 11, 18, "label"),
        (tests, 43, 28, "label"),
        (tests, 43, 51, "label"),
        (tests, 44, 38, "label"),
        (tests, 45, 52, "label"),
        (TESTS, 32, 57, "label"),
        (TESTS, 34, 92, "label"),
    }
    assert "unproven_occurrences" not in codes(point), "labels alone prove nothing wrong"


async def test_the_pages_of_one_request_are_cut_from_one_plan_until_a_file_changes(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    copy = copy_package(CANARY, tmp_path / "SwiftCanary")
    store = build_package(copy)
    usr = await usr_of(engine, canary_store, symbols["UserService"])
    project = str(copy)

    first = await engine.plan_rename(usr, "AccountService", max_ranges=2, project_path=project)
    assert first.next_offset == 2
    assert all(r.path.startswith(str(copy.resolve())) for r in first.ranges), store
    second = await engine.plan_rename(usr, "AccountService", max_ranges=2, offset=2, project_path=project)
    assert second.ranges is first.ranges, "the second page is cut from the first page's plan"
    assert [r.key for r in second.shown()] == [r.key for r in first.ranges[2:4]]

    # A file the plan names changes (here only its modification time): the plan is made
    # again (its ranges in that file come from the freshness overlay's re-index).
    edited = Path(first.ranges[0].path)
    later = edited.stat().st_mtime + 5
    os.utime(edited, (later, later))
    third = await engine.plan_rename(usr, "AccountService", max_ranges=2, offset=4, project_path=project)
    assert third.ranges is not first.ranges
    assert [r.key for r in third.ranges] == [r.key for r in first.ranges]
