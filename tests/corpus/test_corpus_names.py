"""Names on real code: the name-resolution suite (bench/names.py) over swift-log, Yams and
swift-atomics.

Every symbol each package declares in its source (its own C headers included) is asked for
in each form an agent types; the cases and what each name means come from an independent
dump of the index store (tests/truth), not from xcindex. On every package every symbol is
among the candidates, every name's first candidate is a symbol the name can mean, and no
qualified form misses at 1 except where the name is ambiguous as typed (its first candidate
is another symbol the name was generated for), so hit@1 is the most any resolver can reach.
"""

from __future__ import annotations

import pytest

from bench.names import FORMS, QUALIFIED, run_suite
from tests.corpus.harness import PACKAGES, prepared, store_of
from tests.scoring import MEASURED
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("name", [*PACKAGES, "swift-atomics"])
async def test_every_declared_symbol_is_found_by_every_form_and_ranked_as_high_as_it_can_be(
    name: str,
) -> None:
    store = store_of(prepared(name))
    async with Engine() as engine:
        result = await run_suite(engine, store)
    for form in FORMS:
        figures = result["forms"][form]
        MEASURED.append(
            f"names {name} {form}: {figures['cases']} queries, hit@1 {figures['hit@1']:.3f} "
            f"(ceiling {figures['ceiling']:.3f}), hit@any {figures['hit@any']:.3f}, "
            f"hit@1 per name {figures['hit@1 per name']:.3f}"
        )
        assert figures["cases"] > 0, form
        assert figures["hit@any"] == 1.0, (form, figures["missExamples"])
        assert figures["hit@1 per name"] == 1.0, (form, figures["missExamples"])
    for form in QUALIFIED:
        figures = result["forms"][form]
        assert figures["hits@1"] + figures["ties"] == figures["cases"], (form, figures["missExamples"])
        assert figures["hit@1"] == figures["ceiling"], (form, figures)


async def test_a_c_target_never_makes_system_headers_project_code() -> None:
    """Yams' C target includes /usr/include headers: their declarations are SDK symbols, and
    a rename plan never offers to edit them."""
    store = store_of(prepared("yams"))
    async with Engine() as engine:
        found = (await engine.find_symbol("remove", index_store_path=str(store))).to_json()
        plan = (
            await engine.plan_rename(
                "c:@F@remove", "gone", index_store_path=str(store), reconcile_with_lsp=False
            )
        ).to_json()
    assert all(not (r["definitionPath"] or "").startswith("/usr/") for r in found["results"]), found
    assert plan["ranges"] == []
    assert plan["refusal"] is not None, plan
    assert plan["refusal"]["reason"] == "sdk_symbol_rename", plan


async def test_overloads_that_share_a_name_are_told_apart_by_their_signatures() -> None:
    """Yams' `YAMLDecoder.decode(_:from:userInfo:)` names three methods written over three
    lines each; their first lines are identical, so the signature is the whole head."""
    store = store_of(prepared("yams"))
    async with Engine() as engine:
        found = (
            await engine.find_symbol("YAMLDecoder.decode(_:from:userInfo:)", index_store_path=str(store))
        ).to_json()
    exact = [r for r in found["results"] if r["name"] == "decode(_:from:userInfo:)"]
    signatures = {r["signature"] or "" for r in exact}
    assert len(exact) == 3, exact
    assert len(signatures) == 3, signatures
    for parameter in ("from yaml: String", "from node: Node", "from yamlData: Data"):
        assert any(parameter in signature for signature in signatures), (parameter, signatures)
    assert all(signature.endswith("throws -> T where T: Swift.Decodable") for signature in signatures)
