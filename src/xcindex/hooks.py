"""`xcindex hook <event>`: the Claude Code hooks. They warn; they never act.

- `session-start` resets the session ledger and prints one line about the index: current,
  N Swift files newer than it, or missing (with the command that builds one).
- `post-tool-use` (Edit, Write, MultiEdit) records an edited Swift/ObjC source in the
  ledger and prints a one-line note that answers about it may be stale.
- `pre-tool-use` (Grep) nudges the agent from a Grep over Swift sources towards the
  xcindex tools, through `hookSpecificOutput.additionalContext`. It never blocks.

Every hook exits 0 whatever happens (bad input, an unwritable temporary folder, no
project) and says in one short line why it could not do its job; none starts a build.

Import-light: stdlib only (plus `locate` and `ledger`, which are too). These run on every
edit an agent makes; they must not load anyio, mcp, cffi or structlog.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from xcindex import ledger
from xcindex.indexstore.layout import units_dir

TOOL_INPUT_ENV = "CLAUDE_TOOL_INPUT"
"""The older protocol: the tool's input as JSON in the environment."""
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit"})
BUILD_COMMAND = "swift build --build-tests"
PRUNED_DIRS = frozenset({".git", ".build", "Pods", "node_modules", "DerivedData"})
STALE_NAMES_SHOWN = 5
_STDIN_TIMEOUT_S = 5.0
_MAX_INPUT_BYTES = 64 << 20
_PROJECT_SEARCH_DEPTH = 2


class HookInputError(ValueError):
    """The hook's input could not be understood; the message says why, briefly."""


class _Record:
    """A small immutable value with equality. Not a dataclass: importing `dataclasses`
    (and `inspect` with it) was a fifth of a hook's run, and a hook runs on every edit."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """The fields in their constructor order."""

    def __init__(self, *values: object) -> None:
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Record) and type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(repr(v) for v in self._values())))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"


class ToolCall(_Record):
    """What a PreToolUse/PostToolUse hook is told about the tool call. `tool_name` is None
    when the input came without one (the older protocol)."""

    __slots__ = ("cwd", "tool_input", "tool_name")
    _fields = ("tool_name", "tool_input", "cwd")
    tool_name: str | None
    tool_input: Mapping[str, object]
    cwd: str | None

    def __init__(self, tool_name: str | None, tool_input: Mapping[str, object], cwd: str | None) -> None:
        super().__init__(tool_name, tool_input, cwd)


# ---------------------------------------------------------------------------------------
# Input


def read_stdin(timeout: float = _STDIN_TIMEOUT_S) -> bytes:
    """Everything on stdin, or what arrived before `timeout` (never hangs on an idle pipe)."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return b""
    try:
        if stream.isatty():
            return b""
        fd = stream.fileno()
    except (OSError, ValueError):
        return b""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while size < _MAX_INPUT_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                break
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _json_object(raw: bytes | str, what: str) -> dict[str, object]:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise HookInputError(f"{what} is not valid JSON") from None
    if not isinstance(value, dict):
        raise HookInputError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def parse_tool_call(stdin: bytes, environ: Mapping[str, str]) -> ToolCall:
    """The tool call from stdin (current protocol), else from `CLAUDE_TOOL_INPUT`.

    Stdin carries `{"tool_name", "tool_input", "cwd", ...}`; a bare tool input (the
    older protocol, or a hand-written test) is accepted as well.
    """
    problem: HookInputError | None = None
    if stdin.strip():
        try:
            return _tool_call(_json_object(stdin, "the hook input on stdin"))
        except HookInputError as error:
            problem = error
    if fallback := environ.get(TOOL_INPUT_ENV, "").strip():
        try:
            return _tool_call({"tool_input": _json_object(fallback, TOOL_INPUT_ENV)})
        except HookInputError as error:
            problem = problem or error
    raise problem or HookInputError(f"no hook input (stdin was empty and {TOOL_INPUT_ENV} is unset)")


def _tool_call(payload: dict[str, object]) -> ToolCall:
    tool_name = payload.get("tool_name")
    if tool_name is not None and not isinstance(tool_name, str):
        raise HookInputError("tool_name is not a string")
    if "tool_input" in payload:
        tool_input = payload["tool_input"]
        if not isinstance(tool_input, dict):
            raise HookInputError("tool_input is not an object")
    else:
        tool_input = payload
    cwd = payload.get("cwd")
    return ToolCall(tool_name, tool_input, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)


