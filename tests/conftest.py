"""Shared fixtures: the built SwiftCanary package, its hand-checked answers, both backends.

Tests that need the real toolchain fail (never skip) when it is missing: a green run
without Swift would prove nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
    return index_store_of(package)


BUILD_LOCK = "xcindex-tests.lock"
"""In a package's `.build`: held shared by every test session using the package's build in
place, exclusively by the one building it."""
BUILT_STAMP = "xcindex-tests.built"
"""In a package's `.build`: touched when a test session's build of it succeeded."""


def built_since_last_edit(package: Path) -> bool:
    """Whether a test session built `package` after its sources last changed."""
    stamp = package / ".build" / BUILT_STAMP
    if not stamp.exists():
        return False
    sources = [package / "Package.swift", *(package / "Sources").rglob("*"), *(package / "Tests").rglob("*")]
    return max(path.stat().st_mtime_ns for path in sources) <= stamp.stat().st_mtime_ns


@contextmanager
def built_in_place(package: Path) -> Iterator[Path]:
    """`package` built in its own `.build` (its index store), and left as built while the
    block runs, whatever other test sessions in this checkout do at the same time.

    A build rewrites SwiftPM's files (`description.json`, `build.db`, output file maps)
    even when nothing changed, so no session may build while another reads: the one that
    gets the lock file exclusively builds, then holds it shared like the others; one that
    finds it taken waits while a build runs, then reads along if that build is newer than
    the sources (else it waits for every reader to end, and builds)."""
    folder = package / ".build"
    folder.mkdir(exist_ok=True)
    with (folder / BUILD_LOCK).open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(lock, fcntl.LOCK_SH)
            if built_since_last_edit(package):
                yield index_store_of(package)
                return
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_EX)
        store = build_package(package)
        (folder / BUILT_STAMP).touch()
        fcntl.flock(lock, fcntl.LOCK_SH)
        yield store


def index_store_of(package: Path) -> Path:
    stores = sorted((package / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    if not stores:
        pytest.fail(f"swift build produced no index store under {package / '.build'}")
    return stores[0]


@pytest.fixture(scope="session")
def canary_store() -> Iterator[Path]:
    """The fixture's real index store, built once per session in the fixture's own .build
    (tests compare paths with fixtures/SwiftCanary and its hand-checked answers), and kept
    as built for the whole session (`built_in_place`)."""
    with built_in_place(CANARY) as store:
        yield store


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
