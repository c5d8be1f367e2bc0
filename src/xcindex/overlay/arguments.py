"""Per-file compiler arguments from SwiftPM's build products, read only.

SwiftPM writes every Swift module's compiler invocation into the build description,
`.build/<triple>/<config>/description.json` (`swiftCommands`: module name, sources,
import path, the rest of the flags), the same facts as the llbuild manifest
`.build/<config>.yaml`. The overlay re-uses that invocation to index one file of a module
against the modules the last build produced (`-I <…>/Modules`), dropping every flag that
would write into `.build` (the index store, the module cache, headers, dependency files).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from xcindex.indexstore.content import has_content
from xcindex.project.realpaths import RealPaths
from xcindex.project.watch import skipped

DESCRIPTION = "description.json"

_DROP = frozenset(
    {
        "-incremental",
        "-enable-batch-mode",
        "-serialize-diagnostics",
        "-parseable-output",
        "-emit-objc-header",
        "-emit-dependencies",
        "-emit-module",
        "-c",
        "-whole-module-optimization",
        "-wmo",
        "-save-temps",
        "-enable-incremental-file-hashing",
    }
)
"""Flags of the build's invocation that ask for outputs, or for a build-mode the overlay is not."""
_DROP_WITH_VALUE = frozenset(
    {
        "-index-store-path",
        "-index-unit-output-path",
        "-emit-objc-header-path",
        "-module-cache-path",
        "-output-file-map",
        "-emit-module-path",
        "-emit-dependencies-path",
        "-o",
        "-num-threads",
    }
)
"""Flags whose value names a place in `.build` the build writes: the overlay sets its own."""
_PASS_WITH_VALUE = frozenset({"-Xfrontend", "-Xcc", "-Xlinker", "-Xllvm", "-Xclang-linker"})


@dataclass(frozen=True)
class ModuleInvocation:
    """How the last build compiled one Swift module."""

    module_name: str
    executable: str
    sources: tuple[str, ...]
    import_path: str
    flags: tuple[str, ...]
    """The build's other arguments, without those that write (see `_DROP*`)."""

    def index_command(
        self, file: str, *, store: Path, module_cache: Path, unit_output: Path, modules: Path | None = None
    ) -> list[str]:
        """The driver's `-index-file` invocation: typecheck the module's sources, index only
        `file` into `store`. `unit_output` names the unit (never written); `modules`, when
        given, holds modules emitted from their sources as they are now (searched first)."""
        return [
            self.executable,
            "-module-name",
            self.module_name,
            *self.sources,
            *(["-I", str(modules)] if modules is not None else []),
            "-I",
            self.import_path,
            *self.flags,
            "-module-cache-path",
            str(module_cache),
            "-index-file",
            "-index-file-path",
            file,
            "-index-store-path",
            str(store),
            "-index-ignore-system-modules",
            # The file's own unit is all the overlay reads: a C module the file imports (a
            # package's C target) would otherwise be indexed into every run's store.
            "-index-ignore-clang-modules",
            "-o",
            str(unit_output),
        ]

    def emit_module_command(self, *, module_cache: Path, modules: Path) -> list[str]:
        """Emit this module's `.swiftmodule` from its sources as they are now into `modules`
        (for the files of modules that import it), never into the build."""
        return [
            self.executable,
            "-module-name",
            self.module_name,
            *self.sources,
            "-I",
            str(modules),
            "-I",
            self.import_path,
            *self.flags,
            "-module-cache-path",
            str(module_cache),
            "-emit-module",
            "-experimental-skip-non-inlinable-function-bodies",  # an interface is all importers read
            "-emit-module-path",
            str(modules / f"{self.module_name}.swiftmodule"),
        ]


def kept_flags(arguments: list[str]) -> tuple[str, ...]:
    """The build's flags minus those that ask for outputs or name a place it writes."""
    kept: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in _PASS_WITH_VALUE and index + 1 < len(arguments):
            kept += arguments[index : index + 2]
            index += 2
            continue
        if argument in _DROP_WITH_VALUE:
            index += 2
            continue
        if argument in _DROP or (argument.startswith("-j") and argument[2:].isdigit()):
            index += 1
            continue
        kept.append(argument)
        index += 1
    return tuple(kept)


def build_dir_for_store(store_path: Path) -> Path:
    """SwiftPM's store is `<build dir>/index/store`; the description sits in the build dir."""
    return store_path.parent.parent