def _optional_text(tool_input: Mapping[str, object], key: str) -> str:
    value = tool_input.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise HookInputError(f"{key} is not a string (got {type(value).__name__})")
    return value


# ---------------------------------------------------------------------------------------
# Projects and freshness (the doctor uses these too)


class Project(_Record):
    """A project found on disk: `path` is the package folder, or the .xcodeproj/.xcworkspace;
    `kind` is "swiftpm" or "xcode"."""

    __slots__ = ("kind", "path")
    _fields = ("path", "kind")
    path: Path
    kind: str

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(path, kind)

    @property
    def root(self) -> Path:
        """The folder whose Swift sources the index covers."""
        return self.path if self.kind == "swiftpm" else self.path.parent

    @property
    def name(self) -> str:
        return self.path.stem if self.kind == "xcode" else self.path.name


def _children(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def find_projects(directory: Path, depth: int = _PROJECT_SEARCH_DEPTH) -> list[Project]:
    """Swift packages and Xcode projects at or below `directory`, shallowest first.

    At one depth a Package.swift comes before an .xcworkspace, which comes before an
    .xcodeproj. Build and dependency folders are not searched, nor are Xcode bundles.
    """
    found: list[Project] = []
    level = [directory]
    for _ in range(depth + 1):
        packages: list[Project] = []
        workspaces: list[Project] = []
        xcodeprojs: list[Project] = []
        deeper: list[Path] = []
        for folder in level:
            for entry in _children(folder):
                path = Path(entry.path)
                try:
                    is_dir = entry.is_dir()
                    is_file = entry.is_file()
                except OSError:
                    continue
                if entry.name == "Package.swift" and is_file:
                    packages.append(Project(folder, "swiftpm"))
                elif not is_dir:
                    continue
                elif path.suffix == ".xcworkspace":
                    workspaces.append(Project(path, "xcode"))
                elif path.suffix == ".xcodeproj":
                    xcodeprojs.append(Project(path, "xcode"))
                elif entry.name not in PRUNED_DIRS and not entry.name.startswith("."):
                    deeper.append(path)
        found += packages + workspaces + xcodeprojs
        level = deeper
    return found


def newest_unit_mtime_ns(store: Path) -> int | None:
    """When the compiler last wrote a unit into the store; None if it holds none."""
    newest: int | None = None
    try:
        with os.scandir(units_dir(store)) as entries:
            for entry in entries:
                try:
                    mtime = entry.stat(follow_symlinks=False).st_mtime_ns
                except OSError:
                    continue
                newest = mtime if newest is None else max(newest, mtime)
    except OSError:
        return None
    return newest


def _swift_files(root: Path) -> Iterator[tuple[Path, int]]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in PRUNED_DIRS]
        for name in files:
            if name.endswith(".swift"):
                path = Path(folder, name)
                try:
                    yield path, path.stat().st_mtime_ns
                except OSError:
                    continue


def swift_files_newer_than(root: Path, mtime_ns: int) -> list[Path]:
    """Swift sources under `root` modified after `mtime_ns`, newest first."""
    newer = [(mtime, path) for path, mtime in _swift_files(root) if mtime > mtime_ns]
    newer.sort(key=lambda item: (-item[0], str(item[1])))
    return [path for _, path in newer]


def format_time(mtime_ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime_ns / 1e9))


def rebuild_advice(project: Project) -> str:
    if project.kind == "swiftpm":
        return f"`{BUILD_COMMAND}` in {project.root}"
    return "a build in Xcode (with indexing enabled)"


# ---------------------------------------------------------------------------------------
# The hooks


