"""The proof that a plan is right: apply its green ranges to a copy, and the copy still builds,
its tests still pass, and the rebuilt index no longer knows the old symbol anywhere.

One copy per renamed symbol (a class, a labelled method, an overridden method with a `super`
call, a protocol requirement with a default implementation and two witnesses, a property,
an enum case, a cross-module symbol), each built from scratch: the slowest tests we have,
and the ones that matter most.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, build_package, copy_package, load_expected, swift_executable
from tests.integration.test_tools_against_expected import rel, usr_of
from xcindex.engine import Engine
from xcindex.tools.rename.plan import RenamePlan, base_name

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

RENAMES = load_expected("rename.json")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # a build per case is expensive: one backend is enough here


def apply_green_ranges(plan: RenamePlan, copy: Path) -> int:
    """Edit the copy's files at the plan's green ranges, right to left on each line."""
    old = base_name(plan.old_name or "").encode()
    new = plan.new_name.encode()
    by_file: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for r in plan.ranges:
        assert r.tier in ("green-verified", "green-indexstore"), r
        by_file[rel(r.path)].append((r.line, r.column, r.end_column))
    for relative, ranges in by_file.items():
        path = copy / relative
        lines = path.read_bytes().split(b"\n")
        for line, column, end_column in sorted(ranges, reverse=True):
            text = lines[line - 1]
            assert text[column - 1 : end_column - 1] == old, (relative, line, column, text)
            lines[line - 1] = text[: column - 1] + new + text[end_column - 1 :]
        path.write_bytes(b"\n".join(lines))
    return sum(len(ranges) for ranges in by_file.values())


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [swift_executable(), *args], cwd=cwd, capture_output=True, text=True, timeout=1800, check=False
    )


@pytest.mark.parametrize("key", sorted(RENAMES))
async def test_applying_the_green_ranges_builds_passes_the_tests_and_leaves_no_old_reference(
    key: str, canary_store: Path, tmp_path: Path
) -> None:
    symbols: dict[str, dict[str, Any]] = {entry["key"]: entry for entry in load_expected("symbols.json")}
    new_name = RENAMES[key]["newName"]
    async with Engine() as engine:
        usr = await usr_of(engine, canary_store, symbols[key])
        plan = await engine.plan_rename(usr, new_name, project_path=str(CANARY))
        assert plan.refusal is None
        assert plan.warnings == ()

        copy = copy_package(CANARY, tmp_path / "SwiftCanary")
        applied = apply_green_ranges(plan, copy)
        assert applied == len(RENAMES[key]["ranges"])

        store = build_package(copy)  # fails the test with the compiler's output if it does not build
        tests = run("test", "--skip-build", "--package-path", str(copy), cwd=copy)
        assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-4000:]

        old = await engine.find_references(usr=usr, index_store_path=str(store))
        assert old.to_json()["results"] == [], f"{key}: the old symbol is still used"
        definition = symbols[key]
        found = await engine.find_symbol(
            plan.old_name.replace(base_name(plan.old_name), new_name) if plan.old_name else new_name,
            index_store_path=str(store),
        )
        sites = {
            (rel(str(r["definitionPath"]), copy), r["definitionLine"])
            for r in found.to_json()["results"]
            if r["definitionPath"] is not None
        }
        assert (definition["definitionPath"], definition["definitionLine"]) in sites
