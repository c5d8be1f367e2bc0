"""Is the index about this project's files? A package copied or moved after its build keeps a
`.build` whose index store names the ORIGINAL folder's absolute paths (the compiler records
them), so every answer would silently point there. This module tells that case apart.

The rule (docs/tools.md, "An index built in another folder"), on the real paths of the
live units' main files and of the project folder:

- none of them lies under the project folder (a Swift package; SwiftPM puts no target's
  sources outside it): the index was built elsewhere; or
- at most `NEARLY_NONE` (10%) of them do, and at least half of those outside (a sample of
  `SAMPLED`) have a counterpart here: the same path, relative to the folder they lie in,
  exists under the project folder (a copy partly rebuilt; the only rule for an Xcode
  project, whose sources may legitimately all lie outside its folder, as in a generated
  project).

A package whose index legitimately covers sources outside its folder (a local dependency
`.package(path: "../Lib")`, a thin example package over its library) always has its own
files under its folder, and its outside files have no counterpart here: no warning.

The check reads every live main file's path once and stats at most a few hundred paths;
the Engine runs it once per index refresh and project folder, not per question.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from xcindex.errors import CodedError, XcindexError
from xcindex.indexstore.database import Database
from xcindex.project.realpaths import RealPaths
from xcindex.tools.common import AnswerWarning
from xcindex.vocabulary import ProjectKind, WarningCode

NEARLY_NONE = 0.1
"""At most this share of the live main files under the project folder counts as "nearly none"."""
SAMPLED = 64
"""Outside files looked at for a counterpart in the project folder (evenly spaced)."""
MIN_TAIL = 2
"""Path components a counterpart must share at least (`Sources/X.swift`, not a bare `X.swift`)."""


@dataclass(frozen=True)
class BuiltElsewhere:
    """The index of `project` holds the sources of another folder."""

    project: str
    """The project folder (real path)."""
    built_in: str
    """Where the index's sources are: the folder the package was built in."""
    outside: int
    """Live main files outside the project folder."""
    total: int
    """Live main files."""
    kind: ProjectKind = ProjectKind.SWIFTPM

    @property
    def remedy(self) -> str:
        if self.kind is ProjectKind.XCODE:
            return (
                "Build the project in Xcode from this folder, so that it has a DerivedData index of its own."
            )
        build = os.path.join(self.project, ".build")
        return (
            f"Remove the copied build folder and build here: rm -rf '{build}' && "
            f"swift build --build-tests --package-path '{self.project}'."
        )

    @property
    def message(self) -> str:
        here = self.total - self.outside
        share = (
            f"none of its {self.total} source files lies in this folder"
            if here == 0
            else f"only {here} of its {self.total} source files lie in this folder"
        )
        return (
            f"This index was built in {self.built_in}, not in this project ({self.project}): "
            f"{share} (the package was copied or moved after its build, and the index records "
            f"absolute paths). Its answers name the files of {self.built_in}, which may differ from "
            "this folder's or no longer exist; this folder's files are not in the index, so an edit "
            "here is not seen, the freshness overlay is off and change_impact finds no indexed file. "
            f"{self.remedy}"
        )

    def warning(self) -> AnswerWarning:
        return AnswerWarning(WarningCode.INDEX_BUILT_ELSEWHERE, self.message)


def built_elsewhere(db: Database, project: str, kind: ProjectKind) -> BuiltElsewhere | None:
    """Whether the index's sources lie outside `project` (see the module's rule). Blocking:
    run in the index actor's thread."""
    root = os.path.realpath(project)
    paths = sorted({path for path, *_ in db.live_files()})
    if not paths:
        return None
    inside = _under(paths, root)
    if len(inside) > NEARLY_NONE * len(paths):
        return None
    outside = [path for path in paths if path not in inside]
    step = max(1, len(outside) // SAMPLED)
    sample = outside[::step][:SAMPLED]
    origins = Counter(origin for path in sample if (origin := _origin(path, root)) is not None)
    copied = bool(origins) and origins.most_common(1)[0][1] * 2 >= len(sample)
    if (inside or kind is ProjectKind.XCODE) and not copied:
        # A few files here and the rest another folder's own, or an Xcode project generated
        # away from its sources: sources outside, legitimately.
        return None
    built_in = origins.most_common(1)[0][0] if origins else os.path.commonpath(outside)
    return BuiltElsewhere(root, built_in, len(outside), len(paths), kind)


def _under(paths: list[str], root: str) -> set[str]:
    """The paths whose real path is under `root` (one realpath per folder, not per file)."""
    top = root.rstrip("/") + "/"
    real_path = RealPaths()
    found: set[str] = set()
    for path in paths:
        folder, name = os.path.split(path)
        if os.path.join(real_path.folder(folder), name).startswith(top):
            found.add(path)
    return found


def _origin(path: str, root: str) -> str | None:
    """The folder `path` lies in whose relative path to it (the longest, at least MIN_TAIL
    components) names a file under `root` too: where a copy of `root` was built."""
    parts = path.strip("/").split("/")
    for start in range(len(parts) - MIN_TAIL + 1):
        if os.path.isfile(os.path.join(root, *parts[start:])):
            return "/" + "/".join(parts[:start])
    return None


class BuiltElsewhereError(CodedError):
    """A tool's own error (a file not in the index) in a project whose index holds another
    folder's sources: the error, then why (the code says it)."""

    def __init__(self, error: XcindexError, elsewhere: BuiltElsewhere) -> None:
        super().__init__(WarningCode.INDEX_BUILT_ELSEWHERE, f"{error} {elsewhere.message}")
        self.cause = error
        self.why = elsewhere.message

    def render(self, names: Mapping[str, str]) -> str:
        return f"{self.cause.render(names)} {self.why}"
