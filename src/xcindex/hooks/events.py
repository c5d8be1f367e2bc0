"""`xcindex hook <event>`: the Claude Code hooks. They warn; they never act.

- `session-start` resets the session ledger and reports on the index: current, N Swift
  files newer than it, or missing (with the command that builds one).
- `post-tool-use` (Edit, Write, MultiEdit) records an edited Swift/ObjC source in the
  ledger and notes that answers about it may be stale.
- `pre-tool-use` (Grep) nudges the agent from a Grep over Swift sources towards the
  xcindex tools. It never blocks.

Every answer is the hooks contract's JSON, one line on stdout:
`{"hookSpecificOutput": {"hookEventName": <event>, "additionalContext": <text>}}`, which
Claude Code hands to the model (a PostToolUse hook's plain stdout reaches the transcript
only). Every hook exits 0 whatever happens (bad input, an unwritable temporary folder, no
project) and then says in that text why it could not do its job; none starts a build.

Import-light: post-tool-use and pre-tool-use run on every edit and search an agent makes,
so they load only `os`, `sys`, `ledger`, `hook_input` and `hook_json` (not even `json`,
`typing` or `pathlib`; pre-tool-use adds `grep_advice`); session-start imports the rest
when it runs. None loads anyio, mcp, cffi or structlog. A post-tool-use hook takes about
1.5x the interpreter's own start-up.
"""

from __future__ import annotations

import os
import sys

from xcindex.hooks import output as hook_json
from xcindex.hooks.input import (
    HookInputError,
    json_object,
    optional_text,
    parse_tool_call,
    read_stdin,
)
from xcindex.project import ledger

TYPE_CHECKING = False  # `typing` alone was a third of post-tool-use's imports
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from xcindex.project.candidates import Project

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit"})
EVENT_NAMES = {"session-start": "SessionStart", "post-tool-use": "PostToolUse", "pre-tool-use": "PreToolUse"}


def hook_output(event_name: str, context: str) -> str:
    """The hooks contract's answer that adds `context` to what the model reads."""
    return (
        f'{{"hookSpecificOutput":{{"hookEventName":{hook_json.quote(event_name)},'
        f'"additionalContext":{hook_json.quote(context)}}}}}'
    )


# ---------------------------------------------------------------------------------------
# session-start


def _index_report(directory: str, environ: Mapping[str, str]) -> str:
    """The project the session is about (from `directory` up, else below it) and what the
    toolchain and the index say about it."""
    # session-start runs once a session: what only it needs is imported here, keeping
    # post-tool-use and pre-tool-use (run on every edit and search) light. All of it works
    # on plain strings: `pathlib` (with `re` and `urllib`) and the vocabulary's enums were
    # half of this hook's run.
    from xcindex.project.candidates import STALE_NAMES_SHOWN, choose_project, project_dirs_for
    from xcindex.project.toolchain import LibraryNotFound, library_file

    folder, found = project_dirs_for(directory)
    if not found:
        return (
            f"[xcindex] No Swift package or Xcode project in {directory} (or a folder above it): "
            "the xcindex tools have nothing to answer about here."
        )
    project = choose_project(folder, found)
    if project is None:
        names = ", ".join(_relative(p.folder, folder) for p in found[:STALE_NAMES_SHOWN])
        more = ", ..." if len(found) > STALE_NAMES_SHOWN else ""
        return (
            f"[xcindex] Several Swift projects below {folder} ({names}{more}): the xcindex tools "
            "answer about the one named by their projectPath argument; none is assumed."
        )
    try:
        library_file(environ)
    except LibraryNotFound as missing:
        return (
            f"[xcindex] xcindex cannot read the index of {project.name}: {missing} Until then its tools "
            "answer with this error."
        )
    unwritable = _unwritable_cache(environ)
    if unwritable is not None:
        return (
            f"[xcindex] xcindex's cache folder {unwritable} cannot be written: its tools answer "
            f"{project.name}'s questions with that error until it is made writable, or "
            "XCINDEX_CACHE_DIR names a folder that is."
        )
    return _freshness_report(project, environ) + _lsp_note(environ)


def _unwritable_cache(environ: Mapping[str, str]) -> str | None:
    """The cache folder (indexstore/cache.py's rule) when it cannot be written: it, or the
    folder it would be made in, is not a writable folder (a read-only mount, a file)."""
    configured = environ.get("XCINDEX_CACHE_DIR")
    if configured:
        folder = configured
    else:
        base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "xcindex")
    existing = os.path.abspath(folder)
    while not os.path.lexists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if os.path.isdir(existing) and os.access(existing, os.W_OK | os.X_OK):
        return None
    return folder


def _store_of(project: Project) -> tuple[str | None, str | None]:
    """(the index store of `project`, None) or (None, why there is none). A SwiftPM package's
    store is found without `pathlib` (store_layout); an Xcode project's DerivedData lookup
    takes the locator's whole way."""
    from xcindex.project.candidates import BUILD_COMMAND, SWIFTPM

    if project.kind_name == SWIFTPM:
        from xcindex.project.store_layout import newest_swiftpm_store

        store = newest_swiftpm_store(project.folder)
        if store is None:
            return None, (
                f"[xcindex] No index found for {project.name}: build one with `{BUILD_COMMAND}` "
                f"in {project.root_folder} to enable the xcindex tools."
            )
        return os.path.realpath(store), None
    from xcindex.project.locate import LocateError, locate

    try:
        return str(locate(project.folder, None).store_path), None
    except LocateError as error:
        return None, f"[xcindex] No index found for {project.name}: {error}"


