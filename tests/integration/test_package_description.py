"""SwiftPM's description of a package is read once and kept on disk: a one-shot CLI call
(`xcindex impact`, `xcindex blast`) does not run `swift package describe` again while the
manifest and the folders of sources are as they were, and does when either changed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, swift_executable
from xcindex.project import package

pytestmark = pytest.mark.toolchain


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    swift_executable()  # the toolchain is required (in CI, a missing one fails)
    root = tmp_path / "SwiftCanary"
    root.mkdir()
    shutil.copy2(CANARY / "Package.swift", root / "Package.swift")
    for top in ("Sources", "Tests"):
        shutil.copytree(CANARY / top, root / top)
    return root


@pytest.fixture
def swiftpm_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The SwiftPM commands run (real ones), with the process's own cache emptied first."""
    package._cache.clear()
    runs: list[list[str]] = []
    real = subprocess.run

    def counted(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        runs.append(command)
        return real(command, **kwargs)

    monkeypatch.setattr(subprocess, "run", counted)
    yield runs
    package._cache.clear()


def describe(root: Path, scratch: Path) -> package.PackageDescription:
    package._cache.clear()  # as a new process would start
    found = package.describe_package(root, scratch)
    assert found is not None
    return found


def test_a_second_process_reads_the_saved_description_until_a_folder_or_the_manifest_changes(
    copy: Path, tmp_path: Path, swiftpm_runs: list[list[str]]
) -> None:
    scratch = tmp_path / "describe"
    first = describe(copy, scratch)
    assert len(swiftpm_runs) == 1
    core = next(t for t in first.targets if t.name == "CanaryCore")
    assert str((copy / "Sources/CanaryCore/UserService.swift").resolve()) in core.sources

    again = describe(copy, scratch)
    assert len(swiftpm_runs) == 1  # read from disk: SwiftPM not run
    assert again == first

    # A new file in a target's folder: SwiftPM is asked again, and lists it.
    new = copy / "Sources/CanaryCore/NewThing.swift"
    new.write_text("struct NewThing {}\n")
    added = describe(copy, scratch)
    assert len(swiftpm_runs) == 2
    assert str(new.resolve()) in next(t for t in added.targets if t.name == "CanaryCore").sources

    # A removed one likewise.
    new.unlink()
    removed = describe(copy, scratch)
    assert len(swiftpm_runs) == 3
    assert str(new.resolve()) not in next(t for t in removed.targets if t.name == "CanaryCore").sources

    # The manifest rewritten: an executable product added is seen.
    manifest = copy / "Package.swift"
    manifest.write_text(
        manifest.read_text().replace(
            "    ],\n    targets:",
            '        .executable(name: "calc", targets: ["canary-calc"]),\n    ],\n    targets:',
        )
    )
    assert ("calc", "canary-calc") not in removed.executable_products
    changed = describe(copy, scratch)
    assert len(swiftpm_runs) == 4
    assert ("calc", "canary-calc") in changed.executable_products
    assert describe(copy, scratch) == changed
    assert len(swiftpm_runs) == 4
