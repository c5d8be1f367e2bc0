"""`xcindex doctor` as a user runs it: on a healthy package, a missing index, a stale one,
a broken sourcekit-lsp or libIndexStore, and an Xcode project."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import CANARY, copy_package, swift_executable

XCINDEX = str(Path(sys.executable).parent / "xcindex")


def run_doctor(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [XCINDEX, "doctor", *args],
        capture_output=True,
        text=True,
        env=dict(clean_env() if env is None else env),
        cwd=cwd,
        timeout=1800,
        check=False,
    )


def lines(output: str, tag: str) -> list[str]:
    return [line.strip()[len(tag) :].strip() for line in output.splitlines() if line.strip().startswith(tag)]


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "SOURCEKIT_LSP_PATH"}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def installed_canary(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A private copy of the fixture, indexed and configured by `xcindex doctor --install`."""
    swift_executable()  # fails the test, never skips it, when the toolchain is missing
    package = copy_package(CANARY, tmp_path_factory.mktemp("doctor") / "SwiftCanary")
    return package, run_doctor("--project", str(package), "--install", env=clean_env())


@pytest.mark.toolchain
def test_install_builds_the_index_and_writes_the_configuration(
    installed_canary: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    package, result = installed_canary
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result.stdout, "[FAIL]") == []
    assert f"Building the index: swift build --build-tests --package-path {package}" in lines(
        result.stdout, "[INFO]"
    )
    assert any(
        line.startswith(f"Built the index with `swift build --build-tests --package-path {package}`")
        for line in lines(result.stdout, "[ OK ]")
    )
    mcp = json.loads((package / ".mcp.json").read_text())
    server = mcp["mcpServers"]["xcindex"]
    assert server["args"][-1] == "serve"
    assert Path(server["command"]).name in ("xcindex", Path(sys.executable).name)
    hooks = json.loads((package / ".claude" / "settings.json").read_text())["hooks"]
    commands = {
        event: [h["command"] for group in groups for h in group["hooks"]] for event, groups in hooks.items()
    }
    assert {event: [c.rsplit(" ", 2)[-2:] for c in cs] for event, cs in commands.items()} == {
        "SessionStart": [["hook", "session-start"]],
        "PostToolUse": [["hook", "post-tool-use"]],
        "PreToolUse": [["hook", "pre-tool-use"]],
    }
    assert [g["matcher"] for g in hooks["PostToolUse"]] == ["Edit|Write|MultiEdit"]
    assert [g["matcher"] for g in hooks["PreToolUse"]] == ["Grep"]


