"""From what a caller gives (projectPath or indexStorePath) to an index store on disk.

`indexStorePath` wins. A `projectPath` may be an `.xcodeproj`/`.xcworkspace` (its
DerivedData folder, matched by the `WorkspacePath` in `info.plist` so that two checkouts of
one project never answer for each other), a SwiftPM package folder or its `Package.swift`
(`.build/<triple>/debug/index/store`, or sourcekit-lsp's `.build/index-build/...` store
when that one is newer). Import-light: the hooks and the doctor use it.
"""

from __future__ import annotations

import os
from pathlib import Path

from xcindex._record import Record
from xcindex.errors import ArgumentError, CodedError, XcindexError
from xcindex.project import toolchain
from xcindex.project.store_layout import is_store, newest_swiftpm_store
from xcindex.vocabulary import MISSING_LOCATION, ProjectKind, WarningCode

DERIVED_DATA_ENV = toolchain.DERIVED_DATA_ENV


class LocateError(XcindexError):
    pass


class LocateArgumentError(LocateError, ArgumentError):
    """A location argument that cannot be used, naming which one."""


class Location(Record):
    """Where a question's index is. A Record, not a dataclass: the session-start hook locates
    the index, and `dataclasses` (with `inspect`) was a sixth of its run."""

    __slots__ = ("notes", "project_kind", "store_path", "workspace_root")
    _fields = ("store_path", "workspace_root", "project_kind", "notes")
    store_path: Path
    """The folder that contains `v5/`."""
    workspace_root: Path | None
    """Where sourcekit-lsp should be rooted, when known."""
    project_kind: ProjectKind
    notes: tuple[tuple[WarningCode, str], ...]

    def __init__(
        self,
        store_path: Path,
        workspace_root: Path | None,
        project_kind: ProjectKind,
        notes: tuple[tuple[WarningCode, str], ...] = (),
    ) -> None:
        super().__init__(store_path, workspace_root, project_kind, notes)


def _absolute(raw: str, what: str) -> Path:
    if not raw or "\x00" in raw:
        raise LocateArgumentError(what, "'{}' must be a non-empty path without NUL characters.")
    # os.path leaves `~nosuchuser` as it is (then refused as relative); Path raises RuntimeError.
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        raise LocateArgumentError(what, "'{}' must be an absolute path; got '" + _braced(raw) + "'.")
    return Path(os.path.normpath(path))


def _braced(text: str) -> str:
    """`text` kept literal inside a template."""
    return text.replace("{", "{{").replace("}", "}}")


def _is_store(path: Path) -> bool:
    return is_store(path)


def locate(project_path: str | None, index_store_path: str | None) -> Location:
    try:
        return _locate(project_path, index_store_path)
    except OSError as error:
        # A path the file system refuses (a name too long, a permission denied) is the
        # caller's to fix: say which argument and why, never a crash.
        what = "indexStorePath" if index_store_path else "projectPath"
        raise LocateArgumentError(
            what, "'{}' cannot be used: " + _braced(f"{error.strerror or error} ('{error.filename}').")
        ) from None


def _locate(project_path: str | None, index_store_path: str | None) -> Location:
    if index_store_path:
        store = _absolute(index_store_path, "indexStorePath")
        if not store.exists():
            raise LocateError(f"No index store at '{store}': the folder does not exist.")
        if not store.is_dir():
            raise LocateError(f"'{store}' is a file, not an index store folder.")
        if not _is_store(store):
            raise LocateError(
                f"'{store}' is not an index store (it has no v5/units folder). Point indexStorePath at the "
                "folder that contains v5/ (for SwiftPM: .build/<triple>/debug/index/store)."
            )
        root = workspace_root_for_store(store)
        return Location(store.resolve(), root, ProjectKind.STORE)
    if project_path:
        project = _absolute(project_path, "projectPath")
        if project.suffix in (".xcodeproj", ".xcworkspace"):
            return _locate_xcode(project)
        if project.name == "Package.swift":
            project = project.parent
        if (project / "Package.swift").is_file():
            return _locate_swiftpm(project)
        if not project.exists():
            raise LocateArgumentError("projectPath", "{} '" + _braced(str(project)) + "' does not exist.")
        raise LocateArgumentError(
            "projectPath",
            "{} '" + _braced(str(project)) + "' is neither an .xcodeproj/.xcworkspace nor a Swift package "
            "(a folder with Package.swift, or the Package.swift itself).",
        )
    raise LocateError(MISSING_LOCATION)


def _locate_swiftpm(package: Path) -> Location:
    best = newest_swiftpm_store(str(package))
    if best is None:
        raise LocateError(
            f"No index store for the Swift package at '{package}' (looked for "
            ".build/<triple>/debug/index/store). Build it first: "
            f"swift build --build-tests --package-path '{package}'"
        )
    return Location(Path(best).resolve(), package.resolve(), ProjectKind.SWIFTPM)


def derived_data_base(project: Path | None = None) -> Path:
    """Xcode's DerivedData folder for `project` (the lookup is `xcindex.project.toolchain`'s)."""
    return toolchain.derived_data_base(None, project)


def _workspace_path(folder: Path) -> str | None:
    import plistlib  # only Xcode projects need it; the hooks import this module

    try:
        with (folder / "info.plist").open("rb") as handle:
            value = plistlib.load(handle).get("WorkspacePath")
    except (OSError, plistlib.InvalidFileException, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _locate_xcode(project: Path) -> Location:
    base = derived_data_base(project)
    name = project.stem
    try:
        folders = [p for p in base.iterdir() if p.is_dir() and p.name.startswith(f"{name}-")]
    except OSError:
        folders = []
    if not folders:
        raise LocateError(
            f"No DerivedData folder for '{name}' under {base} — you haven't built the project in Xcode. "
            "Build it first."
        )
    notes: tuple[tuple[WarningCode, str], ...] = ()
    matching = [f for f in folders if _workspace_path(f) in (str(project), str(project.resolve()))]
    if matching:
        chosen = max(matching, key=lambda f: f.stat().st_mtime_ns)
    else:
        chosen = max(folders, key=lambda f: f.stat().st_mtime_ns)
        notes = (
            (
                WarningCode.DERIVED_DATA_NAME_MATCH,
                f"No DerivedData info.plist names {project}; using the newest '{name}-*' folder "
                f"({chosen.name}), which may belong to another checkout.",
            ),
        )
    store = chosen / "Index.noindex" / "DataStore"
    if not _is_store(store):
        raise LocateError(
            f"DerivedData folder '{chosen}' exists but has no Index.noindex/DataStore — the project built but "
            "indexing was disabled. Enable it in Xcode: Settings → General → Indexing, then build again."
        )
    return Location(store.resolve(), project.parent.resolve(), ProjectKind.XCODE, notes)


def workspace_root_for_store(store: Path) -> Path | None:
    """The nearest folder at most 10 levels above a store holding a Package.swift or an
    Xcode project: the same walk sourcekit-lsp's workspace root comes from."""
    from xcindex.project.workspace import workspace_root_for_index_store

    try:
        return workspace_root_for_index_store(store).path
    except CodedError:
        return None
