"""The extents of the declarations in a Swift file, from its text.

The index records where each declaration's *name* is, not where the declaration ends, so
change_impact finds extents here: comments and string literals are blanked out, then each
member declaration (a type, extension, function, initializer, subscript, property, enum
case element, typealias, associated type, macro or operator that is not local to a body)
runs from its keyword line (attribute lines above it included) to the brace that closes
its body, or to the end of its statement. No parser: `#if` branches are each read as
written, and change_impact says the extents are approximate; measured against
sourcekit-lsp's documentSymbol (bench/decl_extents.py) they agree on every declaration of
the fixture, swift-log, Yams and the benchmark's M package. It is also what lets a
*removed* or *added* declaration, which only one side's text has, be seen at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_MODIFIERS = (
    "public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|"
    "convenience|required|lazy|weak|unowned|dynamic|indirect|nonisolated|distributed|optional|async|"
    "infix|prefix|postfix|consuming|borrowing"
)
_ARGUMENTS = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
"""An attribute's or modifier's parenthesised arguments, nested up to three deep
(`@Test(.enabled(if: ok))`)."""
_ATTRIBUTE = r"@[\w.]+(?:<[^>]*>)?(?:" + _ARGUMENTS + r")?"
_NAME = r"(`[^`]+`|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|[/=\-+!*%<>&|^~?.]+)?"
"""An identifier (dotted: `extension Node.Scalar`), a backquoted one, or an operator
(`static func == (…)`)."""
_DECL = re.compile(
    r"^\s*(?:" + _ATTRIBUTE + r"\s+)*(?:(?:" + _MODIFIERS + r")(?:\([^)]*\))?\s+)*"
    r"(func|init|deinit|subscript|var|let|case|class|struct|enum|protocol|extension|actor|typealias|"
    r"associatedtype|macro|operator|precedencegroup)\b"
    r"[?!]?\s*" + _NAME
)
_ATTRIBUTE_LINE = re.compile(r"^\s*(?:" + _ATTRIBUTE + r"\s*)+$")
_TYPE_KEYWORDS = frozenset({"class", "struct", "enum", "protocol", "extension", "actor"})
_UNNAMED = frozenset({"init", "deinit", "subscript"})
"""Named by their keyword (what follows is generic parameters or the parameter list)."""
_CONTINUES_AFTER = (",", "(", "[", "=", "->", ":", "&&", "||", "+", "-", "*", "/", "&", "<")
"""A statement that ends its line with one of these goes on (not `?`: `var x: Int?` ends there)."""
_CONTINUES_BEFORE = ("->", "where", "throws", "rethrows", "async", "{", ".", ":", "=", "&&", "||", "?", ">")
_CASE_ELEMENT = re.compile(r"\s*(`[^`]+`|[A-Za-z_]\w*)")


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

    def ancestors(self) -> list[Decl]:
        found: list[Decl] = []
        parent = self.parent
        while parent is not None:
            found.append(parent)
            parent = parent.parent
        return found


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
    in_literal = False  # inside a multi-line string literal (its text is blanked)
    seen: dict[tuple[str, ...], int] = {}

    def declare(keyword: str, name: str, start: int, line: int, parent: Decl | None) -> Decl:
        decl = Decl(keyword, name.strip("`"), start, line, parent=parent)
        base_key = (*(parent.key if parent else ()), keyword, decl.name)
        decl.ordinal = seen.get(base_key, 0)
        seen[base_key] = decl.ordinal + 1
        decls.append(decl)
        return decl

    for number, line in enumerate(lines, 1):
        match = None if in_literal else _DECL.match(line)
        member = not stack or (stack[-1] is not None and stack[-1].is_type)
        if match and member and pending is None:
            parent = stack[-1] if stack else None
            keyword = match.group(1)
            name = keyword if keyword in _UNNAMED else match.group(2) or keyword
            start = number
            while start > 1 and _ATTRIBUTE_LINE.match(lines[start - 2]):
                start -= 1
            pending = declare(keyword, name, start, number, parent)
        if line.count('"""') % 2:
            in_literal = not in_literal
        for column, char in enumerate(line):
            if char in "([":
                depth += 1
            elif char in ")]":
                depth = max(depth - 1, 0)
            elif char == "{":
                if pending is not None and depth == 0:
                    pending.body_line = number
                    stack.append(pending)
                    opened, pending = pending, None
                    inline = _DECL.match(line[column + 1 :]) if opened.is_type else None
                    if inline:  # `enum State { case a, b }`: a member on the type's own line
                        keyword = inline.group(1)
                        name = keyword if keyword in _UNNAMED else inline.group(2) or keyword
                        pending = declare(keyword, name, number, number, opened)
                else:
                    stack.append(None)
            elif char == "}" and stack:
                closed = stack.pop()
                if closed is not None:
                    closed.end = number
        if pending is not None and depth == 0 and not in_literal and not _continues(line, lines, number):
            pending.end = number
            if pending.keyword == "case":
                _split_case(pending, lines, declare)
            pending = None
    for decl in decls:
        if decl.end == 0:
            decl.end = len(lines)
    return decls


def _split_case(
    case: Decl, lines: list[str], declare: Callable[[str, str, int, int, Decl | None], Decl]
) -> None:
    """`case a, b(x: Int)`: one declaration per element, each over its own lines (the first
    keeps the attribute lines above the statement)."""
    text = "\n".join(lines[case.name_line - 1 : case.end])
    body = text[text.index("case") + len("case") :]
    offset = len(text) - len(body)
    elements: list[tuple[int, int]] = []  # (offset of the name, offset of its last character)
    depth, start = 0, 0
    for index, char in enumerate(body + ","):
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth > 0:
            depth -= 1
        elif (char == "," and depth == 0) or char == "}":  # `}`: the type body ends on this line
            piece = body[start:index]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                elements.append((start + lead, start + len(piece.rstrip()) - 1))
            start = index + 1
            if char == "}":
                break
    for position, (first, last) in enumerate(elements):
        name_line = case.name_line + text.count("\n", 0, offset + first)
        last_line = case.name_line + text.count("\n", 0, offset + max(last, first))
        named = _CASE_ELEMENT.match(body, first)
        if position == 0:
            case.name = (named.group(1) if named else case.name).strip("`")
            case.end = last_line
        elif named:
            element = declare("case", named.group(1), name_line, name_line, case.parent)
            element.end = last_line


def _continues(line: str, lines: list[str], number: int) -> bool:
    stripped = line.rstrip()
    if stripped.endswith(_CONTINUES_AFTER):
        return True
    for following in lines[number:]:
        if following.strip():
            return following.lstrip().startswith(_CONTINUES_BEFORE)
    return False


def innermost(decls: list[Decl], line: int) -> list[Decl]:
    """The most deeply nested declarations whose extents hold the line: one, or several
    siblings sharing it (`case low = 1, high = 3`)."""
    holding = [decl for decl in decls if decl.contains(line)]
    outer = {id(ancestor) for decl in holding for ancestor in decl.ancestors()}
    return [decl for decl in holding if id(decl) not in outer]


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
