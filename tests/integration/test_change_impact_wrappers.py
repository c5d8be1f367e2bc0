"""change_impact on a property wrapper's initializer: the attributes that call it
(`@NameClamped(limit: 10) var volume`) are its uses, as find_references counts them. The
index records each as an implicit call at the attribute's type name; change_impact once
dropped every implicit occurrence and listed none of them (met on a command-line parser
whose `@Option(transform:)` sites went missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.impact_proof import prepare_repository
from tests.conftest import CANARY, swift_executable
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

NAMES = "Sources/CanaryCore/Names.swift"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_wrapper_initializer_body_lists_its_attribute_uses(tmp_path: Path) -> None:
    swift_executable()
    root = prepare_repository(CANARY, tmp_path / "SwiftCanary")
    names = root / NAMES
    text = names.read_text(encoding="utf-8")
    # The body of init(wrappedValue:limit:), the initializer `@NameClamped(limit: 10)` calls.
    old = "        value = min(wrappedValue, limit)\n"
    assert text.count(old) == 1
    names.write_text(text.replace(old, "        value = max(wrappedValue, limit)\n"), encoding="utf-8")
    attribute_line = next(
        i for i, line in enumerate(text.splitlines(), 1) if "@NameClamped(limit: 10)" in line
    )
    delegating_line = next(
        i
        for i, line in enumerate(text.splitlines(), 1)
        if "self.init(wrappedValue: wrappedValue, limit: 100)" in line
    )
    plain_line = next(i for i, line in enumerate(text.splitlines(), 1) if "@NameClamped public var" in line)

    async with Engine() as engine:
        answer = (await engine.change_impact(project_path=str(root))).to_json()

    assert [s["name"] for s in answer["changedSymbols"]] == ["init(wrappedValue:limit:)"]
    sites = {(Path(r["path"]).name, r["line"], r["column"]) for r in answer["references"]}
    # Hand-checked: the attribute (column of `NameClamped` after `@`) and the delegating call.
    assert ("Names.swift", attribute_line, 6) in sites
    assert ("Names.swift", delegating_line, 14) in sites
    # `@NameClamped public var brightness` calls init(wrappedValue:), not the changed one.
    assert not any(line == plain_line for _, line, _ in sites)
    assert answer["referenceCount"] == len(sites) == 2
