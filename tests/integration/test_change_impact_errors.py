"""change_impact's faults, each with its documented message (docs/tools.md, Errors): no git,
not a repository, an unknown revision. And a clean tree answers with nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CANARY
from xcindex.engine import Engine
from xcindex.tools.graph.change_impact import change_impact
from xcindex.vocabulary import XcindexError

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


async def test_a_folder_outside_git_is_a_clear_error(canary_store: Path, tmp_path: Path) -> None:
    async with Engine() as engine:
        with pytest.raises(XcindexError, match="is not inside a git repository: change_impact compares"):
            await engine.run_query(
                lambda db: change_impact(db, project_path=str(tmp_path)), index_store_path=str(canary_store)
            )


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
            await engine.run_query(
                lambda db: change_impact(db, project_path=str(CANARY)), index_store_path=str(canary_store)
            )


async def test_limited_to_an_unchanged_file_nothing_changed(canary_store: Path) -> None:
    unchanged = CANARY / "Sources/CanaryCore/Box.swift"
    async with Engine() as engine:
        answer = (await engine.change_impact(files=[str(unchanged)], project_path=str(CANARY))).to_json()
    assert answer["changedFiles"] == []
    assert answer["changedSymbols"] == []
    assert answer["swiftTestCommand"] is None
    assert answer["rangesApproximate"] is True
