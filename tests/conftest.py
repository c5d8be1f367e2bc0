"""Shared fixtures: the built SwiftCanary package, its hand-checked answers, both backends.

Tests that need the real toolchain fail (never skip) when it is missing: a green run
without Swift would prove nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CANARY = REPO / "fixtures" / "SwiftCanary"
EXPECTED = CANARY / "expected"
SWIFT_BIN = Path("/opt/swift/usr/bin")


def pytest_configure(config: pytest.Config) -> None:
    # Every test session gets its own database cache: nothing leaks between runs.
    if "XCINDEX_CACHE_DIR" not in os.environ:
        os.environ["XCINDEX_CACHE_DIR"] = tempfile.mkdtemp(prefix="xcindex-test-cache-")
    # The session ledger is keyed by the project folder: a test session gets a project of
    # its own, so edits recorded by a developer's own agent session (or a hook run by hand
    # in this checkout) never make the tests' answers stale.
    os.environ["CLAUDE_PROJECT_DIR"] = tempfile.mkdtemp(prefix="xcindex-test-project-")
    # The compiled ingester is built once per test session, not once per fresh cache folder.
    os.environ.setdefault("XCINDEX_NATIVE_DIR", tempfile.mkdtemp(prefix="xcindex-test-native-"))
    # Hypothesis keeps a cache (and, unless told not to, an example database) in
    # `.hypothesis/` of the working directory: the tests write nothing into the repository.
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(tempfile.mkdtemp(prefix="xcindex-test-hypothesis-"))
    if SWIFT_BIN.is_dir() and str(SWIFT_BIN) not in os.environ.get("PATH", ""):
        os.environ["PATH"] = f"{SWIFT_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.scoring import MEASURED, RECORDED

    if RECORDED:
        terminalreporter.section("recall and precision against the hand-checked answers")
        for result in RECORDED:
            terminalreporter.write_line(str(result))
    if MEASURED:
        terminalreporter.section("measured behaviour")
        for line in MEASURED:
            terminalreporter.write_line(line)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def swift_executable() -> str:
    swift = shutil.which("swift")
    if swift is None:
        pytest.fail("The Swift toolchain is required for this test (no `swift` on PATH or in /opt/swift).")
    return swift


def build_package(package: Path) -> Path:
    """`swift build --build-tests` (incremental) and return the package's index store."""
    result = subprocess.run(
        [swift_executable(), "build", "--build-tests", "--package-path", str(package)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"swift build failed for {package}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    stores = sorted((package / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    if not stores:
        pytest.fail(f"swift build produced no index store under {package / '.build'}")
    return stores[0]


@pytest.fixture(scope="session")
def canary_store() -> Path:
    """The fixture's real index store, built once per session in the fixture's own .build."""
    return build_package(CANARY)


@pytest.fixture(scope="session")
def canary_root(canary_store: Path) -> Path:
    return CANARY


def copy_package(source: Path, destination: Path) -> Path:
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    return destination


@pytest.fixture
def canary_copy(tmp_path: Path) -> Path:
    """A private, unbuilt copy of the fixture, for tests that edit or rebuild it."""
    return copy_package(CANARY, tmp_path / "SwiftCanary")


def canary_source_count(root: Path = CANARY) -> int:
    """The fixture's Swift and C sources (one live unit each; a header has none): counted,
    not written down, so that a case added to the fixture does not change what these tests
    mean."""
    return sum(
        1
        for folder in ("Sources", "Tests")
        for suffix in ("*.swift", "*.c")
        for _ in (root / folder).rglob(suffix)
    )


def load_expected(name: str) -> Any:
    return json.loads((EXPECTED / name).read_text(encoding="utf-8"))


def canary_path(relative: str, root: Path = CANARY) -> str:
    return str((root / relative).resolve())


def loose(answer: Mapping[str, Any]) -> dict[str, Any]:
    """An answer's JSON as a plain dict, for tests that index into it freely (the answers'
    exact shapes are typed, and checked against their outputSchema elsewhere)."""
    return dict(answer)
