"""From projectPath / indexStorePath to a store, with the documented error texts."""

from __future__ import annotations

import os
import plistlib
from pathlib import Path

import pytest

from xcindex.project.locate import LocateError, locate
from xcindex.vocabulary import MISSING_LOCATION, WarningCode


def make_store(path: Path) -> Path:
    (path / "v5" / "units").mkdir(parents=True)
    (path / "v5" / "records").mkdir(parents=True)
    return path


def make_derived_data(base: Path, folder: str, workspace: Path | None, mtime: int) -> Path:
    root = base / folder
    make_store(root / "Index.noindex" / "DataStore")
    if workspace is not None:
        with (root / "info.plist").open("wb") as handle:
            plistlib.dump({"WorkspacePath": str(workspace)}, handle)
    os.utime(root, (mtime, mtime))
    return root


def test_neither_argument_gives_the_documented_error() -> None:
    with pytest.raises(LocateError) as error:
        locate(None, None)
    assert (
        str(error.value) == MISSING_LOCATION == "Either 'projectPath' or 'indexStorePath' must be provided."
    )


@pytest.mark.parametrize(
    ("project", "store", "message"),
    [
        ("relative/App", None, "'projectPath' must be an absolute path"),
        (None, "relative/store", "'indexStorePath' must be an absolute path"),
        (None, "/nonexistent/store", "No index store at '/nonexistent/store'"),
        ("/nonexistent/App.xcodeproj", None, "No DerivedData folder for 'App'"),
        ("/nonexistent/Folder", None, "projectPath '/nonexistent/Folder' does not exist."),
        ("/tmp/bad\x00path", None, "without NUL characters"),
    ],
)
def test_bad_locations_are_refused_with_a_clear_message(
    project: str | None, store: str | None, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XCINDEX_DERIVED_DATA", str(tmp_path))
    with pytest.raises(
        LocateError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")
    ):
        locate(project, store)


def test_a_file_or_a_folder_without_v5_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(LocateError, match="is a file, not an index store folder"):
        locate(None, str(tmp_path / "file"))
    with pytest.raises(LocateError, match="is not an index store"):
        locate(None, str(tmp_path))


def test_index_store_path_wins_and_finds_its_package_root(tmp_path: Path) -> None:
    (tmp_path / "Package.swift").write_text("", encoding="utf-8")
    store = make_store(tmp_path / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store")
    location = locate("/ignored/App.xcodeproj", str(store))
    assert location.store_path == store.resolve()
    assert location.workspace_root == tmp_path.resolve()


def test_swiftpm_prefers_sourcekit_lsps_store_only_when_newer(tmp_path: Path) -> None:
    (tmp_path / "Package.swift").write_text("", encoding="utf-8")
    build = make_store(tmp_path / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store")
    lsp = make_store(
        tmp_path / ".build" / "index-build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store"
    )
    os.utime(build / "v5" / "units", (2_000, 2_000))
    os.utime(lsp / "v5" / "units", (1_000, 1_000))
    assert locate(str(tmp_path / "Package.swift"), None).store_path == build.resolve()
    os.utime(lsp / "v5" / "units", (3_000, 3_000))
    assert locate(str(tmp_path), None).store_path == lsp.resolve()


def test_a_package_without_a_build_says_how_to_build_it(tmp_path: Path) -> None:
    (tmp_path / "Package.swift").write_text("", encoding="utf-8")
    with pytest.raises(LocateError, match="Build it first: swift build --build-tests"):
        locate(str(tmp_path), None)


def test_derived_data_is_matched_by_workspace_path_so_worktrees_never_collide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    derived = tmp_path / "DerivedData"
    monkeypatch.setenv("XCINDEX_DERIVED_DATA", str(derived))
    main = tmp_path / "main" / "App.xcodeproj"
    worktree = tmp_path / "worktree" / "App.xcodeproj"
    older = make_derived_data(derived, "App-aaaa", main, 1_000)
    newer = make_derived_data(derived, "App-bbbb", worktree, 2_000)
    assert locate(str(main), None).store_path == (older / "Index.noindex" / "DataStore").resolve()
    assert locate(str(worktree), None).store_path == (newer / "Index.noindex" / "DataStore").resolve()
    assert locate(str(main), None).notes == ()


def test_derived_data_falls_back_to_the_name_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    derived = tmp_path / "DerivedData"
    monkeypatch.setenv("XCINDEX_DERIVED_DATA", str(derived))
    make_derived_data(derived, "App-aaaa", None, 1_000)
    newest = make_derived_data(derived, "App-bbbb", None, 2_000)
    location = locate(str(tmp_path / "App.xcodeproj"), None)
    assert location.store_path == (newest / "Index.noindex" / "DataStore").resolve()
    assert [code for code, _ in location.notes] == [WarningCode.DERIVED_DATA_NAME_MATCH]


def test_derived_data_without_a_datastore_says_indexing_was_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    derived = tmp_path / "DerivedData"
    (derived / "App-cccc").mkdir(parents=True)
    monkeypatch.setenv("XCINDEX_DERIVED_DATA", str(derived))
    with pytest.raises(LocateError, match=r"exists but has no Index\.noindex/DataStore"):
        locate(str(tmp_path / "App.xcodeproj"), None)


@pytest.mark.parametrize("argument", ["projectPath", "indexStorePath"])
def test_a_path_the_file_system_refuses_is_a_locate_error_naming_the_argument(argument: str) -> None:
    too_long = "/" + "a" * 300  # one component beyond NAME_MAX: stat fails with ENAMETOOLONG
    with pytest.raises(LocateError) as error:
        locate(
            too_long if argument == "projectPath" else None,
            too_long if argument == "indexStorePath" else None,
        )
    assert str(error.value).startswith(f"'{argument}' cannot be used: File name too long")


def test_a_home_folder_that_does_not_exist_is_refused_as_relative() -> None:
    with pytest.raises(
        LocateError, match=r"^'indexStorePath' must be an absolute path; got '~nosuchuser/x'\.$"
    ):
        locate(None, "~nosuchuser/x")
