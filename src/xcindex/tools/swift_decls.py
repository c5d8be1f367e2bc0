"""A git diff's hunks, and the extents of the declarations in a Swift file, from its text.

The index records where each declaration's *name* is, not where the declaration ends, so
change_impact finds extents here: comments and string literals are blanked out, then each
member declaration (a type, extension, function, initializer, subscript, property or enum
case that is not local to a body) runs from its keyword line (attribute lines above it
included) to the brace that closes its body, or to the end of its statement. This is
approximate (no parser; `#if` blocks and macros are taken at face value) and change_impact
says so. It is also what lets a *removed* or *added* declaration, which only one side's
text has, be seen at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MODIFIERS = (
    "public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|"
    "convenience|required|lazy|weak|unowned|dynamic|indirect|nonisolated|distributed|optional|async"
)
_DECL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:" + _MODIFIERS + r")(?:\([^)]*\))?\s+)*"
    r"(func|init|deinit|subscript|var|let|case|class|struct|enum|protocol|extension|actor|typealias)\b"
    r"[?!]?\s*([^\s(:<{=,;]*)"
)
_ATTRIBUTE_LINE = re.compile(r"^\s*@[\w.]+(?:\([^)]*\))?\s*$")
_TYPE_KEYWORDS = frozenset({"class", "struct", "enum", "protocol", "extension", "actor"})
_CONTINUES_AFTER = (",", "(", "[", "=", "->", ":", "&&", "||", "+", "-", "*", "/", "?", "&")
_CONTINUES_BEFORE = ("->", "where", "throws", "rethrows", "async", "{", ".", ":", "=", "&&", "||", "?")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int

    def old_lines(self) -> range:
        return range(self.old_start, self.old_start + self.old_count)

    def new_lines(self) -> range:
        return range(self.new_start, self.new_start + self.new_count)


@dataclass
class FileDiff:
    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)


def parse_diff(text: str) -> list[FileDiff]:
    """`git diff -U0` output → one FileDiff per file (paths relative to the repository)."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    for line in text.splitlines():
        if line.startswith("diff --git "):
            current = FileDiff(None, None)
            files.append(current)
        elif current is None:
            continue
        elif line.startswith("--- "):
            current.old_path = None if line[4:] == "/dev/null" else line[4:].removeprefix("a/")
        elif line.startswith("+++ "):
            current.new_path = None if line[4:] == "/dev/null" else line[4:].removeprefix("b/")
        elif match := _HUNK.match(line):
            a, b, c, d = match.groups()
            current.hunks.append(Hunk(int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return files


@dataclass
class Decl:
    keyword: str
    name: str
    start: int
    name_line: int
    end: int = 0
    body_line: int | None = None
    parent: Decl | None = None
    ordinal: int = 0

    @property
    def key(self) -> tuple[str, ...]:
        """Identity across the two sides of a diff: parents, kind and name (and which one of
        that name, for overloads)."""
        own = ("var" if self.keyword == "let" else self.keyword, self.name, str(self.ordinal))
        return (*(self.parent.key if self.parent else ()), *own)

    @property
    def is_type(self) -> bool:
        return self.keyword in _TYPE_KEYWORDS

    def contains(self, line: int) -> bool:
        return self.start <= line <= self.end


def mask(text: str) -> list[str]:
    """The lines with comments and string literal contents replaced by spaces."""
    out: list[str] = []
    in_block = 0
    in_string: str | None = None  # '"' or '"""'
    for raw in text.splitlines():
        chars = list(raw)
        i = 0
        while i < len(chars):
            two, three = raw[i : i + 2], raw[i : i + 3]
            if in_block:
                if two == "*/":
                    in_block -= 1
                    chars[i] = chars[i + 1] = " "
                    i += 2
                    continue
                if two == "/*":
                    in_block += 1
                chars[i] = " "
            elif in_string is not None:
                if raw[i] == "\\":
                    chars[i] = " "
                    if i + 1 < len(chars):
                        chars[i + 1] = " "
                    i += 2
                    continue
                if raw.startswith(in_string, i):
                    i += len(in_string)
                    in_string = None
                    continue
                chars[i] = " "
            elif two == "//":
                for j in range(i, len(chars)):
                    chars[j] = " "
                break
            elif two == "/*":
                in_block = 1
                chars[i] = chars[i + 1] = " "
                i += 2
                continue
            elif three == '"""':
                in_string = '"""'
                i += 3
                continue
            elif raw[i] == '"':
                in_string = '"'
            i += 1
        if in_string == '"':
            in_string = None  # a single-line literal never spans lines
        out.append("".join(chars))
    return out


def scan_declarations(text: str) -> list[Decl]:
    """Member and top-level declarations with their extents (1-based, inclusive)."""
    lines = mask(text)
    decls: list[Decl] = []
    stack: list[Decl | None] = []
    pending: Decl | None = None
    depth = 0
    seen: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(lines, 1):
        match = _DECL.match(line)
        member = not stack or (stack[-1] is not None and stack[-1].is_type)
        if match and member and pending is None:
            parent = stack[-1] if stack else None
            keyword, name = match.group(1), match.group(2) or match.group(1)
            start = number
            while start > 1 and _ATTRIBUTE_LINE.match(lines[start - 2]):
                start -= 1
            pending = Decl(keyword, name.strip("`"), start, number, parent=parent)
            base_key = (*(parent.key if parent else ()), keyword, pending.name)
            pending.ordinal = seen.get(base_key, 0)
            seen[base_key] = pending.ordinal + 1
            decls.append(pending)
        for char in line:
            if char in "([":
                depth += 1
            elif char in ")]":
                depth = max(depth - 1, 0)
            elif char == "{":
                if pending is not None and depth == 0:
                    pending.body_line = number
                    stack.append(pending)
                    pending = None
                else:
                    stack.append(None)
            elif char == "}" and stack:
                closed = stack.pop()
                if closed is not None:
                    closed.end = number
        if pending is not None and depth == 0 and not _continues(line, lines, number):
            pending.end = number
            pending = None
    for decl in decls:
        if decl.end == 0:
            decl.end = len(lines)
    return decls


def _continues(line: str, lines: list[str], number: int) -> bool:
    stripped = line.rstrip()
    if stripped.endswith(_CONTINUES_AFTER):
        return True
    for following in lines[number:]:
        if following.strip():
            return following.lstrip().startswith(_CONTINUES_BEFORE)
    return False


def innermost(decls: list[Decl], line: int) -> Decl | None:
    """The most deeply nested declaration whose extent holds the line."""
    best: Decl | None = None
    for decl in decls:
        if decl.contains(line) and (best is None or decl.start >= best.start):
            best = decl
    return best


def signature_and_body(decl: Decl, lines: list[str]) -> tuple[str, str]:
    """The declaration's text before its body's brace, and from there on (whitespace
    squeezed), to tell a signature change from a body change."""
    text = lines[decl.start - 1 : decl.end]
    joined = "\n".join(text)
    head, brace, body = joined.partition("{") if decl.body_line is not None else (joined, "", "")
    return " ".join(head.split()), " ".join((brace + body).split())


def is_blank_code(lines: list[str], line: int) -> bool:
    """A line with nothing but whitespace and comments (a change there changes no code)."""
    return not (0 < line <= len(lines)) or not lines[line - 1].strip()
