"""plan_rename when sourcekit-lsp misbehaves, with the FAKE language server (fake_lsp.py).

The real sourcekit-lsp cannot be made to answer empty, echo only the asked position, hang
or crash on demand; the index side here is the real fixture's store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, load_expected
from tests.faults.conftest import FAKE_LSP
from tests.integration.test_tools_against_expected import rel, usr_of
from xcindex.engine import Engine, EngineConfig
from xcindex.lsp.config import LspPoolConfig

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def fake(mode: str, **overrides: Any) -> EngineConfig:
    config = LspPoolConfig(
        binary=Path(sys.executable), arguments=(str(FAKE_LSP), "--mode", mode), **overrides
    )
    return EngineConfig(lsp=config)


async def plan_with(
    config: EngineConfig, canary_store: Path, key: str = "UserService.fetchUser(id:)"
) -> dict[str, Any]:
    symbols = {entry["key"]: entry for entry in load_expected("symbols.json")}
    async with Engine(config) as engine:
        usr = await usr_of(engine, canary_store, symbols[key])
        plan = await engine.plan_rename(usr, "loadUser", project_path=str(CANARY))
        return dict(plan.to_json())


async def test_an_empty_lsp_answer_downgrades_nothing_and_warns(canary_store: Path) -> None:
    plan = await plan_with(fake("empty-references"), canary_store)
    assert [w["code"] for w in plan["warnings"]] == ["reconciliation_empty"]
    assert {r["tier"] for r in plan["ranges"]} == {"green-indexstore"}
    assert plan["summary"]["green_indexstore"] == 6


async def test_ranges_lsp_did_not_echo_become_yellow_disagreement(canary_store: Path) -> None:
    # The fake answers only the position it was asked about: the definition.
    plan = await plan_with(fake("normal"), canary_store)
    tiers = {(rel(r["path"]), r["line"]): (r["tier"], tuple(r["reasons"])) for r in plan["ranges"]}
    definition = next(s for s in load_expected("symbols.json") if s["key"] == "UserService.fetchUser(id:)")
    assert tiers.pop((definition["definitionPath"], definition["definitionLine"])) == (
        "green-verified",
        ("direct_reference",),
    )
    assert set(tiers.values()) == {("yellow-disagreement", ("direct_reference", "lsp_did_not_echo"))}
    assert plan["summary"] == {
        "green_verified": 1,
        "green_indexstore": 0,
        "yellow_disagreement": 5,
        "yellow_lsp_only": 0,
        "red_stale": 0,
    }
    assert plan["warnings"] == []


async def test_a_hanging_references_request_times_out_into_warnings(canary_store: Path) -> None:
    plan = await plan_with(fake("hang-references", request_timeout=1.0), canary_store)
    assert [w["code"] for w in plan["warnings"]] == ["reconciliation_unavailable", "sourcekit_lsp_timeout"]
    assert {r["tier"] for r in plan["ranges"]} == {"green-indexstore"}


async def test_a_server_that_dies_at_start_leaves_the_index_plan_standing(canary_store: Path) -> None:
    plan = await plan_with(fake("crash-on-start"), canary_store)
    codes = [w["code"] for w in plan["warnings"]]
    assert codes[0] == "reconciliation_unavailable"
    assert codes[1] in {"sourcekit_lsp_launch_failed", "sourcekit_lsp_process_terminated"}
    assert len(plan["ranges"]) == 6


async def test_status_shows_a_troubled_child_with_its_last_error_and_log(canary_store: Path) -> None:
    symbols = {entry["key"]: entry for entry in load_expected("symbols.json")}
    async with Engine(fake("crash-on-start")) as engine:
        before = (await engine.status(project_path=str(CANARY))).to_json()
        assert before["sourcekitLsp"] == []  # no child until a rename plan needs one
        usr = await usr_of(engine, canary_store, symbols["UserStatus.active"])
        await engine.plan_rename(usr, "enabled", project_path=str(CANARY))
        [child] = (await engine.status(project_path=str(CANARY))).to_json()["sourcekitLsp"]
    assert child["root"] == str(CANARY.resolve())
    assert child["lastError"] in {"sourcekit_lsp_launch_failed", "sourcekit_lsp_process_terminated"}
    assert child["lastErrorMessage"]
    assert isinstance(child["recentLog"], list)
    assert child["recentLog"], "the child's lifecycle is in its log"
