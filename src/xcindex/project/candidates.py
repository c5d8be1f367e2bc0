"""Swift packages and Xcode projects on disk, which one a folder means, and how fresh its index is.

The session-start hook, the doctor and the server share this. Import-light (`os` and `time`,
folders as plain strings): the session-start hook runs it without `pathlib`, `re` or the
vocabulary's enums (together, half of its run); the `Path` and `ProjectKind` views are for
everyone else.
"""

from __future__ import annotations

import os
import time

from xcindex._record import Record
from xcindex.project.store_layout import units_dir

TYPE_CHECKING = False  # `typing` is a hook's import too many
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from xcindex.vocabulary import ProjectKind

BUILD_COMMAND = "swift build --build-tests"
PRUNED_DIRS = frozenset({".git", ".build", "Pods", "node_modules", "DerivedData"})
STALE_NAMES_SHOWN = 5
PROJECT_SEARCH_DEPTH = 2
SWIFTPM = "swiftpm"
"""`ProjectKind.SWIFTPM`'s value, for the import-light path (a unit test holds them equal)."""
XCODE = "xcode"
"""`ProjectKind.XCODE`'s value."""


class Project(Record):
    """A project found on disk: `folder` is the package folder, or the .xcodeproj/.xcworkspace;
    `kind_name` is a ProjectKind's value: swiftpm or xcode."""

    __slots__ = ("folder", "kind_name")
    _fields = ("folder", "kind_name")
    folder: str
    kind_name: str

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(os.fspath(path), str(kind))

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self.folder)

    @property
    def kind(self) -> ProjectKind:
        from xcindex.vocabulary import ProjectKind

        return ProjectKind(self.kind_name)

    @property
    def root_folder(self) -> str:
        """The folder whose Swift sources the index covers."""
        return self.folder if self.kind_name == SWIFTPM else os.path.dirname(self.folder)

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.root_folder)

    @property
    def name(self) -> str:
        base = os.path.basename(self.folder)
        return _stem(base) if self.kind_name == XCODE else base


def _suffix(name: str) -> str:
    """`Path(name).suffix`: a leading dot does not start one."""
    return os.path.splitext(name)[1]


def _stem(name: str) -> str:
    return os.path.splitext(name)[0]


