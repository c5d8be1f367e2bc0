"""`xcindex build-commands [--project P]`: the commands that refresh a project's index, one
per line, ready to run: `swift build --build-tests --package-path P` for a Swift package,
`xcodebuild build -project P -scheme S` for each scheme of an Xcode project (from
`xcodebuild -list -json`). /xcindex-status prints them; nothing is built here."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from xcindex.project.candidates import BUILD_COMMAND, Project, choose_project, project_at, projects_for
from xcindex.project.xcode import XcodebuildError, build_command, list_schemes, shown
from xcindex.vocabulary import ProjectKind

EXIT_ERROR = 2


def _fail(message: str) -> int:
    sys.stderr.write(f"xcindex build-commands: error: {message}\n")
    return EXIT_ERROR


def _project(named: str | None) -> Project | str:
    """The project, or why there is none to speak of."""
    if named is not None:
        path = Path(os.path.abspath(os.path.expanduser(named)))
        found = project_at(path)
        if isinstance(found, Project):
            return found
        if found is None:
            return f"{path} is not a Swift package or an Xcode project (or a folder holding one)."
        return f"several projects below {path} ({', '.join(str(p.path) for p in found)}): name one with --project."
    folder, candidates = projects_for(Path.cwd())
    if not candidates:
        return f"no Swift package or Xcode project in {Path.cwd()} (or a folder above it): name one with --project."
    chosen = choose_project(folder, candidates)
    if chosen is None:
        names = ", ".join(str(p.path) for p in candidates)
        return f"several projects below {folder} ({names}): name one with --project."
    return chosen


def main(named: str | None) -> int:
    project = _project(named)
    if isinstance(project, str):
        return _fail(project)
    if project.kind is ProjectKind.SWIFTPM:
        sys.stdout.write(f"{BUILD_COMMAND} --package-path {shlex.quote(str(project.root))}\n")
        return 0
    try:
        schemes = list_schemes(project)
    except XcodebuildError as error:
        return _fail(str(error))
    if not schemes:
        return _fail(
            f"xcodebuild lists no scheme for {project.path}: share one in Xcode (Manage Schemes, Shared)."
        )
    sys.stdout.write("".join(shown(build_command(project, scheme)) + "\n" for scheme in schemes))
    return 0
