"""`xcindex doctor [--project P] [--install]`: check this machine and a project.

One `[ OK ]`, `[FAIL]` or `[INFO]` line per finding, each failure followed by what fixes
it; exit 1 if anything failed. The checks: Python and the dependencies, the Swift
toolchain, libIndexStore (loaded in a child process, so a bad library cannot crash the
doctor), sourcekit-lsp, the project and its index store, freshness, the build-server
bridge of Xcode projects, and the agent configuration.

`--install` fixes what can be fixed from here: it builds the index of a Swift package
(`swift build --build-tests`), and writes the project's MCP configuration (`.mcp.json`)
and hook configuration (`.claude/settings.json`) when they are absent. It never edits an
existing file; it says what it did.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xcindex.doctor.config import check_configuration
from xcindex.doctor.report import Report
from xcindex.errors import CodedError
from xcindex.indexstore.content import not_as_indexed
from xcindex.project import toolchain
from xcindex.project.candidates import (
    STALE_NAMES_SHOWN,
    Project,
    choose_project,
    format_time,
    newest_unit_mtime_ns,
    project_at,
    projects_for,
    rebuild_advice,
    swift_files_newer_than,
)
from xcindex.project.locate import LocateError, Location, locate
from xcindex.project.store_layout import units_dir
from xcindex.project.xcode import XcodebuildError, build_command, list_schemes, shown
from xcindex.vocabulary import ProjectKind, WarningCode

DEPENDENCIES = (
    # (import name, distribution name)
    ("anyio", "anyio"),
    ("trio", "trio"),
    ("mcp", "mcp"),
    ("lsprotocol", "lsprotocol"),
    ("cffi", "cffi"),
    ("structlog", "structlog"),
)
MIN_PYTHON = (3, 11)
SOURCEKIT_LSP_ENV = toolchain.SOURCEKIT_LSP_ENV
_PROBE_TIMEOUT_S = 60.0
_LSP_PROBE_TIMEOUT_S = 15.0
_BUILD_TIMEOUT_S = 3600.0
_LIBRARY_PROBE = (
    "import json\n"
    "from xcindex.indexstore.binding import load_library\n"
    "info = load_library()[1]\n"
    "print(json.dumps({'path': info.path, 'api': info.api_version, 'format': info.format_version}))\n"
)


@dataclass(frozen=True)
class _Ran:
    returncode: int | None
    """None when the command could not be started or timed out."""
    output: str
    problem: str = ""


def _run(command: list[str], timeout: float, cwd: Path | None = None) -> _Ran:
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _Ran(None, "", f"did not finish within {timeout:g} s")
    except OSError as error:
        return _Ran(None, "", error.strerror or str(error))
    return _Ran(done.returncode, (done.stdout or "") + (done.stderr or ""))


def _exit_description(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


@dataclass
class _Doctor:
    report: Report
    install: bool
    swift: str | None = None
    swift_version: str | None = None

    # -- the machine ------------------------------------------------------------------

    def check_python(self) -> None:
        self.report.section("Python")
        version = platform.python_version()
        if sys.version_info[:2] < MIN_PYTHON:
            self.report.fail(
                f"Python {version} ({sys.executable}) is too old.",
                f"xcindex needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or later.",
            )
        else:
            self.report.ok(f"Python {version} ({sys.executable})")
        for module, distribution in DEPENDENCIES:
            try:
                spec = importlib.util.find_spec(module)
            except (ImportError, ValueError):
                spec = None
            if spec is None:
                self.report.fail(
                    f"{module} is not importable.",
                    f"Reinstall xcindex with its dependencies (pip install --force-reinstall {distribution}).",
                )
                continue
            try:
                self.report.ok(f"{module} {importlib.metadata.version(distribution)}")
            except importlib.metadata.PackageNotFoundError:
                self.report.ok(f"{module} (version unknown)")

    def check_cache(self) -> None:
        """The folder every database and the overlay's work go to: a tool fails without it."""
        from xcindex.indexstore.cache import CacheFolderError, cache_dir, writable

        self.report.section("Cache")
        folder = cache_dir()
        try:
            writable(folder)
        except CacheFolderError as error:
            self.report.fail(str(error))
            return
        self.report.ok(f"{folder} (writable)")

    def check_swift(self) -> None:
        self.report.section("Swift toolchain")
        found = toolchain.find_swift()
        swift = str(found) if found else None
        if swift is None:
            self.report.fail(
                "swift was not found (not on PATH, not in Xcode's or a swift.org toolchain, not at /opt/swift).",
                "Install the Swift toolchain (https://www.swift.org/install) and put its usr/bin on PATH.",
            )
            return
        ran = _run([swift, "--version"], _PROBE_TIMEOUT_S)
        if ran.returncode != 0:
            what = ran.problem or _exit_description(ran.returncode or 0)
            self.report.fail(f"`{swift} --version` failed ({what}): {_last_line(ran.output)}")
            return
        self.swift, self.swift_version = swift, ran.output.strip().splitlines()[0]
        self.report.ok(f"{self.swift_version} ({swift})")

    def check_library(self) -> None:
        self.report.section("libIndexStore")
        try:
            path = toolchain.find_library()
        except toolchain.LibraryNotFound as error:
            self.report.fail(str(error))
            return
        ran = _run([sys.executable, "-c", _LIBRARY_PROBE], _PROBE_TIMEOUT_S)
        if ran.returncode != 0:
            what = ran.problem or _exit_description(ran.returncode or 0)
            self.report.fail(
                f"libIndexStore at {path} could not be loaded ({what}): {_last_line(ran.output)}",
                "Use the libIndexStore of the toolchain that built the index (XCINDEX_LIBINDEXSTORE).",
            )
            return
        try:
            info: dict[str, Any] = json.loads(_last_line(ran.output))
            self.report.ok(f"{info['path']} (API 0.{info['api']}, store format v{info['format']})")
        except (ValueError, KeyError, TypeError):
            self.report.fail(f"libIndexStore at {path} answered oddly: {_last_line(ran.output)}")

    def _find_sourcekit_lsp(self) -> str | None:
        """The binary xcindex will run (the server's own search); None (after saying why) when
        there is none."""
        try:
            return str(toolchain.find_sourcekit_lsp())
        except CodedError as error:
            configured = toolchain.configured_sourcekit_lsp()
            if configured is None:
                self.report.fail(
                    f"{WarningCode.SOURCEKIT_LSP_NOT_FOUND}: {error.message}.",
                    "Install the Swift toolchain (it ships sourcekit-lsp) or set SOURCEKIT_LSP_PATH; without it "
                    "plan_rename cannot cross-check the index (reconciliation_unavailable).",
                )
            elif error.code is WarningCode.SOURCEKIT_LSP_NOT_FOUND:
                self.report.fail(
                    f"{error.code}: {SOURCEKIT_LSP_ENV}={configured} does not exist.",
                    f"Unset {SOURCEKIT_LSP_ENV} or point it at a sourcekit-lsp binary.",
                )
            else:
                fix = f"chmod +x {shlex.quote(configured)}" if os.path.isfile(configured) else None
                self.report.fail(
                    f"{error.code}: {SOURCEKIT_LSP_ENV}={configured} is not an executable file.",
                    fix or f"Point {SOURCEKIT_LSP_ENV} at the sourcekit-lsp binary itself.",
                )
            return None

    def check_sourcekit_lsp(self) -> None:
        self.report.section("sourcekit-lsp")
        binary = self._find_sourcekit_lsp()
        if binary is None:
            return
        # sourcekit-lsp has no --version; --help proves that it starts.
        ran = _run([binary, "--help"], _LSP_PROBE_TIMEOUT_S)
        if ran.returncode != 0:
            what = ran.problem or _exit_description(ran.returncode or 0)
            self.report.fail(
                f"{WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED}: `{binary} --help` failed ({what}).",
                f"Check the binary, or point {SOURCEKIT_LSP_ENV} at a working sourcekit-lsp.",
            )
            return
        self.report.ok(f"sourcekit-lsp {binary}")
        sibling = Path(binary).resolve().parent / "swift"
        if self.swift and sibling == Path(self.swift).resolve() and self.swift_version:
            self.report.info(f"From the toolchain of {self.swift_version}")
        elif os.access(sibling, os.X_OK):
            version = _run([str(sibling), "--version"], _PROBE_TIMEOUT_S)
            if version.returncode == 0 and version.output.strip():
                self.report.info(f"From the toolchain of {version.output.strip().splitlines()[0]}")

    # -- the project ------------------------------------------------------------------

    def find_project(self, project: str | None) -> Project | None:
        self.report.section("Project")
        if project is None:
            directory, found = projects_for(Path.cwd())
            if not found:
                self.report.info(
                    f"No Swift package or Xcode project in {directory}: pass --project <path> to check one."
                )
                return None
            picked = choose_project(directory, found)
            if picked is None:
                self._ambiguous(directory, found)
                return None
            chosen = picked
        else:
            path = Path(project).expanduser().absolute()
            named = project_at(path)
            if isinstance(named, list):
                self._ambiguous(path, named)
                return None
            if named is None:
                self.report.fail(
                    f"{path} is not a Swift package or an Xcode project (or a folder holding one).",
                    "Pass --project a package folder, its Package.swift, or an .xcodeproj/.xcworkspace.",
                )
                return None
            chosen = named
        kind = "Swift package" if chosen.kind is ProjectKind.SWIFTPM else "Xcode project"
        self.report.ok(f"{kind}: {chosen.path}")
        return chosen

    def _ambiguous(self, directory: Path, found: list[Project]) -> None:
        names = ", ".join(str(project.path) for project in found)
        self.report.fail(
            f"Several Swift projects below {directory}: {names}. The doctor does not guess which one.",
            "Name it: xcindex doctor --project <one of them>",
        )

    def _needs_build(self, project: Project) -> bool:
        try:
            location = locate(str(project.path), None)
        except LocateError:
            return True
        newest = newest_unit_mtime_ns(location.store_path)
        return newest is None or bool(swift_files_newer_than(project.root, newest))

    def check_schemes(self, project: Project, build: list[str]) -> None:
        """An Xcode project's schemes (`xcodebuild -list -json`) and the command that builds
        each one's index; the schemes in `build` are built."""
        self.report.section("Xcode schemes")
        try:
            schemes = list_schemes(project)
        except XcodebuildError as error:
            if build:
                self.report.fail(str(error), "Then run this again, or build the schemes in Xcode.")
            else:
                self.report.info(str(error))
            return
        if not schemes:
            self.report.fail(
                f"xcodebuild lists no scheme for {project.path}.",
                "Share a scheme in Xcode (Product > Scheme > Manage Schemes..., tick Shared).",
            )
            return
        self.report.ok(f"{len(schemes)} scheme(s): {', '.join(schemes)}")
        for scheme in schemes:
            self.report.info(f"Builds the index of {scheme}: {shown(build_command(project, scheme))}")
        for unknown in [name for name in build if name not in schemes]:
            self.report.fail(f"No scheme named {unknown!r}.", f"Name one of: {', '.join(schemes)}.")
        if not build:
            self.report.info(
                f"To build some here: xcindex doctor --project {shlex.quote(str(project.path))} "
                "--build-scheme <scheme> [--build-scheme <another>]"
            )
        for scheme in [name for name in build if name in schemes]:
            command = build_command(project, scheme)
            self.report.info(f"Building the index of {scheme}: {shown(command)}")
            started = time.monotonic()
            ran = _run(command, _BUILD_TIMEOUT_S, cwd=project.root)
            if ran.returncode != 0:
                what = ran.problem or _exit_description(ran.returncode or 0)
                self.report.fail(
                    f"`{shown(command)}` failed ({what}).", "Fix the build errors below, then run it again."
                )
                self.report.detail("\n".join(ran.output.strip().splitlines()[-20:]))
                continue
            self.report.ok(f"Built the index of {scheme} ({time.monotonic() - started:.0f} s).")

    def build_index(self, project: Project) -> None:
        if project.kind is not ProjectKind.SWIFTPM:
            return  # an Xcode project's schemes are built when named (check_schemes)
        if not self._needs_build(project):
            self.report.info("The index is current: no build needed.")
            return
        command = [self.swift or "swift", "build", "--build-tests", "--package-path", str(project.root)]
        shown = shlex.join(["swift", *command[1:]])
        if self.swift is None:
            self.report.fail(f"Cannot run `{shown}`: the Swift toolchain is missing (see above).")
            return
        self.report.info(f"Building the index: {shown}")
        started = time.monotonic()
        ran = _run(command, _BUILD_TIMEOUT_S, cwd=project.root)
        if ran.returncode != 0:
            what = ran.problem or _exit_description(ran.returncode or 0)
            self.report.fail(f"`{shown}` failed ({what}).", "Fix the build errors below, then run it again.")
            self.report.detail("\n".join(ran.output.strip().splitlines()[-20:]))
            return
        self.report.ok(f"Built the index with `{shown}` ({time.monotonic() - started:.0f} s).")

    def check_index(self, project: Project) -> tuple[Location, int] | None:
        try:
            location = locate(str(project.path), None)
        except LocateError as error:
            fix = (
                f"Or let the doctor build it: xcindex doctor --project {shlex.quote(str(project.root))} --install"
                if project.kind is ProjectKind.SWIFTPM
                else None
            )
            self.report.fail(str(error), fix)
            return None
        newest = newest_unit_mtime_ns(location.store_path)
        if newest is None:
            self.report.fail(
                f"The index store at {location.store_path} holds no units.",
                f"Build the project: {rebuild_advice(project)}.",
            )
            return None
        units = _count_entries(units_dir(location.store_path))
        self.report.ok(
            f"Index store: {location.store_path} ({units} units, last built {format_time(newest)})"
        )
        for code, note in location.notes:
            self.report.info(f"{code}: {note}")
        return location, newest

    def check_freshness(self, project: Project, location: Location, newest: int) -> None:
        self.report.section("Freshness")
        newer = not_as_indexed(location.store_path, swift_files_newer_than(project.root, newest))
        if not newer:
            self.report.ok("No Swift files newer than the index.")
            return
        names = [os.path.relpath(path, project.root_folder) for path in newer[:STALE_NAMES_SHOWN]]
        more = ", ..." if len(newer) > STALE_NAMES_SHOWN else ""
        self.report.fail(
            f"{len(newer)} Swift file(s) newer than the index: {', '.join(names)}{more}",
            f"Rebuild ({rebuild_advice(project)}), or expect stale answers about them.",
        )

    def check_bridge(self, project: Project) -> None:
        self.report.section("Build-server bridge")
        if project.kind is ProjectKind.SWIFTPM:
            self.report.ok("Swift package: sourcekit-lsp takes the build settings from SwiftPM directly.")
            return
        root = project.root
        for name in ("compile_commands.json", "buildServer.json"):
            if (root / name).is_file():
                self.report.ok(f"{name} in {root}: sourcekit-lsp sees the build settings.")
                return
        self.report.fail(
            f"{WarningCode.COMPILE_COMMANDS_MISSING}: no compile_commands.json or buildServer.json in {root}.",
            "Install xcode-build-server, then run: xcode-build-server config -project "
            f"{shlex.quote(str(project.path))} -scheme <scheme> (plan_rename's sourcekit-lsp cross-check needs it).",
        )