@pytest.mark.toolchain
def test_a_healthy_project_passes_every_check(
    installed_canary: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    package, _ = installed_canary
    mcp_before = (package / ".mcp.json").read_text()
    result = run_doctor("--project", str(package), env=clean_env())
    assert result.returncode == 0, result.stdout
    assert lines(result.stdout, "[FAIL]") == []
    ok = lines(result.stdout, "[ OK ]")
    for expected in (
        "Python 3.",
        "anyio ",
        "trio ",
        "mcp ",
        "lsprotocol ",
        "cffi ",
        "structlog ",
        "Swift version ",
    ):
        assert any(line.startswith(expected) for line in ok), (expected, ok)
    assert any("libIndexStore" in line and "(API 0." in line for line in ok)
    assert any(line.startswith("sourcekit-lsp /") for line in ok)
    assert f"Swift package: {package}" in ok
    assert any(line.startswith(f"Index store: {package.resolve()}/.build/") for line in ok)
    assert "No Swift files newer than the index." in ok
    assert f"{package / '.mcp.json'} declares the xcindex server." in ok
    assert result.stdout.rstrip().endswith("All checks passed.")
    # Asking again to install changes nothing: no build, no rewritten configuration.
    again = run_doctor("--project", str(package), "--install", env=clean_env())
    assert again.returncode == 0, again.stdout
    assert "The index is current: no build needed." in lines(again.stdout, "[INFO]")
    assert (package / ".mcp.json").read_text() == mcp_before


@pytest.mark.toolchain
def test_sources_newer_than_the_index_fail_freshness(
    installed_canary: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    built, _ = installed_canary
    # A second checkout: the sources and the index store only, modification times kept.
    package = copy_package(built, tmp_path / "SwiftCanary")
    (store,) = built.glob(".build/*/debug/index")
    shutil.copytree(store, package / store.relative_to(built))
    edited = package / "Sources" / "CanaryCore" / "UserService.swift"
    later = time.time() + 120
    os.utime(edited, (later, later))
    result = run_doctor("--project", str(package), env=clean_env())
    assert result.returncode == 1
    assert lines(result.stdout, "[FAIL]") == [
        "1 Swift file(s) newer than the index: Sources/CanaryCore/UserService.swift"
    ]
    assert f"-> Rebuild (`swift build --build-tests` in {package}), or expect stale answers about them." in (
        result.stdout
    )


def test_a_missing_index_fails_naming_the_build_command(tmp_path: Path) -> None:
    package = copy_package(CANARY, tmp_path / "SwiftCanary")
    result = run_doctor("--project", str(package), env=clean_env())
    assert result.returncode == 1
    (failure,) = [line for line in lines(result.stdout, "[FAIL]") if "index store" in line.lower()]
    assert f"swift build --build-tests --package-path '{package}'" in failure
    assert f"-> Or let the doctor build it: xcindex doctor --project {package} --install" in result.stdout
    assert not (package / ".build").exists()
    assert not (package / ".mcp.json").exists()


def test_a_nonexistent_sourcekit_lsp_path_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "sourcekit-lsp"
    result = run_doctor(env=clean_env(SOURCEKIT_LSP_PATH=str(missing)), cwd=tmp_path)
    assert result.returncode == 1
    assert f"sourcekit_lsp_not_found: SOURCEKIT_LSP_PATH={missing} does not exist." in lines(
        result.stdout, "[FAIL]"
    )


def test_a_non_executable_sourcekit_lsp_path_says_so(tmp_path: Path) -> None:
    binary = tmp_path / "sourcekit-lsp"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o644)
    result = run_doctor(env=clean_env(SOURCEKIT_LSP_PATH=str(binary)), cwd=tmp_path)
    assert result.returncode == 1
    assert (
        f"sourcekit_lsp_binary_not_executable: SOURCEKIT_LSP_PATH={binary} is not an executable file."
        in lines(result.stdout, "[FAIL]")
    )
    assert f"-> chmod +x {binary}" in result.stdout
    folder = run_doctor(env=clean_env(SOURCEKIT_LSP_PATH=str(tmp_path)), cwd=tmp_path)
    assert any(
        line.startswith("sourcekit_lsp_binary_not_executable") for line in lines(folder.stdout, "[FAIL]")
    )


def test_a_broken_libindexstore_is_reported_without_crashing_the_doctor(tmp_path: Path) -> None:
    fake = tmp_path / "libIndexStore.so"
    fake.write_bytes(b"\x7fELF but not really")
    result = run_doctor(env=clean_env(XCINDEX_LIBINDEXSTORE=str(fake)), cwd=tmp_path)
    assert result.returncode == 1
    (failure,) = [line for line in lines(result.stdout, "[FAIL]") if "libIndexStore" in line]
    assert failure.startswith(f"libIndexStore at {fake} could not be loaded (exit status 1)")
    # The doctor went on with the remaining checks.
    assert "== sourcekit-lsp ==" in result.stdout
    assert "No Swift package or Xcode project in" in result.stdout


def test_something_that_is_not_a_project_fails(tmp_path: Path) -> None:
    result = run_doctor("--project", str(tmp_path), env=clean_env())
    assert result.returncode == 1
    assert f"{tmp_path} is not a Swift package or an Xcode project (or a folder holding one)." in lines(
        result.stdout, "[FAIL]"
    )


@pytest.mark.toolchain  # the last run passes only with a working sourcekit-lsp
def test_an_xcode_project_needs_derived_data_and_a_build_server_bridge(tmp_path: Path) -> None:
    root = tmp_path / "App"
    project = root / "App.xcodeproj"
    project.mkdir(parents=True)
    source = root / "App" / "AppDelegate.swift"
    source.parent.mkdir()
    source.write_text("class AppDelegate {}\n")
    derived = tmp_path / "DerivedData"
    derived.mkdir()
    env = clean_env(XCINDEX_DERIVED_DATA=str(derived))

    result = run_doctor("--project", str(project), env=env)
    assert result.returncode == 1
    failures = lines(result.stdout, "[FAIL]")
    assert any(line.startswith("No DerivedData folder for 'App'") for line in failures)
    assert f"compile_commands_missing: no compile_commands.json or buildServer.json in {root}." in failures

    folder = derived / "App-abcdefghijklmnop"
    units = folder / "Index.noindex" / "DataStore" / "v5" / "units"
    units.mkdir(parents=True)
    (units.parent / "records").mkdir()
    (units / "AppDelegate.o-XYZ").write_bytes(b"unit")
    with (folder / "info.plist").open("wb") as handle:
        plistlib.dump({"WorkspacePath": str(project)}, handle)
    past = time.time() - 600
    os.utime(source, (past, past))
    (root / "buildServer.json").write_text("{}")
    fixed = run_doctor("--project", str(project), env=env)
    assert lines(fixed.stdout, "[FAIL]") == [], fixed.stdout
    ok = lines(fixed.stdout, "[ OK ]")
    assert f"Xcode project: {project}" in ok
    assert "No Swift files newer than the index." in ok
    assert f"buildServer.json in {root}: sourcekit-lsp sees the build settings." in ok
    assert fixed.returncode == 0


# -- the plugin, several projects, the toolchain search ----------------------------------------


def xcode_app(tmp_path: Path) -> Path:
    """An Xcode project folder: the doctor never builds one, so --install only configures."""
    project = tmp_path / "App" / "App.xcodeproj"
    project.mkdir(parents=True)
    return project


def test_with_the_plugin_installed_install_writes_no_second_registration(tmp_path: Path) -> None:
    project = xcode_app(tmp_path)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"xcindex@xcindex": True}}))
    env = clean_env(HOME=str(home), XCINDEX_DERIVED_DATA=str(tmp_path / "dd"))
    env.pop("CLAUDE_PLUGIN_ROOT", None)
    result = run_doctor("--project", str(project), "--install", env=env)
    assert (
        f"The xcindex Claude Code plugin is installed ({home / '.claude' / 'settings.json'}): "
        "it brings the server and the hooks." in lines(result.stdout, "[ OK ]")
    )
    assert "Nothing written: the plugin already registers the server and the hooks." in lines(
        result.stdout, "[INFO]"
    )
    assert not (project.parent / ".mcp.json").exists()
    assert not (project.parent / ".claude").exists()

    # A hand-written registration beside the plugin is a double registration, and said so.
    (project.parent / ".mcp.json").write_text('{"mcpServers": {"xcindex": {"command": "xcindex"}}}')
    twice = run_doctor("--project", str(project), env=env)
    (failure,) = [line for line in lines(twice.stdout, "[FAIL]") if "also register" in line]
    assert failure.startswith(f"{project.parent / '.mcp.json'} also register(s) xcindex")