def load_description(build_dir: Path) -> dict[str, Any]:
    """SwiftPM's build description (2 MB at the benchmark's L: read it once per change).
    Raises OSError/ValueError when it is missing or not a JSON object."""
    with open(build_dir / DESCRIPTION, encoding="utf-8") as handle:
        description = json.load(handle)
    if not isinstance(description, dict):
        raise ValueError(f"{build_dir / DESCRIPTION} is not a JSON object")
    return description


def load_dependencies(
    build_dir: Path, description: dict[str, Any] | None = None
) -> dict[str, tuple[str, ...]]:
    """Module → the modules it depends on (the build description's `targetDependencyMap`)."""
    if description is None:
        description = load_description(build_dir)
    found = description.get("targetDependencyMap", {})
    return {str(k): tuple(str(v) for v in vs) for k, vs in found.items()} if isinstance(found, dict) else {}


def load_invocations(
    build_dir: Path, description: dict[str, Any] | None = None, real_path: RealPaths | None = None
) -> dict[str, ModuleInvocation]:
    """Every Swift source of the build, by its path (as the build spelled it and by real
    path), with its module's invocation. Raises OSError/ValueError when the description
    is missing or not what SwiftPM writes."""
    if description is None:
        description = load_description(build_dir)
    commands = description.get("swiftCommands")
    if not isinstance(commands, dict):
        raise ValueError(f"{build_dir / DESCRIPTION} has no swiftCommands")
    by_file: dict[str, ModuleInvocation] = {}
    real_path = real_path or RealPaths()
    for command in commands.values():
        try:
            invocation = ModuleInvocation(
                module_name=str(command["moduleName"]),
                executable=str(command["executable"]),
                sources=tuple(str(s) for s in command["sources"]),
                import_path=str(command["importPath"]),
                flags=kept_flags([str(a) for a in command.get("otherArguments", [])]),
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"{build_dir / DESCRIPTION}: unexpected command shape ({error!r})") from None
        for source in invocation.sources:
            by_file[source] = invocation
            by_file.setdefault(real_path(source), invocation)
    return by_file


def description_mtime_ns(build_dir: Path) -> int:
    """When the build description last changed (0 when missing): the cache key for
    `load_invocations`."""
    try:
        return os.stat(build_dir / DESCRIPTION).st_mtime_ns
    except OSError:
        return 0


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


_TARGET_PARENTS = frozenset({"Sources", "Tests", "Plugins", "Snippets", "Examples"})
"""Folders SwiftPM's default layout puts a target's folder in (`Sources/<Target>`)."""


def _target_folder(sources: list[str]) -> str:
    """The folder SwiftPM compiles a target from: the deepest folder under `Sources/`,
    `Tests/`, … holding every source (the default layout), else their common folder (a
    custom `path:`)."""
    common = os.path.commonpath([os.path.dirname(source) for source in sources])
    folder = common
    while True:
        parent = os.path.dirname(folder)
        if os.path.basename(parent) in _TARGET_PARENTS:
            return folder
        if parent == folder:
            return common
        folder = parent


