"""The private environment the plugin runs xcindex from: made once per version, resumable.

`<data>/venv-<version>` (data is `${CLAUDE_PLUGIN_DATA}`, else `~/.local/share/xcindex`) is
complete when its stamp (`.xcindex-ready`) names the version; later starts cost one file
read in the launcher. One installer at a time: `install.lock/` holds its pid, its pip's pid
and a one-line progress note, so another start can wait for it, report how far it is, or,
when its owner died, stop the pip it left behind and take over. Nothing is thrown away that
a killed set-up made: the next one keeps the virtual environment (pip skips what is already
there and reuses its download cache), and its scratch folders (the copied source, pip's
TMPDIR) live in the data folder, where the next set-up clears them. The plugin folder is
never written: pip builds from a copy made with writable modes (a read-only plugin cache
installs as well as any). A set-up that fails leaves `install.failed`, its reason in one line.

Stdlib only: this runs before anything is installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Literal, TextIO

STAMP_NAME = ".xcindex-ready"
SOURCE_ITEMS = ("pyproject.toml", "README.md", "LICENSE", "src")
SKIPPED_IN_COPY = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache"})
STEPS = 3
WAIT_ENV = "XCINDEX_INSTALL_WAIT"
DEFAULT_WAIT_S = 900
STOP_GRACE_S = 5.0


def say(line: str, out: TextIO | None = None) -> None:
    stream = out or sys.stderr
    stream.write(f"[xcindex] {line}\n")
    stream.flush()


@dataclass(frozen=True)
class Plugin:
    """Where one version of the plugin keeps its environment and its set-up's state."""

    root: Path
    """The plugin folder: pyproject.toml, src/, bin/xcindex."""
    version: str
    data: Path
    """`${CLAUDE_PLUGIN_DATA}`, else the fallback."""
    fallback: Path
    """`${XDG_DATA_HOME:-~/.local/share}/xcindex`: an environment made there counts too."""

    @property
    def venv(self) -> Path:
        return self.data / f"venv-{self.version}"

    @property
    def lock(self) -> Path:
        return self.data / "install.lock"

    @property
    def log(self) -> Path:
        return self.data / "install.log"

    @property
    def failed(self) -> Path:
        return self.data / "install.failed"

    @property
    def source_copy(self) -> Path:
        return self.data / f"source-{self.version}"

    @property
    def scratch(self) -> Path:
        """pip's TMPDIR: a killed pip leaves its build folders here, not in /tmp."""
        return self.data / f"tmp-{self.version}"

    def ready(self) -> Path | None:
        """The xcindex of a complete (stamped) environment of this version, in either folder."""
        for base in (self.data, self.fallback):
            venv = base / f"venv-{self.version}"
            program = venv / "bin" / "xcindex"
            try:
                stamped = (venv / STAMP_NAME).read_text().strip() == self.version
            except OSError:
                continue
            if stamped and os.access(program, os.X_OK):
                return program
        return None


# --- the lock ---------------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie does not (a container whose first process reaps nothing
    keeps a killed installer as one: its lock must still be taken over)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS, where launchd reaps): kill(0) said enough


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().split()
    except OSError:
        return None
    return int(text[0]) if text and text[0].isdigit() else None


def lock_owner(plugin: Plugin) -> int | None:
    """The pid of a live installer holding the lock; None when nobody (alive) holds it."""
    owner = _read_pid(plugin.lock / "pid")
    return owner if owner is not None and pid_alive(owner) else None


