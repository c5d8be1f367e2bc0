"""Fixtures for the fault tests: the fake language server and a small workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

FAKE_LSP = Path(__file__).resolve().with_name("fake_lsp.py")

DEMO_SOURCE = (
    "import Foundation\n"
    "\n"
    'let greeting = "👋 héllo 世界"; let user = fetchUser(id: 1)\n'
    "func fetchUser(id: Int) -> String? { nil }\n"
)
"""Line 3 puts `fetchUser` after multi-byte text: UTF-8 column 49, UTF-16 column 42."""


@pytest.fixture
def fake_lsp() -> Path:
    return FAKE_LSP


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A package folder with one Swift file (DEMO_SOURCE) at Sources/Demo/Demo.swift."""
    root = (tmp_path / "Demo").resolve()
    (root / "Sources" / "Demo").mkdir(parents=True)
    (root / "Package.swift").write_text("// swift-tools-version:5.9\n", encoding="utf-8")
    (root / "Sources" / "Demo" / "Demo.swift").write_text(DEMO_SOURCE, encoding="utf-8")
    return root
