"""sourcekit-lsp reading the package's own build instead of building and indexing it again.

With background indexing on (its default), sourcekit-lsp prepares every target and indexes
every file of a package in its own scratch folder before it can answer a references query:
22 s on a quiet machine, minutes on a loaded one, for a package the user has already built.
With it off, sourcekit-lsp 6.3 reads the index store and the modules of the build folder it
is given (`swiftPM.scratchPath`): `<scratch>/<triple>/debug/index/store`, and it writes its
own index database beside it, in `<scratch>/<triple>/debug/index/db` (the `index` options
that once named the store and the database apart are gone in 6.3).

xcindex never writes into the project, so the scratch folder it gives is a *view* of the
build in xcindex's cache: the build's index store and `Modules` (what type checking a file
reads), its executables (macro plugins) and its dependencies' checkouts, linked; the index
database, the clang module cache and the module maps SwiftPM regenerates on loading the
package (with this folder's paths in them), real and private. Nothing SwiftPM or
sourcekit-lsp writes there can reach the project: only folders they only read are linked,
and `workspace-state.json` is copied.

The build's store describes the files as they were built. Reconciliation knows which files
changed since (`tools/rename/reconcile.py`): it never takes sourcekit-lsp's word from the
store on them, and asks it what is at each of their sites instead (type checking reads the
file as it is now).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from xcindex.project.store_layout import is_store

CONFIGURATION = "debug"
"""What `swift build` builds and sourcekit-lsp reads unless told otherwise."""
LINKED_BUILD_FOLDERS = ("Modules",)
"""Read by type checking: the targets' `.swiftmodule`s (dependencies' included)."""
LINKED_PACKAGE_FOLDERS = ("checkouts", "artifacts")
"""Read by package loading: the dependencies' sources and binary artifacts."""


def scratch_folder(scratch_root: Path, root: Path, kind: str) -> Path:
    """One folder per workspace root (and kind of use) under `scratch_root`."""
    digest = hashlib.sha1(str(root).encode()).hexdigest()[:16]
    return scratch_root / f"{root.name[:40]}-{digest}{kind}"


def build_store(root: Path) -> Path | None:
    """The index store `swift build` wrote for the package at `root` (the host's triple,
    debug), or None when there is none."""
    build = root / ".build"
    try:
        triples = sorted(child for child in build.iterdir() if child.is_dir() and not child.is_symlink())
    except OSError:
        return None
    for triple in triples:
        store = triple / CONFIGURATION / "index" / "store"
        if is_store(store):
            return store
    return None


def build_view(root: Path, scratch_root: Path) -> Path | None:
    """Make (or bring up to date) the view of `root`'s build under `scratch_root`, and
    return it (sourcekit-lsp's `swiftPM.scratchPath`); None when the package has no built
    index store (sourcekit-lsp then indexes it itself)."""
    store = build_store(root)
    if store is None:
        return None
    built = store.parent.parent  # <root>/.build/<triple>/debug
    triple = built.parent
    view = scratch_folder(scratch_root, root, "-build")
    debug = view / triple.name / CONFIGURATION
    (debug / "index").mkdir(parents=True, exist_ok=True)
    (debug / "ModuleCache").mkdir(exist_ok=True)
    _link(debug / "index" / "store", store)
    for name in LINKED_BUILD_FOLDERS:
        if (built / name).is_dir():
            _link(debug / name, built / name)
    for entry in _entries(built):
        # The products: macro plugins are executables the compiler runs while type checking.
        if entry.is_file(follow_symlinks=False) and os.access(entry.path, os.X_OK):
            _link(debug / entry.name, Path(entry.path))
    build = triple.parent
    for name in LINKED_PACKAGE_FOLDERS:
        if (build / name).is_dir():
            _link(view / name, build / name)
    state = build / "workspace-state.json"
    if state.is_file():
        # Copied, not linked: loading the package may save it again.
        shutil.copyfile(state, view / "workspace-state.json")
    _link(view / CONFIGURATION, Path(triple.name) / CONFIGURATION)
    return view


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            return list(found)
    except OSError:
        return []


def _link(link: Path, target: Path) -> None:
    """`link` → `target`, replacing a link that points elsewhere (the build moved)."""
    if link.is_symlink():
        if Path(os.readlink(link)) == target:
            return
        link.unlink()
    elif link.exists():
        return  # a real folder made by an earlier version of this view: leave it
    link.symlink_to(target)
