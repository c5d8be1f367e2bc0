"""The PreToolUse note for a Grep over Swift sources: the xcindex tools answer symbol
questions from the compiler's index, with no matches in comments or strings.

Tool names depend on how the server was added: a plugin's MCP tools are named
`mcp__plugin_<plugin>_<server>__<tool>` (here `mcp__plugin_xcindex_xcindex__find_symbol`);
a server added by hand (`claude mcp add`, a project `.mcp.json`) gives `mcp__xcindex__<tool>`.
Claude Code sets `CLAUDE_PLUGIN_ROOT` for a plugin's hooks (and the plugin's launcher sets it
too), which tells the two apart. Import-light (stdlib only).
"""

from __future__ import annotations

import os
import re

from xcindex.hooks.input import ToolCall, optional_text
from xcindex.project import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PLUGIN_TOOL_PREFIX = "mcp__plugin_xcindex_xcindex__"
MANUAL_TOOL_PREFIX = "mcp__xcindex__"
PLUGIN_ROOT_ENV = "CLAUDE_PLUGIN_ROOT"


class ToolNames:
    """`tools("find_symbol")` is the name the agent sees for that tool in this setup."""

    __slots__ = ("prefix",)

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.prefix = PLUGIN_TOOL_PREFIX if environ.get(PLUGIN_ROOT_ENV) else MANUAL_TOOL_PREFIX

    def __call__(self, tool: str) -> str:
        return self.prefix + tool


_TARGET_EXTENSIONS = frozenset({"swift", "m", "mm", "h"})
_TARGET_TYPES = frozenset({"swift", "objc", "objcpp"})
_GLOB_EXTENSION = re.compile(r"\.(\{[^{}]*\}|[A-Za-z0-9_+]+)\s*$")
_DECLARATION = r"(?:func|class|struct|enum|protocol|extension|actor|typealias|var|let|case|init|macro)"
_IDENTIFIER_SEARCH = re.compile(
    r"^(?:\\b)?(?:(?P<decl>" + _DECLARATION + r")(?:\\s\+|\\s\*|\s+))?(?P<member>\\\.|\.)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>(?:\\b|\\?[()]|:|\\s\*|[A-Za-z_][A-Za-z0-9_]*:)*)$"
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

    `UserService`, `\\bfetchUser\\(`, `func fetchUser`, `class\\s+AppDelegate` qualify, and so
    does a call or member search of a one-word name (`\\.deposit\\(`, `\\bdecode\\(`, `log(`,
    `.count`): most Swift methods are one lowercase word. Plain words (`user`), all-caps
    markers (`TODO`, even `TODO(`) and real regexes do not.
    """
    match = _IDENTIFIER_SEARCH.match(pattern.strip())
    if not match:
        return None
    name = match.group("name")
    camel_case = len(name) >= 3 and any(c.isupper() for c in name) and any(c.islower() for c in name)
    called_or_member = bool(match.group("member")) or "(" in match.group("rest")
    if match.group("decl") or camel_case or (called_or_member and not name.isupper()):
        return name
    return None


def grep_advice(call: ToolCall, environ: Mapping[str, str]) -> str | None:
    """The note for a Grep that looks like a symbol search in Swift sources; None otherwise."""
    tools = ToolNames(environ)
    glob = optional_text(call.tool_input, "glob")
    file_type = optional_text(call.tool_input, "type").lower()
    path = optional_text(call.tool_input, "path")
    pattern = optional_text(call.tool_input, "pattern")
    glob_verdict = _glob_targets_sources(glob) if glob else None
    targets_sources = (
        glob_verdict is True or file_type in _TARGET_TYPES or path.lower().endswith(ledger.TRACKED_SUFFIXES)
    )
    # A search in one named file that is not a source (README.md) is a plain-text search.
    named_other_file = "." in os.path.basename(path) and not path.lower().endswith(ledger.TRACKED_SUFFIXES)
    excluded = (
        glob_verdict is False or (file_type != "" and file_type not in _TARGET_TYPES) or named_other_file
    )
    identifier = None if excluded else swift_identifier(pattern)
    if identifier and not targets_sources:
        # Only a search that names no Swift files looks for a project (pathlib and the
        # project finder are a third of this hook's imports): most Greps name them.
        from pathlib import Path

        from xcindex.project.candidates import enclosing_project_folder

        base = call.cwd or ledger.project_directory(environ)
        root = Path(base, path) if path else Path(base)
        if enclosing_project_folder(root if root.is_dir() else root.parent) is None:
            identifier = None
    if identifier:
        return (
            f"[xcindex] `{identifier}` looks like a Swift symbol. The xcindex tools answer from the "
            "compiler's index, without matches in comments, strings or same-named symbols: "
            f"{tools('find_symbol')} to pick the symbol, then {tools('find_references')} (every use), "
            f"{tools('find_definition')}, {tools('find_overrides')}, {tools('find_conformances')}; "
            f"{tools('blast_radius')} for what a change to a file breaks; {tools('plan_rename')} "
            "before a rename. Keep Grep for plain text (TODOs, log messages, string literals)."
        )
    return None
