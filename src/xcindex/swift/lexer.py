"""Swift source text cut into code, comments and literals: the one lexer every text scan uses.

The declaration scan (`declarations.py`), the head of a declaration read for a signature
(`tools/resolve.py`) and plan_rename's whole-tree scan (`tools/rename/scan.py`) all need to
know whether a brace, a parenthesis or a name is code, or sits in a comment or a literal.
`spans` cuts a text into runs of one kind each, in order, covering every character:

- comments: `// …` to the end of the line, `/* … */` nested as Swift nests them;
- string literals: `"…"` with backslash escapes, multi-line `\"\"\"…\"\"\"`, raw `#"…"#`,
  `##"…"##` (any number of `#`, multi-line too), in which only a backslash followed by as
  many `#` escapes (`\\#n`, `\\#(…)`);
- interpolations `\\(…)` (`\\#(…)` in a raw literal): the code inside is code, with its own
  parentheses, strings, comments and further interpolations, so a `)` or `"` in a nested
  string does not end it and the braces of a closure in it balance;
- regex literals with extended delimiters, `#/…/#` (multi-line when `#/` ends its line):
  their text is literal text, so a `"` in one opens no string;
- backquoted identifiers (`` `default` ``, Swift 6.2's `` `a "test" name` ``): code, read
  through on their line so nothing inside them opens a literal or a comment (outside
  interpolations, as the compiler reads them).

Not handled: a bare `/…/` regex literal is read as code. Telling it from the division
operator takes the parser's context; what it costs is a bare regex holding a `"` (read as a
string to the end of its line) or a `/*` (a comment to its `*/`). Conditional compilation
is not evaluated: every `#if` branch is text like any other, and `masked` says where the
directive lines are.

A single-line literal that is not closed ends with its line, and its open interpolations
with it (as the compiler reads it); an unclosed multi-line literal or block comment runs to
the end of the text. Nothing fails: every text lexes, in one pass.

Positions are indices into the text given: characters for a `str`; `byte_spans` lexes
UTF-8 bytes as `data.decode("latin-1")` (one character per byte: every delimiter is ASCII
and no byte of a multi-byte character is one), so its positions are byte offsets. On top:
`blank` (comments and literal text turned into spaces, lengths and line breaks kept),
`mask` (the same, as lines) and `masked` (the lines, which ones end inside a literal, and
the `#if`/`#elseif`/`#else`/`#endif` lines). Lines are split as git and the compiler number
them, at `\n` (a `\r` before it dropped): `split_lines`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple


class Kind(enum.Enum):
    CODE = "code"
    COMMENT = "comment"
    QUOTE = "quote"
    """A literal's opening or closing delimiter (`"`, `#\"\"\"`, `"#`, `#/`, `/#`)."""
    STRING = "string"
    """A literal's text, an interpolation's `\\(` and `)` included."""
    ESCAPE = "escape"
    """A backslash escape in a literal's text and the character it escapes (`\\n`, `\\"`,
    `\\#t` in a raw literal): no word of the text starts there (`\\nName` holds no `nName`)."""
    INTERPOLATION = "interpolation"
    """Code inside a literal's `\\(…)`."""


class Span(NamedTuple):
    start: int
    end: int
    kind: Kind


_LITERAL_TEXT = (Kind.COMMENT, Kind.STRING, Kind.ESCAPE, Kind.INTERPOLATION)
"""What `blank` turns into spaces (delimiters stay, so a literal still reads as one)."""

_CODE = re.compile(r'//|/\*|#*"|#+/|`')
"""What ends a run of code outside every literal."""
_INNER = re.compile(r'//|/\*|#*"|#+/|[()\n]')
"""… and inside an interpolation, which its unbalanced `)` (or, in a single-line literal,
the end of the line) closes. No backquotes: the compiler does not read them through there
either (`"\\(`a "b`)"` is an unterminated string to it)."""
_BLOCK = re.compile(r"/\*|\*/")
_BLANKED = re.compile(r"[^\r\n]")
_DIRECTIVE = re.compile(r"[ \t]*#(if|elseif|else|endif)\b[ \t]*(.*?)\s*$")


@lru_cache(maxsize=64)
def _literal_end(hashes: int, multiline: bool, regex: bool) -> re.Pattern[str]:
    """What matters inside a literal: an escape (group `open` when it opens an
    interpolation), the closing delimiter (`close`), or the end of a single-line literal's
    line (`line`)."""
    pounds = "#" * hashes
    escaped = r"(?s:.)?" if multiline else r"[^\n]?"
    if regex:
        close, escape = "/" + pounds, r"\\" + escaped
    else:
        close = ('"""' if multiline else '"') + pounds
        escape = r"\\" + pounds + r"(?:(?P<open>\()|" + escaped + ")"
    line = "" if multiline else r"|(?P<line>\n)"
    return re.compile(f"{escape}|(?P<close>{re.escape(close)}){line}")


class _Literal:
    """An open literal: what ends it, and the parentheses open in its current interpolation."""

    __slots__ = ("depth", "multiline", "pattern")

    def __init__(self, hashes: int, multiline: bool, regex: bool) -> None:
        self.multiline = multiline
        self.pattern = _literal_end(hashes, multiline, regex)
        self.depth = 0


def _is_word(char: str) -> bool:
    return char >= "\x80" or char == "_" or char.isalnum()


