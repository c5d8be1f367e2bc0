"""call_hierarchy and type_hierarchy against the fixture's hand-checked answers
(expected/calls.json, expected/types.json): recall and precision 1.0."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, load_expected
from tests.scoring import score
from xcindex.engine import Engine
from xcindex.errors import XcindexError

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def rel(path: str | None) -> str:
    assert path is not None
    return str(Path(path).relative_to(CANARY.resolve()))


def node(ref: Mapping[str, Any]) -> str:
    return f"{ref['name']}@{rel(ref['path'])}:{ref['line']}"


async def one_usr(engine: Engine, store: str, name: str) -> str:
    """The one symbol a name means (a requirement, where its default implementation shares it)."""
    answer = (await engine.find_symbol(name, index_store_path=store)).to_json()
    if answer["resolvedUsr"] is not None:
        return answer["resolvedUsr"]
    found = answer["results"]
    assert len(found) == 1, (name, found)
    return str(found[0]["usr"])


async def test_call_hierarchy_matches_hand_checked_calls(canary_store: Path) -> None:
    store = str(canary_store)
    async with Engine() as engine:
        for key, case in load_expected("calls.json").items():
            if key.startswith("_"):
                continue
            answer = (
                await engine.call_hierarchy(
                    symbol_name=key, direction=case["direction"], depth=case["depth"], index_store_path=store
                )
            ).to_json()
            want = set()
            for call in case["calls"]:
                through = await one_usr(engine, store, call["through"]) if call["through"] else None
                want.add(
                    (
                        call["level"],
                        call["caller"],
                        call["callee"],
                        call["site"],
                        call["dispatch"],
                        through,
                        call["cycle"],
                        call["viaDispatch"],
                    )
                )
            got = set()
            for group in answer["calls"]:
                callee_usr = group["callee"]["usr"]
                for site in group["sites"]:
                    through = site["resolvesTo"] if site["resolvesTo"] != callee_usr else None
                    got.add(
                        (
                            group["level"],
                            node(group["caller"]),
                            node(group["callee"]),
                            f"{rel(site['path'])}:{site['line']}:{site['column']}",
                            site["dispatch"],
                            through,
                            group["cycle"],
                            group["viaDispatch"],
                        )
                    )
            result = score(f"call_hierarchy {key} {case['direction']} depth {case['depth']}", want, got)
            assert (result.recall, result.precision) == (1.0, 1.0), result
            assert answer["completeness"] == "complete"
            assert answer["truncated"] is False


async def test_callers_page_by_offset_without_overlap_or_gap(canary_store: Path) -> None:
    """Under a response budget that fits about one caller group, `nextOffset` pages through
    the level-1 groups: every page continues where the last one stopped."""
    store = str(canary_store)
    name = "UserService.fetchUser(id:)"
    async with Engine() as engine:
        whole = (await engine.call_hierarchy(symbol_name=name, index_store_path=store)).to_json()
        assert whole["callCount"] == 4
        assert "nextOffset" not in whole
        everyone = [node(g["caller"]) for g in whole["calls"]]
        budget = 2 * len(json.dumps(whole["calls"][0])) + 10
        paged: list[str] = []
        offset = 0
        while True:
            answer = await engine.call_hierarchy(symbol_name=name, offset=offset, index_store_path=store)
            page = answer.to_json(budget)
            assert page["callCount"] == 4
            paged += [node(g["caller"]) for g in page["calls"]]
            if "nextOffset" not in page:
                break
            assert page["truncated"] is True
            offset = page["nextOffset"]
        assert paged == everyone
        assert offset > 0


async def test_outgoing_calls_count_what_the_index_cannot_place(canary_store: Path) -> None:
    async with Engine() as engine:
        answer = (
            await engine.call_hierarchy(
                symbol_name="summary(_:)", direction="outgoing", index_store_path=str(canary_store)
            )
        ).to_json()
    # String(_:) and two `+` are the standard library's: counted, not listed.
    assert answer["externalCallCount"] == 3
    assert {g["callee"]["name"] for g in answer["calls"]} == {"totalArea(_:)", "isEven(_:)"}


async def test_type_hierarchy_matches_hand_checked_links(canary_store: Path) -> None:
    store = str(canary_store)
    async with Engine() as engine:
        for key, case in load_expected("types.json").items():
            if key.startswith("_"):
                continue
            answer = (
                await engine.type_hierarchy(
                    symbol_name=key, direction=case["direction"], depth=case["depth"], index_store_path=store
                )
            ).to_json()
            want = {
                (
                    link["level"],
                    link["subtype"],
                    link["supertype"],
                    link["site"],
                    link["relation"],
                    link["viaExtension"],
                )
                for link in case["links"]
            }
            got = {
                (
                    link["level"],
                    link["subtype"]["name"],
                    link["supertype"]["name"],
                    f"{rel(link['path'])}:{link['line']}:{link['column']}",
                    link["relation"],
                    link["viaExtension"],
                )
                for link in answer["links"]
            }
            result = score(f"type_hierarchy {key} {case['direction']} depth {case['depth']}", want, got)
            assert (result.recall, result.precision) == (1.0, 1.0), result
            local = {
                (found["name"], found["kind"], f"{rel(found['path'])}:{found['line']}:{found['column']}")
                for found in answer["localSubtypes"]
            }
            assert local == {(x["name"], x["kind"], x["site"]) for x in case.get("localSubtypes", [])}, key


async def test_callees_name_the_type_that_declares_them(canary_store: Path) -> None:
    """greetAll's dynamic call of Greeter.greet() can run four implementations: each group
    says whose (the default implementation is the protocol extension's)."""
    async with Engine() as engine:
        answer = (
            await engine.call_hierarchy(
                symbol_name="greetAll(_:)", direction="outgoing", index_store_path=str(canary_store)
            )
        ).to_json()
    assert {(g["callee"]["container"], g["callee"]["line"]) for g in answer["calls"]} == {
        ("Greeter", 2),
        ("Greeter", 6),
        ("PirateGreeter", 18),
        ("ProfileFeature", 37),
    }
    assert answer["root"] is not None
    assert answer["root"]["container"] is None


async def test_an_ambiguous_name_is_an_error_that_lists_the_candidates(canary_store: Path) -> None:
    async with Engine() as engine:
        with pytest.raises(XcindexError, match=r"'area\(\)' names 5 symbols; give one of their usr"):
            await engine.call_hierarchy(symbol_name="area()", index_store_path=str(canary_store))
        missing = await engine.type_hierarchy(symbol_name="NoSuchType", index_store_path=str(canary_store))
        assert missing.to_json()["root"] is None
        assert missing.to_json()["links"] == []
