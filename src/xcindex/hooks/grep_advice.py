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
_WORD_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_WORD = _WORD_START | frozenset("0123456789")
_EXTENSION = _WORD | frozenset("+")
_DECLARATIONS = (
    "func", "class", "struct", "enum", "protocol", "extension", "actor", "typealias", "var", "let",
    "case", "init", "macro",
)  # fmt: skip
# What may follow a name in a symbol search: `\b`, `\(`, `\)`, `(`, `)`, `\s*`, `:` (and a
# `label:`, read separately).
_AFTER_NAME = ("\\b", "\\(", "\\)", "(", ")", "\\s*", ":")

# The pattern tests below are hand-written scanners, not regular expressions: `re` (with
# `enum`) was a third of this hook's run, and it runs on every Grep an agent makes. The
# unit tests compare them with the regular expressions they replace.


def _glob_extension(glob: str) -> str | None:
    """What a glob's last `.ext` or `.{a,b}` names (the text after the dot), at its end."""
    text = glob.rstrip()
    if text.endswith("}"):
        opening = text.rfind("{")
        if opening <= 0 or text[opening - 1] != "." or "}" in text[opening + 1 : -1]:
            return None
        return text[opening:]
    start = len(text)
    while start > 0 and text[start - 1] in _EXTENSION:
        start -= 1
    if start == len(text) or start == 0 or text[start - 1] != ".":
        return None
    return text[start:]


def glob_targets_sources(glob: str) -> bool | None:
    """True/False when the glob names file extensions; None when it names none."""
    extension = _glob_extension(glob)
    if extension is None:
        return None
    extensions = {part.strip().lower() for part in extension.strip("{}").split(",")}
    return bool(extensions & _TARGET_EXTENSIONS)


def _word_end(text: str, start: int) -> int:
    """The end of the identifier at `start` (`start` itself when none starts there)."""
    if start >= len(text) or text[start] not in _WORD_START:
        return start
    end = start + 1
    while end < len(text) and text[end] in _WORD:
        end += 1
    return end


def _after_separator(text: str, start: int) -> int | None:
    """Past a declaration keyword's separator (`\\s+`, `\\s*` or whitespace); None if none."""
    if text.startswith(("\\s+", "\\s*"), start):
        return start + 3
    end = start
    while end < len(text) and text[end].isspace():
        end += 1
    return end if end > start else None


class _Search:
    """A Grep pattern read as a search for one identifier."""

    __slots__ = ("called", "declared", "member", "name")

    def __init__(self, declared: bool, member: bool, name: str, called: bool) -> None:
        self.declared = declared
        self.member = member
        self.name = name
        self.called = called


def _read_name(text: str, start: int, declared: bool) -> _Search | None:
    """From `start`: an optional `.` or `\\.`, the name, then only what may follow a name."""
    member = False
    if text.startswith("\\.", start):
        member, start = True, start + 2
    elif text.startswith(".", start):
        member, start = True, start + 1
    end = _word_end(text, start)
    if end == start:
        return None
    name = text[start:end]
    called = False
    position = end
    while position < len(text):
        token = next((t for t in _AFTER_NAME if text.startswith(t, position)), None)
        if token is not None:
            called = called or "(" in token
            position += len(token)
            continue
        label_end = _word_end(text, position)
        if label_end == position or not text.startswith(":", label_end):
            return None
        position = label_end + 1
    return _Search(declared, member, name, called)


def _read_search(pattern: str) -> _Search | None:
    text = pattern.strip()
    start = 2 if text.startswith("\\b") else 0
    keyword_end = _word_end(text, start)
    if text[start:keyword_end] in _DECLARATIONS:
        after = _after_separator(text, keyword_end)
        declared = _read_name(text, after, True) if after is not None else None
        if declared is not None:
            return declared
    return _read_name(text, start, False)


def swift_identifier(pattern: str) -> str | None:
    """The symbol name when a Grep pattern looks like a search for one Swift identifier.

    `UserService`, `\\bfetchUser\\(`, `func fetchUser`, `class\\s+AppDelegate` qualify, and so
    does a call or member search of a one-word name (`\\.deposit\\(`, `\\bdecode\\(`, `log(`,
    `.count`): most Swift methods are one lowercase word. Plain words (`user`), all-caps
    markers (`TODO`, even `TODO(`) and real regexes do not.
    """
    search = _read_search(pattern)
    if search is None:
        return None
    name = search.name
    camel_case = len(name) >= 3 and any(c.isupper() for c in name) and any(c.islower() for c in name)
    called_or_member = search.member or search.called
    if search.declared or camel_case or (called_or_member and not name.isupper()):
        return name
    return None


def grep_advice(call: ToolCall, environ: Mapping[str, str]) -> str | None:
    """The note for a Grep that looks like a symbol search in Swift sources; None otherwise."""
    tools = ToolNames(environ)
    glob = optional_text(call.tool_input, "glob")
    file_type = optional_text(call.tool_input, "type").lower()
    path = optional_text(call.tool_input, "path")
    pattern = optional_text(call.tool_input, "pattern")
    glob_verdict = glob_targets_sources(glob) if glob else None
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
