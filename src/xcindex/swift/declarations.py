"""The extents of the declarations in a Swift file, from its text.

The index records where each declaration's *name* is, not where the declaration ends, so
change_impact finds extents here. The text is read through `lexer.masked`: comments and
literal text blanked (raw strings, multi-line strings, interpolations, `#/…/#` regexes and
nested comments as Swift reads them), so only code's braces and brackets count. Then each
member declaration (a type, extension, function, initializer, subscript, property, enum
case element, typealias, associated type, macro or operator that is not local to a body)
runs from its keyword line (attribute lines above it included) to the brace that closes
its body, or to the end of its statement. A statement goes on while its line ends inside a
multi-line literal, ends with an operator or an opening bracket, or the next line of code
starts with one that continues it (`.`, `->`, `where`, …); the lines of a postfix `#if`
(`items⏎#if DEBUG⏎.sorted()⏎#endif`) are looked through and the statement ends at its
`#endif`.

No parser: `#if` branches are each read as written (both `func f()` of an `#if`/`#else`
are declarations, told apart by `ordinal`), which is right for valid Swift, whose branches
each hold whole declarations. Not handled: a bare `/…/` regex literal is code to the lexer
(a `"` or `/*` in one misleads it), and an attribute whose arguments span lines above its
declaration. Several declarations on one line are each found (`init() {}; func f() {}`,
`var a = 1; var b = 2`, a type's first member after its brace). change_impact says the extents are approximate; measured against sourcekit-lsp's
documentSymbol (bench/decl_extents.py) they agree on every declaration of the fixture,
swift-log, Yams and the benchmark's M package. It is also what lets a *removed* or
*added* declaration, which only one side's text has, be seen at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xcindex.swift.lexer import Directive, Kind, masked, spans

_WHITESPACE = re.compile(r"\s+")

_MODIFIERS = (
    "public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|"
    "convenience|required|lazy|weak|unowned|dynamic|indirect|nonisolated|distributed|optional|async|"
    "infix|prefix|postfix|consuming|borrowing|__consuming"
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
_ENDS_WITH_WHERE = re.compile(r"(?:^|[\s>)])where$")
"""`extension RawRepresentable⏎where⏎  Self: P,⏎  RawValue: Q⏎{` (swift-atomics): a generic
`where` clause on lines of its own goes on to its requirements."""
_CONTINUES_BEFORE = ("->", "where", "throws", "rethrows", "async", "{", ".", ":", "=", "&&", "||", "?", ">")
_CASE_ELEMENT = re.compile(r"\s*(`[^`]+`|[A-Za-z_]\w*)")
_BRACKETS = re.compile(r"[()\[\]{};]")


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
    first_column: int = 0
    """Where it starts on its first line (0-based; after another declaration on that line)."""
    last_column: int | None = None
    """Where it ends on its last line (exclusive; None: the line's end)."""

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


def scan_declarations(text: str) -> list[Decl]:
    """Member and top-level declarations with their extents (1-based, inclusive)."""
    lexed = masked(text)
    lines = lexed.lines
    directives = frozenset(directive.line for directive in lexed.directives)
    endifs = _endifs(lexed.directives)
    decls: list[Decl] = []
    stack: list[Decl | None] = []
    pending: Decl | None = None
    postfix_end = 0  # the `#endif` of a `#if` met inside the pending statement
    depth = 0
    seen: dict[tuple[str, ...], int] = {}

    def declare(keyword: str, name: str, start: int, line: int, parent: Decl | None) -> Decl:
        decl = Decl(keyword, name.strip("`"), start, line, parent=parent)
        base_key = (*(parent.key if parent else ()), keyword, decl.name)
        decl.ordinal = seen.get(base_key, 0)
        seen[base_key] = decl.ordinal + 1
        decls.append(decl)
        return decl

    for number, line in enumerate(lines, 1):
        if pending is not None and number in endifs and not postfix_end:
            postfix_end = endifs[number]
        match = None if number - 1 in lexed.in_literal else _DECL.match(line)
        member = _at_member_level(stack)
        if match and member and pending is None:
            parent = stack[-1] if stack else None
            keyword = match.group(1)
            name = keyword if keyword in _UNNAMED else match.group(2) or keyword
            start = number
            while start > 1 and _ATTRIBUTE_LINE.match(lines[start - 2]):
                start -= 1
            pending = declare(keyword, name, start, number, parent)
        for bracket in _BRACKETS.finditer(line):
            char, column = bracket.group(), bracket.start()
            if char in "([":
                depth += 1
            elif char in ")]":
                depth = max(depth - 1, 0)
            elif char == "{":
                if pending is not None and depth == 0:
                    pending.body_line = number
                    stack.append(pending)
                    opened, pending = pending, None
                    if opened.is_type:  # `enum State { case a, b }`: a member on the type's own line
                        pending = _inline(line, column + 1, number, opened, declare)
                else:
                    stack.append(None)
            elif char == "}" and stack:
                closed = stack.pop()
                if closed is not None:
                    closed.end, closed.last_column = number, column + 1
                    # `init() {} func area() -> Int { 4 }`: another member after it on the line
                    # (after a `;`, the `;` below finds it).
                    rest = line[column + 1 :]
                    if pending is None and not rest.lstrip().startswith(";") and _at_member_level(stack):
                        pending = _inline(line, column + 1, number, stack[-1] if stack else None, declare)
            elif char == ";" and depth == 0:
                # `var a = 1; var b = 2`, `init() {}; func f() {}`: a statement ends here, and
                # another declaration may follow (not after a `case`: its elements are split
                # by commas, below).
                if pending is not None and pending.body_line is None and pending.keyword != "case":
                    pending.end, pending.last_column = max(number, postfix_end), column
                    pending, postfix_end = _inline(line, column + 1, number, pending.parent, declare), 0
                elif pending is None and _at_member_level(stack):
                    pending = _inline(line, column + 1, number, stack[-1] if stack else None, declare)
        if (
            pending is not None
            and depth == 0
            and number not in lexed.in_literal
            and not _continues(line, lines, number, directives)
        ):
            pending.end = max(number, postfix_end)
            if pending.keyword == "case":
                _split_case(pending, lines, declare)
            pending, postfix_end = None, 0
    for decl in decls:
        if decl.end == 0:
            decl.end = len(lines)
    return decls


def shares_its_lines(decl: Decl, lines: list[str]) -> bool:
    """Another declaration's code is on its first or last line (`lines`: masked text)."""
    last = lines[decl.end - 1] if decl.end <= len(lines) else ""
    return bool(decl.first_column and lines[decl.start - 1][: decl.first_column].strip()) or bool(
        decl.last_column is not None and last[decl.last_column :].strip(" \t;}")
    )


def _at_member_level(stack: list[Decl | None]) -> bool:
    return not stack or (stack[-1] is not None and stack[-1].is_type)


def _inline(
    line: str,
    column: int,
    number: int,
    parent: Decl | None,
    declare: Callable[[str, str, int, int, Decl | None], Decl],
) -> Decl | None:
    """A declaration that starts at `column` of a line, after another one ended there (`;`
    between them or not)."""
    rest = line[column:]
    found = _DECL.match(rest)
    if found is None:
        return None
    keyword = found.group(1)
    decl = declare(
        keyword, keyword if keyword in _UNNAMED else found.group(2) or keyword, number, number, parent
    )
    decl.first_column = column + len(rest) - len(rest.lstrip())
    return decl


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


def _endifs(directives: Sequence[Directive]) -> dict[int, int]:
    """Each `#if` line → the line of its `#endif`."""
    found: dict[int, int] = {}
    open_ifs: list[int] = []
    for directive in directives:
        if directive.keyword == "if":
            open_ifs.append(directive.line)
        elif directive.keyword == "endif" and open_ifs:
            found[open_ifs.pop()] = directive.line
    return found


def _continues(line: str, lines: list[str], number: int, directives: frozenset[int]) -> bool:
    """The statement on line `number` goes on to the next line of code (a postfix `#if`'s
    directive lines, `items⏎#if DEBUG⏎.sorted()⏎#endif`, are looked through)."""
    stripped = line.rstrip()
    if stripped.endswith(_CONTINUES_AFTER) or _ENDS_WITH_WHERE.search(stripped):
        return True
    for following_number, following in enumerate(lines[number:], number + 1):
        if following.strip() and following_number not in directives:
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
    squeezed outside string literals: inside one it is the value), to tell a signature
    change from a body change."""
    text = lines[decl.start - 1 : decl.end]
    if text and decl.last_column is not None:
        text[-1] = text[-1][: decl.last_column]
    if text and decl.first_column:
        text[0] = text[0][decl.first_column :]
    joined = "\n".join(text)
    head, brace, body = joined.partition("{") if decl.body_line is not None else (joined, "", "")
    return _squeezed(head), _squeezed(brace + body)


def _squeezed(text: str) -> str:
    """Runs of whitespace as one space, except in a string literal's text (`"a  b"` is not
    `"a b"`: a change there changes what the code does)."""
    parts: list[str] = []
    squeeze_from = 0  # the start of the run of text outside literals not yet added
    for span in spans(text):
        if span.kind in (Kind.STRING, Kind.ESCAPE):
            parts.append(_WHITESPACE.sub(" ", text[squeeze_from : span.start]))
            parts.append(text[span.start : span.end])
            squeeze_from = span.end
    parts.append(_WHITESPACE.sub(" ", text[squeeze_from:]))
    return "".join(parts).strip()


def is_blank_code(lines: list[str], line: int) -> bool:
    """A line with nothing but whitespace and comments (a change there changes no code)."""
    return not (0 < line <= len(lines)) or not lines[line - 1].strip()
