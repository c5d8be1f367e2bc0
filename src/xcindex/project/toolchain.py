"""Where this machine's Swift toolchain is: `swift`, libIndexStore, sourcekit-lsp, and Xcode's
DerivedData folder. The server, the index workers and the doctor all ask here, so they agree.

The search order for a toolchain root (the folder holding `usr/`), best first:

1. `XCINDEX_TOOLCHAIN`, then the toolchain of `SOURCEKIT_LSP_PATH` (explicit choices);
2. `TOOLCHAINS` (a swift.org toolchain's bundle identifier, or `swift` for the latest), looked
   up in `/Library/Developer/Toolchains` and `~/Library/Developer/Toolchains`, as xcrun does;
3. `swift` on PATH with symlinks resolved, unless it is macOS's `/usr/bin` shim;
4. the Xcode developer folder (`DEVELOPER_DIR`, else `xcode-select -p`): its
   `Toolchains/XcodeDefault.xctoolchain`, or the Command Line Tools folder itself;
5. `xcrun --find swift`;
6. `/opt/swift` (the usual Linux install).

On Linux only 1, 3 and 6 find anything and nothing is run; xcrun and xcode-select are run only
when they are on PATH. A leaf module: it imports nothing from xcindex but the errors (and the
vocabulary's warning codes when it raises one), so `indexstore/`, `lsp/` and the entry points
may all use it. The search is in plain strings, and `library_file` and `sourcekit_lsp_file`
answer in them: the session-start hook asks here without importing `pathlib` (with its `re`
and `urllib`, a third of the hook's run); the `Path` answers are for everyone else.
"""

from __future__ import annotations

import os

from xcindex.errors import CodedError, XcindexError

TYPE_CHECKING = False  # `typing` is a hook's import too many
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

LIBRARY_ENV = "XCINDEX_LIBINDEXSTORE"
TOOLCHAIN_ENV = "XCINDEX_TOOLCHAIN"
SOURCEKIT_LSP_ENV = "SOURCEKIT_LSP_PATH"
DERIVED_DATA_ENV = "XCINDEX_DERIVED_DATA"
DEFAULT_TOOLCHAIN = "/opt/swift"
SYSTEM_TOOLCHAINS = "/Library/Developer/Toolchains"
XCODE_DEFAULT_TOOLCHAIN = "Toolchains/XcodeDefault.xctoolchain"
_LIBRARY_NAMES = ("libIndexStore.so", "libIndexStore.dylib")
_SHIM_FOLDERS = ("/usr/bin",)
_PROBE_TIMEOUT_S = 10.0


class LibraryNotFound(XcindexError):
    pass


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def _root_of(binary: str) -> str:
    """`<root>/usr/bin/<tool>` → `<root>`, symlinks resolved."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(binary))))


def _folder(path: str) -> str:
    """A folder spelled as `Path` spells it (no empty or `.` parts; `..` kept, as a symbolic
    link may stand before it), so that one folder named two ways counts once."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return ("/" if path.startswith("/") else "") + "/".join(parts) or "."


def which(command: str, path: str) -> str | None:
    """`shutil.which(command, path=path)` on POSIX, without shutil's imports (its archive
    modules are a fifth of the session-start hook): the first file on `path` that the user
    may execute; a command with a folder in it is checked as it is."""
    if os.path.dirname(command):
        return command if _executable(command) else None
    seen: set[str] = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, command)
        if _executable(candidate):
            return candidate
    return None


def _executable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.X_OK) and not os.path.isdir(path)


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _run(command: list[str], environ: Mapping[str, str]) -> str | None:
    """The first line a small Apple tool prints; None when it is absent or fails."""
    program = which(command[0], environ.get("PATH", os.defpath))
    if program is None:
        return None
    import subprocess  # only where an Apple tool is there to run: not on a hook's way

    try:
        done = subprocess.run(
            [program, *command[1:]],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            env=dict(environ),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    return line if done.returncode == 0 and line else None


def _named_toolchains(identifier: str, environ: Mapping[str, str]) -> list[str]:
    """The swift.org toolchains `TOOLCHAINS` names (its bundle identifier, or `swift`)."""
    import plistlib  # macOS only; keep the common path light

    found: list[str] = []
    home = environ.get("HOME")
    for folder in (
        SYSTEM_TOOLCHAINS,
        *([os.path.join(home, "Library/Developer/Toolchains")] if home else []),
    ):
        latest = os.path.join(folder, "swift-latest.xctoolchain")
        if identifier == "swift" and os.path.isdir(latest):
            found.append(latest)
            continue
        try:
            bundles = sorted(
                os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".xctoolchain")
            )
        except OSError:
            continue
        for bundle in bundles:
            try:
                with open(os.path.join(bundle, "Info.plist"), "rb") as handle:
                    info = plistlib.load(handle)
            except (OSError, ValueError, plistlib.InvalidFileException):
                continue
            if isinstance(info, dict) and info.get("CFBundleIdentifier") == identifier:
                found.append(bundle)
    return found