def spans(text: str) -> list[Span]:
    """The text as consecutive runs of one kind, from 0 to len(text)."""
    found: list[Span] = []
    n = len(text)
    stack: list[_Literal] = []  # literals open around here, innermost last
    in_text = False  # in the text of stack[-1], else in code (an interpolation's if stack)
    run = i = 0  # the current run starts at `run`; nothing before `i` ends it

    def cut(end: int, kind: Kind) -> None:
        nonlocal run
        if end > run:
            found.append(Span(run, end, kind))
        run = end

    while i < n:
        if in_text:
            literal = stack[-1]
            m = literal.pattern.search(text, i)
            if m is None:
                break
            what = m.lastgroup
            if what is None:  # an escape
                cut(m.start(), Kind.STRING)
                cut(m.end(), Kind.ESCAPE)
                i = run
            elif what == "open":  # `\(`: an interpolation opens
                cut(m.end(), Kind.STRING)
                literal.depth = 0
                in_text = False
                i = run
            elif what == "close":
                cut(m.start(), Kind.STRING)
                cut(m.end(), Kind.QUOTE)
                stack.pop()
                in_text = False
                i = run
            else:  # the end of a single-line literal's line: it ends unclosed
                cut(m.start(), Kind.STRING)
                stack.pop()
                in_text = False
                i = run
            continue
        code = Kind.INTERPOLATION if stack else Kind.CODE
        m = (_INNER if stack else _CODE).search(text, i)
        if m is None:
            break
        start, token = m.start(), m.group()
        first = token[0]
        if first == "/" and len(token) == 2:  # a comment
            end = _line_end(text, start) if token == "//" else _block_end(text, start)
            cut(start, code)
            cut(end, Kind.COMMENT)
            i = end
        elif token[-1] == '"' or token[-1] == "/":  # a literal opens
            hashes = len(token) - 1
            regex = token[-1] == "/"
            if hashes and start and _is_word(text[start - 1]):  # `x#"`: no raw delimiter
                if regex:
                    i = m.end()
                    continue
                start, hashes = start + hashes, 0
            multiline = (
                text.startswith(("\n", "\r\n"), start + hashes + 1)
                if regex
                else text.startswith('"""', start + hashes)
            )
            cut(start, code)
            cut(start + hashes + (3 if multiline and not regex else 1), Kind.QUOTE)
            stack.append(_Literal(hashes, multiline, regex))
            in_text = True
            i = run
        elif first == "`":  # a backquoted identifier, read through on its line
            close = text.find("`", start + 1, _line_end(text, start))
            i = m.end() if close < 0 else close + 1
        elif first == "(":
            stack[-1].depth += 1
            i = m.end()
        elif first == ")":
            literal = stack[-1]
            if literal.depth:
                literal.depth -= 1
                i = m.end()
            else:  # the interpolation closes: back in its literal's text
                cut(start, code)
                in_text = True
                i = start
        elif stack[-1].multiline:  # a line break inside a multi-line literal's interpolation
            i = m.end()
        else:  # a line break ends a single-line literal, and the interpolation in it
            cut(start, code)
            stack.pop()
            i = start
    if run < n:
        found.append(Span(run, n, Kind.STRING if in_text else Kind.INTERPOLATION if stack else Kind.CODE))
    return found


def byte_spans(data: bytes) -> list[Span]:
    """`spans` of UTF-8 (or any ASCII-compatible) bytes, in byte offsets."""
    return spans(data.decode("latin-1"))


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _block_end(text: str, at: int) -> int:
    """The end of the block comment opening at `at`, nested ones included."""
    level = 0
    for m in _BLOCK.finditer(text, at):
        level += 1 if m.group() == "/*" else -1
        if level == 0:
            return m.end()
    return len(text)


def blank(text: str) -> str:
    """The text with comments and literal text (interpolations included) turned into
    spaces; the delimiters, line breaks and every length stay."""
    pieces: list[str] = []
    for start, end, kind in spans(text):
        piece = text[start:end]
        pieces.append(_BLANKED.sub(" ", piece) if kind in _LITERAL_TEXT else piece)
    return "".join(pieces)


def blank_bytes(data: bytes) -> bytes:
    """`blank` of UTF-8 bytes, byte for byte."""
    return blank(data.decode("latin-1")).encode("latin-1")


def split_lines(text: str) -> list[str]:
    """The lines as git and the compiler number them: split at `\\n`, a `\\r` before it
    dropped, no empty last line for a final line break. (`str.splitlines` also splits at a
    form feed, `\\x85` and U+2028, which would shift every later line.)"""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def mask(text: str) -> list[str]:
    """The lines with comments and literal text blanked (`blank`)."""
    return split_lines(blank(text))


@dataclass(frozen=True)
class Directive:
    line: int
    """1-based."""
    keyword: str
    """`if`, `elseif`, `else` or `endif`."""
    condition: str
    """As written, comments blanked (empty for `else` and `endif`)."""


@dataclass(frozen=True)
class Masked:
    lines: list[str]
    """`mask`'s lines."""
    in_literal: frozenset[int]
    """The (1-based) lines that end inside a multi-line literal or an interpolation in one
    (not one ending inside a block comment written in such an interpolation)."""
    directives: tuple[Directive, ...]
    """The conditional compilation lines, in order."""


def masked(text: str) -> Masked:
    """`mask`'s lines, with where literals span lines and where the `#if` lines are."""
    found = spans(text)
    pieces: list[str] = []
    open_lines: set[int] = set()
    line = 1
    for start, end, kind in found:
        piece = text[start:end]
        breaks = piece.count("\n")
        if kind in _LITERAL_TEXT:
            if breaks and kind is not Kind.COMMENT:
                open_lines.update(range(line, line + breaks))
            piece = _BLANKED.sub(" ", piece)
        pieces.append(piece)
        line += breaks
    lines = split_lines("".join(pieces))
    directives = tuple(
        Directive(number, m.group(1), m.group(2))
        for number, code in enumerate(lines, 1)
        if "#" in code and (m := _DIRECTIVE.match(code))
    )
    return Masked(lines, frozenset(open_lines), directives)