@dataclass(frozen=True)
class SourceMap:
    """Which module compiles a Swift file, now: the build's sources, and a file the build
    did not know (a new one) by the target folder it lies in. The invocation it gives lists
    the module's sources as they are on disk now (new files in, deleted ones out)."""

    by_file: dict[str, ModuleInvocation]
    folders: tuple[tuple[str, ModuleInvocation], ...]
    """Target folders (real paths), deepest first, with their module's invocation."""
    dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Module → the modules it depends on, transitively (the build's `targetDependencyMap`)."""

    @classmethod
    def from_invocations(
        cls,
        by_file: dict[str, ModuleInvocation],
        dependencies: dict[str, tuple[str, ...]] | None = None,
        real_path: RealPaths | None = None,
    ) -> SourceMap:
        modules: dict[str, list[str]] = {}
        invocations: dict[str, ModuleInvocation] = {}
        real_path = real_path or RealPaths()
        for source, invocation in by_file.items():
            if "/.build/" in source or source != real_path(source):
                continue  # generated (test discovery), or a second spelling of a path
            modules.setdefault(invocation.module_name, []).append(source)
            invocations[invocation.module_name] = invocation
        folders = sorted(
            ((_target_folder(sources), invocations[name]) for name, sources in modules.items()),
            key=lambda item: -item[0].count("/"),
        )
        return cls(by_file, tuple(folders), dict(dependencies or {}))

    def module(self, name: str) -> ModuleInvocation | None:
        return next((invocation for _, invocation in self.folders if invocation.module_name == name), None)

    def dependency_sources(self, module: str) -> list[str]:
        """Every source of the modules `module` depends on, as the build listed them."""
        found: list[str] = []
        for name in self.dependencies.get(module, ()):
            invocation = self.module(name)
            if invocation is not None:
                found.extend(invocation.sources)
        return found

    def changed_dependencies(
        self,
        module: str,
        *,
        built_ns: int,
        also: frozenset[str] = frozenset(),
        as_built: Mapping[str, tuple[int, bytes]] | None = None,
    ) -> tuple[list[ModuleInvocation], list[str]]:
        """The modules `module` depends on whose sources changed since the build (edited, new
        or deleted), dependencies first, to emit (other modules see them as built until
        re-emitted); and the names of the others, as built, whose copies emitted into the
        overlay's folder earlier are to be removed (that folder is searched first).

        A source written since the build whose content is the one the build compiled
        (`as_built`: size and digest, from the database; `git checkout`, an edit undone) is
        not a change. (At the benchmark's L such a file in a module made every edit in the
        modules that import it wait 51 s for that module to be emitted.)"""
        wanted = self.dependencies.get(module, ())
        as_built = as_built or {}
        changed: list[ModuleInvocation] = []
        unchanged: list[str] = []
        for name in reversed(wanted):  # the map lists the nearest first; emit the deepest first
            invocation = self.module(name)
            if invocation is None:
                continue
            current = self.as_it_is_now(invocation, built_ns=built_ns, also=also)
            if current.sources != invocation.sources or any(
                _mtime_ns(source) > built_ns
                and not ((known := as_built.get(source)) is not None and has_content(source, *known))
                for source in current.sources
            ):
                changed.append(current)
            else:
                unchanged.append(name)
        return changed, unchanged

    def module_of(self, path: str) -> ModuleInvocation | None:
        found = self.by_file.get(path) or self.by_file.get(os.path.realpath(path))
        if found is not None:
            return found
        real = os.path.realpath(path)
        for folder, invocation in self.folders:
            if real.startswith(folder + "/"):
                return invocation
        return None

    def folder_of(self, invocation: ModuleInvocation) -> str | None:
        return next((folder for folder, owner in self.folders if owner is invocation), None)

    def invocation_for(
        self, path: str, *, built_ns: int = 0, also: frozenset[str] = frozenset()
    ) -> ModuleInvocation | None:
        """The module's invocation for `path` with the module's sources as they are now
        (`as_it_is_now`), `path` among them."""
        owner = self.module_of(path)
        if owner is None:
            return None
        current = self.as_it_is_now(owner, built_ns=built_ns, also=also)
        real_path = RealPaths()
        known = {real_path(source) for source in current.sources}
        if os.path.realpath(path) in known:
            return current
        return replace(current, sources=(*current.sources, path))

    def as_it_is_now(
        self, owner: ModuleInvocation, *, built_ns: int = 0, also: frozenset[str] = frozenset()
    ) -> ModuleInvocation:
        """`owner` with its sources as they are now: the build's that still exist, and the
        Swift files written in its target folder since the build (`built_ns`: older ones it
        did not compile are left out on purpose, by an `exclude:` of the manifest) or among
        `also` (files that appeared since the process first looked: moved, or copied with
        their times kept)."""
        listed = [source for source in owner.sources if os.path.exists(source)]
        real_path = RealPaths()
        known = {real_path(source) for source in listed}
        folder = self.folder_of(owner)
        added: list[str] = []
        if folder is not None:
            for current, folders, files in os.walk(folder):
                folders[:] = [name for name in folders if not skipped(name)]
                for name in sorted(files):
                    candidate = os.path.join(current, name)
                    if not name.endswith(".swift") or real_path(candidate) in known:
                        continue
                    if _mtime_ns(candidate) > built_ns or candidate in also:
                        added.append(candidate)
        if not added and len(listed) == len(owner.sources):
            return owner
        return replace(owner, sources=(*listed, *added))

    def roots(self) -> tuple[Path, ...]:
        """Where the project's Swift sources are: each target folder's `Sources/`-like parent
        (so a file put beside the targets is seen too), else the folder; nested ones dropped."""
        candidates = sorted(
            {
                os.path.dirname(folder)
                if os.path.basename(os.path.dirname(folder)) in _TARGET_PARENTS
                else folder
                for folder, _invocation in self.folders
            }
        )
        kept: list[str] = []
        for candidate in candidates:
            if not any(candidate.startswith(root + "/") or candidate == root for root in kept):
                kept.append(candidate)
        return tuple(Path(root) for root in kept)

    def outside_targets(self, path: str) -> bool:
        return self.module_of(path) is None

    def lists(self, path: str) -> bool:
        """Whether the build planned to compile `path` (a module's source in its description)."""
        return path in self.by_file or os.path.realpath(path) in self.by_file
