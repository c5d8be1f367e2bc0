"""The plugin's set-up when things go wrong, with the exact text a user sees.

- A set-up stopped (SIGTERM) stops its pip and leaves no lock or scratch folder; one killed
  outright (SIGKILL) leaves a lock held by a dead pid and a pip still running: the next
  set-up stops that pip, keeps the virtual environment and finishes.
- Two sessions started together share one set-up and both end up answering.
- Plugin files without the write bit (a read-only cache) install; the plugin folder is not
  touched.
- A data folder that cannot be written is named, with the fix, by `--setup`, the
  SessionStart hook and every tool call.
- Without a Python >= 3.11 the launcher says what it found and what to install; Homebrew's
  and python.org's folders on a Mac are searched (simulated: the launcher's copy points them
  at folders of this test, as the toolchain tests simulate Xcode).

Folder modes are what a user meets only when the set-up is not root's: as root, those tests
run the launcher as `nobody` (`setpriv`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CANARY
from tests.e2e.plugin_harness import (
    INSTALL_WITHIN_S,
    VERSION,
    as_user,
    call_until_answered,
    clean_env,
    give_to_user,
    launcher,
    leftovers,
    plugin_cache_copy,
    processes_naming,
    python_for_user,
)
from tests.line_client import LineClient
from xcindex.plugin.setup import pid_alive

pytestmark = [pytest.mark.toolchain]


def start_setup(plugin_root: Path, env: dict[str, str], output: Path) -> subprocess.Popen[bytes]:
    """`bin/xcindex --setup` in a session of its own (as /xcindex-setup runs it)."""
    with output.open("wb") as sink:
        return subprocess.Popen(
            [launcher(plugin_root), "--setup"], env=env, stdout=sink, stderr=sink, start_new_session=True
        )


def pip_started(data: Path, within_s: float = 300.0) -> int:
    """The pid of the set-up's pip, once it runs."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            progress = (data / "install.lock" / "progress").read_text()
            pip = int((data / "install.lock" / "pip.pid").read_text())
        except (OSError, ValueError):
            time.sleep(0.05)
            continue
        if progress.startswith("3\t"):
            return pip
        time.sleep(0.05)
    raise AssertionError(f"pip did not start within {within_s} s")


def test_stopped_and_killed_set_ups_resume_and_leave_nothing_behind(tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    env = clean_env(tmp_path, plugin_root)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    venv = data / f"venv-{VERSION}"

    # SIGTERM (a user's Ctrl-C, a shutdown): pip stops with it, the lock and scratch go.
    stopped = start_setup(plugin_root, env, tmp_path / "stopped.txt")
    pip = pip_started(data)
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=60) == 130
    said = (tmp_path / "stopped.txt").read_text()
    assert said.endswith("[xcindex] The set-up was stopped (SIGTERM); the next start resumes it.\n"), said
    assert not pid_alive(pip)
    assert leftovers(data) == []
    assert (venv / "bin" / "python").exists()
    assert not (venv / ".xcindex-ready").exists()

    # SIGKILL of the installer alone: it cannot clean up, and its pip is left running.
    killed = start_setup(plugin_root, env, tmp_path / "killed.txt")
    orphan = pip_started(data)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert (data / "install.lock" / "pid").read_text() == f"{killed.pid}\n", "a lock held by a dead pid"

    # The next set-up takes the lock over, stops that pip, keeps the environment, finishes.
    resumed = subprocess.run(
        [launcher(plugin_root), "--setup"], env=env, capture_output=True, text=True, timeout=INSTALL_WITHIN_S
    )
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"[xcindex] Resuming in {venv} (an earlier set-up was interrupted): pip keeps what it installed.\n"
        in resumed.stderr
    )
    assert resumed.stderr.rstrip().split("\n")[-1].startswith(f"[xcindex] xcindex {VERSION} is installed (")
    assert resumed.stderr.rstrip().endswith(f" s): {venv}/bin/xcindex")
    assert not pid_alive(orphan)
    assert (venv / ".xcindex-ready").read_text() == f"{VERSION}\n"
    assert leftovers(data) == []


