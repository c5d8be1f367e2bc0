"""Where sourcekit-lsp should run: the workspace root (the binary is `xcindex.project.toolchain`'s).

Both are small synchronous file-system checks (a handful of `stat` calls).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from xcindex.errors import CodedError
from xcindex.vocabulary import ProjectKind, WarningCode

MAX_LEVELS_UP = 10

_XCODE_SUFFIXES = (".xcodeproj", ".xcworkspace")
_BUILD_SETTINGS_FILES = ("compile_commands.json", "buildServer.json")


WorkspaceKind = ProjectKind
"""A workspace root is a Swift package or an Xcode project (the vocabulary's ProjectKind)."""


@dataclass(frozen=True)
class WorkspaceRoot:
    """A folder sourcekit-lsp can open, and what it will find there.

    `has_build_settings` is False for an Xcode project without `compile_commands.json`,
    `buildServer.json` or a `.bsp/` connection file: sourcekit-lsp cannot compile its files
    and answers position requests with nothing.
    """

    path: Path
    kind: WorkspaceKind
    has_build_settings: bool

    @property
    def warnings(self) -> tuple[WarningCode, ...]:
        if self.has_build_settings:
            return ()
        return (WarningCode.COMPILE_COMMANDS_MISSING,)

    def warnings_for_answer(self, *, empty: bool) -> tuple[WarningCode, ...]:
        """The workspace warnings to attach to an LSP answer (empty or not)."""
        if empty and not self.has_build_settings:
            return (*self.warnings, WarningCode.SOURCEKIT_LSP_NEEDS_COMPILE_COMMANDS)
        return self.warnings


def _is_xcode_container(path: Path) -> bool:
    return path.suffix in _XCODE_SUFFIXES


def _root_at(folder: Path) -> WorkspaceRoot | None:
    """The workspace rooted at `folder`, if it holds a package or an Xcode project."""
    try:
        if (folder / "Package.swift").is_file():
            return WorkspaceRoot(folder, WorkspaceKind.SWIFTPM, has_build_settings=True)
        if any(_is_xcode_container(child) for child in folder.iterdir()):
            return WorkspaceRoot(folder, WorkspaceKind.XCODE, _has_build_settings(folder))
    except OSError:
        return None
    return None


def _has_build_settings(folder: Path) -> bool:
    if any((folder / name).is_file() for name in _BUILD_SETTINGS_FILES):
        return True
    bsp = folder / ".bsp"
    return bsp.is_dir() and any(entry.suffix == ".json" for entry in bsp.iterdir())


def _unresolved(message: str) -> CodedError:
    return CodedError(WarningCode.WORKSPACE_ROOT_UNRESOLVED, message)


def _walk_up(start: Path, max_levels: int) -> WorkspaceRoot | None:
    folder = start
    for _ in range(max_levels + 1):
        found = _root_at(folder)
        if found is not None:
            return found
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


def workspace_root_for_project(project_path: Path) -> WorkspaceRoot:
    """The root for a projectPath: an .xcodeproj/.xcworkspace, a package folder or Package.swift.

    A workspace nested in a project (`App.xcodeproj/project.xcworkspace`) or in a package's
    `.swiftpm/xcode/` folder belongs to that project or package. Any other folder is
    searched upwards like an index store path.
    """
    path = Path(os.path.realpath(project_path))
    if not path.exists():
        raise _unresolved(f"projectPath {project_path} does not exist")
    if path.name == "Package.swift" and path.is_file():
        return WorkspaceRoot(path.parent, WorkspaceKind.SWIFTPM, has_build_settings=True)
    containers = [p for p in (path, *path.parents) if _is_xcode_container(p)]
    if containers:
        outermost = containers[-1]
        folder = outermost.parent
        if folder.name == "xcode" and folder.parent.name == ".swiftpm":
            folder = folder.parent.parent
        found = _root_at(folder)
        if found is not None:
            return found
        return WorkspaceRoot(folder, WorkspaceKind.XCODE, _has_build_settings(folder))
    found = _walk_up(path if path.is_dir() else path.parent, MAX_LEVELS_UP)
    if found is None:
        raise _unresolved(f"no Package.swift, .xcodeproj or .xcworkspace at or above {project_path}")
    return found


def workspace_root_for_index_store(store_path: Path, *, max_levels: int = MAX_LEVELS_UP) -> WorkspaceRoot:
    """The root for an index store: the nearest folder at most `max_levels` above it that holds
    a Package.swift, an .xcodeproj or an .xcworkspace."""
    start = Path(os.path.realpath(store_path))
    found = _walk_up(start, max_levels)
    if found is None:
        raise _unresolved(
            f"no Package.swift, .xcodeproj or .xcworkspace within {max_levels} levels above {store_path}"
        )
    return found


def resolve_workspace_root(
    *, project_path: Path | None = None, index_store_path: Path | None = None
) -> WorkspaceRoot:
    """The workspace root from a projectPath (preferred) or an index store path.

    Raises:
        CodedError: workspace_root_unresolved.
    """
    try:
        if project_path is not None:
            if not project_path.is_absolute():
                # Relative to what? Never to the server's own working directory.
                raise _unresolved(f"projectPath {project_path} is not an absolute path")
            return workspace_root_for_project(project_path)
        if index_store_path is not None:
            return workspace_root_for_index_store(index_store_path)
    except (OSError, ValueError) as error:
        # A path the file system refuses (too long, a NUL byte): no root, and a reason.
        raise _unresolved(f"cannot resolve a workspace root: {error}") from None
    raise _unresolved("neither projectPath nor indexStorePath was given")
