"""The public API is exactly what docs/embedding.md documents: `xcindex.__all__` against the
names its "What `xcindex` exports" section lists, and the Engine's public methods against its
method table."""

from __future__ import annotations

import re
from pathlib import Path

import xcindex
from xcindex.engine import Engine

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "embedding.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return DOCS.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_package_exports_exactly_the_documented_names() -> None:
    documented = set(re.findall(r"`([A-Z]\w*)`", section("What `xcindex` exports")))
    assert sorted(xcindex.__all__) == sorted(documented)
    for name in xcindex.__all__:
        assert getattr(xcindex, name) is not None, name


def test_the_engine_has_exactly_the_documented_public_methods() -> None:
    table = section("The methods") + section("Opening an engine")
    documented = set(re.findall(r"`(?:await )?engine\.(\w+)\(", table)) | set(
        re.findall(r"`await engine\.\w+\(.*?\)` / `await engine\.(\w+)\(", table)
    )
    public = {name for name in vars(Engine) if not name.startswith("_")} - {"config"}
    assert sorted(public) == sorted(documented)
