"""Swift packages and Xcode projects on disk, which one a folder means, and how fresh its index is.

The session-start hook, the doctor and the server share this. Import-light (stdlib only):
the hooks run on every edit an agent makes.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

from xcindex._record import Record
from xcindex.project.store_layout import units_dir
from xcindex.vocabulary import ProjectKind

BUILD_COMMAND = "swift build --build-tests"
PRUNED_DIRS = frozenset({".git", ".build", "Pods", "node_modules", "DerivedData"})
STALE_NAMES_SHOWN = 5
PROJECT_SEARCH_DEPTH = 2


class Project(Record):
    """A project found on disk: `path` is the package folder, or the .xcodeproj/.xcworkspace;
    `kind` is a ProjectKind: swiftpm or xcode."""

    __slots__ = ("kind", "path")
    _fields = ("path", "kind")
    path: Path
    kind: ProjectKind

    def __init__(self, path: Path, kind: ProjectKind) -> None:
        super().__init__(path, kind)

    @property
    def root(self) -> Path:
        """The folder whose Swift sources the index covers."""
        return self.path if self.kind is ProjectKind.SWIFTPM else self.path.parent

    @property
    def name(self) -> str:
        return self.path.stem if self.kind is ProjectKind.XCODE else self.path.name


def list_folder(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def find_projects(directory: Path, depth: int = PROJECT_SEARCH_DEPTH) -> list[Project]:
    """Swift packages and Xcode projects at or below `directory`, shallowest first.

    At one depth a Package.swift comes before an .xcworkspace, which comes before an
    .xcodeproj. Build and dependency folders are not searched, nor are Xcode bundles.
    """
    found: list[Project] = []
    level = [directory]
    for _ in range(depth + 1):
        packages: list[Project] = []
        workspaces: list[Project] = []
        xcodeprojs: list[Project] = []
        deeper: list[Path] = []
        for folder in level:
            for entry in list_folder(folder):
                path = Path(entry.path)
                try:
                    is_dir = entry.is_dir()
                    is_file = entry.is_file()
                except OSError:
                    continue
                if entry.name == "Package.swift" and is_file:
                    packages.append(Project(folder, ProjectKind.SWIFTPM))
                elif not is_dir:
                    continue
                elif path.suffix == ".xcworkspace":
                    workspaces.append(Project(path, ProjectKind.XCODE))
                elif path.suffix == ".xcodeproj":
                    xcodeprojs.append(Project(path, ProjectKind.XCODE))
                elif entry.name not in PRUNED_DIRS and not entry.name.startswith("."):
                    deeper.append(path)
        found += packages + workspaces + xcodeprojs
        level = deeper
    return found


def holds_project(folder: Path) -> bool:
    """Whether `folder` itself holds a Package.swift, an .xcodeproj or an .xcworkspace."""
    return any(
        entry.name == "Package.swift" or entry.name.endswith((".xcodeproj", ".xcworkspace"))
        for entry in list_folder(folder)
    )


def enclosing_project_folder(start: Path) -> Path | None:
    """The nearest folder from `start` up that holds a project (as git finds its repository
    from a subfolder): a session or a command started in `Package/Sources` is about
    `Package`. None when no folder up to the root holds one."""
    current = Path(os.path.abspath(start))
    while True:
        if holds_project(current):
            return current
        if current.parent == current:
            return None
        current = current.parent


def projects_for(directory: Path) -> tuple[Path, list[Project]]:
    """Where a session started in `directory` looks, and the projects it finds there: the
    enclosing project folder (from `directory` up) when there is one, else `directory` and
    the projects up to two folders below it."""
    folder = enclosing_project_folder(directory) or directory
    return folder, find_projects(folder)


def newest_unit_mtime_ns(store: Path) -> int | None:
    """When the compiler last wrote a unit into the store; None if it holds none."""
    newest: int | None = None
    try:
        with os.scandir(units_dir(store)) as entries:
            for entry in entries:
                try:
                    mtime = entry.stat(follow_symlinks=False).st_mtime_ns
                except OSError:
                    continue
                newest = mtime if newest is None else max(newest, mtime)
    except OSError:
        return None
    return newest


def _swift_files(root: Path) -> Iterator[tuple[str, int]]:
    """Every Swift file under `root` with its mtime: plain strings (a Path per file was a
    third of the walk, which the session-start hook makes of the whole project)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in PRUNED_DIRS]
        for name in files:
            if name.endswith(".swift"):
                path = os.path.join(folder, name)
                try:
                    yield path, os.stat(path).st_mtime_ns
                except OSError:
                    continue


