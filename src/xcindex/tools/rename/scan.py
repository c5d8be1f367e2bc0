"""The whole-tree safety net of plan_rename: every written occurrence of the old name.

The index only knows code the compiler indexed for this platform and configuration: not
`#if` branches it skipped, targets built only elsewhere, types declared inside function
bodies, snippets, or a package nested in the folder. So every Swift file under the project
root is read, each word-boundary occurrence of the old name is classified by where the
Swift lexer (`swift/lexer.py`) puts it (code, an interpolation's code included; comment,
DocC link; string or regex literal, `@available(renamed:)`), and whatever no range of the
plan covers is reported: code as a site the plan cannot prove, the rest as optional text
edits. Code where the index records another symbol is proven unrelated.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from xcindex.project.realpaths import RealPaths
from xcindex.swift.lexer import Kind, blank_bytes, byte_spans
from xcindex.tools.shapes import MentionJson
from xcindex.vocabulary import WarningCode

SKIPPED_FOLDERS = frozenset({".build", ".git", ".swiftpm", "DerivedData", "node_modules", "Pods", "Carthage"})
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_LINE_TEXT = 200


@dataclass(frozen=True)
class Mention:
    path: str
    line: int
    column: int
    """1-based UTF-8 byte column of the name."""
    end_column: int
    kind: str
    """In code: `code`, `label` (an argument, tuple or parameter label: another
    declaration's) or `local_conformance` (a type declared in a function body that adopts a
    renamed requirement's protocol: the compiler reports a missed witness there); in text:
    `comment`, `doc_link`, `string` or `available_renamed`."""
    text: str
    """The whole line, stripped (cut at 200 characters)."""

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)

    def to_json(self) -> MentionJson:
        found: MentionJson = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "endColumn": self.end_column,
            "text": self.text,
        }
        if self.kind != "code":
            found["kind"] = self.kind
        return found


def swift_files(root: Path) -> Iterator[Path]:
    """Every .swift file under root, build folders and hidden folders left out, sorted."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".swift"):
                yield Path(folder) / name


def _is_manifest(path: Path) -> bool:
    """A SwiftPM manifest (`Package.swift`, `Package@swift-5.9.swift`) is compiled against
    PackageDescription alone, never with the package's modules: a name in it (`name:`,
    `path:`) cannot be a use of the symbol renamed. Asked only for files the index does not
    compile, so a source file that happens to be called Package.swift is still read."""
    name = path.name
    return name == "Package.swift" or (name.startswith("Package@swift-") and name.endswith(".swift"))


def _is_word_byte(byte: int) -> bool:
    return (
        byte >= 0x80 or byte == 0x5F or 0x30 <= byte <= 0x39 or 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A
    )


def classify(data: bytes, name: bytes) -> list[tuple[int, str]]:
    """(byte offset, kind) of every word-boundary occurrence of `name` in Swift source:
    `code` (an interpolation's code too), `comment` or `doc_link`, `string` (a regex
    literal's text too) or `available_renamed`."""
    at = data.find(name)
    if at < 0:
        return []
    found: list[tuple[int, str]] = []
    runs = byte_spans(data)
    starts = [run.start for run in runs]
    while at >= 0:
        if not _at_boundary(data, at, len(name)):
            at = data.find(name, at + 1)
            continue
        start, end, kind = runs[bisect_right(starts, at) - 1]
        if kind is Kind.CODE or kind is Kind.INTERPOLATION:
            found.append((at, "code"))
        elif kind is Kind.COMMENT:
            found.append((at, _comment_kind(data, start, end, at)))
        elif kind is Kind.STRING:
            line_start = data.rfind(b"\n", 0, at) + 1
            found.append((at, "available_renamed" if b"renamed:" in data[line_start:at] else "string"))
        # else a delimiter or an escape (`\nName`: the text holds a line break and `Name`)
        at = data.find(name, at + len(name))
    return found


def _comment_kind(data: bytes, start: int, end: int, at: int) -> str:
    """`doc_link` inside a DocC link (``` ``name`` ```) of the comment start..end, else `comment`."""
    before = data[max(start, at - 80) : at]
    tick = before.rfind(b"``")
    link = tick >= 0 and b" " not in before[tick:] and b"``" in data[at : min(end, at + 200)]
    return "doc_link" if link else "comment"


def _at_boundary(data: bytes, at: int, length: int) -> bool:
    if at > 0 and _is_word_byte(data[at - 1]):
        return False
    end = at + length
    return not (end < len(data) and _is_word_byte(data[end]))


@dataclass(frozen=True)
class ScanResult:
    unproven: tuple[Mention, ...]
    text_mentions: tuple[Mention, ...]
    files_scanned: int


def scan_tree(
    root: Path,
    old_name: str,
    covered: set[tuple[str, int, int]],
    indexed_positions: Callable[[str], set[tuple[int, int]] | None],
) -> ScanResult:
    """Occurrences of `old_name` under root that no range covers. `covered` holds the plan's
    (real path, line, column); `indexed_positions(real path)` gives the positions where the
    index records any occurrence in that file (None when the file is not indexed): code
    there is some other symbol, proven unrelated."""
    name = old_name.encode("utf-8")
    real_path = RealPaths()
    unproven: list[Mention] = []
    text: list[Mention] = []
    scanned = 0
    for path in swift_files(root):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        scanned += 1
        if name not in data:
            continue
        real = real_path(path)
        if _is_manifest(path) and indexed_positions(real) is None:
            continue
        known: set[tuple[int, int]] | None = None
        asked = False
        code: bytes | None = None
        for offset, kind in classify(data, name):
            line = data.count(b"\n", 0, offset) + 1
            line_start = data.rfind(b"\n", 0, offset) + 1
            column = offset - line_start + 1
            if (real, line, column) in covered:
                continue
            if kind == "code":
                if not asked:
                    known, asked = indexed_positions(real), True
                if known is not None and (line, column) in known:
                    continue
                code = blank_bytes(data) if code is None else code
                if is_label(code, offset, len(name)):
                    kind = "label"
            line_end = data.find(b"\n", offset)
            line_text = data[line_start : len(data) if line_end < 0 else line_end]
            mention = Mention(
                path=str(path),
                line=line,
                column=column,
                end_column=column + len(name),
                kind=kind,
                text=line_text.decode("utf-8", "replace").strip()[:MAX_LINE_TEXT],
            )
            (unproven if kind in ("code", "label") else text).append(mention)
    return ScanResult(tuple(unproven), tuple(text), scanned)


_OPENING, _CLOSING, _PARENTHESIS = frozenset(b"([{"), frozenset(b")]}"), ord("(")
_LABEL_LOOKBACK = 4096


def is_label(code: bytes, at: int, length: int) -> bool:
    """Whether the name at `at` is an argument, tuple or parameter label: `name:` (not
    `name::`) right after `(` or `,`, inside parentheses (`angle(y: 1, x: 2)`, `(x: 1, y:
    2)`, `Iterator(_items: items)`). Such a label belongs to another declaration (a call's
    callee, a tuple type, a closure's parameters): a rename keeps labels, and a memberwise
    initialiser's label, which does follow a property's name, is in the index as a use of
    the property. Read on `code`, the file with comments and literals blanked: not `[x: 1]`
    (a dictionary key), `a ? x : y` or `case x:`."""
    after = code[at + length : at + length + 256].lstrip(b" \t")
    if not after.startswith(b":") or after.startswith(b"::"):
        return False
    before = code[max(0, at - _LABEL_LOOKBACK) : at].rstrip()
    if not before.endswith((b"(", b",")):
        return False
    depth = 0
    for byte in reversed(before):
        if byte in _CLOSING:
            depth += 1
        elif byte in _OPENING:
            if depth == 0:
                return byte == _PARENTHESIS
            depth -= 1
    return False


_TYPE_DECLARATION = re.compile(
    rb"^[ \t]*(?:[@\w]+(?:\([^)]*\))?[ \t]+)*(?:struct|class|enum|actor)[ \t]+(\w+)(?:<[^>{]*>)?[ \t]*:([^{\n]*)",
    re.MULTILINE,
)


def local_conformances(
    unproven: Iterable[Mention],
    protocols: Iterable[str],
    indexed_positions: Callable[[str], set[tuple[int, int]] | None],
) -> tuple[Mention, ...]:
    """In the files that hold unproven code sites, the declarations of types the index does
    not know (declared in a function body) that name one of `protocols` in their inheritance
    clause: a witness missed there surfaces as a broken conformance on that line. One
    mention per declaration, at the protocol's name."""
    names = {p.encode("utf-8") for p in protocols}
    if not names:
        return ()
    found: list[Mention] = []
    for path in sorted({m.path for m in unproven if m.kind == "code"}):
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        known = indexed_positions(os.path.realpath(path)) or set()
        for match in _TYPE_DECLARATION.finditer(blank_bytes(data)):  # none in a comment or literal
            line = data.count(b"\n", 0, match.start(1)) + 1
            line_start = data.rfind(b"\n", 0, match.start(1)) + 1
            if (line, match.start(1) - line_start + 1) in known:
                continue  # a type the index knows: its witnesses are related
            for word in re.finditer(rb"\w+", match.group(2)):
                if word.group(0) in names:
                    column = match.start(2) + word.start() - line_start + 1
                    line_end = data.find(b"\n", line_start)
                    text = data[line_start : len(data) if line_end < 0 else line_end]
                    found.append(
                        Mention(
                            path=path,
                            line=line,
                            column=column,
                            end_column=column + len(word.group(0)),
                            kind="local_conformance",
                            text=text.decode("utf-8", "replace").strip()[:MAX_LINE_TEXT],
                        )
                    )
                    break
    return tuple(found)


def unproven_warnings(
    name: str, unproven: Sequence[Mention], not_visible: int = 0
) -> list[tuple[WarningCode, str]]:
    """The `unproven_occurrences` warnings: code sites (labels counted apart), then types
    declared in function bodies. None when the code sites are all labels."""
    code = [m for m in unproven if m.kind == "code"]
    labels = [m for m in unproven if m.kind == "label"]
    local = [m for m in unproven if m.kind == "local_conformance"]
    warned: list[tuple[WarningCode, str]] = []
    if code:
        sites = ", ".join(f"{m.path}:{m.line}:{m.column}" for m in code[:10])
        more = f" and {len(code) - 10} more" if len(code) > 10 else ""
        apart = (
            f" {len(labels)} label(s) of other declarations are listed apart (kind label)." if labels else ""
        )
        hidden = (
            f" {not_visible} more in modules that cannot see the renamed symbol are not listed."
            if not_visible
            else ""
        )
        warned.append(
            (
                WarningCode.UNPROVEN_OCCURRENCES,
                f"{len(code)} written occurrence(s) of {name} in code are not in the plan and the "
                "index cannot tell what they refer to (a #if branch not compiled here, a type declared in "
                "a function body, a target or package not built, a parameter or local): "
                f"{sites}{more}. Check each (unprovenSites, kind code); the plan cannot prove them.{apart}{hidden}",
            )
        )
    if local:
        where = ", ".join(f"{m.path}:{m.line} ({m.text})" for m in local[:10])
        warned.append(
            (
                WarningCode.UNPROVEN_OCCURRENCES,
                f"{len(local)} type(s) declared in a function body adopt the renamed requirement's "
                f"protocol and are not in the index: {where}. If one of them implements {name}, rename "
                "it there too, or the conformance breaks (or a default implementation silently takes "
                "over); they are in unprovenSites with kind local_conformance.",
            )
        )
    return warned
