"""The plugin set-up's lock and its account of itself, on real processes.

A lock whose owner died is taken over, and the pip it left running (found by the pid it
recorded, and only if that process still names the environment) is stopped first: two
pips writing one environment would break it. What the front and the hook say about a
set-up comes from the lock's progress note, the failure note and the stamp.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from xcindex.plugin.setup import Plugin, SetupState, pid_alive, release_lock, setup_state, take_lock


@pytest.fixture
def plugin(tmp_path: Path) -> Plugin:
    made = Plugin(tmp_path / "plugin", "9.9.9", tmp_path / "data", tmp_path / "fallback")
    made.data.mkdir()
    return made


def dead_pid() -> int:
    with subprocess.Popen(["true"]) as gone:
        gone.wait()
    return gone.pid


@pytest.fixture
def running() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def sleeper(running: list[subprocess.Popen[bytes]], *words: str) -> subprocess.Popen[bytes]:
    """A process whose command line holds `words` (standing in for a pip and its arguments)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *words])
    running.append(process)
    return process


def stale_lock(plugin: Plugin, pip_pid: int) -> None:
    plugin.lock.mkdir()
    (plugin.lock / "pid").write_text(f"{dead_pid()}\n")
    (plugin.lock / "pip.pid").write_text(f"{pip_pid}\n")


def orphan(*words: str) -> int:
    """A process whose parent is gone, as a dead installer's pip is (so that init, not this
    test, reaps it): its pid."""
    started = subprocess.run(
        [
            "sh",
            "-c",
            'exec "$@" >/dev/null 2>&1 &\necho $!',
            "sh",
            sys.executable,
            "-c",
            "import time; time.sleep(60)",
            *words,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(started.stdout)


def gone_within(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_dead_installers_lock_is_taken_over_and_its_pip_stopped(plugin: Plugin) -> None:
    pip = orphan("-m", "pip", "install", str(plugin.venv))
    stale_lock(plugin, pip)
    try:
        assert take_lock(plugin)
        assert gone_within(pip), "the pip the dead installer left was stopped"
    finally:
        if pid_alive(pip):
            os.kill(pip, 9)
    assert (plugin.lock / "pid").read_text() == f"{os.getpid()}\n"
    assert not (plugin.lock / "pip.pid").exists()
    release_lock(plugin)
    assert not plugin.lock.exists()


def test_a_reused_pid_that_is_not_our_pip_is_left_alone(
    plugin: Plugin, running: list[subprocess.Popen[bytes]]
) -> None:
    stranger = sleeper(running, "something-else")
    stale_lock(plugin, stranger.pid)
    assert take_lock(plugin)
    assert stranger.poll() is None
    release_lock(plugin)


def test_a_live_installers_lock_is_not_taken(plugin: Plugin, running: list[subprocess.Popen[bytes]]) -> None:
    owner = sleeper(running)
    plugin.lock.mkdir()
    (plugin.lock / "pid").write_text(f"{owner.pid}\n")
    assert not take_lock(plugin)
    assert pid_alive(owner.pid)
    release_lock(plugin)
    assert plugin.lock.is_dir(), "only its owner releases a lock"


def test_what_a_set_up_says_about_itself(plugin: Plugin, running: list[subprocess.Popen[bytes]]) -> None:
    assert setup_state(plugin) == SetupState("absent")
    owner = sleeper(running)
    plugin.lock.mkdir()
    (plugin.lock / "pid").write_text(f"{owner.pid}\n")
    assert setup_state(plugin).step == "starting"
    (plugin.lock / "progress").write_text(
        "3\tinstalling xcindex and its dependencies with pip\tCollecting mcp<3,>=2.3\n"
    )
    state = setup_state(plugin)
    assert (state.kind, state.step) == (
        "installing",
        "installing xcindex and its dependencies with pip (step 3 of 3; last: Collecting mcp<3,>=2.3)",
    )
    assert 0 <= state.seconds < 30
    owner.kill()
    owner.wait()
    assert setup_state(plugin) == SetupState("absent"), "a set-up whose owner died is no longer running"
    plugin.failed.write_text("pip install failed (exit 1).\n")
    assert setup_state(plugin) == SetupState("failed", reason="pip install failed (exit 1).")
    program = plugin.venv / "bin" / "xcindex"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (plugin.venv / ".xcindex-ready").write_text("9.9.9\n")
    assert setup_state(plugin) == SetupState("ready", program=program)


def test_a_lock_whose_owner_is_a_zombie_is_taken_over(plugin: Plugin) -> None:
    """A killed installer nobody reaped (a container whose first process reaps nothing) is a
    zombie: it holds no lock."""
    with subprocess.Popen(["true"]) as exited:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{exited.pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0] != b"Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        plugin.lock.mkdir()
        (plugin.lock / "pid").write_text(f"{exited.pid}\n")
        assert not pid_alive(exited.pid)
        assert take_lock(plugin)
    release_lock(plugin)
