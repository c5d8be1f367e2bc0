"""UTF-8 byte columns (the index) ↔ UTF-16 code units (LSP), through the real text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xcindex.lsp.positions import (
    LspLocation,
    SourceText,
    make_location,
    split_lines,
    utf8_to_utf16_offset,
    utf16_to_utf8_offset,
)

# 👋 is 4 UTF-8 bytes and 2 UTF-16 units; é 2 bytes, 1 unit; 世 3 bytes, 1 unit.
CANARY_LINE = '        lastGreeting = "👋 " + (userService.fetchUser(id: 1) ?? "guest")'


def test_the_fixture_line_documented_in_the_expected_answers() -> None:
    # SwiftCanary's AppDelegate.swift:13: fetchUser at UTF-8 column 47, UTF-16 column 45.
    text = SourceText.from_text("\n" * 12 + CANARY_LINE + "\n")
    assert text.lsp_position(13, 47) == (12, 44)
    assert text.utf8_column(12, 44) == 47


@pytest.mark.parametrize(
    ("line", "byte_offset", "unit_offset"),
    [
        ("abc", 0, 0),
        ("abc", 2, 2),
        ("é=1", 2, 1),
        ("世界x", 6, 2),
        ("👋x", 4, 2),
        ("a👋b😀c", 1 + 4 + 1 + 4, 1 + 2 + 1 + 2),
        ("e\u0301x", 3, 2),  # a combining accent is its own code point
        ("🇫🇷!", 8, 4),  # a flag is two regional indicators, each a surrogate pair
    ],
)
def test_offsets_convert_both_ways(line: str, byte_offset: int, unit_offset: int) -> None:
    assert utf8_to_utf16_offset(line, byte_offset) == unit_offset
    assert utf16_to_utf8_offset(line, unit_offset) == byte_offset


def test_an_offset_inside_a_character_rounds_down_to_its_start() -> None:
    assert utf8_to_utf16_offset("a👋b", 3) == 1  # inside the 4 bytes of 👋
    assert utf16_to_utf8_offset("a👋b", 2) == 1  # between the two halves of the surrogate pair


def test_offsets_past_the_end_of_the_line_clamp_to_its_end() -> None:
    assert utf8_to_utf16_offset("é", 40) == 1
    assert utf16_to_utf8_offset("é", 40) == 2
    assert utf8_to_utf16_offset("é", -3) == 0


def test_lines_end_at_lf_crlf_and_cr_only() -> None:
    assert split_lines("a\nb\r\nc\rd") == ("a", "b", "c", "d")
    # Form feeds and Unicode line separators are not LSP line breaks (str.splitlines splits them).
    assert split_lines("a\x0cb\u2028c\n") == ("a\x0cb\u2028c", "")


def test_positions_on_missing_lines_do_not_fail() -> None:
    text = SourceText.from_text("only line")
    assert text.lsp_position(5, 3) == (4, 0)
    assert text.utf8_column(9, 7) == 1


def test_identifier_at_a_utf8_column() -> None:
    text = SourceText.from_text(CANARY_LINE)
    assert text.identifier_at(1, 47) == "fetchUser"
    assert text.identifier_at(1, 24) == ""  # the opening quote
    assert SourceText.from_text("let café = 1").identifier_at(1, 5) == "café"


PATH = Path("/src/a.swift")
TEXT = SourceText.from_text('x\nlet s = "héllo"; call(); call()\n')
# `call` starts at UTF-16 offset 17 and UTF-8 offset 18 (é is 2 bytes, 1 unit).


def test_a_protocol_conforming_utf16_answer_is_read_as_utf16() -> None:
    assert make_location(PATH, (1, 17), (1, 21), TEXT, name="call") == LspLocation(PATH, 2, 18, 22, 19, 23, 2)


def test_sourcekit_lsps_utf8_index_answer_is_read_as_utf8() -> None:
    # indexToLSPLocation copies the index's UTF-8 column into `character`.
    assert make_location(PATH, (1, 18), (1, 18), TEXT, name="call") == LspLocation(PATH, 2, 18, 18, 19, 19, 2)


def test_when_the_name_settles_nothing_sourcekit_lsps_utf8_reading_wins() -> None:
    assert make_location(PATH, (1, 18), (1, 18), TEXT).utf8_start_column == 19
    assert make_location(PATH, (1, 18), (1, 18), TEXT, name="other").utf8_start_column == 19
    # A byte offset inside a character cannot be UTF-8: it must be UTF-16.
    inside = SourceText.from_text("é")
    assert not inside.reads_as_utf8(0, 1, "")
    # On an ASCII prefix both readings agree.
    assert make_location(PATH, (0, 0), (0, 1), TEXT, name="x") == LspLocation(PATH, 1, 1, 2, 1, 2, 1)


def test_an_unreadable_file_keeps_the_raw_character_and_no_utf8_columns() -> None:
    unreadable = make_location(PATH, (1, 17), (1, 21), None, name="call")
    assert (unreadable.utf16_start_column, unreadable.utf16_end_column) == (18, 22)
    assert (unreadable.utf8_start_column, unreadable.utf8_end_column) == (None, None)


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")), st.data())
def test_round_trip_at_every_character_boundary(line: str, data: st.DataObject) -> None:
    index = data.draw(st.integers(min_value=0, max_value=len(line)))
    byte_offset = len(line[:index].encode("utf-8"))
    unit_offset = len(line[:index].encode("utf-16-le")) // 2
    assert utf8_to_utf16_offset(line, byte_offset) == unit_offset
    assert utf16_to_utf8_offset(line, unit_offset) == byte_offset