def test_several_projects_below_are_named_never_adopted(tmp_path: Path) -> None:
    for name in ("Alpha", "Beta"):
        (tmp_path / "src" / name).mkdir(parents=True)
        (tmp_path / "src" / name / "Package.swift").write_text("// swift-tools-version:5.9\n")
    result = run_doctor("--install", env=clean_env(), cwd=tmp_path)
    assert result.returncode == 1
    failure = (
        f"Several Swift projects below {tmp_path}: {tmp_path / 'src' / 'Alpha'}, {tmp_path / 'src' / 'Beta'}."
    )
    assert f"{failure} The doctor does not guess which one." in lines(result.stdout, "[FAIL]")
    assert "-> Name it: xcindex doctor --project <one of them>" in result.stdout
    assert not list(tmp_path.rglob(".build"))
    assert not list(tmp_path.rglob(".mcp.json"))


def test_the_doctor_finds_sourcekit_lsp_where_the_server_does(tmp_path: Path) -> None:
    """Simulated macOS: a fake `xcode-select` names a fake Xcode; the doctor reports its
    sourcekit-lsp, found by the same search the server uses (xcindex.project.toolchain)."""
    developer = tmp_path / "Xcode.app" / "Contents" / "Developer"
    lsp = developer / "Toolchains" / "XcodeDefault.xctoolchain" / "usr" / "bin" / "sourcekit-lsp"
    lsp.parent.mkdir(parents=True)
    lsp.write_text("#!/bin/sh\nexit 0\n")
    lsp.chmod(0o755)
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    select = fake_bin / "xcode-select"
    select.write_text(f'#!/bin/sh\necho "{developer}"\n')
    select.chmod(0o755)
    env = clean_env(PATH=f"{fake_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", XCINDEX_TOOLCHAIN="")
    result = run_doctor(env=env, cwd=tmp_path)
    assert f"sourcekit-lsp {lsp}" in lines(result.stdout, "[ OK ]")
