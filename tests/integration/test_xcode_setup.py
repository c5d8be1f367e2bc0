"""Setting up an Xcode project: its schemes, the `xcodebuild` command that builds each one's
index, and the build itself when the user names a scheme.

Linux has no xcodebuild, so a named fake stands in for it (as fake `xcrun` and
`xcode-select` scripts stand in for Apple's tools in the toolchain tests): it answers
`-list -json` as xcodebuild 16 does and records every `build` it is asked for. The test
checks what xcindex asks of xcodebuild and what it tells the user, not Apple's tool.
"""

from __future__ import annotations

import json
import os
import plistlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

XCINDEX = str(Path(sys.executable).parent / "xcindex")
FAKE_XCODEBUILD = """#!/bin/sh
# A stand-in for xcodebuild: `-list -json` names the schemes; `build` is recorded.
printf '%s\\n' "$*" >>"{record}"
case "$1" in
-list)
    if [ "$3" = -workspace ]; then
        printf '{{\\n  "workspace" : {{\\n    "name" : "App",\\n    "schemes" : [\\n      "App",\\n      "Kit"\\n    ]\\n  }}\\n}}\\n'
    else
        printf '{{\\n  "project" : {{\\n    "configurations" : [ "Debug", "Release" ],\\n    "name" : "App",\\n    "schemes" : [\\n      "App",\\n      "Broken"\\n    ],\\n    "targets" : [ "App" ]\\n  }}\\n}}\\n'
    fi
    ;;
build)
    case "$*" in
    *"-scheme Broken"*)
        echo "/p/App/Broken.swift:3:1: error: cannot find 'x' in scope"
        echo "** BUILD FAILED **"
        exit 65
        ;;
    esac
    echo "** BUILD SUCCEEDED **"
    ;;
esac
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """An Xcode project folder with a source file, and DerivedData of its own (empty)."""
    project = tmp_path / "App" / "App.xcodeproj"
    project.mkdir(parents=True)
    (tmp_path / "App" / "Sources").mkdir()
    (tmp_path / "App" / "Sources" / "AppDelegate.swift").write_text("class AppDelegate {}\n")
    return project


def env_with_xcodebuild(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH with the fake xcodebuild first; the file it records its calls in."""
    record = tmp_path / "xcodebuild-calls.txt"
    fake = tmp_path / "fake-bin" / "xcodebuild"
    fake.parent.mkdir()
    fake.write_text(FAKE_XCODEBUILD.format(record=record))
    fake.chmod(0o755)
    env = {
        **{key: value for key, value in os.environ.items() if key != "SOURCEKIT_LSP_PATH"},
        "PATH": f"{fake.parent}:{os.environ['PATH']}",
        "XCINDEX_DERIVED_DATA": str(tmp_path / "DerivedData"),
    }
    return env, record