def _index_report(directory: Path) -> str:
    projects = find_projects(directory)
    if not projects:
        return (
            f"[xcindex] No Swift package or Xcode project in {directory}: "
            "the xcindex tools have nothing to answer about here."
        )
    from xcindex.locate import LocateError, locate  # session-start only: keep post-tool-use light

    failures: list[tuple[Project, str]] = []
    for project in projects:
        try:
            location = locate(str(project.path), None)
        except LocateError as error:
            failures.append((project, str(error)))
            continue
        newest = newest_unit_mtime_ns(location.store_path)
        if newest is None:
            failures.append((project, f"the index store at {location.store_path} holds no units yet"))
            continue
        built = format_time(newest)
        newer = swift_files_newer_than(project.root, newest)
        if not newer:
            return (
                f"[xcindex] Index is current for {project.name} (last built {built}): "
                "the xcindex tools (mcp__xcindex__*) answer from it."
            )
        shown = [_relative(path, project.root) for path in newer[:STALE_NAMES_SHOWN]]
        more = ", ..." if len(newer) > STALE_NAMES_SHOWN else ""
        return (
            f"[xcindex] {len(newer)} Swift file(s) newer than the index for {project.name} "
            f"(last built {built}): {', '.join(shown)}{more}. "
            f"Rebuild ({rebuild_advice(project)}) before trusting xcindex answers about them."
        )
    project, reason = failures[0]
    if project.kind == "swiftpm":
        return (
            f"[xcindex] No index found for {project.name}: build one with `{BUILD_COMMAND}` "
            f"in {project.root} to enable the xcindex tools."
        )
    return f"[xcindex] No index found for {project.name}: {reason}"


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def session_start(environ: Mapping[str, str], stdin: bytes) -> str:
    """Reset the ledger (unless the session merely compacted) and report on the index."""
    directory = ledger.project_directory(environ)
    source: object = None
    # The input only says why the session started; when it is unreadable, a new session
    # is the safe guess.
    with contextlib.suppress(HookInputError):
        source = _json_object(stdin, "the hook input").get("source") if stdin.strip() else None
    ledger_problem = ""
    # After a compaction the session goes on, and so does the staleness of its edits.
    if source != "compact":
        target = ledger.ledger_path(directory, environ)
        try:
            ledger.clear(target)
        except OSError as error:
            ledger_problem = (
                f" (Could not reset the session ledger {target}: {error.strerror or error}; "
                "edits will not be tracked.)"
            )
    return _index_report(Path(directory)) + ledger_problem


def post_tool_use(environ: Mapping[str, str], stdin: bytes) -> str | None:
    """Record an edited Swift/ObjC source in the ledger; None when there is nothing to say."""
    try:
        call = parse_tool_call(stdin, environ)
        if call.tool_name is not None and call.tool_name not in EDIT_TOOLS:
            return None
        raw = _optional_text(call.tool_input, "file_path") or _optional_text(call.tool_input, "path")
    except HookInputError as error:
        return f"[xcindex] post-tool-use: {error}; no edit recorded."
    if not raw:
        return "[xcindex] post-tool-use: the tool input names no file_path; no edit recorded."
    if not ledger.is_tracked(raw):
        return None
    if not os.path.isabs(raw):
        raw = os.path.normpath(os.path.join(call.cwd or os.getcwd(), raw))
    name = os.path.basename(raw)
    target = ledger.ledger_path(ledger.project_directory(environ), environ)
    try:
        ledger.append(raw, target)
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return (
            f"[xcindex] Could not record the edit of '{name}' in the session ledger {target}: {reason}. "
            "xcindex answers about its symbols may be stale until the next build."
        )
    return (
        f"[xcindex] '{name}' was edited: xcindex answers about its symbols may be stale until the next build."
    )


_TARGET_EXTENSIONS = frozenset({"swift", "m", "mm", "h"})
_TARGET_TYPES = frozenset({"swift", "objc", "objcpp"})
_GLOB_EXTENSION = re.compile(r"\.(\{[^{}]*\}|[A-Za-z0-9_+]+)\s*$")
_DECLARATION = r"(?:func|class|struct|enum|protocol|extension|actor|typealias|var|let|case|init|macro)"
_IDENTIFIER_SEARCH = re.compile(
    r"^(?:\\b)?(?:(?P<decl>" + _DECLARATION + r")(?:\\s\+|\\s\*|\s+))?(?:\\\.)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\\b|\\?[()]|:|\\s\*|[A-Za-z_][A-Za-z0-9_]*:)*$"
)


def _glob_targets_sources(glob: str) -> bool | None:
    """True/False when the glob names file extensions; None when it names none."""
    match = _GLOB_EXTENSION.search(glob)
    if not match:
        return None
    extensions = {part.strip().lower() for part in match.group(1).strip("{}").split(",")}
    return bool(extensions & _TARGET_EXTENSIONS)