def _count_entries(folder: str) -> int:
    try:
        with os.scandir(folder) as entries:
            return sum(1 for _ in entries)
    except OSError:
        return 0


def main(project: str | None, install: bool, build_schemes: list[str] | None = None) -> int:
    from xcindex import __version__

    report = Report()
    doctor = _Doctor(report, install)
    sys.stdout.write(f"xcindex doctor {__version__}{' --install' if install else ''}\n")
    doctor.check_python()
    doctor.check_cache()
    doctor.check_swift()
    doctor.check_library()
    doctor.check_sourcekit_lsp()
    chosen = doctor.find_project(project)
    if chosen is not None:
        if chosen.kind is ProjectKind.XCODE:
            doctor.check_schemes(chosen, build_schemes or [])
        elif build_schemes:
            report.fail("--build-scheme is for Xcode projects.", "A Swift package builds with --install.")
        if install:
            doctor.build_index(chosen)
        indexed = doctor.check_index(chosen)
        if indexed is not None:
            doctor.check_freshness(chosen, *indexed)
        doctor.check_bridge(chosen)
        check_configuration(report, chosen, install)
    if report.failures:
        sys.stdout.write(f"\n{report.failures} check(s) failed; the -> lines say what fixes them.\n")
        return 1
    sys.stdout.write("\nAll checks passed.\n")
    return 0
