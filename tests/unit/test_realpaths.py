"""RealPaths answers as `os.path.realpath` does, one folder at a time: symbolic links to
folders and to files, relative and absolute, chained, dangling, looping, and paths that do
not exist (yet) or are spelled with `..`, `.` or `//`."""

from __future__ import annotations

import os
from pathlib import Path

from xcindex.project.realpaths import RealPaths


def _tree(root: Path) -> list[str]:
    (root / "real" / "Sources" / "Core").mkdir(parents=True)
    (root / "real" / "Sources" / "Core" / "A.swift").write_text("")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "B.swift").write_text("")
    (root / "link").symlink_to(root / "real")  # absolute, to a folder
    (root / "real" / "Sources" / "rel").symlink_to("Core")  # relative, to a folder
    (root / "real" / "Sources" / "Core" / "B.swift").symlink_to("../../../elsewhere/B.swift")  # to a file
    (root / "chain").symlink_to("link")  # a link to a link
    (root / "dangling").symlink_to(root / "missing")
    (root / "loop").symlink_to("loop")
    spellings = [
        "real/Sources/Core/A.swift",
        "link/Sources/Core/A.swift",
        "link/Sources/rel/A.swift",
        "chain/Sources/rel/B.swift",
        "real/Sources/Core/B.swift",
        "link/Sources/Core/New.swift",  # not written yet
        "dangling/A.swift",
        "loop/A.swift",
        "link/Sources/../Sources/Core/A.swift",
        "link/Sources/rel/../A.swift",  # `..` after a link: realpath resolves the link first
        "link/./Sources//Core/A.swift",
        "nowhere/at/all.swift",
        "link",
        "link/Sources/rel",
    ]
    return [str(root / spelled) for spelled in spellings]


def test_every_spelling_resolves_as_realpath_does(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    paths += ["relative/A.swift", "/", str(tmp_path) + "/"]
    real_path = RealPaths()
    for _ in range(2):  # the second pass answers from what the first resolved
        for path in paths:
            assert real_path(path) == os.path.realpath(path), path


def test_folders_resolve_as_realpath_does(tmp_path: Path) -> None:
    real_path = RealPaths()
    for path in _tree(tmp_path):
        folder = os.path.dirname(path)
        assert real_path.folder(folder) == os.path.realpath(folder), folder


def test_a_new_instance_sees_a_link_changed_since(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "current").symlink_to("one")
    path = str(tmp_path / "current" / "F.swift")
    assert RealPaths()(path) == str(tmp_path / "one" / "F.swift")
    (tmp_path / "current").unlink()
    (tmp_path / "current").symlink_to("two")
    assert RealPaths()(path) == str(tmp_path / "two" / "F.swift")
