"""Index one source file into a private store with the compiler.

The driver's `-index-file` mode typechecks the module's sources (the other modules come
from the last build's `Modules` folder) and writes one unit and one record for the file,
into a store of its own in xcindex's cache: never the project's store, never `.build`.
Each run gets a new, empty store (removed once its unit is in the database), so what the
run wrote is exactly what is in it, nothing accumulates, and two processes indexing the
same project never share one. The module cache (shared by every project) and the
driver's temporary files go to the cache folder too (a folder per compiler run, removed
after it: the driver leaves its `TemporaryDirectory.*` behind).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from xcindex._log import get_logger
from xcindex.indexstore.cache import cache_dir
from xcindex.overlay.arguments import ModuleInvocation
from xcindex.project.store_layout import units_dir
from xcindex.vocabulary import WarningCode

log = get_logger(__name__)

COMPILE_TIMEOUT_S = 120.0
"""A typecheck of one module that takes longer than this is abandoned (the file stays stale)."""
MESSAGE_CHARS = 600
ABANDONED_AFTER_S = 3600.0
"""A run's store older than this was left by a process that died: it is removed."""


@dataclass(frozen=True)
class OverlayPlace:
    """The overlay's folders for one project store, under the cache folder."""

    root: Path

    @classmethod
    def for_database(cls, database_path: Path) -> OverlayPlace:
        return cls(cache_dir() / "overlay" / database_path.stem)

    @property
    def runs(self) -> Path:
        """Where each run's own store is made (and removed after it)."""
        return self.root / "runs"

    @property
    def modules(self) -> Path:
        """Modules emitted from their sources as they are now (a module whose files changed
        since the build, for the files of the modules that import it), with a stamp each."""
        return self.root / "Modules"

    @property
    def module_cache(self) -> Path:
        """Shared by every project's overlay (Clang's module cache is keyed by the flags
        and safe to share between processes, as Xcode's DerivedData one is): the system
        modules are built once per machine, not once per project. A cold one costs about
        3 s for a file that imports XCTest, a warm one nothing."""
        return self.root.parent / "ModuleCache"

    @property
    def temporary(self) -> Path:
        return self.root / "tmp"

    def unit_output(self, file: str) -> Path:
        """A per-file output name (never written): it names the file's unit in the store."""
        digest = hashlib.sha1(file.encode()).hexdigest()[:12]
        return self.root / "out" / f"{Path(file).name}-{digest}.o"


@dataclass(frozen=True)
class Indexed:
    """The compiler indexed `path` as it was at `file_mtime_ns` into `store` (this run's
    own), as the units `unit_names`. The caller removes `store` once it has read it
    (`discard_run`)."""

    path: str
    file_mtime_ns: int
    store: Path
    unit_names: tuple[str, ...]
    duration_s: float


@dataclass(frozen=True)
class NotIndexed:
    """The file stays stale, for the reason `code` names."""

    path: str
    code: WarningCode
    message: str
    duration_s: float = 0.0
    retry: bool = False
    """The file changed while it was indexed: try its new content (it is not a failure of it)."""


def _new_run(place: OverlayPlace) -> Path:
    for folder in (place.runs, place.module_cache, place.temporary):
        folder.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(place.runs)
    _remove_abandoned(place.temporary)
    return Path(tempfile.mkdtemp(prefix="store-", dir=place.runs))


def _new_temporary(place: OverlayPlace) -> Path:
    place.temporary.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="run-", dir=place.temporary))


async def _run_compiler(command: list[str], place: OverlayPlace) -> subprocess.CompletedProcess[bytes]:
    """Run the compiler within COMPILE_TIMEOUT_S (TimeoutError after), its temporary files in
    a folder of its own, removed after it whatever happened."""
    temporary = await anyio.to_thread.run_sync(_new_temporary, place)
    try:
        with anyio.fail_after(COMPILE_TIMEOUT_S):
            return await anyio.run_process(
                command, check=False, cwd=place.root, env=dict(os.environ, TMPDIR=str(temporary))
            )
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(discard_run, temporary)


def _remove_abandoned(runs: Path) -> None:
    """Runs a killed process left behind (a live one lasts at most COMPILE_TIMEOUT_S)."""
    cutoff = time.time() - ABANDONED_AFTER_S
    try:
        with os.scandir(runs) as entries:
            old = [e.path for e in entries if e.is_dir() and e.stat().st_mtime < cutoff]
    except OSError:
        return
    for folder in old:
        shutil.rmtree(folder, ignore_errors=True)


def discard_run(store: Path) -> None:
    """Remove a run's store (its unit is in the database, or the run failed), or a compiler
    run's temporary folder."""
    shutil.rmtree(store, ignore_errors=True)


def _units(store: Path) -> dict[str, int]:
    try:
        with os.scandir(units_dir(store)) as entries:
            return {e.name: e.stat().st_mtime_ns for e in entries if e.is_file()}
    except FileNotFoundError:
        return {}