def test_two_sessions_started_together_share_one_set_up(canary_store: Path, tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    env = {**clean_env(tmp_path, plugin_root), "XCINDEX_FIRST_CALL_WAIT": "3"}
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    sessions = [LineClient([launcher(plugin_root), "serve"], env, cwd=CANARY) for _ in range(2)]
    try:
        first_answers = [session.initialize() for session in sessions]
        assert max(first_answers) < 10, first_answers
        arguments = {"symbolName": "UserService", "projectPath": str(CANARY)}
        for session in sessions:
            answer, _ = call_until_answered(session, arguments, "find_symbol", INSTALL_WITHIN_S)
            assert answer["result"]["isError"] is False, answer
            assert answer["result"]["structuredContent"]["results"][0]["name"] == "UserService"
    finally:
        codes = [session.close() for session in sessions]
    assert codes == [0, 0]
    log = (data / "install.log").read_text()
    assert log.count("First start: installing") == 1, log
    assert leftovers(data) == []


@pytest.fixture
def user_folder() -> Iterator[Path]:
    """A folder the unprivileged user can reach (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="xcindex-user-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path, dirs, _ in os.walk(folder):
            for name in dirs:
                os.chmod(os.path.join(path, name), 0o755)
        shutil.rmtree(folder)


def user_env(folder: Path, plugin_root: Path) -> dict[str, str]:
    """A new user's environment for `as_user`: their own HOME, TMPDIR and pip cache."""
    tools = folder / "path-bin"
    tools.mkdir()
    (tools / "python3").symlink_to(python_for_user())
    home = give_to_user(folder / "home")
    home.mkdir(exist_ok=True)
    give_to_user(home)
    scratch = folder / "tmp"
    scratch.mkdir()
    give_to_user(scratch)
    return {
        **{
            key: value
            for key, value in clean_env(folder, plugin_root, pip_cache=None).items()
            if key not in ("HOME", "TMPDIR", "PATH", "XCINDEX_CACHE_DIR")
        },
        "HOME": str(home),
        "TMPDIR": f"{scratch}/",
        "PATH": f"{tools}:/usr/bin:/bin",
        "CLAUDE_PLUGIN_DATA": str(home / ".claude" / "plugins" / "data" / "xcindex-xcindex"),
    }


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    return {
        str(path.relative_to(root)): (path.lstat().st_mode, path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in [root, *root.rglob("*")]
    }


def test_read_only_plugin_files_install(user_folder: Path) -> None:
    plugin_root = plugin_cache_copy(user_folder / "plugin")
    for path in [*plugin_root.rglob("*"), plugin_root]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = user_env(user_folder, plugin_root)
    before = tree(plugin_root)
    result = subprocess.run(
        as_user([launcher(plugin_root), "--setup"]),
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_WITHIN_S,
    )
    venv = Path(env["CLAUDE_PLUGIN_DATA"]) / f"venv-{VERSION}"
    assert result.returncode == 0, result.stderr
    assert result.stderr.rstrip().endswith(f" s): {venv}/bin/xcindex"), result.stderr
    assert tree(plugin_root) == before, "the set-up wrote into the plugin folder"
    assert leftovers(Path(env["CLAUDE_PLUGIN_DATA"])) == []


def test_an_unwritable_data_folder_is_named_with_its_fix(user_folder: Path) -> None:
    plugin_root = plugin_cache_copy(user_folder / "plugin")
    env = {**user_env(user_folder, plugin_root), "XCINDEX_FIRST_CALL_WAIT": "60"}
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    data.mkdir(parents=True)
    give_to_user(Path(env["HOME"]))
    data.chmod(0o555)
    problem = (
        f"its data folder {data} cannot be written (Permission denied). "
        "Make it writable (or free some space), then run /xcindex-setup."
    )

    setup = subprocess.run(
        as_user([launcher(plugin_root), "--setup"]), env=env, capture_output=True, text=True, timeout=60
    )
    assert (setup.returncode, setup.stderr) == (1, f"[xcindex] Cannot set up xcindex: {problem}\n")

    hook = subprocess.run(
        as_user([launcher(plugin_root), "hook", "session-start"]),
        env=env,
        input=b"{}",
        capture_output=True,
        timeout=30,
    )
    assert hook.returncode == 0
    assert json.loads(hook.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": f"[xcindex] xcindex cannot set itself up: {problem}",
        }
    }

    server = LineClient(as_user([launcher(plugin_root), "serve"]), env)
    try:
        server.initialize()
        asked = time.monotonic()
        answer = server.request(
            1, "tools/call", {"name": "status", "arguments": {"projectPath": str(CANARY)}}
        )
        assert time.monotonic() - asked < 10, "a set-up that cannot start is said at once, not after the wait"
        assert answer["result"] == {
            "content": [{"text": f"Error: xcindex cannot set itself up: {problem}", "type": "text"}],
            "isError": True,
        }
    finally:
        assert server.close() == 0
    assert list(data.iterdir()) == []


# --- finding a Python ------------------------------------------------------------------------


def fake_python(path: Path, answer: str) -> None:
    """A named stand-in for a Python the launcher must refuse: it answers the launcher's probe
    as that Python would (`old 3.9.6`: too old; `novenv 3.11.2`: no venv module)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {answer}\n")
    path.chmod(0o755)


def launcher_with_mac_folders(plugin_root: Path, mac: Path) -> Path:
    """The launcher with Homebrew's and python.org's folders moved under `mac`."""
    source = (plugin_root / "bin" / "xcindex").read_text()
    moved = source.replace(
        'MAC_PYTHON_FOLDERS="/opt/homebrew/bin /usr/local/bin"',
        f'MAC_PYTHON_FOLDERS="{mac}/opt/homebrew/bin {mac}/usr/local/bin"',
    ).replace("MAC_FRAMEWORK=/Library/Frameworks", f"MAC_FRAMEWORK={mac}/Library/Frameworks")
    assert moved.count(str(mac)) == 3, "the launcher's Mac folders moved"
    (plugin_root / "bin" / "xcindex").write_text(moved)
    return plugin_root / "bin" / "xcindex"


def bare_path(folder: Path) -> str:
    """A PATH with the tools the launcher uses and no Python at all."""
    folder.mkdir()
    for tool in ("sed", "head", "cat", "dirname", "mkdir", "rm"):
        found = shutil.which(tool)
        assert found is not None
        (folder / tool).symlink_to(found)
    return str(folder)


def test_without_a_python_311_the_launcher_says_what_it_found(tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    mac = tmp_path / "mac"
    program = str(launcher_with_mac_folders(plugin_root, mac))
    fakes = tmp_path / "fakes"
    fake_python(fakes / "python3", "old 3.9.6")
    fake_python(fakes / "python3.11", "novenv 3.11.2")
    env = {**clean_env(tmp_path, plugin_root), "PATH": f"{fakes}:{bare_path(tmp_path / 'tools')}"}
    reason = (
        f"no Python 3.11 or later with venv (found {fakes}/python3 is 3.9.6 (too old); {fakes}/python3.11 "
        "(3.11.2) lacks the venv module). Install one (macOS: brew install python@3.12, or python.org's "
        "installer; Debian/Ubuntu: apt install python3 python3-venv), or set XCINDEX_PYTHON to one, then "
        "run /xcindex-setup."
    )

    for command in (["--setup"], ["--python"], ["serve"]):
        said = subprocess.run([program, *command], env=env, capture_output=True, text=True, timeout=30)
        assert (said.returncode, said.stdout, said.stderr) == (
            1,
            "",
            f"[xcindex] Cannot set up xcindex: {reason}\n",
        )
    hook = subprocess.run(
        [program, "hook", "session-start"], env=env, input="{}", capture_output=True, text=True, timeout=30
    )
    assert hook.returncode == 0
    assert json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"] == (
        f"[xcindex] xcindex cannot set itself up: {reason}"
    )
    for quiet in ("post-tool-use", "pre-tool-use"):
        assert (
            subprocess.run(
                [program, "hook", quiet], env=env, input=b"{}", capture_output=True, timeout=30
            ).stdout
            == b""
        )

    # Nothing anywhere: the message names where it looked.
    bare = {**env, "PATH": str(tmp_path / "tools")}
    said = subprocess.run([program, "--python"], env=bare, capture_output=True, text=True, timeout=30)
    assert said.stderr == (
        "[xcindex] Cannot set up xcindex: no Python 3.11 or later with venv (none on PATH, in "
        f"{mac}/opt/homebrew/bin {mac}/usr/local/bin or in {mac}/Library/Frameworks/Python.framework/Versions). "
        "Install one (macOS: brew install python@3.12, or python.org's installer; Debian/Ubuntu: apt install "
        "python3 python3-venv), or set XCINDEX_PYTHON to one, then run /xcindex-setup.\n"
    )

    # python.org's installer, then Homebrew (which comes first), then XCINDEX_PYTHON (first of all).
    framework = mac / "Library" / "Frameworks" / "Python.framework" / "Versions" / "3.12" / "bin" / "python3"
    framework.parent.mkdir(parents=True)
    framework.symlink_to(python_for_user())
    found = subprocess.run([program, "--python"], env=env, capture_output=True, text=True, timeout=30)
    assert (found.returncode, found.stdout) == (0, f"{framework}\n")
    homebrew = mac / "opt" / "homebrew" / "bin" / "python3.13"
    homebrew.parent.mkdir(parents=True)
    homebrew.symlink_to(python_for_user())
    found = subprocess.run([program, "--python"], env=env, capture_output=True, text=True, timeout=30)
    assert found.stdout == f"{homebrew}\n"
    chosen = {**env, "XCINDEX_PYTHON": str(framework)}
    assert (
        subprocess.run([program, "--python"], env=chosen, capture_output=True, text=True, timeout=30).stdout
        == f"{framework}\n"
    )
    assert processes_naming(str(plugin_root)) == []


def test_a_failed_set_up_is_tried_again_at_the_next_session(tmp_path: Path) -> None:
    """The next session says why the last set-up failed and tries again; meanwhile a tool call
    is told how the new one goes, not the old failure. (Here it fails again: the plugin's
    pyproject.toml is damaged, and the new note says so.)"""
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    env = clean_env(tmp_path, plugin_root)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    data.mkdir(parents=True)
    old = "pip install failed (exit 1; its output is above, or in the log): check the network and the disk space."
    (data / "install.failed").write_text(old + "\n")
    (plugin_root / "pyproject.toml").write_text("[project\n")  # not TOML: pip fails

    hook = subprocess.run(
        [launcher(plugin_root), "hook", "session-start"],
        env=env,
        input=b"{}",
        capture_output=True,
        timeout=30,
    )
    assert json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"] == (
        f"[xcindex] The last xcindex set-up failed ({old}); it is being tried again in the background "
        f"(log: {data / 'install.log'}). If it fails again, run /xcindex-setup to see why."
    )
    assert not (data / "install.failed").exists() or (data / "install.failed").read_text() != old + "\n"
    deadline = time.monotonic() + INSTALL_WITHIN_S
    while (data / "install.lock").exists() or not (data / "install.failed").exists():
        assert time.monotonic() < deadline, "the retried set-up never ended"
        assert not (data / f"venv-{VERSION}" / ".xcindex-ready").exists(), "a damaged package installed"
        time.sleep(0.2)
    assert (data / "install.failed").read_text() == (
        f"pip install failed (exit 2; its output is above, or in {data / 'install.log'} for a background "
        "set-up): check the network and the disk space.\n"
    )
    assert leftovers(data) == []
