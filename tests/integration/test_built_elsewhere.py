"""A package copied or moved after its build: its `.build` index names the ORIGINAL folder's
files. Every answer and `status` say so (`index_built_elsewhere`, never `complete`), naming
the folder it was built in and what to do; the overlay is off and plan_rename refuses. A
project reached through a symlink to where it was built is the same project: no warning.

Real: the built fixture is copied with its `.build` (`cp -a`), and asked through the Engine
and the CLI (docs/tools.md, "An index built in another folder").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANARY, load_expected
from xcindex import Engine, EngineConfig
from xcindex.tools.elsewhere import BuiltElsewhereError
from xcindex.vocabulary import Completeness, RefusalReason, WarningCode

pytestmark = pytest.mark.toolchain

XCINDEX = str(Path(sys.executable).parent / "xcindex")
CODE = str(WarningCode.INDEX_BUILT_ELSEWHERE)
ORIGINAL = str(CANARY.resolve())


@pytest.fixture(scope="module")
def copied(canary_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built fixture copied as `cp -a` copies it (its .build included), in a git repository
    of its own with one committed edit base, so that change_impact has a diff to read."""
    copy = tmp_path_factory.mktemp("elsewhere") / "SwiftCanary"
    subprocess.run(["cp", "-a", str(CANARY), str(copy)], check=True, timeout=120)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(copy)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    subprocess.run([*git, "add", "Package.swift", "Sources", "Tests"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-qm", "copy"], check=True, timeout=60)
    return copy


@pytest.fixture(scope="module")
def symlinked(canary_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture where it was built, reached through a symlink."""
    link = tmp_path_factory.mktemp("linked") / "Canary"
    link.symlink_to(CANARY)
    return link


def assert_names_the_original(message: str, copy: Path) -> None:
    assert f"built in {ORIGINAL}, not in this project ({copy.resolve()})" in message, message
    assert f"rm -rf '{copy.resolve() / '.build'}'" in message
    assert f"swift build --build-tests --package-path '{copy.resolve()}'" in message


@pytest.mark.anyio
async def test_a_copied_package_says_every_answer_is_about_the_folder_it_was_built_in(copied: Path) -> None:
    project = str(copied)
    edited = copied / "Sources" / "CanaryCore" / "UserService.swift"
    async with Engine(EngineConfig(ingest_workers=1)) as engine:
        # A question waits for the copy's first ingestion (status would answer at once, indexing).
        refs = await engine.find_references("UserService", project_path=project)
        data = refs.to_json()
        paths = {row["path"] for row in data["results"]}
        # The answer still names the sites (real, in the other folder: the files of the
        # hand-checked references there), and says whose.
        assert paths == {
            f"{ORIGINAL}/{site['path']}" for site in load_expected("references.json")["UserService"]
        }
        assert data["completeness"] == "stale"
        assert data["warnings"][0]["code"] == CODE

        status = await engine.status(project_path=project)
        assert status.completeness is Completeness.STALE
        assert status.built_in == ORIGINAL
        assert [w.code for w in status.warnings][:1] == [WarningCode.INDEX_BUILT_ELSEWHERE]
        assert_names_the_original(status.warnings[0].message, copied)
        assert "not of this project: rebuild here" in status.summary()

        # Worked out once per refresh, not per question: the same finding both times.
        core = engine._core
        location = await core.locate(project, None)
        handle = await core.index_for(location)
        first = await core.built_elsewhere(location, handle, await handle.state())
        assert first is not None
        assert first is await core.built_elsewhere(location, handle, await handle.state())

        # A file of this folder is not in the index: the error says why, with the code.
        with pytest.raises(BuiltElsewhereError) as raised:
            await engine.blast_radius(str(edited), project_path=project)
        assert raised.value.code is WarningCode.INDEX_BUILT_ELSEWHERE
        assert "is not a source file of this index" in raised.value.message
        assert_names_the_original(raised.value.message, copied)

        # An edit here: change_impact finds no indexed file, and does not pretend otherwise.
        edited.write_text(edited.read_text(encoding="utf-8") + "\n// edited in the copy\n", encoding="utf-8")
        impact = (await engine.change_impact(project_path=project)).to_json()
        assert impact["completeness"] == "stale"
        assert impact["warnings"][0]["code"] == CODE
        assert "overlayFiles" not in impact

        plan = await engine.plan_rename(
            "s:10CanaryCore11UserServiceC", "AccountService", project_path=project, reconcile_with_lsp=False
        )
        assert plan.refusal is not None
        assert plan.refusal.reason is RefusalReason.INDEX_BUILT_ELSEWHERE
        assert not plan.ranges
        assert [code for code, _ in plan.warnings] == [WarningCode.INDEX_BUILT_ELSEWHERE]


@pytest.mark.anyio
async def test_a_project_reached_through_a_symlink_to_where_it_was_built_does_not_warn(
    symlinked: Path,
) -> None:
    async with Engine(EngineConfig(ingest_workers=1)) as engine:
        status = await engine.status(project_path=str(symlinked))
        refs = (await engine.find_references("UserService", project_path=str(symlinked))).to_json()
        stored = await engine.status(index_store_path=str(status.state.store_path))
    assert status.built_in is None
    assert CODE not in [w.code for w in status.warnings]
    assert CODE not in [w["code"] for w in refs["warnings"]]
    assert refs["results"]
    # An index given by its store alone has no project folder to compare with.
    assert stored.built_in is None


def xcindex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "TERM")}
    return subprocess.run(
        [XCINDEX, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600, check=False
    )


def test_the_cli_in_a_copied_package_warns_and_never_says_complete(copied: Path, symlinked: Path) -> None:
    status = xcindex("status", cwd=copied)
    assert status.returncode == 0, status.stderr
    assert f"stale (built in {ORIGINAL}, not here" in status.stdout
    assert "complete" not in status.stdout
    assert f"warning [{CODE}]: This index was built in {ORIGINAL}" in status.stderr
    assert_names_the_original(status.stderr, copied)

    refs = xcindex("refs", "UserService", cwd=copied)
    assert refs.returncode == 0, refs.stderr
    assert f"{ORIGINAL}/Sources/CanaryCore/UserService.swift" in refs.stdout
    assert f"warning [{CODE}]" in refs.stderr

    rename = xcindex("rename", "UserService", "AccountService", "--no-lsp", cwd=copied)
    assert rename.returncode == 2
    assert f"refused ({RefusalReason.INDEX_BUILT_ELSEWHERE})" in rename.stderr

    # A file of this folder never becomes fresh (it is not in the index): the wait says why.
    wait = xcindex(
        "wait", str(copied / "Sources" / "CanaryCore" / "Box.swift"), "--timeout-seconds", "1", cwd=copied
    )
    assert "not_indexed" in wait.stdout
    assert f"warning [{CODE}]" in wait.stderr

    here = xcindex("status", cwd=symlinked)
    assert here.returncode == 0, here.stderr
    assert CODE not in here.stdout + here.stderr
    assert "built in" not in here.stdout


def session_start(project: Path, tmp_path: Path) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CLAUDE_")}
    env.update(CLAUDE_PROJECT_DIR=str(project), TMPDIR=str(tmp_path))
    payload = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"})
    result = subprocess.run(
        [XCINDEX, "hook", "session-start"],
        input=payload.encode(),
        capture_output=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    context: str = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def test_the_session_start_hook_says_where_a_copied_package_was_built(
    copied: Path, symlinked: Path, tmp_path: Path
) -> None:
    """The hook reads no database, only SwiftPM's build description beside the store: in the
    copy it names the original folder and the rebuild; where the package was built, or
    through a symlink to it, it says the index is current (the session's `swift build` has
    just compiled every source the fixture has, so none is newer than its units)."""
    warned = session_start(copied, tmp_path)
    assert warned.startswith(f"[xcindex] The index of SwiftCanary was built in {ORIGINAL}, not in "), warned
    assert CODE in warned
    assert f"rm -rf '{copied}/.build' && swift build --build-tests --package-path '{copied}'" in warned
    for here in (CANARY, symlinked):
        context = session_start(here, tmp_path)
        assert "was built in" not in context, context
        assert context.startswith(f"[xcindex] Index is current for {here.name} (last built "), context
        assert context.endswith("): the xcindex tools (mcp__xcindex__*) answer from it."), context
