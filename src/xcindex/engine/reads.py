"""What a tool needs from outside the index, read before the index is asked.

Each runs in a worker thread, before the question reaches the store's index actor: SwiftPM's
package description (a subprocess, cached per Package.swift) and git's diff (several
subprocesses, seconds on a large repository) never run while the database is held, so the
store's other questions do not wait on them.
"""

from __future__ import annotations

from xcindex.errors import XcindexError
from xcindex.indexstore.cache import cache_dir
from xcindex.project.git import GitChanges, read_changes
from xcindex.project.locate import Location
from xcindex.project.package import PackageDescription, describe_package
from xcindex.tools.graph.blast_radius import BlastRadiusArgs
from xcindex.tools.graph.change_impact import ChangeImpactArgs, ChangeInputs


def package_description(location: Location, _args: BlastRadiusArgs) -> PackageDescription | None:
    """Which targets are tests and executables, as SwiftPM describes them (None: no package)."""
    if location.workspace_root is None:
        return None
    return describe_package(location.workspace_root, cache_dir() / "swiftpm-describe")


def change_inputs(location: Location, args: ChangeImpactArgs) -> ChangeInputs:
    """git's changes, and SwiftPM's description of the package (its tests' executables)."""
    changes = git_changes(location, args)
    root = location.workspace_root
    package = describe_package(root, cache_dir() / "swiftpm-describe") if root is not None else None
    return ChangeInputs(changes, package)


def git_changes(location: Location, args: ChangeImpactArgs) -> GitChanges:
    """The working tree's Swift changes against `args.base`, from the project's git work tree."""
    start = args.project_path or (None if location.workspace_root is None else str(location.workspace_root))
    if start is None:
        raise XcindexError(
            f"change_impact needs projectPath: no project folder was found around the index store "
            f"{location.store_path}, and git compares a work tree."
        )
    return read_changes(start, args.base, args.files)