def _command_line(pid: int) -> str:
    try:
        return subprocess.run(
            ["ps", "-ww", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def stop_process(pid: int, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM, then SIGKILL if it is still there after `grace_s`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)


def take_lock(plugin: Plugin) -> bool:
    """Take the install lock; a lock whose owner died is taken over (and the pip it left
    running, still writing into the environment, is stopped first)."""
    for _ in range(2):
        try:
            plugin.lock.mkdir()
        except FileExistsError:
            if lock_owner(plugin) is not None or not plugin.lock.is_dir():
                return False
            orphan = _read_pid(plugin.lock / "pip.pid")
            if orphan is not None and pid_alive(orphan) and str(plugin.venv) in _command_line(orphan):
                stop_process(orphan)
            shutil.rmtree(plugin.lock, ignore_errors=True)
            continue
        (plugin.lock / "pid").write_text(f"{os.getpid()}\n")
        return True
    return False


def release_lock(plugin: Plugin) -> None:
    if _read_pid(plugin.lock / "pid") == os.getpid():
        shutil.rmtree(plugin.lock, ignore_errors=True)


def note_progress(plugin: Plugin, step: int, doing: str, detail: str = "") -> None:
    """What the installer is doing, for whoever asks (the first-start front, the hook):
    `<step>\\t<what>\\t<last pip line>`, replaced whole so a reader never sees half of it."""
    partial = plugin.lock / "progress.partial"
    with contextlib.suppress(OSError):
        partial.write_text(f"{step}\t{doing}\t{detail}\n")
        os.replace(partial, plugin.lock / "progress")


# --- how far a set-up is, for the front and the hook --------------------------------------

SetupKind = Literal["ready", "installing", "failed", "absent"]


@dataclass(frozen=True)
class SetupState:
    kind: SetupKind
    program: Path | None = None
    """The installed xcindex (ready)."""
    step: str = ""
    """How far a running set-up is, in words (installing)."""
    seconds: float = 0.0
    """How long it has been running (installing)."""
    reason: str = ""
    """Why the last set-up failed (failed)."""


def setup_state(plugin: Plugin) -> SetupState:
    if (program := plugin.ready()) is not None:
        return SetupState("ready", program=program)
    if lock_owner(plugin) is not None:
        try:
            started = (plugin.lock / "pid").stat().st_mtime
        except OSError:
            started = time.time()
        return SetupState("installing", step=_progress_words(plugin), seconds=max(0.0, time.time() - started))
    try:
        reason = plugin.failed.read_text().strip()
    except OSError:
        return SetupState("absent")
    return SetupState("failed", reason=reason)


def _progress_words(plugin: Plugin) -> str:
    try:
        step, doing, detail = (plugin.lock / "progress").read_text().rstrip("\n").split("\t")
    except (OSError, ValueError):
        return "starting"
    words = f"{doing} (step {step} of {STEPS}"
    return words + (f"; last: {detail})" if detail else ")")


# --- the install ------------------------------------------------------------------------


class SetupFailed(Exception):
    """A set-up that cannot finish; its message is the reason, in one line."""


class Interrupted(BaseException):
    """SIGTERM, SIGINT or SIGHUP during the set-up: clean up and stop; the next one resumes."""


def data_folder_problem(plugin: Plugin) -> str | None:
    """Why the data folder cannot hold the environment (created if missing), or None."""
    probe = plugin.data / f".write-probe-{os.getpid()}"
    try:
        plugin.data.mkdir(parents=True, exist_ok=True)
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        return (
            f"its data folder {plugin.data} cannot be written ({error.strerror or error}). "
            "Make it writable (or free some space), then run /xcindex-setup."
        )
    return None


def have_swift() -> bool:
    if shutil.which("swift"):
        return True
    toolchain = os.environ.get("XCINDEX_TOOLCHAIN")
    if toolchain and os.access(Path(toolchain, "usr", "bin", "swift"), os.X_OK):
        return True
    if os.access("/opt/swift/usr/bin/swift", os.X_OK):
        return True
    if shutil.which("xcrun"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            found = subprocess.run(["xcrun", "--find", "swift"], capture_output=True, timeout=20, check=False)
            return found.returncode == 0
    return False


def install(plugin: Plugin, out: TextIO | None = None) -> int:
    """Make the environment (or wait for the installer already making it); 0 once it is ready.
    Progress and reasons go to `out` (stderr), one `[xcindex] ` line each."""
    if (program := plugin.ready()) is not None:
        say(f"xcindex {plugin.version} is ready: {program}", out)
        return 0
    if problem := data_folder_problem(plugin):
        say(f"Cannot set up xcindex: {problem}", out)
        return 1
    if not take_lock(plugin):
        if wait_for_installer(plugin, out):
            # Said here too: this set-up's log ends with the outcome, whoever did the work.
            say(f"xcindex {plugin.version} is installed (by the other set-up): {plugin.ready()}", out)
            return 0
        if not take_lock(plugin):
            say(f"Cannot set up xcindex: {plugin.lock} is held by another installer.", out)
            return 1
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}

    def interrupted(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signal.Signals(signum).name)

    for sig in previous:
        signal.signal(sig, interrupted)
    try:
        with contextlib.suppress(OSError):
            plugin.failed.unlink()
        try:
            _install_locked(plugin, out)
        except OSError as error:  # a full disk, a folder that turned read-only
            raise SetupFailed(f"{error.strerror or error}: {error.filename or plugin.data}.") from None
    except SetupFailed as failure:
        with contextlib.suppress(OSError):
            plugin.failed.write_text(f"{failure}\n")
        say(f"Cannot set up xcindex: {failure}", out)
        return 1
    except Interrupted as stop:
        say(f"The set-up was stopped ({stop}); the next start resumes it.", out)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _clear_scratch(plugin)
        release_lock(plugin)
    return 0


def wait_for_installer(plugin: Plugin, out: TextIO | None) -> bool:
    """Wait for the installer holding the lock; True once the environment is ready."""
    say(f"Another xcindex set-up is running (lock {plugin.lock}); waiting for it.", out)
    limit = float(os.environ.get(WAIT_ENV) or DEFAULT_WAIT_S)
    deadline = time.monotonic() + limit
    while plugin.lock.is_dir() and time.monotonic() < deadline:
        if plugin.ready() is not None:
            return True
        if lock_owner(plugin) is None and plugin.lock.is_dir() and _read_pid(plugin.lock / "pid") is not None:
            break  # its owner died: the caller takes over
        time.sleep(0.5)
    return plugin.ready() is not None


def _clear_scratch(plugin: Plugin) -> None:
    for folder in (plugin.source_copy, plugin.scratch):
        _remove_tree(folder)


def _remove_tree(folder: Path) -> None:
    """Remove a folder even where a read-only copy made it unwritable."""

    def writable_then_retry(function: Callable[..., object], path: str, _error: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            function(path)

    if folder.exists():
        shutil.rmtree(folder, onerror=writable_then_retry)


def _install_locked(plugin: Plugin, out: TextIO | None) -> None:
    started = time.monotonic()
    version = sys.version.split()[0]
    say(
        f"First start: installing xcindex {plugin.version} into {plugin.venv} with {sys.executable} "
        f"{version}. This takes a minute, once.",
        out,
    )
    if not have_swift():
        say(
            "No Swift toolchain found (no swift on PATH, xcrun --find swift failed, nothing at /opt/swift): "
            "xcindex installs, but answers need one. Install Xcode or a swift.org toolchain.",
            out,
        )
    _clear_scratch(plugin)
    note_progress(plugin, 1, "making the virtual environment")
    _make_venv(plugin, out)
    note_progress(plugin, 2, "copying the plugin's Python package")
    _copy_source(plugin)
    note_progress(plugin, 3, "installing xcindex and its dependencies with pip")
    say("Installing the package and its dependencies with pip (progress below).", out)
    _pip_install(plugin, out)
    (plugin.venv / STAMP_NAME).write_text(f"{plugin.version}\n")
    say(
        f"xcindex {plugin.version} is installed ({time.monotonic() - started:.0f} s): "
        f"{plugin.venv / 'bin' / 'xcindex'}",
        out,
    )


def _venv_works(venv: Path) -> bool:
    python = venv / "bin" / "python"
    if not os.access(python, os.X_OK):
        return False
    try:
        checked = subprocess.run(
            [str(python), "-m", "pip", "--version"], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return checked.returncode == 0


def _make_venv(plugin: Plugin, out: TextIO | None) -> None:
    if _venv_works(plugin.venv):
        say(
            f"Resuming in {plugin.venv} (an earlier set-up was interrupted): pip keeps what it installed.",
            out,
        )
        return
    _remove_tree(plugin.venv)
    made = _run([sys.executable, "-m", "venv", str(plugin.venv)], out)
    if made != 0:
        raise SetupFailed(
            f"'{sys.executable} -m venv {plugin.venv}' failed: see its output above (on Debian/Ubuntu: "
            "apt install python3-venv)."
        )


def _copy_source(plugin: Plugin) -> None:
    """pip builds in its source folder: copy the package there, every file and folder
    writable by us whatever the plugin folder's modes (a read-only cache stays untouched)."""
    try:
        plugin.source_copy.mkdir(parents=True)
        for item in SOURCE_ITEMS:
            source = plugin.root / item
            if source.is_dir():
                _copy_tree(source, plugin.source_copy / item)
            else:
                shutil.copyfile(source, plugin.source_copy / item)
    except OSError as error:
        raise SetupFailed(
            f"the plugin folder {plugin.root} could not be copied ({error.strerror or error}: "
            f"{error.filename}); it needs {', '.join(SOURCE_ITEMS)}."
        ) from None


def _copy_tree(source: Path, target: Path) -> None:
    target.mkdir()
    for entry in os.scandir(source):
        if entry.name in SKIPPED_IN_COPY or entry.name.endswith(".egg-info"):
            continue
        if entry.is_dir(follow_symlinks=False):
            _copy_tree(Path(entry.path), target / entry.name)
        elif entry.is_file():
            shutil.copyfile(entry.path, target / entry.name)


def _pip_install(plugin: Plugin, out: TextIO | None) -> None:
    plugin.scratch.mkdir(parents=True, exist_ok=True)
    command = [
        str(plugin.venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        str(plugin.source_copy),
    ]
    environment = {**os.environ, "TMPDIR": str(plugin.scratch), "PIP_NO_INPUT": "1"}

    def follow(line: str) -> None:
        if line.startswith(("Collecting ", "Downloading ", "Building ", "Installing ", "Successfully ")):
            detail = line.split(":")[0] if line.startswith("Installing ") else line[:70]
            note_progress(plugin, 3, "installing xcindex and its dependencies with pip", detail)

    code = _run(command, out, env=environment, on_line=follow, pid_file=plugin.lock / "pip.pid")
    if code != 0:
        raise SetupFailed(
            f"pip install failed (exit {code}; its output is above, or in {plugin.log} for a background "
            "set-up): check the network and the disk space."
        )


def _run(
    command: list[str],
    out: TextIO | None,
    *,
    env: dict[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
    pid_file: Path | None = None,
) -> int:
    """Run `command`, its output copied to `out`; an interruption stops it before it spreads."""
    stream = out or sys.stderr
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    ) as child:
        if pid_file is not None:
            with contextlib.suppress(OSError):
                pid_file.write_text(f"{child.pid}\n")
        try:
            assert child.stdout is not None
            for line in _lines(child.stdout):
                stream.write(line)
                stream.flush()
                if on_line is not None:
                    on_line(line.strip())
            return child.wait()
        except BaseException:
            stop_process(child.pid)
            child.wait()
            raise


def _lines(stream: IO[str]) -> Iterator[str]:
    yield from iter(stream.readline, "")
