"""Names an agent types resolve to the symbol it means: the fixture's hand-checked cases
(expected/names.json, one per failure of issue 14) and the suite generated from the index."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from bench.names import QUALIFIED, run_suite
from tests.conftest import CANARY, canary_path, load_expected
from tests.scoring import score
from xcindex.engine import Engine
from xcindex.errors import XcindexError
from xcindex.presentation.text import render_find_symbol
from xcindex.tools.budget import RESPONSE_BUDGET_CHARS, estimated_tokens

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

NAMES = load_expected("names.json")
SYMBOLS: dict[str, dict[str, Any]] = NAMES["symbols"]
XCINDEX = str(Path(sys.executable).parent / "xcindex")


def rel(path: str) -> str:
    return str(Path(path).relative_to(CANARY.resolve()))


def key_of(result: Mapping[str, Any]) -> str:
    """The expected key a find_symbol result is, by its definition site."""
    for key, entry in SYMBOLS.items():
        if (entry["definitionPath"], entry["definitionLine"], entry["name"]) == (
            rel(result["definitionPath"]),
            result["definitionLine"],
            result["name"],
        ):
            return key
    return f"unexpected {result['name']} at {result['definitionPath']}:{result['definitionLine']}"


async def usr_of(engine: Engine, store: Path, key: str) -> str:
    entry = SYMBOLS[key]
    answer = (
        await engine.find_symbol(
            f"{entry['container']}.{entry['name']}" if entry["container"] else entry["name"],
            index_store_path=str(store),
        )
    ).to_json()
    for result in answer["results"]:
        if key_of(result) == key:
            return str(result["usr"])
    raise AssertionError(f"{key} not found: {answer}")


@pytest.mark.parametrize("case", NAMES["resolution"], ids=[c["query"] for c in NAMES["resolution"]])
async def test_hand_checked_names_resolve_to_the_meant_symbols_in_order(
    canary_store: Path, case: dict[str, Any]
) -> None:
    async with Engine() as engine:
        answer = (await engine.find_symbol(case["query"], index_store_path=str(canary_store))).to_json()
    project = [r for r in answer["results"] if r.get("inProject", True)]
    assert [key_of(r) for r in project] == case["candidates"], case["why"]
    assert answer["matchedBy"] == case["matchedBy"], case["why"]
    for result in project:
        entry = SYMBOLS[key_of(result)]
        assert (result["container"], result["module"], result["kind"]) == (
            entry["container"],
            entry["module"],
            entry["kind"],
        )
        assert result["signature"], "the declaration's text from the source"
        # `inherited`: true for every candidate, or the keys of those that are inherited.
        inherited = case.get("inherited", False)
        meant = key_of(result) in inherited if isinstance(inherited, list) else inherited
        assert result.get("inherited", False) == meant, case["why"]
    resolved = next((r for r in project if r["usr"] == answer["resolvedUsr"]), None)
    assert (key_of(resolved) if resolved else None) == case["resolved"], case["why"]
    assert ("resolvedNote" in answer) == case.get("resolvedNote", False)


async def test_overloads_and_requirements_carry_a_hint_saying_which_usr_is_which(canary_store: Path) -> None:
    async with Engine() as engine:
        overloads = (
            await engine.find_symbol("NameClient.send", index_store_path=str(canary_store))
        ).to_json()
        runner = (await engine.find_symbol("NameRunner.run()", index_store_path=str(canary_store))).to_json()
    assert [r["hint"] for r in overloads["results"]] == [
        "one of 2 matching overloads of send in NameClient; this one is send(_:) (line 10)",
        "one of 2 matching overloads of send in NameClient; this one is send(payload:retries:) (line 15)",
    ]
    requirement, default = runner["results"]
    assert requirement["hint"] == f"protocol requirement; default implementation(s): {default['usr']}"
    assert default["hint"] == f"default implementation of the requirement {requirement['usr']}"
    assert requirement["signature"] == "func run() -> String"
    assert default["signature"] == "public func run() -> String"


async def test_a_witness_in_a_conforming_types_extension_is_no_default_implementation(
    canary_store: Path,
) -> None:
    """`greet` names Greeter's requirement, its default (in `extension Greeter`) and two
    witnesses: PirateGreeter's, and ProfileFeature's written in `extension ProfileFeature:
    Greeter`. Only the first is a default implementation (once both witnesses were called
    that, in the hints and in the note of the symbol taken)."""
    async with Engine() as engine:
        answer = (await engine.find_symbol("greet", index_store_path=str(canary_store))).to_json()
    by_container = {r["container"]: r for r in answer["results"] if r["container"] != "Greeter"}
    requirement, default = (r for r in answer["results"] if r["container"] == "Greeter")
    pirate, feature = by_container["PirateGreeter"], by_container["ProfileFeature"]
    assert requirement["hint"] == f"protocol requirement; default implementation(s): {default['usr']}"
    assert default["hint"] == f"default implementation of the requirement {requirement['usr']}"
    assert "hint" not in pirate
    assert "hint" not in feature
    assert answer["resolvedUsr"] == requirement["usr"]
    assert answer["resolvedNote"] == (
        f"'greet()' names a protocol requirement and its default implementation(s) ({default['usr']}) "
        f"and witness(es) in conforming types ({pirate['usr']}, {feature['usr']}); "
        f"taken: the requirement {requirement['usr']}"
    )


async def test_sdk_symbols_the_project_uses_are_candidates_after_the_project(canary_store: Path) -> None:
    async with Engine() as engine:
        for case in NAMES["sdk"]:
            answer = (await engine.find_symbol(case["query"], index_store_path=str(canary_store))).to_json()
            first = answer["results"][0]
            assert {k: first.get(k) for k in case["first"]} == case["first"], case["why"]
            assert first["definitionPath"] is None
        plus = (await engine.find_symbol("+(_:_:)", index_store_path=str(canary_store))).to_json()
    # Project first: Vector2D's operator, then the standard library's that the project calls.
    assert [r.get("inProject", True) for r in plus["results"]][:2] == [True, False]
    assert plus["results"][0]["container"] == "Vector2D"


async def test_hand_checked_references_include_wrapper_attributes_as_implicit_calls(
    canary_store: Path,
) -> None:
    async with Engine() as engine:
        for key, expected in NAMES["references"].items():
            usr = await usr_of(engine, canary_store, key)
            answer = (await engine.find_references(usr=usr, index_store_path=str(canary_store))).to_json()
            got = {(rel(r["path"]), r["line"], r["column"]): set(r["roles"]) for r in answer["results"]}
            want = {(r["path"], r["line"], r["column"]): set(r["roles"]) for r in expected}
            result = score(f"find_references {key}", set(want), set(got))
            assert (result.recall, result.precision) == (1.0, 1.0), result
            assert got == want, key


async def test_a_usr_given_as_the_name_is_taken_as_the_usr(canary_store: Path) -> None:
    # `xcindex refs s:…` (and an agent passing a USR in symbolName) answered "No symbol
    # s:… in this index: check the name … or the USR", though the USR was there.
    async with Engine() as engine:
        for key, expected in NAMES["references"].items():
            usr = await usr_of(engine, canary_store, key)
            answer = (await engine.find_references(usr, index_store_path=str(canary_store))).to_json()
            got = {(rel(r["path"]), r["line"], r["column"]) for r in answer["results"]}
            assert got == {(r["path"], r["line"], r["column"]) for r in expected}, key
    result = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [XCINDEX, "refs", usr, "--index-store", str(canary_store)],
            capture_output=True,
            text=True,
            check=False,
        )
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No symbol" not in result.stdout


async def test_references_by_name_take_the_best_ranked_candidates_and_say_so(canary_store: Path) -> None:
    async with Engine() as engine:
        for name, expected in NAMES["referencesByName"].items():
            answer = (await engine.find_references(name, index_store_path=str(canary_store))).to_json()
            usrs = {key: await usr_of(engine, canary_store, key) for key in expected["symbols"]}
            assert {s["usr"] for s in answer["symbols"]} == set(usrs.values()), name
            assert ("note" in answer) == expected["note"], name
            # Every site of every candidate, each attributed to its own symbol (hand-checked).
            got = [(rel(r["path"]), r["line"], r["column"], r["usr"]) for r in answer["results"]]
            want = [(path, line, column, usrs[key]) for path, line, column, key in expected["sites"]]
            assert sorted(got) == sorted(want), name


async def test_subclasses_of_a_conforming_class_are_conformers(canary_store: Path) -> None:
    async with Engine() as engine:
        usr = await usr_of(engine, canary_store, "NameRunner")
        answer = (await engine.find_conformances(usr, index_store_path=str(canary_store))).to_json()
    got = [
        (r["conformingType"], rel(r["path"]), r["line"], r["column"], r["viaExtension"], r["inheritedFrom"])
        for r in answer["results"]
    ]
    want = [
        (e["type"], e["path"], e["line"], e["column"], e["viaExtension"], e["inheritedFrom"])
        for e in NAMES["conformances"]["NameRunner"]
    ]
    assert got == want


async def test_pages_cover_the_whole_list_in_one_order(canary_store: Path) -> None:
    store = str(canary_store)
    async with Engine() as engine:
        usr = (await engine.find_symbol("UserService", index_store_path=store)).to_json()["resolvedUsr"]
        whole = (await engine.find_references(usr=usr, max_results=500, index_store_path=store)).to_json()
        assert "nextOffset" not in whole
        pages: list[dict[str, Any]] = []
        offset: int | None = 0
        asked = 0
        while offset is not None:
            asked += 1
            page = (
                await engine.find_references(usr=usr, max_results=4, offset=offset, index_store_path=store)
            ).to_json()
            pages.extend(dict(r) for r in page["results"])
            assert page["totalCount"] == whole["totalCount"]
            offset = page.get("nextOffset")
            assert page["truncated"] is (offset is not None)
        assert pages == whole["results"]
        # The 12 hand-checked references, four to a page.
        want = sorted(
            (site["path"], site["line"], site["column"])
            for site in load_expected("references.json")["UserService"]
        )
        assert sorted((rel(r["path"]), r["line"], r["column"]) for r in pages) == want
        assert asked == 3

        runner = await usr_of(engine, canary_store, "NameRunner")
        everything = (await engine.find_conformances(runner, index_store_path=store)).to_json()
        rest = (await engine.find_conformances(runner, offset=2, index_store_path=store)).to_json()
        assert rest["results"] == everything["results"][2:]
        symbols = (
            await engine.find_symbol("init", offset=3, max_results=500, index_store_path=store)
        ).to_json()
        every = (await engine.find_symbol("init", max_results=500, index_store_path=store)).to_json()
        assert symbols["results"] == every["results"][3:]
        first = (await engine.find_symbol("init", max_results=5, index_store_path=store)).to_json()
        assert (first["results"], first.get("nextOffset")) == (every["results"][:5], 5)
        with pytest.raises(XcindexError, match="'offset' must be 0 or more; got -1"):
            await engine.find_references(usr=usr, offset=-1, index_store_path=store)


async def test_a_common_name_stays_within_the_response_budget(canary_store: Path) -> None:
    async with Engine() as engine:
        answer = await engine.find_symbol("init", index_store_path=str(canary_store))
    structured = answer.to_json(RESPONSE_BUDGET_CHARS)
    text = render_find_symbol(answer, RESPONSE_BUDGET_CHARS)
    assert estimated_tokens(text, structured) <= 20_000
    assert structured["totalCount"] == len(answer.matches) > 20


async def test_the_generated_suite_meets_its_targets_on_the_fixture(canary_store: Path) -> None:
    """The cases and what each name means come from the independent dump (tests/truth)."""
    async with Engine() as engine:
        result = await run_suite(engine, canary_store)
    for form, figures in result["forms"].items():
        assert figures["cases"] > 0, form
        assert figures["hit@any"] == 1.0, (form, figures)
        # Every name's first candidate is a symbol the name can mean.
        assert figures["hit@1 per name"] == 1.0, (form, figures)
    for form in QUALIFIED:
        figures = result["forms"][form]
        # Misses at 1 are names ambiguous as typed (overloads without labels, a requirement
        # and its default implementation): the first candidate is another symbol the same
        # name was generated for, and hit@1 is the most any resolver can reach (one symbol
        # first per name).
        assert figures["hits@1"] + figures["ties"] == figures["cases"], (form, figures)
        assert figures["hit@1"] == figures["ceiling"], (form, figures)
    labelled = result["forms"]["Module.Type.member(labels:)"]
    assert labelled["hit@1"] >= 0.95, labelled


def test_cli_refs_all_pages_through_and_a_closed_pipe_ends_quietly(canary_store: Path) -> None:
    expected = load_expected("references.json")["UserService"]
    everything = subprocess.run(
        [XCINDEX, "refs", "UserService", "--all", "--max-results", "2", "--json"],
        cwd=CANARY,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert everything.returncode == 0, everything.stderr
    answer = json.loads(everything.stdout)
    assert {(r["path"], r["line"], r["column"]) for r in answer["results"]} == {
        (canary_path(e["path"]), e["line"], e["column"]) for e in expected
    }
    assert answer["truncated"] is False

    # The reader is gone before a byte is written: the write fails with EPIPE.
    process = subprocess.Popen(
        [XCINDEX, "refs", "UserService", "--all"],
        cwd=CANARY,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    with process.stderr:
        stderr = process.stderr.read().decode()
    code = process.wait(timeout=600)
    assert code == 141, stderr
    assert stderr == ""


def test_cli_overrides_takes_the_requirement_of_a_requirement_and_its_default(canary_store: Path) -> None:
    result = subprocess.run(
        [XCINDEX, "overrides", "NameLeafRunner.run()"],
        cwd=CANARY,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "names a protocol requirement and its default implementation(s)" in result.stderr
    assert "Sources/CanaryCore/Names.swift\n     40:17  run()  definition, overrideOf" in result.stdout
