"""An Xcode project's schemes and the `xcodebuild` commands that write its index.

Xcode's builds write the index store xcindex reads (DerivedData's `Index.noindex/DataStore`),
and so does `xcodebuild build` of a scheme, with the same DerivedData folder. `/xcindex-setup`
lists the schemes (`xcodebuild -list -json`) and builds the ones the user names;
`/xcindex-status` prints the command that refreshes the index. Stdlib only; xcodebuild runs
only when asked here (it can take seconds: it resolves packages first).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping

from xcindex.errors import XcindexError
from xcindex.project.candidates import Project
from xcindex.vocabulary import ProjectKind

LIST_TIMEOUT_S = 180.0


class XcodebuildError(XcindexError):
    """xcodebuild is missing, failed, or answered something that is not its JSON."""


def _xcodebuild(environ: Mapping[str, str]) -> str:
    found = shutil.which("xcodebuild", path=environ.get("PATH", os.defpath))
    if found is None:
        raise XcodebuildError(
            "xcodebuild was not found: it comes with Xcode (the Command Line Tools alone do not have it). "
            "Install Xcode, or build the project in Xcode with indexing enabled."
        )
    return found


def _selector(project: Project) -> list[str]:
    flag = "-workspace" if project.path.suffix == ".xcworkspace" else "-project"
    return [flag, str(project.path)]


def build_command(project: Project, scheme: str) -> list[str]:
    """The command that builds `scheme`, and with it the index xcindex reads."""
    return ["xcodebuild", "build", *_selector(project), "-scheme", scheme]


def shown(command: list[str]) -> str:
    return shlex.join(command)


def list_schemes(project: Project, environ: Mapping[str, str] | None = None) -> list[str]:
    """The project's (or workspace's) schemes, as `xcodebuild -list -json` names them."""
    assert project.kind is ProjectKind.XCODE
    env = os.environ if environ is None else environ
    command = [_xcodebuild(env), "-list", "-json", *_selector(project)]
    asked = shown(["xcodebuild", *command[1:]])
    try:
        ran = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=LIST_TIMEOUT_S,
            env=dict(env),
            cwd=project.root,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise XcodebuildError(f"`{asked}` did not answer within {LIST_TIMEOUT_S:.0f} s.") from None
    except OSError as error:
        raise XcodebuildError(f"`{asked}` could not run ({error.strerror or error}).") from None
    if ran.returncode != 0:
        last = (ran.stderr.strip() or ran.stdout.strip()).splitlines()[-1:] or [f"exit {ran.returncode}"]
        raise XcodebuildError(f"`{asked}` failed: {last[0]}")
    try:
        # xcodebuild may print notes before its JSON; the JSON is the rest from the first brace.
        listed = json.loads(ran.stdout[ran.stdout.index("{") :])
        container = listed.get("workspace") or listed.get("project")
        schemes = container["schemes"]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise XcodebuildError(f"`{asked}` did not print the JSON it should: {ran.stdout[:200]!r}") from None
    if not isinstance(schemes, list) or not all(isinstance(name, str) for name in schemes):
        raise XcodebuildError(f"`{asked}` named no schemes: {ran.stdout[:200]!r}")
    return schemes
