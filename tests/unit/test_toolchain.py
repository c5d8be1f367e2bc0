"""One search for the toolchain: swift, libIndexStore, sourcekit-lsp, Xcode's DerivedData.

The macOS cases are simulated (this suite runs on Linux): fake `xcrun` and `xcode-select`
scripts on PATH, a fake `/usr/bin`-style shim folder, and fake Xcode, Command Line Tools and
swift.org toolchain folder layouts. What they check is the search order, not Apple's tools.
"""

from __future__ import annotations

import os
import plistlib
from pathlib import Path

import pytest

from xcindex.errors import CodedError
from xcindex.project import toolchain
from xcindex.project.locate import locate
from xcindex.project.toolchain import (
    derived_data_base,
    find_library,
    find_sourcekit_lsp,
    find_swift,
    toolchain_roots,
)
from xcindex.vocabulary import WarningCode


def executable(path: Path, body: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}")
    path.chmod(0o755)
    return path


def fake_toolchain(root: Path, library: str = "libIndexStore.dylib") -> Path:
    """A toolchain folder: usr/bin/swift, usr/bin/sourcekit-lsp, usr/lib/<library>."""
    executable(root / "usr" / "bin" / "swift")
    executable(root / "usr" / "bin" / "sourcekit-lsp")
    (root / "usr" / "lib").mkdir(parents=True, exist_ok=True)
    (root / "usr" / "lib" / library).write_bytes(b"")
    return root


