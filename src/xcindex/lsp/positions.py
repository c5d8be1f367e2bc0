"""Columns in three encodings: the index's UTF-8 bytes, LSP's UTF-16 code units, and text.

The compiler's index counts columns in UTF-8 bytes (1-based); the Language Server Protocol
counts `character` in UTF-16 code units (0-based). The two agree only on ASCII text, so every
conversion goes through the real text of the line. Lines end at `\\n`, `\\r\\n` or `\\r`, as in
LSP (Python's `str.splitlines` also splits on form feeds and Unicode separators, which LSP does
not).

sourcekit-lsp bends the rule for answers that come from its index (references, and the
definitions it finds there): it copies the index's UTF-8 column into `character` without
converting it ("in practice they almost always coincide, so we accept the incorrectness here
to avoid the file read", `indexToLSPLocation` in its sources; verified with 6.3.1). The two
readings differ only after non-ASCII text on the same line. There, `make_location` takes the
reading that lands on the name that was asked about, and sourcekit-lsp's UTF-8 reading when
the name settles nothing (or the file cannot be read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> tuple[str, ...]:
    """Split text into lines the way LSP counts them, without their line breaks."""
    return tuple(_LINE_BREAK.split(text))


def utf8_to_utf16_offset(line: str, byte_offset: int) -> int:
    """UTF-16 code units before `byte_offset` (0-based) in `line`.

    An offset inside a multi-byte character is rounded down to that character's start; an
    offset past the end of the line is clamped to the line's end (LSP's own rule).
    """
    if byte_offset <= 0:
        return 0
    prefix = line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")
    return len(prefix.encode("utf-16-le")) // 2


def utf16_to_utf8_offset(line: str, unit_offset: int) -> int:
    """UTF-8 bytes before `unit_offset` (0-based, UTF-16 code units) in `line`.

    An offset inside a surrogate pair is rounded down to the pair's start; an offset past the
    end of the line is clamped to the line's end.
    """
    if unit_offset <= 0:
        return 0
    prefix = line.encode("utf-16-le")[: unit_offset * 2].decode("utf-16-le", errors="ignore")
    return len(prefix.encode("utf-8"))


@dataclass(frozen=True)
class LspLocation:
    """One location answered by sourcekit-lsp, in both column conventions.

    Lines are 1-based. `utf16_*` columns are LSP's own (1-based UTF-16 code units);
    `utf8_*` columns are the index's convention (1-based UTF-8 bytes), computed from the
    file's real text, or None when the file could not be read (the UTF-16 columns are then
    sourcekit-lsp's raw `character` + 1). sourcekit-lsp answers index-backed requests with
    empty ranges (start == end).
    """

    path: Path
    line: int
    utf16_start_column: int
    utf16_end_column: int
    utf8_start_column: int | None
    utf8_end_column: int | None
    end_line: int


@dataclass(frozen=True)
class SourceText:
    """A file's text split into LSP lines, for converting positions in either direction."""

    lines: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> SourceText:
        return cls(split_lines(text))

    def line_text(self, index: int) -> str:
        """The text of a 0-based line ("" past the end)."""
        if 0 <= index < len(self.lines):
            return self.lines[index]
        return ""

    def lsp_position(self, line: int, utf8_column: int) -> tuple[int, int]:
        """1-based line and UTF-8 byte column → LSP (0-based line, UTF-16 character)."""
        index = line - 1
        return index, utf8_to_utf16_offset(self.line_text(index), utf8_column - 1)

    def utf8_column(self, lsp_line: int, character: int) -> int:
        """LSP (0-based line, UTF-16 character) → 1-based UTF-8 byte column."""
        return utf16_to_utf8_offset(self.line_text(lsp_line), character) + 1

    def identifier_at(self, line: int, utf8_column: int) -> str:
        """The identifier that starts at a 1-based line and UTF-8 column ("" if none does)."""
        tail = self.line_text(line - 1).encode("utf-8")[utf8_column - 1 :].decode("utf-8", errors="ignore")
        match = _IDENTIFIER.match(tail)
        return match.group(0) if match else ""

    def reads_as_utf8(self, lsp_line: int, character: int, name: str) -> bool:
        """Whether `character` on `lsp_line` is a UTF-8 byte offset (sourcekit-lsp's index
        answers) rather than UTF-16 code units (the protocol's rule); see the module notes."""
        line = self.line_text(lsp_line)
        encoded = line.encode("utf-8")
        as_utf8 = character if _is_boundary(encoded, character) else None
        as_utf16 = utf16_to_utf8_offset(line, character)
        if as_utf8 is None:
            return False
        if as_utf8 == as_utf16 or not name:
            return True
        wanted = name.encode("utf-8")
        return encoded.startswith(wanted, as_utf8) or not encoded.startswith(wanted, as_utf16)


_IDENTIFIER = re.compile(r"\w+")


def _is_boundary(encoded: bytes, offset: int) -> bool:
    """`offset` is the start of a character (or the end) of the UTF-8 bytes."""
    if not 0 <= offset <= len(encoded):
        return False
    return offset == len(encoded) or encoded[offset] & 0xC0 != 0x80


def make_location(
    path: Path,
    start: tuple[int, int],
    end: tuple[int, int],
    text: SourceText | None,
    *,
    name: str = "",
) -> LspLocation:
    """An LspLocation from an LSP range (0-based lines, `character` offsets).

    Args:
        text: the file's text, None when it cannot be read (no conversion is possible).
        name: the identifier that was asked about, to tell sourcekit-lsp's UTF-8 `character`
            from a UTF-16 one on lines where the two differ.
    """
    (start_line, start_char), (end_line, end_char) = start, end
    if text is None:
        return LspLocation(path, start_line + 1, start_char + 1, end_char + 1, None, None, end_line + 1)
    if text.reads_as_utf8(start_line, start_char, name):
        start_utf8, end_utf8 = start_char, end_char
        start_utf16 = utf8_to_utf16_offset(text.line_text(start_line), start_char)
        end_utf16 = utf8_to_utf16_offset(text.line_text(end_line), end_char)
    else:
        start_utf16, end_utf16 = start_char, end_char
        start_utf8 = utf16_to_utf8_offset(text.line_text(start_line), start_char)
        end_utf8 = utf16_to_utf8_offset(text.line_text(end_line), end_char)
    return LspLocation(
        path=path,
        line=start_line + 1,
        utf16_start_column=start_utf16 + 1,
        utf16_end_column=end_utf16 + 1,
        utf8_start_column=start_utf8 + 1,
        utf8_end_column=end_utf8 + 1,
        end_line=end_line + 1,
    )
