"""What change_impact reads from git, read-only and before any question to the index.

git can take seconds on a large repository (each command is bounded by `GIT_TIMEOUT_S`), so
the Engine reads it here, in a worker thread and outside the index actor: the store's other
questions never wait on git. The result is plain data (`GitChanges`) handed to the query.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from xcindex.errors import XcindexError
from xcindex.project.store_layout import is_generated_source

GIT_TIMEOUT_S = 30.0
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int

    def old_lines(self) -> range:
        return range(self.old_start, self.old_start + self.old_count)

    def new_lines(self) -> range:
        return range(self.new_start, self.new_start + self.new_count)


@dataclass
class FileDiff:
    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)


@dataclass(frozen=True)
class GitChanges:
    """The working tree's Swift changes against `base`: each file's diff (paths relative to
    `root`), its text at `base`, and how long git took."""

    root: str
    base: str
    diffs: tuple[FileDiff, ...]
    old_texts: dict[str, str]
    git_ms: float


def parse_diff(text: str) -> list[FileDiff]:
    """`git diff -U0` output → one FileDiff per file (paths relative to the repository)."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    for line in text.splitlines():
        if line.startswith("diff --git "):
            current = FileDiff(None, None)
            files.append(current)
        elif current is None:
            continue
        elif line.startswith("--- "):
            current.old_path = None if line[4:] == "/dev/null" else line[4:].removeprefix("a/")
        elif line.startswith("+++ "):
            current.new_path = None if line[4:] == "/dev/null" else line[4:].removeprefix("b/")
        elif match := _HUNK.match(line):
            a, b, c, d = match.groups()
            current.hunks.append(Hunk(int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return files


def _git(root: str, *args: str) -> str:
    """Run a read-only git command; its failures become XcindexErrors that say what to do."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        result = subprocess.run(
            ["git", "--no-optional-locks", "-C", root, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise XcindexError("change_impact needs git, and no `git` is on PATH: install git.") from None
    except subprocess.TimeoutExpired:
        raise XcindexError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g} s in {root}.") from None
    if result.returncode != 0:
        message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
        if "not a git repository" in result.stderr:
            raise XcindexError(
                f"{root} is not inside a git repository: change_impact compares against a git revision."
            )
        raise XcindexError(f"git {args[0]} failed in {root}: {message}")
    return result.stdout


def repository_root(start: str) -> str:
    """The top of the git work tree holding `start` (a folder, or a file in one)."""
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    if not os.path.isdir(folder):
        raise XcindexError(f"{folder} is not a folder: give projectPath as the package or project folder.")
    return _git(folder, "rev-parse", "--show-toplevel").strip()


def read_changes(start: str, base: str | None, files: Sequence[str]) -> GitChanges:
    """The diff of Swift files against `base` (default HEAD; the working tree, staged changes
    included), the untracked Swift files as additions, and each changed file's text at `base`.
    `files` (absolute) limits the diff to them."""
    started = time.perf_counter()
    root = repository_root(start)
    revision = base or "HEAD"
    try:
        _git(root, "rev-parse", "--verify", "--quiet", revision + "^{commit}")
    except XcindexError:
        raise XcindexError(f"git does not know the revision '{revision}' in {root}.") from None
    relative = [os.path.relpath(os.path.realpath(f), os.path.realpath(root)) for f in files]
    scope = ["--", *relative] if relative else ["--", "*.swift"]
    diffs = [
        d
        for d in parse_diff(_git(root, "diff", "--no-color", "--no-ext-diff", "-U0", "-M", revision, *scope))
        if _is_source(d.new_path or d.old_path or "")
    ]
    for path in _git(root, "ls-files", "--others", "--exclude-standard", *scope).splitlines():
        if _is_source(path):
            diffs.append(FileDiff(None, path, []))
    old_texts = {
        d.old_path: _git(root, "show", f"{revision}:{d.old_path}") for d in diffs if d.old_path is not None
    }
    return GitChanges(root, revision, tuple(diffs), old_texts, (time.perf_counter() - started) * 1000)


def _is_source(relative: str) -> bool:
    """A Swift source of the project: not one the build wrote (`.build/`, DerivedData), which
    an unignored build folder would otherwise show as added."""
    return relative.endswith(".swift") and not is_generated_source("/" + relative)
