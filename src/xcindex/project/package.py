"""What SwiftPM says a package is: its targets, their kinds, sources and dependencies.

Asked of SwiftPM itself (`swift package describe --type json`), never guessed from imports:
a library that imports XCTest is not a test target, and an executable's tests depend on it
without referencing a symbol of it. The answer is cached per package by Package.swift's
modification time, in the process and on disk (beside SwiftPM's scratch folder, which is
kept in xcindex's cache, so nothing is written into the project): a one-shot CLI call does
not pay for SwiftPM again (about 0.4 s) while the manifest and every folder of sources are
as they were (a file added or removed changes its folder's time).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from xcindex._log import get_logger

log = get_logger(__name__)

DESCRIBE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class PackageTarget:
    name: str
    kind: str
    """SwiftPM's type: `library`, `executable`, `test`, `macro`, `plugin`, `snippet`, …"""
    sources: tuple[str, ...]
    """Absolute real paths of its source files."""
    dependencies: tuple[str, ...]
    """Names of the targets it depends on in this package."""
    folder: str = ""
    """The absolute real path of its sources' folder (a file added there since is its too)."""


_NOT_INDEXED = frozenset({"snippet", "plugin"})
"""Target kinds whose sources the build compiles without writing them into the index store."""


@dataclass(frozen=True)
class PackageDescription:
    root: str
    targets: tuple[PackageTarget, ...]
    executable_products: tuple[tuple[str, str], ...] = ()
    """(product, its executable target) for each executable product SwiftPM describes."""

    @cached_property
    def _by_source(self) -> dict[str, PackageTarget]:
        return {source: target for target in self.targets for source in target.sources}

    def target_of(self, path: str) -> PackageTarget | None:
        """The target compiling `path`. The index's paths are the compiler's, real paths as
        SwiftPM passes them: resolving symlinks (a few system calls per path component)
        is left for a path not found as it is."""
        found = self._by_source.get(path)
        return found if found is not None else self._by_source.get(os.path.realpath(path))

    def in_a_target_folder(self, path: str) -> bool:
        """Whether `path` lies in the folder of a target the build indexes: a file there is
        in the index after the next build (unless the manifest excludes it); one elsewhere
        (Package@swift-6.1.swift) never is, nor one of a snippet or a plugin (SwiftPM builds
        a snippet without writing its index: Snippets/ holds snippet targets)."""
        real = os.path.realpath(path)
        return any(
            t.folder and t.kind not in _NOT_INDEXED and (real + os.sep).startswith(t.folder + os.sep)
            for t in self.targets
        )

    def is_test_file(self, path: str) -> bool:
        owner = self.target_of(path)
        return owner is not None and owner.kind == "test"

    def executable_names(self, target: str) -> set[str]:
        """The names an executable target is built under: its own (SwiftPM makes a product of
        every executable target) and each executable product's made of it."""
        return {target} | {product for product, made_of in self.executable_products if made_of == target}

    def dependents(self, name: str) -> set[str]:
        """Targets that depend on `name`, transitively."""
        found: set[str] = set()
        frontier = {name}
        while frontier:
            reached = {
                t.name for t in self.targets if frontier.intersection(t.dependencies) and t.name not in found
            }
            found |= reached
            frontier = reached
        return found


def parse_description(root: Path, text: str) -> PackageDescription:
    data = json.loads(text)
    targets: list[PackageTarget] = []
    for target in data.get("targets", []):
        folder = root / target.get("path", "")
        sources = tuple(sorted(os.path.realpath(folder / source) for source in target.get("sources", [])))
        targets.append(
            PackageTarget(
                name=str(target["name"]),
                kind=str(target.get("type", "")),
                sources=sources,
                dependencies=tuple(str(d) for d in target.get("target_dependencies") or ()),
                folder=os.path.realpath(folder),
            )
        )
    executables = tuple(
        (str(product["name"]), str(product["targets"][0]))
        for product in data.get("products", [])
        if "executable" in (product.get("type") or {}) and product.get("targets")
    )
    return PackageDescription(os.path.realpath(root), tuple(targets), executables)


SAVED_NAME = "description.json"


def _folders(description: PackageDescription) -> list[str]:
    """Every folder holding a target's sources, and each target's own folder."""
    return sorted(
        {t.folder for t in description.targets if t.folder}
        | {os.path.dirname(s) for t in description.targets for s in t.sources}
    )


def _stamp(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _manifests(manifest: Path) -> dict[str, list[int] | None]:
    """Package.swift's stamp, and each version-specific manifest's (SwiftPM may read one
    of those instead)."""
    found = {manifest.name: _stamp(str(manifest))}
    try:
        with os.scandir(manifest.parent) as entries:
            found.update(
                (e.name, _stamp(e.path))
                for e in entries
                if e.name.startswith("Package@swift") and e.name.endswith(".swift")
            )
    except OSError:
        pass
    return found


def _save(file: Path, manifest: Path, description: PackageDescription, text: str) -> None:
    """Keep SwiftPM's answer with what it depended on (written whole, or not at all)."""
    saved = {
        "manifest": _manifests(manifest),
        "folders": {folder: _stamp(folder) for folder in _folders(description)},
        "describe": text,
    }
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(saved), encoding="utf-8")
        os.replace(partial, file)
    except OSError as error:
        log.info("package_description_not_saved", file=str(file), error=str(error))


def _read_saved(file: Path, root: Path, manifest: Path) -> PackageDescription | None:
    """The saved description, if the manifest and every folder of sources are as they were."""
    try:
        saved = json.loads(file.read_text(encoding="utf-8"))
        if saved["manifest"] != _manifests(manifest):
            return None
        if any(_stamp(folder) != stamp for folder, stamp in saved["folders"].items()):
            return None
        return parse_description(root, str(saved["describe"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


_cache: dict[str, tuple[int, PackageDescription | None]] = {}
_lock = threading.Lock()


def _private_env(scratch_root: Path) -> dict[str, str]:
    """SwiftPM and clang keep caches in HOME and TMPDIR (manifests, module cache, URL
    cache): point both into xcindex's cache folder, so that reading a package's description
    writes nothing of the user's."""
    home, tmp = scratch_root / "home", scratch_root / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(tmp)}


def describe_package(root: Path, scratch_root: Path) -> PackageDescription | None:
    """The package at root as SwiftPM describes it; None when it is not a package or SwiftPM
    cannot describe it (the caller falls back to what the index says). Blocking."""
    manifest = root / "Package.swift"
    try:
        mtime = manifest.stat().st_mtime_ns
    except OSError:
        return None
    key = os.path.realpath(root)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == mtime:
            return cached[1]
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    scratch = scratch_root / f"{root.name[:40]}-{hashlib.sha1(key.encode()).hexdigest()[:16]}"
    saved = _read_saved(scratch / SAVED_NAME, root, manifest)
    if saved is not None:
        with _lock:
            _cache[key] = (mtime, saved)
        return saved
    try:
        result = subprocess.run(
            [
                swift,
                "package",
                "--package-path",
                str(root),
                "--scratch-path",
                str(scratch),
                "describe",
                "--type",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=DESCRIBE_TIMEOUT_S,
            check=False,
            env=_private_env(scratch_root),
        )
        description = parse_description(root, result.stdout) if result.returncode == 0 else None
        if description is not None:
            _save(scratch / SAVED_NAME, manifest, description, result.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
        log.warning("package_describe_failed", root=key, error=str(error))
        description = None
    with _lock:
        _cache[key] = (mtime, description)
    return description
