"""The real-code proofs' machinery: the corpus built once, restored per case, built, tested.

The corpus packages are built once by `shared/corpus/prepare` into a cache folder outside
the repository (XCINDEX_CORPUS_CACHE, else the system's temp folder). A built package only
builds incrementally at the path it was built at (its module cache records that path), so
cases are applied to that very folder and a pristine snapshot beside it is restored after
each one; plans are all computed from the pristine state first.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from xml.etree import ElementTree

import pytest

from tests.conftest import REPO, swift_executable
from xcindex.tools.rename.plan import RenamePlan, base_name
from xcindex.tools.rename.scan import Mention

PACKAGES = ("swift-log", "yams")
_ERROR = re.compile(r"^(/[^:\n]+\.swift):(\d+):(\d+): error: (.*)$", re.MULTILINE)
_XCTEST = re.compile(r"Test Case '-?\[?([\w.]+)[ /.](\w+)\]?' (passed|failed)")
_SWIFT_TESTING = re.compile(
    r"[✔✘] Test (?:\"[^\"]*\" |)?(\S.*?\))(?: with \d+ test cases?)? (passed|failed)", re.MULTILINE
)
_SWIFT_TESTING_FAIL = re.compile(r"✘ Test (\S.*?\)) recorded an issue")


def shared_dir() -> Path:
    beside = REPO.parent / "shared"
    return beside if (beside / "corpus" / "prepare").is_file() else Path("/work/shared")


def cache_root() -> Path:
    return Path(
        os.environ.get("XCINDEX_CORPUS_CACHE") or Path(tempfile.gettempdir()) / "xcindex-corpus-cache"
    )


_HELD: list[IO[str]] = []


def hold_cache(root: Path) -> None:
    """Take the cache for the rest of this process: cases are applied to the cached packages
    themselves, and two sessions doing that at once break each other's builds (seen: a
    package restored under another session's build). One lock for the whole cache, so two
    sessions cannot each hold a package the other waits for."""
    if _HELD:
        return
    root.mkdir(parents=True, exist_ok=True)
    lock = (root / ".lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    _HELD.append(lock)


def prepared(name: str) -> Path:
    """The built package (built once per cache; restored from its snapshot if a run was cut)."""
    root = cache_root()
    hold_cache(root)
    package = root / name
    pristine = root / f"{name}.pristine"
    if pristine.is_dir():
        restore(package)
        return package
    result = subprocess.run(
        [str(shared_dir() / "corpus" / "prepare"), str(root)],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"corpus prepare failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    shutil.copytree(package, pristine, symlinks=True)
    return package


def committed(package: Path) -> Path:
    """The package as a git repository whose one commit is its pristine sources (`.build`
    left out), for change_impact, which compares the work tree with a revision: made once in
    the pristine snapshot, so every restore brings it back."""
    pristine = package.parent / f"{package.name}.pristine"
    if not (pristine / ".git").is_dir():
        env = {**os.environ, "GIT_AUTHOR_NAME": "corpus", "GIT_AUTHOR_EMAIL": "corpus@example.invalid"}
        env |= {"GIT_COMMITTER_NAME": "corpus", "GIT_COMMITTER_EMAIL": "corpus@example.invalid"}
        subprocess.run(["git", "init", "-q"], cwd=pristine, check=True, capture_output=True)
        (pristine / ".git" / "info" / "exclude").write_text(".build/\n.swiftpm/\n.built\n.build-log\n")
        tracked = [name for name in ("Sources", "Tests", "Package.swift") if (pristine / name).exists()]
        for command in (
            ["git", "add", "-A"],
            ["git", "add", "-f", "--", *tracked],
            ["git", "commit", "-qm", "pristine"],
        ):
            subprocess.run(command, cwd=pristine, check=True, capture_output=True, env=env)
        restore(package)
    return package


def restore(package: Path) -> None:
    pristine = package.parent / f"{package.name}.pristine"
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(pristine, package, symlinks=True)


def store_of(package: Path) -> Path:
    return next((package / ".build").glob("*-unknown-linux-gnu/debug/index/store"))


def swift(*args: str, package: Path, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["nice", "-n", "5", swift_executable(), *args, "--package-path", str(package)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Outcome:
    built: bool
    errors: list[tuple[str, int, str]] = field(default_factory=list)
    """(real path, line, message) of each compiler error."""
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    output: str = ""
    exit_code: int = 0

    @property
    def crashed(self) -> bool:
        """The test process died (a signal): the tests in flight are not reported."""
        return "unexpected signal" in self.output

    @property
    def killed(self) -> bool:
        return self.built and (bool(self.failed) or self.crashed)


def parse_results(output: str, swift_testing_report: str | None = None) -> tuple[set[str], set[str]]:
    """Passed and failed test names. Swift Testing's come from its XUnit report when there is
    one, named `Module.Suite/test()` as `swift test list` names them (two suites may each have
    a test of the same name): its tests run in parallel and print into the same output, and
    CI once met a run whose 164 passing tests were read as fewer from the console. XCTest's
    (serial) and, when the report is missing or cut short (a crashed run), Swift Testing's
    are read from the console (`test()`: the console does not name the suite), where the
    markers are found anywhere on a line."""
    passed: set[str] = set()
    failed: set[str] = set()
    for suite, test, status in _XCTEST.findall(output):
        (passed if status == "passed" else failed).add(f"{suite}.{test}")
    try:
        report = None if swift_testing_report is None else ElementTree.fromstring(swift_testing_report)
    except ElementTree.ParseError:
        report = None  # cut short: the run died before writing it out
    if report is not None:
        for case in report.iter("testcase"):
            name = "/".join(filter(None, (case.get("classname"), case.get("name", ""))))
            if case.find("failure") is not None or case.find("error") is not None:
                failed.add(name)
            elif case.find("skipped") is None:
                passed.add(name)
        return passed - failed, failed
    for test, status in _SWIFT_TESTING.findall(output):
        (passed if status == "passed" else failed).add(test)
    failed.update(_SWIFT_TESTING_FAIL.findall(output))
    return passed - failed, failed


def listed_tests(package: Path) -> list[str]:
    """Every test's identifier as `swift test --filter` matches it (`Module.Suite/test`)."""
    result = subprocess.run(
        [swift_executable(), "test", "list", "--skip-build", "--package-path", str(package)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return [line.strip() for line in result.stdout.splitlines() if "/" in line]


def only(tests: Iterable[str]) -> str:
    """A `--filter`/`--skip` expression for exactly these Swift Testing tests (`Module.Suite/test()`:
    `swift test` matches more after the parentheses, so the expression is not anchored there)."""
    return "|".join("^" + re.escape(test) for test in sorted(tests))


def ids_of(name: str, ids: list[str]) -> list[str]:
    """The identifiers a test named in the output (`Suite.test` for XCTest, `Module.Suite/test()`
    from Swift Testing's report, `test()` from its console) can be."""
    if "/" in name:
        return [name] if name in ids else []
    if name.endswith(")"):
        return [i for i in ids if i.endswith("/" + name)]
    suite, _, test = name.rpartition(".")
    return [i for i in ids if i.endswith(f".{suite}/{test}") or i == f"{suite}/{test}"]


def build_and_test(
    package: Path, *, test_filter: str | None = None, env: dict[str, str] | None = None
) -> Outcome:
    build = swift("build", "--build-tests", package=package)
    if build.returncode != 0:
        errors = [
            (os.path.realpath(path), int(line), message)
            for path, line, _column, message in _ERROR.findall(build.stdout + build.stderr)
        ]
        return Outcome(False, errors, output=build.stdout[-3000:] + build.stderr[-3000:])
    return run_tests(package, test_filter=test_filter, env=env)


def run_tests(
    package: Path,
    *,
    test_filter: str | None = None,
    skip: str | None = None,
    env: dict[str, str] | None = None,
) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="xcindex-xunit-") as reports:
        # Swift Testing writes `<name>-swift-testing.xml` beside the path given (XCTest's own
        # report needs --parallel, which these runs do not use).
        args = ["test", "--skip-build", "--xunit-output", str(Path(reports) / "results.xml")]
        if test_filter:
            args += ["--filter", test_filter]
        if skip:
            args += ["--skip", skip]
        result = subprocess.run(
            [swift_executable(), *args, "--package-path", str(package)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            # A crashing test process must end at once: the backtracer can hang for many minutes.
            env={**os.environ, "SWIFT_BACKTRACE": "enable=no", **(env or {})},
        )
        report = Path(reports) / "results-swift-testing.xml"
        swift_testing_report = report.read_text() if report.is_file() else None
    passed, failed = parse_results(result.stdout + result.stderr, swift_testing_report)
    return Outcome(
        True,
        passed=passed,
        failed=failed,
        output=result.stdout[-2000:] + result.stderr[-2000:],
        exit_code=result.returncode,
    )


def apply_plans(plans: list[RenamePlan], also: Iterable[tuple[RenamePlan, Mention]] = ()) -> int:
    """Edit the files at every range of the plans that is not red (UTF-8 columns for index
    ranges; the UTF-16 columns of sourcekit-lsp ranges are converted on the line), and at
    the safety net's sites in `also` (UTF-8 columns), right to left on each line, all at
    once (they were all computed on the same text)."""
    edits: dict[str, set[tuple[int, int, bytes, bytes]]] = defaultdict(set)
    for plan in plans:
        old = base_name(plan.old_name or "").encode()
        for r in plan.ranges:
            if r.tier != "red-stale":
                edits[r.path].add(
                    (r.line, utf8_column(r.path, r.line, r.column, r.source), old, plan.new_name.encode())
                )
    for plan, site in also:
        old = base_name(plan.old_name or "").encode()
        edits[site.path].add((site.line, site.column, old, plan.new_name.encode()))
    for path, sites in edits.items():
        lines = Path(path).read_bytes().split(b"\n")
        for line, column, old, new in sorted(sites, reverse=True):
            text = lines[line - 1]
            assert text[column - 1 : column - 1 + len(old)] == old, (path, line, column, text)
            lines[line - 1] = text[: column - 1] + new + text[column - 1 + len(old) :]
        Path(path).write_bytes(b"\n".join(lines))
    return sum(len(sites) for sites in edits.values())


def local_witnesses(plan: RenamePlan) -> list[Mention]:
    """What an agent following the plan's `local_conformance` warning renames: the unproven
    code sites that declare the old name (`func`, `var`, `let`) inside the body of a type
    the warning names (its lines up to the first one indented no deeper than its own)."""
    name = base_name(plan.old_name or "")
    declares = re.compile(rf"\b(?:func|var|let)\s+{re.escape(name)}\b")
    found: list[Mention] = []
    for local in (m for m in plan.unproven if m.kind == "local_conformance"):
        lines = Path(local.path).read_text(encoding="utf-8").split("\n")
        head = lines[local.line - 1]
        indent = len(head) - len(head.lstrip())
        end = len(lines)
        for number in range(local.line + 1, len(lines) + 1):
            text = lines[number - 1]
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                end = number
                break
        found.extend(
            m
            for m in plan.unproven
            if m.kind == "code"
            and m.path == local.path
            and local.line < m.line < end
            and declares.search(m.text)
        )
    return found


def utf8_column(path: str, line: int, column: int, source: str) -> int:
    if source != "sourcekit-lsp":
        return column
    text = Path(path).read_bytes().split(b"\n")[line - 1].decode("utf-8")
    units = text.encode("utf-16-le")[: (column - 1) * 2].decode("utf-16-le")
    return len(units.encode("utf-8")) + 1