def _signature(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def compiler_errors(stdout: bytes, stderr: bytes) -> str:
    """The compiler's diagnostics from its first error on, without the driver's summary
    ("... command failed with exit code 1 (use -v to see invocation)"), which says nothing."""
    lines = [
        line
        for line in (stderr + b"\n" + stdout).decode(errors="replace").splitlines()
        if line.strip() and "(use -v to see invocation)" not in line
    ]
    first = next((i for i, line in enumerate(lines) if "error:" in line), 0)
    return "\n".join(lines[first:]).strip()


def _module_stamp(invocation: ModuleInvocation) -> str:
    """What an emitted module was made from: its sources and their modification times."""
    parts = [
        f"{source}:{os.stat(source).st_mtime_ns if os.path.exists(source) else 0}"
        for source in invocation.sources
    ]
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()


def remove_emitted(place: OverlayPlace, names: list[str]) -> None:
    """Remove what was emitted into the overlay's Modules folder for these modules (their
    `.swiftmodule`, `.swiftdoc`, `.swiftsourceinfo`, `.o` and stamp): they are as the build
    compiled them again, and the folder is searched before the build's, so a copy emitted
    from an edit since undone must not be found. (Module names hold no dot.)"""
    for name in names:
        try:
            emitted = [entry.path for entry in os.scandir(place.modules) if entry.name.startswith(name + ".")]
        except OSError:
            return  # no folder: nothing was ever emitted
        for path in emitted:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        if emitted:
            log.info("overlay_module_removed", module=name, reason="its files are as the build compiled them")


async def emit_modules(changed: list[ModuleInvocation], place: OverlayPlace, path: str) -> NotIndexed | None:
    """Emit each of `changed` (dependencies first) into the overlay's Modules folder unless
    it is current (its stamp), so that `path`'s module sees them as they are now. None when
    they are all there; why not, for `path`, otherwise."""
    for invocation in changed:
        stamp_file = place.modules / f"{invocation.module_name}.stamp"
        stamp = await anyio.to_thread.run_sync(_module_stamp, invocation)
        try:
            if stamp_file.read_text() == stamp:
                continue
        except OSError:
            pass
        place.modules.mkdir(parents=True, exist_ok=True)
        command = invocation.emit_module_command(module_cache=place.module_cache, modules=place.modules)
        started = time.perf_counter()
        try:
            result = await _run_compiler(command, place)
        except TimeoutError:
            return NotIndexed(
                path,
                WarningCode.OVERLAY_FAILED,
                f"module {invocation.module_name}, which {path} imports, changed since the build and was "
                f"not compiled within {COMPILE_TIMEOUT_S:g} s.",
            )
        if result.returncode != 0:
            errors = compiler_errors(result.stdout, result.stderr)
            stamp_file.unlink(missing_ok=True)
            return NotIndexed(
                path,
                WarningCode.OVERLAY_FAILED,
                f"module {invocation.module_name}, which {path} imports, does not compile as it is now, so "
                f"{path} keeps its last build's index: "
                + (errors[:MESSAGE_CHARS] or f"exit status {result.returncode}"),
            )
        stamp_file.write_text(stamp)
        log.info(
            "overlay_module_emitted",
            module=invocation.module_name,
            duration_s=round(time.perf_counter() - started, 3),
        )
    return None


async def index_file(
    path: str, invocation: ModuleInvocation, place: OverlayPlace, *, modules: Path | None = None
) -> Indexed | NotIndexed:
    """Run the compiler for `path`; only a clean exit with the file unchanged meanwhile
    counts (a syntax or type error leaves the file stale: `overlay_failed`)."""
    started = time.perf_counter()
    before = _signature(path)
    if before is None:
        return NotIndexed(path, WarningCode.OVERLAY_UNAVAILABLE, f"{path} cannot be read.")
    store = await anyio.to_thread.run_sync(_new_run, place)
    try:
        outcome = await _compile(path, invocation, place, store, before, started, modules)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(discard_run, store)
        raise
    if isinstance(outcome, NotIndexed):
        await anyio.to_thread.run_sync(discard_run, store)
    return outcome


async def _compile(
    path: str,
    invocation: ModuleInvocation,
    place: OverlayPlace,
    store: Path,
    before: tuple[int, int],
    started: float,
    modules: Path | None,
) -> Indexed | NotIndexed:
    unit_output = place.unit_output(path)
    command = invocation.index_command(
        path, store=store, module_cache=place.module_cache, unit_output=unit_output, modules=modules
    )
    try:
        result = await _run_compiler(command, place)
    except TimeoutError:
        return NotIndexed(
            path,
            WarningCode.OVERLAY_FAILED,
            f"the compiler did not index {path} within {COMPILE_TIMEOUT_S:g} s.",
            time.perf_counter() - started,
        )
    except OSError as error:
        return NotIndexed(
            path, WarningCode.OVERLAY_UNAVAILABLE, f"the compiler could not be started: {error}."
        )
    duration = time.perf_counter() - started
    if result.returncode != 0:
        errors = compiler_errors(result.stdout, result.stderr)
        log.info("overlay_compile_failed", path=path, returncode=result.returncode, duration_s=duration)
        return NotIndexed(
            path,
            WarningCode.OVERLAY_FAILED,
            f"{path} does not compile as it is now, so it keeps its last build's index: "
            + (errors[:MESSAGE_CHARS] or f"exit status {result.returncode}"),
            duration,
        )
    if _signature(path) != before:
        return NotIndexed(
            path, WarningCode.OVERLAY_FAILED, f"{path} changed while it was indexed.", duration, retry=True
        )
    # The file's unit is named after its output (`<output name>-<hash>`); a module's unit
    # the compiler may write beside it is not the file's.
    prefix = unit_output.name + "-"
    written = tuple(sorted(n for n in await anyio.to_thread.run_sync(_units, store) if n.startswith(prefix)))
    if not written:
        return NotIndexed(
            path, WarningCode.OVERLAY_FAILED, f"the compiler wrote no unit for {path}.", duration
        )
    log.info("overlay_compiled", path=path, duration_s=round(duration, 3))
    return Indexed(path, before[0], store, written, duration)
