"""plan_rename on the real fixture, reconciled with the real sourcekit-lsp.

The ranges are scored against the hand-checked renames in expected/rename.json; every
refusal, tier and reason the fixture can produce for real is produced here. Faults of
sourcekit-lsp itself (an empty answer, a hang) are in tests/faults/.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, build_package, copy_package, load_expected
from tests.integration.test_tools_against_expected import rel, usr_of
from tests.scoring import score
from xcindex.engine import Engine, EngineConfig
from xcindex.errors import XcindexError
from xcindex.indexstore.database import Database
from xcindex.tools.rename.plan import RenamePlan

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

EMOJI_FILE = "Sources/CanaryCore/AppDelegate.swift"
EMOJI_LINE = 13


@pytest.fixture
def symbols() -> dict[str, dict[str, Any]]:
    return {entry["key"]: entry for entry in load_expected("symbols.json")}


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    async with Engine() as running:
        yield running


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under the package, build products included, by content hash."""
    digest: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest[str(path.relative_to(root))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return digest


def ranges_of(plan: RenamePlan) -> set[tuple[str, int, int, int]]:
    return {(rel(r.path), r.line, r.column, r.end_column) for r in plan.ranges}


async def test_every_expected_rename_is_found_exactly_and_confirmed_by_sourcekit_lsp(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    for key, expected in load_expected("rename.json").items():
        usr = await usr_of(engine, canary_store, symbols[key])
        plan = await engine.plan_rename(usr, expected["newName"], project_path=str(CANARY))
        want = {(r["path"], r["line"], r["column"], r["endColumn"]) for r in expected["ranges"]}
        result = score(f"plan_rename {key}", want, ranges_of(plan))
        assert (result.recall, result.precision) == (1.0, 1.0), str(result)
        assert plan.refusal is None
        assert plan.warnings == (), f"{key}: {plan.warnings}"
        assert {r.tier for r in plan.ranges} == {"green-verified"}, key
        assert all(r.source == "indexstore" for r in plan.ranges)
        assert all(r.module in ("CanaryCore", "CanaryFeatures", "CanaryCoreTests") for r in plan.ranges)
        summary = plan.to_json()["summary"]
        assert summary["green_verified"] == len(want)
        assert plan.last_built is not None
        assert plan.old_name == symbols[key]["name"]


def reasons_by_site(plan: RenamePlan) -> dict[tuple[str, int], tuple[str, ...]]:
    return {(rel(r.path), r.line): tuple(str(x) for x in r.reasons) for r in plan.ranges}


async def test_reasons_name_overrides_witnesses_default_implementations_and_extensions(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    store = str(canary_store)
    set_up = await engine.plan_rename(
        await usr_of(engine, canary_store, symbols["AppDelegate.setUp()"]),
        "configure",
        index_store_path=store,
        reconcile_with_lsp=False,
    )
    by_site = reasons_by_site(set_up)
    assert by_site[("Sources/CanaryCore/SubDelegate.swift", 4)] == ("override",)
    assert by_site[("Sources/CanaryCore/AppDelegate.swift", 11)] == ("direct_reference",)

    # A protocol requirement: its two witnesses and the default implementation in the
    # protocol extension, whichever of them the plan is asked about.
    greet_usr = await usr_of(engine, canary_store, symbols["Greeter.greet()"])
    greet = await engine.plan_rename(greet_usr, "salute", index_store_path=store, reconcile_with_lsp=False)
    witnesses = {
        site for site, reasons in reasons_by_site(greet).items() if reasons == ("conformance_witness",)
    }
    assert ("Sources/CanaryCore/Greeter.swift", 6) in witnesses  # the default implementation
    assert len(witnesses) == 3
    overrides = await engine.find_overrides(greet_usr, index_store_path=str(canary_store))
    witness_usr = overrides.to_json()["results"][-1]["usr"]
    assert witness_usr != greet_usr
    from_witness = await engine.plan_rename(
        witness_usr, "salute", index_store_path=store, reconcile_with_lsp=False
    )
    assert ranges_of(from_witness) == ranges_of(greet)

    service = await engine.plan_rename(
        await usr_of(engine, canary_store, symbols["UserService"]),
        "AccountService",
        index_store_path=store,
        reconcile_with_lsp=False,
    )
    assert reasons_by_site(service)[("Sources/CanaryCore/Auditable.swift", 3)] == ("extension_member",)
    assert {r.tier for r in service.ranges} == {"green-indexstore"}
    assert service.warnings == ()


async def test_the_non_ascii_line_uses_utf8_byte_columns(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    usr = await usr_of(engine, canary_store, symbols["UserService.fetchUser(id:)"])
    plan = await engine.plan_rename(usr, "loadUser", project_path=str(CANARY))
    [on_emoji_line] = [r for r in plan.ranges if rel(r.path) == EMOJI_FILE and r.line == EMOJI_LINE]
    line = (CANARY / EMOJI_FILE).read_bytes().split(b"\n")[EMOJI_LINE - 1]
    assert line[on_emoji_line.column - 1 : on_emoji_line.end_column - 1] == b"fetchUser"
    assert (on_emoji_line.column, on_emoji_line.end_column) == (47, 56)
    assert on_emoji_line.tier == "green-verified"  # sourcekit-lsp's UTF-8 reading was matched


async def test_max_ranges_out_of_range_is_a_clear_error(engine: Engine, canary_store: Path) -> None:
    for bad in (0, 5001):
        with pytest.raises(XcindexError) as raised:
            await engine.plan_rename("s:x", "y", index_store_path=str(canary_store), max_ranges=bad)
        assert str(raised.value) == f"'maxRanges' must be between 1 and 5000; got {bad}."


async def test_max_ranges_caps_the_list_and_keeps_the_full_summary(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    usr = await usr_of(engine, canary_store, symbols["UserService"])
    full = await engine.plan_rename(usr, "AccountService", index_store_path=str(canary_store))
    capped = await engine.plan_rename(usr, "AccountService", index_store_path=str(canary_store), max_ranges=3)
    assert len(full.to_json()["ranges"]) == 12
    assert full.to_json()["truncated"] is False
    capped_json = capped.to_json()
    assert len(capped_json["ranges"]) == 3
    assert capped_json["truncated"] is True
    assert capped_json["summary"] == full.to_json()["summary"]
    assert capped_json["ranges"] == full.to_json()["ranges"][:3]


async def test_refusals_carry_reason_message_and_remediation(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(canary_store)
    where: dict[str, Any] = {"index_store_path": store}
    usr = await usr_of(engine, canary_store, symbols["UserService"])

    async def refusal(target: str, new_name: str = "Renamed", **extra: Any) -> dict[str, str]:
        plan = (await engine.plan_rename(target, new_name, **{**where, **extra})).to_json()
        assert plan["ranges"] == []
        assert plan["refusal"] is not None, plan
        assert plan["refusal"]["message"]
        assert plan["refusal"]["remediation"]
        return {key: str(value) for key, value in plan["refusal"].items()}

    assert (await refusal("s:10CanaryCore9NoSuchTypeC"))["reason"] == "usr_not_found"
    for bad in ("", "class", "two words", "1st", "a-b", "`unclosed", "👋"):
        assert (await refusal(usr, bad))["reason"] == "invalid_identifier", bad

    def lookup(db: Database, name: str) -> list[str]:
        return [s.usr for s in db.symbols_by_name(name)]

    string_usrs = await engine._core.run_query(lambda db: lookup(db, "String"), index_store_path=store)
    assert "s:SS" in string_usrs  # the standard library's String, referenced by the fixture
    sdk = await refusal("s:SS")
    assert sdk["reason"] == "sdk_symbol_rename"
    # The C library's remove(), called by the fixture's C target: declared in a system
    # header (/usr/include/stdio.h), never a range to edit.
    assert (await refusal("c:@F@remove"))["reason"] == "sdk_symbol_rename"

    # XCTestCase.setUp() is the SDK's: its override in the tests cannot be renamed alone.
    test_set_up = [
        u
        for u in await engine._core.run_query(lambda db: lookup(db, "setUp()"), index_store_path=store)
        if "CanaryCoreTests" in u
    ]
    assert len(test_set_up) == 1
    overriding_sdk = await refusal(test_set_up[0])
    assert overriding_sdk["reason"] == "sdk_symbol_rename"
    assert "setUp()" in overriding_sdk["message"]

    [implicit_setter] = await engine._core.run_query(
        lambda db: lookup(db, "setter:callCount"), index_store_path=store
    )
    assert (await refusal(implicit_setter))["reason"] == "synthesized_symbol_not_renameable"

    monkeypatch.setenv("XCINDEX_DISABLE_PLAN_RENAME", "1")
    disabled = await refusal(usr)
    assert disabled["reason"] == "disabled_by_env"
    # The kill switch wins before the project is even looked for.
    assert (await refusal(usr, project_path="/nonexistent/Package"))["reason"] == "disabled_by_env"


async def test_accepted_names_include_backquoted_keywords_and_unicode_letters(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    usr = await usr_of(engine, canary_store, symbols["UserStatus.active"])
    for name in ("`default`", "activé", "_private2"):
        plan = await engine.plan_rename(
            usr, name, index_store_path=str(canary_store), reconcile_with_lsp=False
        )
        assert plan.refusal is None, name
        assert len(plan.ranges) == 5


async def test_a_session_edit_and_a_file_changed_since_its_unit_make_ranges_red(
    tmp_path: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    # The labels without the freshness overlay, which would re-index the touched file
    # (tests/integration/test_overlay.py covers plan_rename with it).
    async with Engine(EngineConfig(overlay=False)) as engine:
        await _stale_ranges_are_red(engine, tmp_path, symbols)


async def _stale_ranges_are_red(engine: Engine, tmp_path: Path, symbols: dict[str, dict[str, Any]]) -> None:
    copy = copy_package(CANARY, tmp_path / "SwiftCanary")
    store = build_package(copy)
    usr = await usr_of(engine, store, symbols["UserService.fetchUser(id:)"], root=copy)

    edited = copy / "Sources/CanaryCore/AppDelegate.swift"
    await engine.record_edit(str(edited))
    touched = copy / "Tests/CanaryCoreTests/UserServiceTests.swift"
    touched.write_text(touched.read_text() + "\n// changed from a shell\n")  # after its sites
    later = time.time() + 60  # the copy kept the fixture's old mtimes: "now" is after the build
    os.utime(touched, (later, later))

    plan = await engine.plan_rename(usr, "loadUser", project_path=str(copy))
    by_file: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    for r in plan.ranges:
        by_file.setdefault(rel(r.path, copy), set()).add((str(r.tier), tuple(str(x) for x in r.reasons)))
    assert by_file["Sources/CanaryCore/AppDelegate.swift"] == {
        ("red-stale", ("direct_reference", "session_edited"))
    }
    assert by_file["Tests/CanaryCoreTests/UserServiceTests.swift"] == {
        ("red-stale", ("direct_reference", "file_newer_than_unit"))
    }
    assert {tier for tier, _ in by_file["Sources/CanaryCore/UserService.swift"]} == {"green-verified"}
    assert plan.to_json()["indexFreshness"]["filesEditedThisSession"] == 1
    expected = load_expected("rename.json")["UserService.fetchUser(id:)"]["ranges"]
    changed = {"Sources/CanaryCore/AppDelegate.swift", "Tests/CanaryCoreTests/UserServiceTests.swift"}
    in_changed_files = [r for r in expected if r["path"] in changed]
    assert plan.to_json()["summary"]["red_stale"] == len(in_changed_files)


async def test_sourcekit_lsp_unavailable_is_a_warning_and_the_index_plan_stands(
    engine: Engine,
    canary_store: Path,
    symbols: dict[str, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    not_executable = tmp_path / "sourcekit-lsp"
    not_executable.write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setenv("SOURCEKIT_LSP_PATH", str(not_executable))
    usr = await usr_of(engine, canary_store, symbols["UserService.fetchUser(id:)"])
    plan = (await engine.plan_rename(usr, "loadUser", project_path=str(CANARY))).to_json()
    codes = [w["code"] for w in plan["warnings"]]
    assert codes == ["reconciliation_unavailable", "sourcekit_lsp_binary_not_executable"]
    assert "chmod +x" in plan["warnings"][1]["message"]
    assert {r["tier"] for r in plan["ranges"]} == {"green-indexstore"}
    assert plan["summary"]["green_indexstore"] == 6

    monkeypatch.setenv("SOURCEKIT_LSP_PATH", str(tmp_path / "missing"))
    missing = (await engine.plan_rename(usr, "loadUser", project_path=str(CANARY))).to_json()
    assert [w["code"] for w in missing["warnings"]] == [
        "reconciliation_unavailable",
        "sourcekit_lsp_not_found",
    ]


async def test_a_store_with_no_workspace_above_it_warns_workspace_root_unresolved(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    loose = tmp_path / "loose-store"
    shutil.copytree(canary_store, loose)
    usr = await usr_of(engine, canary_store, symbols["UserStatus.active"])
    plan = (await engine.plan_rename(usr, "enabled", index_store_path=str(loose))).to_json()
    assert [w["code"] for w in plan["warnings"]] == [
        "reconciliation_unavailable",
        "workspace_root_unresolved",
    ]
    assert plan["summary"]["green_indexstore"] == 5


async def test_plan_rename_never_writes_into_the_project(
    engine: Engine, canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    before = tree_digest(CANARY)
    for key, expected in load_expected("rename.json").items():
        usr = await usr_of(engine, canary_store, symbols[key])
        await engine.plan_rename(usr, expected["newName"], project_path=str(CANARY))
        await engine.plan_rename(usr, "class", project_path=str(CANARY))
    await engine.plan_rename("s:nothing", "x", project_path=str(CANARY))
    assert tree_digest(CANARY) == before


async def test_an_operator_whose_range_end_cannot_be_verified_is_yellow(
    engine: Engine, canary_store: Path
) -> None:
    store = str(canary_store)

    def plus(db: Database) -> list[str]:
        return [s.usr for s in db.symbols_by_name("+(_:_:)") if "Vector2D" in s.usr]

    [usr] = await engine._core.run_query(plus, index_store_path=store)
    plan = await engine.plan_rename(usr, "adding", index_store_path=store, reconcile_with_lsp=False)
    assert plan.refusal is None
    sites = {(rel(r.path), r.line, r.column) for r in plan.ranges}
    assert sites == {
        (r["path"], r["line"], r["column"]) for r in load_expected("references.json")["Vector2D.+(_:_:)"]
    }
    for r in plan.ranges:
        assert r.tier == "yellow-disagreement"
        assert "range_end_computed_unverified" in r.reasons
