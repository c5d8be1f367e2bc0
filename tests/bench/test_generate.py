"""The benchmark's generator: deterministic, and its S package builds into an index that
holds the overrides and conformances its manifest claims (checked through xcindex's tools
against the generator's own claims, which are written independently of xcindex's code).

No timing assertions here: performance is measured by `scripts/bench`, never by tests.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from bench.build import BuiltPackage, bench_dir, prepare_package
from bench.generate import MANIFEST, SCALES, generate, load_manifest, write_package
from xcindex.engine import Engine


def digest(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_same_scale_gives_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_package(generate("S"), first)
    write_package(generate("S"), second)
    assert digest(first) == digest(second)
    assert write_package(generate("S"), first) == 0, "rewriting unchanged files breaks incremental builds"


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_scales_have_the_advertised_size(scale: str) -> None:
    package = generate(scale)
    files = len(package.swift_files)
    wanted = {"S": (40, 60), "M": (280, 320), "L": (1900, 2100), "XL": (5800, 6200)}[scale]
    assert wanted[0] <= files <= wanted[1]
    if scale == "M":
        assert 38_000 <= package.swift_lines <= 45_000


def test_every_test_flavour_and_relation_kind_is_generated() -> None:
    files = generate("S").files
    text = "\n".join(files.values())
    for needle in ("import XCTest", "XCTestCase", "import Testing", "@Test func", "@Suite struct"):
        assert needle in text, needle
    assert re.search(r"extension Impl\d+B: Service\d+ \{", text), "a conformance declared in an extension"
    assert re.search(r"extension Impl\d+B: Marker\d+ \{\}", text), "a marker conformance in an extension"
    assert re.search(r"open override func compute", text), "an override that is overridden again"
    assert MANIFEST in files


@pytest.fixture(scope="module")
def built_s() -> BuiltPackage:
    """The S package, built (incrementally after the first time) in the bench folder."""
    return prepare_package("S", bench_dir() / "tests")


def mangled(type_name: str) -> str:
    """How a Swift USR spells a nominal type's name (length-prefixed)."""
    return f"{len(type_name)}{type_name}"


@pytest.mark.toolchain
@pytest.mark.anyio
async def test_s_index_holds_the_claimed_overrides_and_conformances(built_s: BuiltPackage) -> None:
    root = str(built_s.root)
    expected = load_manifest(built_s.root)["expected"]
    async with Engine() as engine:
        for method, types in expected["overrides"].items():
            found = await engine.find_symbol(method, project_path=root)
            assert len(found.matches) == 1, method
            overrides = await engine.find_overrides(found.matches[0].symbol.usr, project_path=root)
            owners = {t for t in types for site in overrides.sites if mangled(t) + "C" in site.symbol.usr}
            assert owners == set(types), f"{method}: overridden in {owners}, claimed {types}"
        for protocol, types in expected["conformances"].items():
            found = await engine.find_symbol(protocol, project_path=root)
            assert len(found.matches) == 1, protocol
            conforming = await engine.find_conformances(found.matches[0].symbol.usr, project_path=root)
            names = {item.type_symbol.name for item in conforming.conformances}
            assert names == set(types), f"{protocol}: conformed by {names}, claimed {types}"