def _developer_folder(environ: Mapping[str, str]) -> str | None:
    if configured := environ.get("DEVELOPER_DIR"):
        return configured
    return _run(["xcode-select", "-p"], environ)


def developer_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Xcode's active developer folder: `DEVELOPER_DIR`, else `xcode-select -p`."""
    from pathlib import Path

    found = _developer_folder(_env(environ))
    return Path(found) if found else None


def toolchain_folders(environ: Mapping[str, str] | None = None) -> list[str]:
    """Candidate toolchain roots, best first (the order in the module's docstring), deduplicated,
    each an existing folder holding `usr/`."""
    env = _env(environ)
    search_path = env.get("PATH", os.defpath)
    candidates: list[str] = []
    if configured := env.get(TOOLCHAIN_ENV):
        candidates.append(configured)
    if lsp := env.get(SOURCEKIT_LSP_ENV):
        candidates.append(_root_of(lsp))
    if identifier := env.get("TOOLCHAINS"):
        candidates += _named_toolchains(identifier, env)
    shim: str | None = None
    for tool in ("swift", "swiftc"):
        if found := which(tool, search_path):
            if os.path.dirname(os.path.realpath(found)) in _SHIM_FOLDERS:
                shim = found
            else:
                candidates.append(_root_of(found))
    if (developer := _developer_folder(env)) is not None:
        candidates += [os.path.join(developer, XCODE_DEFAULT_TOOLCHAIN), developer]
    if found := _run(["xcrun", "--find", "swift"], env):
        candidates.append(_root_of(found))
    if shim is not None:
        candidates.append(_root_of(shim))
    candidates.append(DEFAULT_TOOLCHAIN)
    roots: list[str] = []
    for root in map(_folder, candidates):
        if root not in roots and os.path.isdir(os.path.join(root, "usr")):
            roots.append(root)
    return roots


def toolchain_roots(environ: Mapping[str, str] | None = None) -> list[Path]:
    """`toolchain_folders` as Paths."""
    from pathlib import Path

    return [Path(root) for root in toolchain_folders(environ)]


def find_swift(environ: Mapping[str, str] | None = None) -> Path | None:
    """The `swift` of the first toolchain root that has one, else whatever PATH offers."""
    from pathlib import Path

    env = _env(environ)
    for root in toolchain_folders(env):
        candidate = os.path.join(root, "usr", "bin", "swift")
        if _is_executable_file(candidate):
            return Path(candidate)
    found = which("swift", env.get("PATH", os.defpath))
    return Path(found) if found else None


def find_swift_demangle(environ: Mapping[str, str] | None = None) -> Path | None:
    """The toolchain's `swift-demangle`, beside its `swift` (None without one): what reads a
    library function's generic signature out of the USR the index records for it."""
    swift = find_swift(environ)
    candidate = swift.resolve().parent / "swift-demangle" if swift is not None else None
    return candidate if candidate is not None and _is_executable_file(str(candidate)) else None


def library_file(environ: Mapping[str, str] | None = None) -> str:
    """The libIndexStore to load: `XCINDEX_LIBINDEXSTORE`, else the first toolchain that has one."""
    env = _env(environ)
    if configured := env.get(LIBRARY_ENV):
        if not os.path.isfile(configured):
            raise LibraryNotFound(f"{LIBRARY_ENV} points at '{configured}', which is not a file.")
        return configured
    searched: list[str] = []
    for root in toolchain_folders(env):
        lib_dir = os.path.join(root, "usr", "lib")
        searched.append(lib_dir)
        for name in _LIBRARY_NAMES:
            if os.path.isfile(os.path.join(lib_dir, name)):
                return os.path.join(lib_dir, name)
        try:
            versioned = sorted(name for name in os.listdir(lib_dir) if name.startswith("libIndexStore.so."))
        except OSError:
            versioned = []
        if versioned:
            return os.path.join(lib_dir, versioned[-1])
    where = ", ".join(searched) or "no toolchain found"
    raise LibraryNotFound(
        f"libIndexStore was not found (searched: {where}). Install the Swift toolchain (Xcode or "
        f"swift.org), put `swift` on PATH, or set {LIBRARY_ENV} to the library's path."
    )