def swift_identifier(pattern: str) -> str | None:
    """The symbol name when a Grep pattern looks like a search for one Swift identifier.

    `UserService`, `\\bfetchUser\\(`, `func fetchUser`, `class\\s+AppDelegate` qualify;
    plain words (`user`), all-caps markers (`TODO`) and real regexes do not.
    """
    match = _IDENTIFIER_SEARCH.match(pattern.strip())
    if not match:
        return None
    name = match.group("name")
    camel_case = len(name) >= 3 and any(c.isupper() for c in name) and any(c.islower() for c in name)
    if match.group("decl") or camel_case:
        return name
    return None


def _in_swift_project(start: Path) -> bool:
    current = start
    for _ in range(8):
        for entry in _children(current):
            if entry.name == "Package.swift" or entry.name.endswith((".xcodeproj", ".xcworkspace")):
                return True
        if current.parent == current:
            break
        current = current.parent
    return False


def _grep_advice(call: ToolCall, environ: Mapping[str, str]) -> str | None:
    glob = _optional_text(call.tool_input, "glob")
    file_type = _optional_text(call.tool_input, "type").lower()
    path = _optional_text(call.tool_input, "path")
    pattern = _optional_text(call.tool_input, "pattern")
    glob_verdict = _glob_targets_sources(glob) if glob else None
    targets_sources = (
        glob_verdict is True or file_type in _TARGET_TYPES or path.lower().endswith(ledger.TRACKED_SUFFIXES)
    )
    excluded = glob_verdict is False or (file_type != "" and file_type not in _TARGET_TYPES)
    identifier = None if excluded else swift_identifier(pattern)
    if identifier and not targets_sources:
        base = call.cwd or ledger.project_directory(environ)
        root = Path(base, path) if path else Path(base)
        if not _in_swift_project(root if root.is_dir() else root.parent):
            identifier = None
    if identifier:
        return (
            f"[xcindex] `{identifier}` looks like a Swift symbol. The xcindex tools answer from the "
            "compiler's index, without matches in comments, strings or same-named symbols: "
            "mcp__xcindex__find_symbol to pick the symbol, then mcp__xcindex__find_references (every use), "
            "mcp__xcindex__find_definition, mcp__xcindex__find_overrides, mcp__xcindex__find_conformances; "
            "mcp__xcindex__blast_radius for what a change to a file breaks; mcp__xcindex__plan_rename "
            "before a rename. Keep Grep for plain text (TODOs, log messages, string literals)."
        )
    if targets_sources:
        return (
            "[xcindex] This Grep targets Swift/ObjC sources. For symbol questions (definitions, callers, "
            "references, overrides, conformances, what a change to a file breaks) the xcindex tools "
            "answer from the compiler's index, without matches in comments, strings or same-named "
            "symbols: mcp__xcindex__find_symbol, mcp__xcindex__find_references, "
            "mcp__xcindex__find_definition, mcp__xcindex__find_overrides, "
            "mcp__xcindex__find_conformances, mcp__xcindex__blast_radius, mcp__xcindex__plan_rename. "
            "Keep Grep for plain text (TODOs, log messages, string literals)."
        )
    return None


def pre_tool_use(environ: Mapping[str, str], stdin: bytes) -> str | None:
    """Advice for a Grep over Swift sources, as PreToolUse JSON; never a block."""
    try:
        call = parse_tool_call(stdin, environ)
        if call.tool_name is not None and call.tool_name != "Grep":
            return None
        advice = _grep_advice(call, environ)
    except HookInputError as error:
        return f"[xcindex] pre-tool-use: {error}; no advice given."
    if advice is None:
        return None
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": advice}}
    return json.dumps(output, separators=(",", ":"))


_HANDLERS: dict[str, Callable[[Mapping[str, str], bytes], str | None]] = {
    "session-start": session_start,
    "post-tool-use": post_tool_use,
    "pre-tool-use": pre_tool_use,
}


def _say(line: str) -> None:
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
        stream.buffer.write(line.encode("utf-8", "backslashreplace") + b"\n")
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass  # Nobody is listening: nothing else to do, and still exit 0.


def main(event: str) -> int:
    """Run one hook. Always returns 0: a hook must never fail the agent's tool call."""
    handler = _HANDLERS.get(event)
    if handler is None:
        _say(f"[xcindex] Unknown hook event {event!r} (known: {', '.join(_HANDLERS)}); nothing done.")
        return 0
    try:
        line = handler(os.environ, read_stdin())
    except Exception as error:
        line = f"[xcindex] The {event} hook could not do its job: {type(error).__name__}: {error}"
    if line:
        _say(line)
    return 0