def xcindex(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XCINDEX, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_build_commands_lists_each_schemes_xcodebuild_command(app: Path, tmp_path: Path) -> None:
    env, record = env_with_xcodebuild(tmp_path)
    listed = xcindex("build-commands", "--project", str(app), env=env)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout == (
        f"xcodebuild build -project {app} -scheme App\nxcodebuild build -project {app} -scheme Broken\n"
    )
    assert record.read_text() == f"-list -json -project {app}\n"

    # From a subfolder, without --project: the enclosing project, as git finds its repository.
    here = xcindex("build-commands", env=env, cwd=app.parent / "Sources")
    assert here.stdout == listed.stdout

    workspace = app.parent / "App.xcworkspace"
    workspace.mkdir()
    both = xcindex("build-commands", "--project", str(workspace), env=env)
    assert both.stdout == (
        f"xcodebuild build -workspace {workspace} -scheme App\n"
        f"xcodebuild build -workspace {workspace} -scheme Kit\n"
    )


def test_build_commands_for_a_package_and_without_xcodebuild(app: Path, tmp_path: Path) -> None:
    package = tmp_path / "My Package"
    package.mkdir()
    (package / "Package.swift").write_text("// swift-tools-version:5.9\n")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    listed = xcindex("build-commands", "--project", str(package), env=env)
    assert (listed.returncode, listed.stdout) == (
        0,
        f"swift build --build-tests --package-path '{package}'\n",
    )

    missing = xcindex("build-commands", "--project", str(app), env=env)
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2,
        "",
        "xcindex build-commands: error: xcodebuild was not found: it comes with Xcode (the Command Line "
        "Tools alone do not have it). Install Xcode, or build the project in Xcode with indexing enabled.\n",
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    nowhere = xcindex("build-commands", env=env, cwd=empty)
    assert nowhere.stderr == (
        f"xcindex build-commands: error: no Swift package or Xcode project in {empty} (or a folder above "
        "it): name one with --project.\n"
    )


def doctor_lines(result: subprocess.CompletedProcess[str], tag: str) -> list[str]:
    return [
        line.strip()[len(tag) :].strip()
        for line in result.stdout.splitlines()
        if line.strip().startswith(tag)
    ]


def test_the_doctor_lists_the_schemes_and_builds_the_ones_named(app: Path, tmp_path: Path) -> None:
    env, record = env_with_xcodebuild(tmp_path)
    checked = xcindex("doctor", "--project", str(app), env=env)
    assert "2 scheme(s): App, Broken" in doctor_lines(checked, "[ OK ]")
    info = doctor_lines(checked, "[INFO]")
    assert f"Builds the index of App: xcodebuild build -project {app} -scheme App" in info
    assert f"Builds the index of Broken: xcodebuild build -project {app} -scheme Broken" in info
    assert (
        f"To build some here: xcindex doctor --project {app} --build-scheme <scheme> "
        "[--build-scheme <another>]" in info
    )
    assert "build" not in [line.split()[0] for line in record.read_text().splitlines()], "nothing was built"

    record.unlink()
    built = xcindex(
        "doctor",
        "--project",
        str(app),
        "--build-scheme",
        "App",
        "--build-scheme",
        "Broken",
        "--build-scheme",
        "Nope",
        env=env,
    )
    assert record.read_text().splitlines() == [
        f"-list -json -project {app}",
        f"build -project {app} -scheme App",
        f"build -project {app} -scheme Broken",
    ]
    assert "Built the index of App (0 s)." in doctor_lines(built, "[ OK ]")
    failures = doctor_lines(built, "[FAIL]")
    assert "No scheme named 'Nope'." in failures
    assert f"`xcodebuild build -project {app} -scheme Broken` failed (exit status 65)." in failures
    assert "| /p/App/Broken.swift:3:1: error: cannot find 'x' in scope" in built.stdout
    assert built.returncode == 1


def test_without_xcodebuild_the_doctor_says_so_and_fails_only_when_asked_to_build(
    app: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PATH": "/usr/bin:/bin", "XCINDEX_DERIVED_DATA": str(tmp_path / "DerivedData")}
    why = (
        "xcodebuild was not found: it comes with Xcode (the Command Line Tools alone do not have it). "
        "Install Xcode, or build the project in Xcode with indexing enabled."
    )
    assert why in doctor_lines(xcindex("doctor", "--project", str(app), env=env), "[INFO]")
    asked = xcindex("doctor", "--project", str(app), "--build-scheme", "App", env=env)
    assert why in doctor_lines(asked, "[FAIL]")


def test_the_session_start_hook_gives_an_xcode_projects_refresh_command(app: Path, tmp_path: Path) -> None:
    """A stale Xcode index: the hook names the xcodebuild command (and where the schemes are)."""
    derived = tmp_path / "DerivedData" / "App-abcdefghijklmnop"
    units = derived / "Index.noindex" / "DataStore" / "v5" / "units"
    units.mkdir(parents=True)
    (units.parent / "records").mkdir()
    (units / "AppDelegate.o-XYZ").write_bytes(b"unit")
    past = time.time() - 600
    os.utime(units / "AppDelegate.o-XYZ", (past, past))
    with (derived / "info.plist").open("wb") as handle:
        plistlib.dump({"WorkspacePath": str(app)}, handle)
    env, _ = env_with_xcodebuild(tmp_path)
    env["CLAUDE_PROJECT_DIR"] = str(app.parent)
    ran = subprocess.run(
        [XCINDEX, "hook", "session-start"], env=env, input=b"{}", capture_output=True, timeout=60
    )
    said = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said.endswith(
        f"Sources/AppDelegate.swift. Rebuild (a build in Xcode, or `xcodebuild build -project {app} -scheme "
        "<scheme>`; `xcindex build-commands` names the schemes) before trusting xcindex answers about them."
    ), said