def find_library(environ: Mapping[str, str] | None = None) -> Path:
    """`library_file` as a Path."""
    from pathlib import Path

    return Path(library_file(environ))


def _checked_explicit(path: str, origin: str) -> str:
    from xcindex.vocabulary import WarningCode  # only to say what is wrong

    if not os.path.exists(path):
        raise CodedError(
            WarningCode.SOURCEKIT_LSP_NOT_FOUND, f"{origin} points at {path}, which does not exist"
        )
    if not _is_executable_file(path):
        raise CodedError(
            WarningCode.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE,
            f"{origin} points at {path}, which is not an executable file (chmod +x it)",
        )
    return path


def configured_sourcekit_lsp(environ: Mapping[str, str] | None = None) -> str | None:
    """`SOURCEKIT_LSP_PATH` when set (the doctor names it in its findings)."""
    return _env(environ).get(SOURCEKIT_LSP_ENV) or None


def sourcekit_lsp_file(override: str | None = None, *, environ: Mapping[str, str] | None = None) -> str:
    """The sourcekit-lsp binary to launch: `override` (configuration), `SOURCEKIT_LSP_PATH`,
    the toolchain roots in order, `xcrun --find sourcekit-lsp`, then PATH.

    Raises:
        CodedError: sourcekit_lsp_not_found, or sourcekit_lsp_binary_not_executable when an
            explicit path names a file that cannot be executed.
    """
    env = _env(environ)
    if override is not None:
        return _checked_explicit(override, "the configured sourcekit-lsp path")
    if explicit := configured_sourcekit_lsp(env):
        return _checked_explicit(explicit, SOURCEKIT_LSP_ENV)
    for root in toolchain_folders(env):
        candidate = os.path.join(root, "usr", "bin", "sourcekit-lsp")
        if _is_executable_file(candidate):
            return candidate
    if (found := _run(["xcrun", "--find", "sourcekit-lsp"], env)) and _is_executable_file(found):
        return found
    if on_path := which("sourcekit-lsp", env.get("PATH", os.defpath)):
        return on_path
    from xcindex.vocabulary import WarningCode

    raise CodedError(
        WarningCode.SOURCEKIT_LSP_NOT_FOUND,
        f"no sourcekit-lsp in a Swift toolchain (next to swift, Xcode's, {DEFAULT_TOOLCHAIN}) "
        f"or on PATH; set {SOURCEKIT_LSP_ENV}",
    )


def find_sourcekit_lsp(override: Path | None = None, *, environ: Mapping[str, str] | None = None) -> Path:
    """`sourcekit_lsp_file` as a Path."""
    from pathlib import Path

    return Path(sourcekit_lsp_file(None if override is None else str(override), environ=environ))


def derived_data_base(environ: Mapping[str, str] | None = None, project: Path | None = None) -> Path:
    """Where Xcode writes DerivedData: `XCINDEX_DERIVED_DATA`, else Xcode's custom location
    (`IDECustomDerivedDataLocation` in its preferences; a relative one is relative to the
    project's folder), else `~/Library/Developer/Xcode/DerivedData`."""
    from pathlib import Path

    env = _env(environ)
    if configured := env.get(DERIVED_DATA_ENV):
        return Path(configured)
    home = Path(env.get("HOME") or Path.home())
    custom = _xcode_preference(home, "IDECustomDerivedDataLocation")
    if custom:
        location = Path(os.path.expanduser(custom))
        if location.is_absolute():
            return location
        if project is not None:
            return Path(os.path.normpath(project.parent / location))
    return home / "Library" / "Developer" / "Xcode" / "DerivedData"


def _xcode_preference(home: Path, key: str) -> str | None:
    import plistlib  # only Xcode projects get here

    try:
        with (home / "Library" / "Preferences" / "com.apple.dt.Xcode.plist").open("rb") as handle:
            value = plistlib.load(handle).get(key)
    except (OSError, ValueError, AttributeError, plistlib.InvalidFileException):
        return None
    return value if isinstance(value, str) and value else None
