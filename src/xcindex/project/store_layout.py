"""Where things are inside an index store: the one module that spells `v5/units`.

Import-light on purpose (`os` only, folders as plain strings: `pathlib` with its `re` and
`urllib` was a third of the session-start hook): the hooks, the locator and the doctor use it
as well as the ingester.
"""

from __future__ import annotations

import os

FORMAT_VERSION = 5
"""The store format xcindex reads (libIndexStore's `indexstore_format_version()`)."""
FORMAT_DIR = f"v{FORMAT_VERSION}"


def format_dir(store: str | os.PathLike[str]) -> str:
    """`<store>/v5`: what makes a folder an index store."""
    return os.path.join(store, FORMAT_DIR)


def units_dir(store: str | os.PathLike[str]) -> str:
    """`<store>/v5/units`: one file per compilation unit, written by atomic rename (so the
    folder's mtime moves on every write)."""
    return os.path.join(store, FORMAT_DIR, "units")


def records_dir(store: str | os.PathLike[str]) -> str:
    """`<store>/v5/records`: content-addressed records, in folders named by their last two
    characters."""
    return os.path.join(store, FORMAT_DIR, "records")


def is_store(path: str | os.PathLike[str]) -> bool:
    return os.path.isdir(units_dir(path))


def units_mtime_ns(store: str | os.PathLike[str]) -> int:
    """The mtime of `v5/units` (0 when it is missing): the cheap "did a build write?" check."""
    try:
        return os.stat(units_dir(store)).st_mtime_ns
    except OSError:
        return 0


def swiftpm_stores(package: str | os.PathLike[str]) -> list[str]:
    """Every index store SwiftPM or sourcekit-lsp may have written for this package."""
    build = os.path.join(package, ".build")
    found: list[str] = []
    for base in (build, os.path.join(build, "index-build")):
        try:
            children = sorted(os.listdir(base))
        except OSError:
            continue
        for child in children:
            for config in ("debug", "release"):
                store = os.path.join(base, child, config, "index", "store")
                if is_store(store):
                    found.append(store)
    swiftbuild = os.path.join(build, "out", "Products", "Debug-linux", "index", "store")
    if is_store(swiftbuild):
        found.append(swiftbuild)
    return found


def newest_swiftpm_store(package: str | os.PathLike[str]) -> str | None:
    """The store a SwiftPM package's questions are answered from: the one a build wrote last;
    sourcekit-lsp's own (`index-build`) only when it is the newer one. None when there is none."""
    stores = swiftpm_stores(package)
    if not stores:
        return None
    return max(stores, key=lambda store: (units_mtime_ns(store), "/index-build/" not in store))


BUILD_FOLDERS = ("/.build/", "/DerivedData/")
"""Where SwiftPM and Xcode write what they build (generated sources included)."""


SWIFTPM_BUILD = "/.build/"


def package_of_store(store: str | os.PathLike[str]) -> str | None:
    """The SwiftPM package whose `.build` holds `store` (None for any other layout)."""
    spelled = str(store)
    return spelled.split(SWIFTPM_BUILD, 1)[0] if SWIFTPM_BUILD in spelled else None


def from_another_package(output_file: str, package: str | None, real: dict[str, str]) -> bool:
    """A unit another package's build wrote: its object file is in a `.build` that is not
    `package`'s. A package copied with its `.build` (or a store copied on its own) brings
    the original's units, which name the original's files: they describe another folder.
    A path dependency's units are written into this package's `.build`, so they stay.
    `real` caches real paths across calls."""
    if package is None or SWIFTPM_BUILD not in output_file:
        return False
    owner = output_file.split(SWIFTPM_BUILD, 1)[0]
    if owner == package:
        return False
    for spelled in (owner, package):
        if spelled not in real:
            real[spelled] = os.path.realpath(spelled)
    return real[owner] != real[package]


def is_generated_source(path: str) -> bool:
    """Sources the build system wrote (test discovery, resource accessors): never answers."""
    return any(folder in path for folder in BUILD_FOLDERS)
