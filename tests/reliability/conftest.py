"""Fixtures for the reliability suite: a shared warm cache, a bulk store, the server's env.

The client side of these tests runs on asyncio only: what is under test is the server
process (started with `--backend` where the backend matters, as for signals), not the
test's own event loop.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import build_package, swift_executable

BULK_FILES = 600
"""Enough files that a cold ingestion takes seconds (about 2.5 s on two cores), so a kill
can land in its middle; built once per session (about 35 s)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder shared by the servers that only need a warm index: the database and
    sourcekit-lsp's scratch build are paid for once per session."""
    return tmp_path_factory.mktemp("warm-cache")


def write_bulk_package(root: Path, files: int) -> Path:
    """A package of `files` structs, each with a dozen methods using its neighbour."""
    sources = root / "Sources" / "BulkCore"
    sources.mkdir(parents=True)
    (root / "Package.swift").write_text(
        "// swift-tools-version:5.9\n"
        "import PackageDescription\n"
        'let package = Package(name: "Bulk", targets: [.target(name: "BulkCore")])\n',
        encoding="utf-8",
    )
    for index in range(files):
        neighbour = (index - 1) % files
        methods = "\n".join(
            f"    public func m{j}(_ x: Int) -> Int {{ x + value + Node{neighbour}(value: {j}).value }}"
            for j in range(12)
        )
        (sources / f"Node{index}.swift").write_text(
            f"public struct Node{index} {{\n    public var value: Int\n{methods}\n}}\n", encoding="utf-8"
        )
    return root


@pytest.fixture(scope="session")
def bulk_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_bulk_package(tmp_path_factory.mktemp("bulk") / "Bulk", BULK_FILES)
    build_package(root)
    return root


@pytest.fixture(scope="session")
def bulk_store(bulk_package: Path) -> Path:
    [store] = sorted((bulk_package / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    return store


def swift_build(package: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start `swift build --build-tests` in the background, its output to `log` (a pipe
    nobody reads while the test is busy could fill up and stall the build)."""
    with log.open("wb") as output:
        return subprocess.Popen(
            [swift_executable(), "build", "--build-tests", "--package-path", str(package)],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