@pytest.fixture
def mac(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A simulated Mac: a shim `swift` in a folder treated as /usr/bin, nothing at /opt/swift,
    system toolchains in a folder of our own, and an empty HOME."""
    shims = tmp_path / "usr-bin"
    executable(shims / "swift", "echo shim\n")
    monkeypatch.setattr(toolchain, "_SHIM_FOLDERS", (str(shims),))
    monkeypatch.setattr(toolchain, "DEFAULT_TOOLCHAIN", str(tmp_path / "no-opt-swift"))
    monkeypatch.setattr(
        toolchain, "SYSTEM_TOOLCHAINS", str(tmp_path / "Library" / "Developer" / "Toolchains")
    )
    (tmp_path / "home").mkdir()
    return {"shims": shims, "bin": tmp_path / "fake-bin", "home": tmp_path / "home", "root": tmp_path}


def mac_env(mac: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"PATH": f"{mac['bin']}{os.pathsep}{mac['shims']}", "HOME": str(mac["home"]), **extra}


def xcode(mac: dict[str, Path], name: str = "Xcode.app") -> Path:
    """A fake Xcode bundle; returns its developer folder."""
    developer = mac["root"] / "Applications" / name / "Contents" / "Developer"
    fake_toolchain(developer / "Toolchains" / "XcodeDefault.xctoolchain")
    (developer / "usr" / "bin").mkdir(parents=True)  # Xcode's own tools, no toolchain
    return developer


def test_xcode_select_leads_to_xcodes_default_toolchain_past_the_shim(mac: dict[str, Path]) -> None:
    developer = xcode(mac)
    executable(mac["bin"] / "xcode-select", f'[ "$1" = -p ] && echo "{developer}"\n')
    env = mac_env(mac)
    default = developer / "Toolchains" / "XcodeDefault.xctoolchain"
    assert toolchain_roots(env)[0] == default
    assert find_library(env) == default / "usr" / "lib" / "libIndexStore.dylib"
    assert find_sourcekit_lsp(environ=env) == default / "usr" / "bin" / "sourcekit-lsp"
    assert find_swift(env) == default / "usr" / "bin" / "swift"


def test_developer_dir_wins_over_xcode_select(mac: dict[str, Path]) -> None:
    selected = xcode(mac, "Xcode.app")
    beta = xcode(mac, "Xcode-beta.app")
    executable(mac["bin"] / "xcode-select", f'echo "{selected}"\n')
    env = mac_env(mac, DEVELOPER_DIR=str(beta))
    assert (
        find_library(env)
        == beta / "Toolchains" / "XcodeDefault.xctoolchain" / "usr" / "lib" / "libIndexStore.dylib"
    )


def test_the_command_line_tools_folder_is_its_own_toolchain(mac: dict[str, Path]) -> None:
    tools = fake_toolchain(mac["root"] / "Library" / "Developer" / "CommandLineTools")
    executable(mac["bin"] / "xcode-select", f'echo "{tools}"\n')
    assert find_library(mac_env(mac)) == tools / "usr" / "lib" / "libIndexStore.dylib"


def test_xcrun_finds_what_the_developer_folder_does_not(mac: dict[str, Path]) -> None:
    elsewhere = fake_toolchain(mac["root"] / "Somewhere" / "Custom.xctoolchain")
    executable(
        mac["bin"] / "xcrun",
        f'[ "$1" = --find ] || exit 1\n[ -x "{elsewhere}/usr/bin/$2" ] || exit 1\necho "{elsewhere}/usr/bin/$2"\n',
    )
    env = mac_env(mac)
    assert toolchain_roots(env)[0] == elsewhere
    assert find_sourcekit_lsp(environ=env) == elsewhere / "usr" / "bin" / "sourcekit-lsp"


def test_toolchains_selects_a_swift_org_toolchain_by_bundle_identifier(mac: dict[str, Path]) -> None:
    developer = xcode(mac)
    executable(mac["bin"] / "xcode-select", f'echo "{developer}"\n')
    user_toolchains = mac["home"] / "Library" / "Developer" / "Toolchains"
    for name, identifier in (("swift-6.0-RELEASE", "org.swift.600"), ("swift-6.1-RELEASE", "org.swift.610")):
        bundle = fake_toolchain(user_toolchains / f"{name}.xctoolchain")
        (bundle / "Info.plist").write_bytes(plistlib.dumps({"CFBundleIdentifier": identifier}))
    env = mac_env(mac, TOOLCHAINS="org.swift.610")
    chosen = user_toolchains / "swift-6.1-RELEASE.xctoolchain"
    assert toolchain_roots(env)[0] == chosen
    assert find_sourcekit_lsp(environ=env) == chosen / "usr" / "bin" / "sourcekit-lsp"
    # Without TOOLCHAINS, Xcode's own.
    assert toolchain_roots(mac_env(mac))[0] == developer / "Toolchains" / "XcodeDefault.xctoolchain"


def test_nothing_found_says_what_was_searched(mac: dict[str, Path]) -> None:
    with pytest.raises(toolchain.LibraryNotFound, match="Install the Swift toolchain"):
        find_library(mac_env(mac))
    with pytest.raises(CodedError) as caught:
        find_sourcekit_lsp(environ=mac_env(mac))
    assert caught.value.code is WarningCode.SOURCEKIT_LSP_NOT_FOUND


def test_xcodes_custom_derived_data_location_is_read_from_its_preferences(
    mac: dict[str, Path], tmp_path: Path
) -> None:
    home = mac["home"]
    env = {"HOME": str(home)}
    assert derived_data_base(env) == home / "Library" / "Developer" / "Xcode" / "DerivedData"
    preferences = home / "Library" / "Preferences"
    preferences.mkdir(parents=True)
    custom = tmp_path / "Volumes" / "Fast" / "DerivedData"
    (preferences / "com.apple.dt.Xcode.plist").write_bytes(
        plistlib.dumps({"IDECustomDerivedDataLocation": str(custom)}, fmt=plistlib.FMT_BINARY)
    )
    assert derived_data_base(env) == custom
    assert derived_data_base({**env, "XCINDEX_DERIVED_DATA": "/override"}) == Path("/override")
    (preferences / "com.apple.dt.Xcode.plist").write_bytes(
        plistlib.dumps({"IDECustomDerivedDataLocation": "Build/DerivedData"})
    )
    project = tmp_path / "src" / "App" / "App.xcodeproj"
    assert derived_data_base(env, project) == tmp_path / "src" / "App" / "Build" / "DerivedData"


def test_locate_finds_an_xcode_index_under_the_custom_location(
    mac: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "src" / "App" / "App.xcodeproj"
    project.mkdir(parents=True)
    custom = tmp_path / "DD"
    folder = custom / "App-abcdefghijklmnop"
    (folder / "Index.noindex" / "DataStore" / "v5" / "units").mkdir(parents=True)
    (folder / "info.plist").write_bytes(plistlib.dumps({"WorkspacePath": str(project)}))
    preferences = mac["home"] / "Library" / "Preferences"
    preferences.mkdir(parents=True)
    (preferences / "com.apple.dt.Xcode.plist").write_bytes(
        plistlib.dumps({"IDECustomDerivedDataLocation": str(custom)})
    )
    monkeypatch.setenv("HOME", str(mac["home"]))
    monkeypatch.delenv("XCINDEX_DERIVED_DATA", raising=False)
    location = locate(str(project), None)
    assert location.store_path == (folder / "Index.noindex" / "DataStore").resolve()
    assert location.notes == ()


# -- moved from test_lsp_workspace.py: the same order, now owned here ---------------------------


def test_sourcekit_lsp_path_wins_and_is_checked(tmp_path: Path) -> None:
    binary = executable(tmp_path / "custom" / "sourcekit-lsp")
    assert find_sourcekit_lsp(environ={"SOURCEKIT_LSP_PATH": str(binary), "PATH": ""}) == binary
    with pytest.raises(CodedError) as missing:
        find_sourcekit_lsp(environ={"SOURCEKIT_LSP_PATH": str(tmp_path / "nope")})
    assert missing.value.code is WarningCode.SOURCEKIT_LSP_NOT_FOUND
    binary.chmod(0o644)
    with pytest.raises(CodedError) as not_executable:
        find_sourcekit_lsp(environ={"SOURCEKIT_LSP_PATH": str(binary)})
    assert not_executable.value.code is WarningCode.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE
    assert "chmod +x" in not_executable.value.message
    with pytest.raises(CodedError) as directory:
        find_sourcekit_lsp(environ={"SOURCEKIT_LSP_PATH": str(tmp_path)})
    assert directory.value.code is WarningCode.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE


def test_the_configured_binary_wins_over_the_environment(tmp_path: Path) -> None:
    configured = executable(tmp_path / "a" / "sourcekit-lsp")
    other = executable(tmp_path / "b" / "sourcekit-lsp")
    assert find_sourcekit_lsp(configured, environ={"SOURCEKIT_LSP_PATH": str(other)}) == configured


def test_the_toolchain_next_to_swift_is_found_through_symlinks(tmp_path: Path) -> None:
    toolchain_bin = tmp_path / "toolchain" / "usr" / "bin"
    executable(toolchain_bin / "swift")
    lsp = executable(toolchain_bin / "sourcekit-lsp")
    shims = tmp_path / "shims"
    shims.mkdir()
    os.symlink(toolchain_bin / "swift", shims / "swift")
    executable(tmp_path / "elsewhere" / "sourcekit-lsp")
    search = f"{shims}{os.pathsep}{tmp_path / 'elsewhere'}"
    assert find_sourcekit_lsp(environ={"PATH": search}) == lsp


def test_path_is_the_last_resort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "DEFAULT_TOOLCHAIN", str(tmp_path / "no-toolchain"))
    on_path = executable(tmp_path / "bin" / "sourcekit-lsp")
    assert find_sourcekit_lsp(environ={"PATH": str(tmp_path / "bin")}) == on_path
    with pytest.raises(CodedError) as caught:
        find_sourcekit_lsp(environ={"PATH": str(tmp_path / "empty")})
    assert caught.value.code is WarningCode.SOURCEKIT_LSP_NOT_FOUND


@pytest.mark.toolchain
def test_this_machine_has_the_toolchain_binary() -> None:
    assert find_sourcekit_lsp(environ={"PATH": "/usr/bin:/bin"}) == Path("/opt/swift/usr/bin/sourcekit-lsp")


def test_which_finds_what_the_standard_librarys_which_finds(tmp_path: Path) -> None:
    """`toolchain.which` stands in for `shutil.which` (whose imports a hook avoids)."""
    import shutil

    first, second, empty = tmp_path / "first", tmp_path / "second", tmp_path / "empty"
    for folder in (first, second, empty):
        folder.mkdir()
    (first / "swift").write_text("#!/bin/sh\n")  # not executable: skipped
    (second / "swift").write_text("#!/bin/sh\n")
    (second / "swift").chmod(0o755)
    (first / "sourcekit-lsp").mkdir()  # a folder: skipped
    (second / "sourcekit-lsp").write_text("#!/bin/sh\n")
    (second / "sourcekit-lsp").chmod(0o755)
    search = os.pathsep.join([str(empty), str(first), str(first), str(second)])
    for command in ("swift", "sourcekit-lsp", "xcrun", str(second / "swift"), str(first / "swift")):
        assert toolchain.which(command, search) == shutil.which(command, path=search), command
    assert toolchain.which("swift", search) == str(second / "swift")
