"""A candidate's `signature`: the declaration's head as written, so that overloads which share
a name (Yams' three `YAMLDecoder.decode(_:from:userInfo:)`) can be told apart by reading it."""

from __future__ import annotations

from pathlib import Path

from xcindex.indexstore.queries import OccurrenceRow
from xcindex.tools.resolve import declaration_text

SOURCE = (
    """\
public struct Decoder {
    public func decode<T>(_ type: T.Type = T.self,
                          from yaml: String,
                          userInfo: [CodingUserInfoKey: Any] = [:]) throws -> T where T: Decodable {
        fatalError()
    }
    public func decode<T: Decodable, C: Provider>(
        _ type: T.Type,
        configuration: C.Type
    ) throws -> T where T.Configuration == C.Configuration {
        fatalError()
    }
    public var count: Int { 1 }
    case a, b,
    var label = "{not a body}"
    func plain()
    {
    }
    func long(
"""
    + "".join(f"        argument{i}: Int,\n" for i in range(20))
    + """    ) {}
    func note(a: Int) // see (1
    var after = 1
}
"""
)


def text_at(path: Path, line: int) -> str:
    return declaration_text(OccurrenceRow(1, 1, 0, str(path), line, 1, "M", 0))


def test_a_head_over_several_lines_is_joined_and_cut_at_its_body(tmp_path: Path) -> None:
    source = tmp_path / "Decoder.swift"
    source.write_text(SOURCE, encoding="utf-8")
    assert text_at(source, 2) == (
        "public func decode<T>(_ type: T.Type = T.self, from yaml: String, "
        "userInfo: [CodingUserInfoKey: Any] = [:]) throws -> T where T: Decodable"
    )
    assert text_at(source, 7) == (
        "public func decode<T: Decodable, C: Provider>(_ type: T.Type, configuration: C.Type) "
        "throws -> T where T.Configuration == C.Configuration"
    )
    # One line as before: a computed property, a case list (a trailing comma does not
    # continue it), a brace inside a string, a body on the next line.
    assert text_at(source, 13) == "public var count: Int"
    assert text_at(source, 14) == "case a, b,"
    assert text_at(source, 15) == 'var label = "{not a body}"'
    assert text_at(source, 16) == "func plain()"
    # A very long head is cut at 160 characters.
    long = text_at(source, 19)
    assert long.startswith("func long(argument0: Int, argument1: Int,")
    assert len(long) == 160
    assert long.endswith("…")
    # A bracket in a comment opens nothing: the next declaration is not joined on.
    assert text_at(source, 41) == "func note(a: Int) // see (1"
    assert text_at(source, 999) == ""


def test_a_head_at_the_end_of_a_file_followed_by_empty_lines(tmp_path: Path) -> None:
    source = tmp_path / "Tail.swift"
    source.write_text("func last(\n    a: Int\n)\n\n\n", encoding="utf-8")
    assert text_at(source, 1) == "func last(a: Int)"
