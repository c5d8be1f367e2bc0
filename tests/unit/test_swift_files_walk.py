"""The session-start hook's walk (candidates.swift_files_newer_than) finds the Swift files
`os.walk` finds: pruned folders and folders that are symbolic links left out, a link to a
Swift file and a folder named like one handled as os.walk handles them."""

from __future__ import annotations

import os
from pathlib import Path

from xcindex.project.candidates import PRUNED_DIRS, swift_files_newer_than


def _by_os_walk(root: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in PRUNED_DIRS]
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".swift") and os.path.exists(path):
                found.add(path)
    return found


def test_the_walk_finds_what_os_walk_finds(tmp_path: Path) -> None:
    root = tmp_path / "Package"
    for folder in ("Sources/Core/Deep/Deeper", "Tests/CoreTests", ".build/debug", ".git", "Odd.swift"):
        (root / folder).mkdir(parents=True)
    for file in (
        "Package.swift",
        "Sources/Core/A.swift",
        "Sources/Core/Deep/Deeper/B.swift",
        "Tests/CoreTests/ATests.swift",
        ".build/debug/Generated.swift",
        ".git/Stash.swift",
        "Odd.swift/Inside.swift",
        "Sources/Core/notes.md",
    ):
        (root / file).write_text("")
    (tmp_path / "Outside").mkdir()
    (tmp_path / "Outside" / "Linked.swift").write_text("")
    (root / "Sources" / "Linked").symlink_to(tmp_path / "Outside")  # a folder link: not entered
    (root / "Sources" / "Core" / "Alias.swift").symlink_to(tmp_path / "Outside" / "Linked.swift")
    (root / "Sources" / "Core" / "Dangling.swift").symlink_to(tmp_path / "missing.swift")

    found = swift_files_newer_than(str(root), 0)
    assert set(found) == _by_os_walk(root)
    assert len(found) == len(set(found))
    assert str(root / "Sources" / "Core" / "Alias.swift") in found
    assert not any("/.build/" in path or "/Linked/" in path for path in found)


def test_only_files_newer_than_the_time_newest_first(tmp_path: Path) -> None:
    for index, name in enumerate(("Old.swift", "New.swift", "Newest.swift")):
        path = tmp_path / name
        path.write_text("")
        os.utime(path, ns=(index * 10**9, index * 10**9))
    assert swift_files_newer_than(str(tmp_path), 0) == [
        str(tmp_path / "Newest.swift"),
        str(tmp_path / "New.swift"),
    ]
