"""plan_rename's `property_wrapper_derived_name` on properties written one to a line, as
command-line parsers declare them (`@Option var count: Int`): only the attributes of the
property itself count. Met on such a parser: renaming `size` below `@OptionGroup var
common` and `@Option(...) var shape` named `@OptionGroup`, the first attribute of the lines
above; a plain property right below a wrapped one was said to be wrapped; and a wrapper
whose arguments span lines above its property was missed. Hand-checked on
fixtures/SwiftCanary/Sources/CanaryCore/RenameCases.swift (LineOptions, Options)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

DERIVED = "property_wrapper_derived_name"


async def wrapper_warnings(engine: Engine, store: Path, name: str) -> list[str]:
    found = (await engine.find_symbol(name, index_store_path=str(store))).to_json()
    usr = found["resolvedUsr"]
    assert usr, name
    plan = await engine.plan_rename(usr, "renamed", index_store_path=str(store), reconcile_with_lsp=False)
    assert plan.refusal is None, name
    return [message for code, message in plan.warnings if code == DERIVED]


async def test_only_a_propertys_own_attributes_make_it_wrapped(canary_store: Path) -> None:
    async with Engine() as engine:
        retries = await wrapper_warnings(engine, canary_store, "LineOptions.retries")
        width = await wrapper_warnings(engine, canary_store, "LineOptions.width")
        depth = await wrapper_warnings(engine, canary_store, "LineOptions.depth")
        verbosity = await wrapper_warnings(engine, canary_store, "Options.verbosity")
    # `public var retries = 2`, right below `@Clamped public var depth: Int = 1`: not wrapped.
    assert retries == []
    # `@Clamped(\n wrappedValue: 5\n)` above `public var width: Int`.
    assert len(width) == 1
    assert "width at " in width[0]
    assert "is wrapped by @Clamped," in width[0]
    assert len(depth) == 1
    assert "is wrapped by @Clamped," in depth[0]
    assert len(verbosity) == 1
    assert "is wrapped by @Clamped," in verbosity[0]
