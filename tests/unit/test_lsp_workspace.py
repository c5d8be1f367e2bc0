"""Workspace roots for sourcekit-lsp, and finding its binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from xcindex.errors import CodedError
from xcindex.project.workspace import (
    WorkspaceKind,
    WorkspaceRoot,
    resolve_workspace_root,
    workspace_root_for_index_store,
    workspace_root_for_project,
)
from xcindex.vocabulary import WarningCode


def make(path: Path, content: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def executable(path: Path) -> Path:
    make(path, "#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "Pkg"
    make(root / "Package.swift")
    return root


@pytest.fixture
def xcode(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "App"
    (root / "App.xcodeproj" / "project.xcworkspace").mkdir(parents=True)
    return root


def test_a_package_folder_or_its_manifest_is_the_root(package: Path) -> None:
    expected = WorkspaceRoot(package, WorkspaceKind.SWIFTPM, has_build_settings=True)
    assert workspace_root_for_project(package) == expected
    assert workspace_root_for_project(package / "Package.swift") == expected
    assert expected.warnings == ()
    assert expected.warnings_for_answer(empty=True) == ()


def test_an_xcode_project_or_workspace_gives_its_parent(xcode: Path) -> None:
    make(xcode / "App.xcworkspace" / "contents.xcworkspacedata")
    for project in ("App.xcodeproj", "App.xcworkspace", "App.xcodeproj/project.xcworkspace"):
        root = workspace_root_for_project(xcode / project)
        assert (root.path, root.kind) == (xcode, WorkspaceKind.XCODE)


def test_a_package_workspace_under_swiftpm_belongs_to_the_package(package: Path) -> None:
    nested = package / ".swiftpm" / "xcode" / "package.xcworkspace"
    nested.mkdir(parents=True)
    assert workspace_root_for_project(nested).path == package


def test_an_xcode_project_without_build_settings_warns(xcode: Path) -> None:
    root = workspace_root_for_project(xcode / "App.xcodeproj")
    assert not root.has_build_settings
    assert root.warnings == (WarningCode.COMPILE_COMMANDS_MISSING,)
    assert root.warnings_for_answer(empty=False) == (WarningCode.COMPILE_COMMANDS_MISSING,)
    assert root.warnings_for_answer(empty=True) == (
        WarningCode.COMPILE_COMMANDS_MISSING,
        WarningCode.SOURCEKIT_LSP_NEEDS_COMPILE_COMMANDS,
    )


@pytest.mark.parametrize("settings", ["compile_commands.json", "buildServer.json", ".bsp/xcode.json"])
def test_compile_commands_or_a_build_server_silence_the_warning(xcode: Path, settings: str) -> None:
    make(xcode / settings, "{}")
    root = workspace_root_for_project(xcode / "App.xcodeproj")
    assert root.has_build_settings
    assert root.warnings_for_answer(empty=True) == ()


def test_an_xcode_project_next_to_a_package_is_a_package(package: Path) -> None:
    (package / "Pkg.xcodeproj").mkdir()
    root = workspace_root_for_project(package / "Pkg.xcodeproj")
    assert (root.path, root.kind, root.warnings) == (package, WorkspaceKind.SWIFTPM, ())


def test_an_index_store_walks_up_to_the_package(package: Path) -> None:
    store = package / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store"
    store.mkdir(parents=True)
    assert workspace_root_for_index_store(store).path == package
    lsp_store = package / ".build" / "index-build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store"
    lsp_store.mkdir(parents=True)
    assert resolve_workspace_root(index_store_path=lsp_store).path == package


def test_the_walk_stops_after_ten_levels(package: Path) -> None:
    deep = package.joinpath(*[f"l{n}" for n in range(10)])
    deep.mkdir(parents=True)
    assert workspace_root_for_index_store(deep).path == package
    deeper = deep / "l10"
    deeper.mkdir()
    with pytest.raises(CodedError) as caught:
        workspace_root_for_index_store(deeper)
    assert caught.value.code is WarningCode.WORKSPACE_ROOT_UNRESOLVED


def test_a_store_from_derived_data_finds_the_xcode_project(xcode: Path) -> None:
    store = xcode / "DerivedData" / "App-abc" / "Index.noindex" / "DataStore"
    store.mkdir(parents=True)
    root = workspace_root_for_index_store(store)
    assert (root.path, root.kind) == (xcode, WorkspaceKind.XCODE)


def test_project_path_wins_over_the_index_store(package: Path, xcode: Path) -> None:
    store = package / ".build" / "store"
    store.mkdir(parents=True)
    assert resolve_workspace_root(project_path=xcode / "App.xcodeproj", index_store_path=store).path == xcode


@pytest.mark.parametrize("arguments", [{}, {"project_path": Path("/nonexistent/App.xcodeproj")}])
def test_nothing_to_go_on_is_workspace_root_unresolved(arguments: dict[str, Path]) -> None:
    with pytest.raises(CodedError) as caught:
        resolve_workspace_root(**arguments)
    assert caught.value.code is WarningCode.WORKSPACE_ROOT_UNRESOLVED


@pytest.mark.parametrize(
    "project", [Path("relative/App.xcodeproj"), Path("/" + "a" * 300), Path("/tmp/nul\x00byte")]
)
def test_a_project_path_that_cannot_be_resolved_is_workspace_root_unresolved(project: Path) -> None:
    # Relative (to the server's cwd?), too long for the file system, or with a NUL byte:
    # a documented warning code, never an OSError or ValueError.
    with pytest.raises(CodedError) as caught:
        resolve_workspace_root(project_path=project, index_store_path=Path("/nonexistent/store"))
    assert caught.value.code is WarningCode.WORKSPACE_ROOT_UNRESOLVED
