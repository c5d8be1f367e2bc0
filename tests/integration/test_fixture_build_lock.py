"""Test sessions in one checkout never race on a build in place (`built_in_place`, what the
`canary_store` fixture uses): a session reads a `.build` nobody rewrites under it.

Each "session" here is a process that enters `built_in_place` on a private copy of the
fixture, snapshots its `.build`, says so with a file, holds it (its tests would run
there) until the test creates a `release` file, snapshots again and reports. Without the
lock, the second session's `swift build` (even one with nothing to compile) rewrites
SwiftPM's files under the first one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BUILD_LOCK, CANARY, REPO, copy_package

pytestmark = pytest.mark.toolchain

SESSION = r"""
import json, sys, time
from pathlib import Path
from tests.conftest import BUILD_LOCK, built_in_place

package, signals, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

def snapshot():
    return {
        str(path): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in (package / ".build").rglob("*")
        if path.is_file() and not path.is_symlink() and path.name != BUILD_LOCK
    }

with built_in_place(package) as store:
    before = snapshot()
    (signals / f"{name}.in").write_text(str(store))
    while not (signals / "release").exists():  # the session's tests run here
        time.sleep(0.05)
    after = snapshot()
print(json.dumps({"store": str(store), "changed": sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))}))
"""

BUILD_WITHIN = 900.0
"""Seconds: a cold build of the fixture on a busy machine."""


def session(package: Path, signals: Path, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SESSION, str(package), str(signals), name],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def until(done: Any, within: float, what: str, sessions: list[subprocess.Popen[str]]) -> None:
    """Poll `done()` (a file's appearance, a line of /proc/locks: nothing to wait on)."""
    deadline = time.monotonic() + within
    while not done():
        for process in sessions:
            if process.poll() is not None:
                pytest.fail(f"a session ended while waiting for {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {within:.0f} s")
        time.sleep(0.05)


def report(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=BUILD_WITHIN)
    assert process.returncode == 0, err[-3000:]
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def waiting_on_the_lock(package: Path, pid: int) -> bool:
    """Whether `pid` is blocked on the package's lock file (`->` lines of /proc/locks)."""
    inode = (package / ".build" / BUILD_LOCK).stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields and any(f.endswith(f":{inode}") for f in fields):
            return True
    return False


def test_sessions_started_together_or_later_never_build_under_one_another(tmp_path: Path) -> None:
    package = copy_package(CANARY, tmp_path / "SwiftCanary")
    signals = tmp_path / "signals"
    signals.mkdir()

    # Two at once, on an unbuilt package: one builds, the other waits for it and reads along.
    first, second = session(package, signals, "a"), session(package, signals, "b")
    until(
        lambda: (signals / "a.in").exists() and (signals / "b.in").exists(),
        BUILD_WITHIN,
        "both sessions in",
        [first, second],
    )
    (signals / "release").touch()
    a, b = report(first), report(second)
    assert a["store"] == b["store"]
    assert (a["changed"], b["changed"]) == ([], [])

    # One holding the build, another starting: it reads along at once (the build is newer
    # than the sources), and nothing changes under the first.
    for name in ("a.in", "b.in", "release"):
        (signals / name).unlink()
    first = session(package, signals, "a")
    until(lambda: (signals / "a.in").exists(), BUILD_WITHIN, "the first session in", [first])
    second = session(package, signals, "b")
    until(lambda: (signals / "b.in").exists(), 60, "the second session in, without a build", [first, second])
    (signals / "release").touch()
    assert (report(first)["changed"], report(second)["changed"]) == ([], [])

    # A source edited since the build: the next session waits for the reader to end, then builds.
    for name in ("a.in", "b.in", "release"):
        (signals / name).unlink()
    first = session(package, signals, "a")
    until(lambda: (signals / "a.in").exists(), BUILD_WITHIN, "the first session in", [first])
    edited = package / "Sources" / "CanaryCore" / "Box.swift"
    edited.write_text(edited.read_text(encoding="utf-8") + "// edited\n", encoding="utf-8")
    second = session(package, signals, "b")
    until(lambda: waiting_on_the_lock(package, second.pid), 60, "the second session waiting", [first, second])
    assert not (signals / "b.in").exists()
    (signals / "release").touch()
    assert report(first)["changed"] == []
    assert report(second)["changed"] == []
    units = Path((signals / "b.in").read_text()) / "v5" / "units"
    assert max(unit.stat().st_mtime_ns for unit in units.iterdir()) > edited.stat().st_mtime_ns, "rebuilt"
