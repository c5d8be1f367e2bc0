"""change_impact's faults, each with its documented message (docs/tools.md, Errors): no git,
not a repository, an unknown revision. And a clean tree answers with nothing changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from tests.conftest import CANARY
from xcindex.engine import Engine
from xcindex.errors import XcindexError

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


async def test_a_folder_outside_git_is_a_clear_error(canary_store: Path, tmp_path: Path) -> None:
    # The fixture's package, copied with its index to a folder no git repository holds.
    copy = tmp_path / "SwiftCanary"
    shutil.copytree(CANARY, copy, symlinks=True)
    async with Engine() as engine:
        with pytest.raises(XcindexError, match="is not inside a git repository: change_impact compares"):
            await engine.change_impact(project_path=str(copy))


async def test_an_unknown_revision_is_named(canary_store: Path) -> None:
    async with Engine() as engine:
        with pytest.raises(XcindexError, match="git does not know the revision 'no-such-revision-xyz'"):
            await engine.change_impact(
                base="no-such-revision-xyz", project_path=str(CANARY), index_store_path=None
            )


async def test_without_git_on_path_it_says_to_install_git(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Engine() as engine:
        await engine.settle(index_store_path=str(canary_store))
        monkeypatch.setenv("PATH", str(tmp_path))
        with pytest.raises(XcindexError, match="change_impact needs git, and no `git` is on PATH"):
            await engine.change_impact(project_path=str(CANARY))


async def test_limited_to_an_unchanged_file_nothing_changed(canary_store: Path) -> None:
    unchanged = CANARY / "Sources/CanaryCore/Box.swift"
    async with Engine() as engine:
        answer = (await engine.change_impact(files=[str(unchanged)], project_path=str(CANARY))).to_json()
    assert answer["changedFiles"] == []
    assert answer["changedSymbols"] == []
    assert answer["swiftTestCommand"] is None
    assert answer["rangesApproximate"] is True


async def test_a_slow_git_does_not_delay_another_question_about_the_store(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git is read before the index is asked, never while the database is held: a named fault
    (a git that waits to be released, in front of the real one) holds change_impact, and
    find_references about the same store answers meanwhile."""
    real_git = shutil.which("git")
    assert real_git is not None
    started, release, first = tmp_path / "git-started", tmp_path / "git-release", tmp_path / "first"
    os.mkfifo(started)
    slow = tmp_path / "bin" / "git"
    slow.parent.mkdir()
    slow.write_text(
        "#!/bin/sh\n"
        f"if mkdir {first} 2>/dev/null; then echo started > {started}; fi\n"
        f"while [ ! -e {release} ]; do sleep 0.05; done\n"
        f'exec {real_git} "$@"\n'
    )
    slow.chmod(0o755)
    async with Engine() as engine:
        await engine.settle(project_path=str(CANARY))
        monkeypatch.setenv("PATH", f"{slow.parent}{os.pathsep}{os.environ['PATH']}")
        order: list[str] = []
        async with anyio.create_task_group() as tg:

            async def impact() -> None:
                await engine.change_impact(project_path=str(CANARY))
                order.append("change_impact")

            tg.start_soon(impact)
            try:
                with anyio.fail_after(30):
                    async with await anyio.open_file(started) as signal:
                        await signal.read()  # the first git command has started, and waits
                    references = await engine.find_references("UserService", project_path=str(CANARY))
                order.append("find_references")
            finally:
                release.touch()
        assert references.sites, "find_references answered with the store's sites"
        assert order == ["find_references", "change_impact"], order