def list_folder(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(os.fspath(folder)) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def find_projects(directory: str | os.PathLike[str], depth: int = PROJECT_SEARCH_DEPTH) -> list[Project]:
    """Swift packages and Xcode projects at or below `directory`, shallowest first.

    At one depth a Package.swift comes before an .xcworkspace, which comes before an
    .xcodeproj. Build and dependency folders are not searched, nor are Xcode bundles.
    """
    found: list[Project] = []
    level = [os.fspath(directory)]
    for _ in range(depth + 1):
        packages: list[Project] = []
        workspaces: list[Project] = []
        xcodeprojs: list[Project] = []
        deeper: list[str] = []
        for folder in level:
            for entry in list_folder(folder):
                try:
                    is_dir = entry.is_dir()
                    is_file = entry.is_file()
                except OSError:
                    continue
                suffix = _suffix(entry.name)
                if entry.name == "Package.swift" and is_file:
                    packages.append(Project(folder, SWIFTPM))
                elif not is_dir:
                    continue
                elif suffix == ".xcworkspace":
                    workspaces.append(Project(entry.path, XCODE))
                elif suffix == ".xcodeproj":
                    xcodeprojs.append(Project(entry.path, XCODE))
                elif entry.name not in PRUNED_DIRS and not entry.name.startswith("."):
                    deeper.append(entry.path)
        found += packages + workspaces + xcodeprojs
        level = deeper
    return found


def holds_project(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` itself holds a Package.swift, an .xcodeproj or an .xcworkspace."""
    return any(
        entry.name == "Package.swift" or entry.name.endswith((".xcodeproj", ".xcworkspace"))
        for entry in list_folder(folder)
    )


def enclosing_project_dir(start: str | os.PathLike[str]) -> str | None:
    """The nearest folder from `start` up that holds a project (as git finds its repository
    from a subfolder): a session or a command started in `Package/Sources` is about
    `Package`. None when no folder up to the root holds one."""
    current = os.path.abspath(start)
    while True:
        if holds_project(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def enclosing_project_folder(start: str | os.PathLike[str]) -> Path | None:
    """`enclosing_project_dir` as a Path."""
    from pathlib import Path

    found = enclosing_project_dir(start)
    return None if found is None else Path(found)


def project_dirs_for(directory: str | os.PathLike[str]) -> tuple[str, list[Project]]:
    """Where a session started in `directory` looks, and the projects it finds there: the
    enclosing project folder (from `directory` up) when there is one, else `directory` and
    the projects up to two folders below it."""
    folder = enclosing_project_dir(directory) or os.path.abspath(directory)
    return folder, find_projects(folder)


def projects_for(directory: str | os.PathLike[str]) -> tuple[Path, list[Project]]:
    """`project_dirs_for`, its folder as a Path."""
    from pathlib import Path

    folder, found = project_dirs_for(directory)
    return Path(folder), found


def newest_unit_mtime_ns(store: str | os.PathLike[str]) -> int | None:
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


def _swift_files(root: str | os.PathLike[str]) -> Iterator[tuple[str, int]]:
    """Every Swift file under `root` with its mtime, as `os.walk` finds them (folders that
    are symbolic links are not entered), in plain strings and one `scandir` per folder (a
    Path per file was a third of the walk, which the session-start hook makes of the whole
    project; os.walk's lists a quarter of what was left)."""
    pending = [os.fspath(root)]
    while pending:
        folder = pending.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.name not in PRUNED_DIRS and not entry.is_symlink():
                        pending.append(entry.path)
                elif entry.name.endswith(".swift"):
                    try:
                        yield entry.path, entry.stat().st_mtime_ns
                    except OSError:
                        continue


def swift_files_newer_than(root: str | os.PathLike[str], mtime_ns: int) -> list[str]:
    """Swift sources under `root` modified after `mtime_ns`, newest first."""
    newer = [(mtime, path) for path, mtime in _swift_files(root) if mtime > mtime_ns]
    newer.sort(key=lambda item: (-item[0], item[1]))
    return [path for _, path in newer]


def format_time(mtime_ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime_ns / 1e9))


def rebuild_advice(project: Project) -> str:
    """The command that refreshes the project's index, in words (nothing is run: the hooks
    say it, and xcodebuild takes seconds to list an Xcode project's schemes)."""
    if project.kind_name == SWIFTPM:
        return f"`{BUILD_COMMAND}` in {project.root_folder}"
    import shlex  # an Xcode project's path is quoted for a shell; `shlex` imports `re`

    flag = "-workspace" if _suffix(project.folder) == ".xcworkspace" else "-project"
    return (
        f"a build in Xcode, or `xcodebuild build {flag} {shlex.quote(project.folder)} -scheme <scheme>`; "
        "`xcindex build-commands` names the schemes"
    )


def project_at(path: Path) -> Project | list[Project] | None:
    """The project a path names: an .xcodeproj/.xcworkspace, a Package.swift, a package
    folder, or a folder holding one project (the projects when it holds several unrelated
    ones); None when it names none."""
    if path.suffix in (".xcodeproj", ".xcworkspace") and path.exists():
        return Project(path, XCODE)
    if path.name == "Package.swift" and path.is_file():
        return Project(path.parent, SWIFTPM)
    if (path / "Package.swift").is_file():
        return Project(path, SWIFTPM)
    found = find_projects(path) if path.is_dir() else []
    if not found:
        return None
    return choose_project(path, found) or found


def choose_project(directory: str | os.PathLike[str], found: list[Project]) -> Project | None:
    """The project `directory` means, from `find_projects(directory)`; None when it is ambiguous.

    One project folder among the candidates (a package beside its Xcode project counts once),
    or a project in `directory` itself, is the answer. Several unrelated projects further
    down are not: the caller names them and asks which one, rather than adopting one.
    """
    if not found:
        return None
    if len({project.root_folder for project in found}) == 1:
        return found[0]
    spelled = os.fspath(directory)
    here = [project for project in found if project.root_folder == spelled]
    return here[0] if here else None


_DESCRIPTION_HEAD = 65536


def _json_string_after(head: bytes, key: bytes) -> bytes | None:
    """The string value of the first `"key": "…"` in `head` (no escaped quote inside it)."""
    at = head.find(key)
    while at >= 0:
        position = at + len(key)
        while head[position : position + 1].isspace():
            position += 1
        if head[position : position + 1] == b":":
            position += 1
            while head[position : position + 1].isspace():
                position += 1
            end = head.find(b'"', position + 1)
            if head[position : position + 1] == b'"' and end > position + 1:
                return head[position + 1 : end]
        at = head.find(key, at + 1)
    return None


def _folder_before_build(head: bytes) -> bytes | None:
    """The folder of the first JSON string holding a `/.build/` path: `"/pkg/.build/…"` → `/pkg`."""
    at = head.find(b"/.build/")
    while at >= 0:
        opening = head.rfind(b'"', 0, at)
        if opening >= 0 and head[opening + 1 : opening + 2] == b"/":
            return head[opening + 1 : at]
        at = head.find(b"/.build/", at + 1)
    return None


def swiftpm_built_in(store: str | os.PathLike[str], root: str | os.PathLike[str]) -> str | None:
    """The folder a SwiftPM package's index was built in, when that is not `root` (the package
    was copied or moved after its build, and its index names the other folder's files); None
    when it was built here or nothing says. Reads the head of SwiftPM's build description
    beside the store (`.build/<triple>/debug/description.json`), never the database: the
    session-start hook is meant to be cheap. Real paths on both sides, so a package reached
    through a symbolic link is the package it links to."""
    description = os.path.join(os.path.dirname(os.path.dirname(os.fspath(store))), "description.json")
    try:
        with open(description, "rb") as handle:
            head = handle.read(_DESCRIPTION_HEAD)
    except OSError:
        return None
    found = _json_string_after(head, b'"packagePath"') or _folder_before_build(head)
    if found is None:
        return None
    built = found.replace(b"\\/", b"/").decode("utf-8", "replace")
    if os.path.realpath(built) == os.path.realpath(root):
        return None
    return built