def swift_files_newer_than(root: Path, mtime_ns: int) -> list[Path]:
    """Swift sources under `root` modified after `mtime_ns`, newest first."""
    newer = [(mtime, path) for path, mtime in _swift_files(root) if mtime > mtime_ns]
    newer.sort(key=lambda item: (-item[0], item[1]))
    return [Path(path) for _, path in newer]


def format_time(mtime_ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime_ns / 1e9))


def rebuild_advice(project: Project) -> str:
    """The command that refreshes the project's index, in words (nothing is run: the hooks
    say it, and xcodebuild takes seconds to list an Xcode project's schemes)."""
    if project.kind is ProjectKind.SWIFTPM:
        return f"`{BUILD_COMMAND}` in {project.root}"
    flag = "-workspace" if project.path.suffix == ".xcworkspace" else "-project"
    return (
        f"a build in Xcode, or `xcodebuild build {flag} {shlex.quote(str(project.path))} -scheme <scheme>`; "
        "`xcindex build-commands` names the schemes"
    )


def project_at(path: Path) -> Project | list[Project] | None:
    """The project a path names: an .xcodeproj/.xcworkspace, a Package.swift, a package
    folder, or a folder holding one project (the projects when it holds several unrelated
    ones); None when it names none."""
    if path.suffix in (".xcodeproj", ".xcworkspace") and path.exists():
        return Project(path, ProjectKind.XCODE)
    if path.name == "Package.swift" and path.is_file():
        return Project(path.parent, ProjectKind.SWIFTPM)
    if (path / "Package.swift").is_file():
        return Project(path, ProjectKind.SWIFTPM)
    found = find_projects(path) if path.is_dir() else []
    if not found:
        return None
    return choose_project(path, found) or found


def choose_project(directory: Path, found: list[Project]) -> Project | None:
    """The project `directory` means, from `find_projects(directory)`; None when it is ambiguous.

    One project folder among the candidates (a package beside its Xcode project counts once),
    or a project in `directory` itself, is the answer. Several unrelated projects further
    down are not: the caller names them and asks which one, rather than adopting one.
    """
    if not found:
        return None
    if len({project.root for project in found}) == 1:
        return found[0]
    here = [project for project in found if project.root == directory]
    return here[0] if here else None


_DESCRIPTION_HEAD = 65536
_PACKAGE_PATH = re.compile(rb'"packagePath"\s*:\s*"([^"]+)"')
_BUILD_PATH = re.compile(rb'"(/[^"]*?)/\.build/')


def swiftpm_built_in(store: Path, root: Path) -> str | None:
    """The folder a SwiftPM package's index was built in, when that is not `root` (the package
    was copied or moved after its build, and its index names the other folder's files); None
    when it was built here or nothing says. Reads the head of SwiftPM's build description
    beside the store (`.build/<triple>/debug/description.json`), never the database: the
    session-start hook is meant to be cheap. Real paths on both sides, so a package reached
    through a symbolic link is the package it links to."""
    try:
        with open(store.parent.parent / "description.json", "rb") as handle:
            head = handle.read(_DESCRIPTION_HEAD)
    except OSError:
        return None
    found = _PACKAGE_PATH.search(head) or _BUILD_PATH.search(head)
    if found is None:
        return None
    built = found.group(1).replace(b"\\/", b"/").decode("utf-8", "replace")
    if os.path.realpath(built) == os.path.realpath(root):
        return None
    return built