def _freshness_report(project: Project, environ: Mapping[str, str]) -> str:
    from xcindex.hooks.grep_advice import ToolNames
    from xcindex.project.candidates import (
        BUILD_COMMAND,
        STALE_NAMES_SHOWN,
        SWIFTPM,
        format_time,
        newest_unit_mtime_ns,
        rebuild_advice,
        swift_files_newer_than,
        swiftpm_built_in,
    )

    tools = ToolNames(environ)
    store, missing = _store_of(project)
    if store is None:
        return missing or ""
    newest = newest_unit_mtime_ns(store)
    if newest is None:
        return (
            f"[xcindex] No index found for {project.name}: the index store at {store} "
            f"holds no units yet. Build the project ({rebuild_advice(project)})."
        )
    built = format_time(newest)
    root = project.root_folder
    elsewhere = swiftpm_built_in(store, root) if project.kind_name == SWIFTPM else None
    if elsewhere is not None:
        return (
            f"[xcindex] The index of {project.name} was built in {elsewhere}, not in {root} "
            "(the package was copied or moved after its build): xcindex answers would name that "
            "folder's files and say so (index_built_elsewhere). Rebuild here: "
            f"rm -rf '{root}/.build' && {BUILD_COMMAND} --package-path '{root}'."
        )
    newer = swift_files_newer_than(root, newest)
    if newer:
        from xcindex.indexstore.content import not_as_indexed

        newer = not_as_indexed(store, newer)
    if not newer:
        return (
            f"[xcindex] Index is current for {project.name} (last built {built}): "
            f"the xcindex tools ({tools('*')}) answer from it."
        )
    shown = [_relative(path, root) for path in newer[:STALE_NAMES_SHOWN]]
    more = ", ..." if len(newer) > STALE_NAMES_SHOWN else ""
    return (
        f"[xcindex] {len(newer)} Swift file(s) newer than the index for {project.name} "
        f"(last built {built}): {', '.join(shown)}{more}. "
        f"Rebuild ({rebuild_advice(project)}) before trusting xcindex answers about them."
    )


def _relative(path: str, root: str) -> str:
    """`path` below `root`, as `Path.relative_to` spells it; as it is when it is not below."""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def session_start(environ: Mapping[str, str], stdin: bytes) -> str:
    """Reset the ledger (unless the session merely compacted) and report on the index."""
    directory = ledger.project_directory(environ)
    # The input only says why the session started; when it is unreadable, a new session
    # is the safe guess. (Not contextlib.suppress: contextlib is a tenth of this hook's imports.)
    source: object
    try:
        source = json_object(stdin, "the hook input").get("source") if stdin.strip() else None
    except HookInputError:
        source = None
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
    return _index_report(directory, environ) + ledger_problem


def _lsp_note(environ: Mapping[str, str]) -> str:
    """What a missing sourcekit-lsp costs: plan_rename's ranges stay unverified."""
    from xcindex.errors import CodedError
    from xcindex.project.toolchain import sourcekit_lsp_file

    try:
        sourcekit_lsp_file(environ=environ)
    except CodedError as error:
        return (
            f" (sourcekit-lsp: {error.message}. Until one is found, plan_rename's ranges are "
            "not verified by it and the other tools answer from the index alone.)"
        )
    return ""


# ---------------------------------------------------------------------------------------
# post-tool-use and pre-tool-use


def post_tool_use(environ: Mapping[str, str], stdin: bytes) -> str | None:
    """Record an edited Swift/ObjC source in the ledger; None when there is nothing to say."""
    try:
        call = parse_tool_call(stdin, environ)
        if call.tool_name is not None and call.tool_name not in EDIT_TOOLS:
            return None
        raw = optional_text(call.tool_input, "file_path") or optional_text(call.tool_input, "path")
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
    if raw.endswith(".swift") and environ.get(ledger.OVERLAY_ENV, "1") != "0":
        return (
            f"[xcindex] '{name}' was edited: xcindex re-indexes it on its own in a moment, so answers "
            "about its symbols stay fresh without a build (if it does not compile, they say it is stale and why)."
        )
    return (
        f"[xcindex] '{name}' was edited: xcindex answers about its symbols may be stale until the next build."
    )


def pre_tool_use(environ: Mapping[str, str], stdin: bytes) -> str | None:
    """Advice for a Grep over Swift sources; never a block. None when there is none."""
    try:
        call = parse_tool_call(stdin, environ)
        if call.tool_name is not None and call.tool_name != "Grep":
            return None
        from xcindex.hooks.grep_advice import grep_advice

        return grep_advice(call, environ)
    except HookInputError as error:
        return f"[xcindex] pre-tool-use: {error}; no advice given."


# ---------------------------------------------------------------------------------------
# The command


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
        sys.stderr.write(
            f"[xcindex] Unknown hook event {event!r} (known: {', '.join(_HANDLERS)}); nothing done.\n"
        )
        return 0
    try:
        text = handler(os.environ, read_stdin())
    except Exception as error:
        text = f"[xcindex] The {event} hook could not do its job: {type(error).__name__}: {error}"
    if text:
        _say(hook_output(EVENT_NAMES[event], text))
    return 0
