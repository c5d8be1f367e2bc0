"""The one Swift lexer: what is code, comment or literal, and the declaration scan that stands
on it (change_impact's extents). The whole sources here (RAW, MULTI, BRANCHES, the ones given
to `extents`) type-check with swiftc 6.3; the expected runs and extents were read off by hand
(and the declarations' extents agree with sourcekit-lsp's documentSymbol)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xcindex.swift.declarations import innermost, is_blank_code, scan_declarations, signature_and_body
from xcindex.swift.lexer import byte_spans, mask, masked, spans, split_lines
from xcindex.swift.source import source_line


def runs(text: str) -> list[tuple[str, str]]:
    return [(kind.value, text[start:end]) for start, end, kind in spans(text)]


def extents(source: str) -> dict[tuple[str, str, int], tuple[int, int]]:
    """(keyword, name, ordinal) → (first line, last line)."""
    return {(d.keyword, d.name, d.ordinal): (d.start, d.end) for d in scan_declarations(source)}


RAW = """\
struct Tricky {
    let raw = #"a " { b"#
    func afterRaw() -> Int {
        1
    }
}
"""


def test_a_raw_string_holding_a_quote_and_a_brace_hides_no_later_declaration() -> None:
    # The bug behind issue 23: `"` ended the raw string, ` { b` was code, and every later
    # declaration of the file was lost to change_impact.
    assert runs('let raw = #"a " { b"#') == [
        ("code", "let raw = "),
        ("quote", '#"'),
        ("string", 'a " { b'),
        ("quote", '"#'),
    ]
    decls = scan_declarations(RAW)
    assert extents(RAW) == {
        ("struct", "Tricky", 0): (1, 6),
        ("let", "raw", 0): (2, 2),
        ("func", "afterRaw", 0): (3, 5),
    }
    # change_impact's other building blocks read the same text: a change on line 4 is the
    # function's body, line 2 is code, and the function's signature stops at its own brace.
    [after] = innermost(decls, 4)
    assert after.name == "afterRaw"
    assert not is_blank_code(mask(RAW), 2)
    assert signature_and_body(after, RAW.splitlines()) == ("func afterRaw() -> Int", "{ 1 }")


def test_raw_strings_escape_and_interpolate_only_with_their_own_number_of_hashes() -> None:
    assert runs(r'let r = ##"a "# \#(x) \##(y) "##') == [
        ("code", "let r = "),
        ("quote", '##"'),
        ("string", r'a "# \#(x) \##('),
        ("interpolation", "y"),
        ("string", ") "),
        ("quote", '"##'),
    ]
    assert runs(r'"a\"b\\" + #"\#t\t"#') == [
        ("quote", '"'),
        ("string", "a"),
        ("escape", '\\"'),
        ("string", "b"),
        ("escape", "\\\\"),
        ("quote", '"'),
        ("code", " + "),
        ("quote", '#"'),
        ("escape", "\\#t"),
        ("string", "\\t"),
        ("quote", '"#'),
    ]
    assert runs(r'#"\"#') == [("quote", '#"'), ("string", "\\"), ("quote", '"#')], "a lone \\ escapes nothing"


MULTI = '''\
struct Texts {
    let multi = """
        a " "" \\""" { \\(1 + (2)) "
        func notADeclaration() {
        """
    let rawMulti = #"""
        """ { \\#(1 + 1) \\(not an interpolation
        """#
    var count: Int { 2 }
}
'''


def test_multi_line_literals_hold_quotes_triple_quotes_and_braces() -> None:
    assert extents(MULTI) == {
        ("struct", "Texts", 0): (1, 10),
        ("let", "multi", 0): (2, 5),
        ("let", "rawMulti", 0): (6, 8),
        ("var", "count", 0): (9, 9),
    }
    lines = mask(MULTI)
    assert [line.strip() for line in lines[2:4]] == ["", ""], "the literal's lines are blanked"
    assert [lines[4].strip(), lines[7].strip()] == ['"""', '"""#'], "its delimiters stay"
    found = masked(MULTI)
    assert found.in_literal == {2, 3, 4, 6, 7}, "lines ending inside a literal"
    kinds = [kind for kind, _ in runs(MULTI)]
    assert kinds.count("interpolation") == 2, "`\\(1 + (2))` and `\\#(1 + 1)`, not `\\(not`"


def test_interpolated_code_is_code_with_its_own_parentheses_strings_and_braces() -> None:
    line = 'let nested = "\\(["a": 1].map { "\\($0.key)}" }.joined(separator: ")"))" + String()'
    assert runs(line) == [
        ("code", "let nested = "),
        ("quote", '"'),
        ("string", "\\("),
        ("interpolation", "["),
        ("quote", '"'),
        ("string", "a"),
        ("quote", '"'),
        ("interpolation", ": 1].map { "),
        ("quote", '"'),
        ("string", "\\("),
        ("interpolation", "$0.key"),
        ("string", ")}"),
        ("quote", '"'),
        ("interpolation", " }.joined(separator: "),
        ("quote", '"'),
        ("string", ")"),
        ("quote", '"'),
        ("interpolation", ")"),
        ("string", ")"),
        ("quote", '"'),
        ("code", " + String()"),
    ]
    source = f'struct S {{\n    {line}\n    func after() {{}}\n    let other = ""\n}}\n'
    assert extents(source) == {
        ("struct", "S", 0): (1, 5),
        ("let", "nested", 0): (2, 2),
        ("func", "after", 0): (3, 3),
        ("let", "other", 0): (4, 4),
    }


def test_block_comments_nest() -> None:
    source = "/* outer /* inner */ still { comment */ let a = 1\nfunc after() {}\n"
    assert runs(source) == [
        ("comment", "/* outer /* inner */ still { comment */"),
        ("code", " let a = 1\nfunc after() {}\n"),
    ]
    assert extents(source) == {("let", "a", 0): (1, 1), ("func", "after", 0): (2, 2)}


def test_an_extended_regex_literal_holds_a_quote_and_a_brace() -> None:
    assert runs('let regex = #/a"b{/#; let x = 1') == [
        ("code", "let regex = "),
        ("quote", "#/"),
        ("string", 'a"b{'),
        ("quote", "/#"),
        ("code", "; let x = 1"),
    ]
    source = 'struct R {\n    let regex = #/\n        a" {\n    /#\n    func after() {}\n}\n'
    assert extents(source)[("let", "regex", 0)] == (2, 4)
    assert extents(source)[("func", "after", 0)] == (5, 5)


BRANCHES = """\
struct Platform {
    #if os(Linux) // a comment
    func name() -> String { "Linux" }
    #elseif os(macOS)
    func name() -> String { "macOS" }
    #else
    func name() -> String { "other" }
    #endif
    lazy var sorted = [3, 1, 2]
    #if DEBUG
        .sorted()
    #endif
    var last: Int { 0 }
}
"""


def test_each_if_branch_is_read_as_written_and_the_directives_are_listed() -> None:
    found = masked(BRANCHES)
    assert [(d.line, d.keyword, d.condition) for d in found.directives] == [
        (2, "if", "os(Linux)"),
        (4, "elseif", "os(macOS)"),
        (6, "else", ""),
        (8, "endif", ""),
        (10, "if", "DEBUG"),
        (12, "endif", ""),
    ]
    assert extents(BRANCHES) == {
        ("struct", "Platform", 0): (1, 14),
        ("func", "name", 0): (3, 3),
        ("func", "name", 1): (5, 5),
        ("func", "name", 2): (7, 7),
        ("var", "sorted", 0): (9, 12),  # a postfix `#if` runs to its `#endif` (sourcekit-lsp agrees)
        ("var", "last", 0): (13, 13),
    }
    assert masked('let s = """\n#if X\n"""\n// #if Y\n').directives == (), "none in a literal or a comment"


SAMPLE = RAW + MULTI + BRANCHES + 'let r = ##"a "# \\#(x) \\##(y) "##\n/* a /* b */ c */ let x = #/"/#\n'


@pytest.mark.parametrize("cut", range(0, len(SAMPLE), 7))
def test_text_cut_anywhere_lexes_whole_and_scans(cut: int) -> None:
    """An unterminated literal, interpolation or comment at the end of the text: no error,
    no endless loop, and the runs still cover every character once, in order."""
    text = SAMPLE[:cut]
    position = 0
    for start, end, _ in spans(text):
        assert start == position < end
        position = end
    assert position == len(text)
    assert len(mask(text)) == len(split_lines(text))
    scan_declarations(text)


def test_unclosed_literals_and_comments_end_where_the_compiler_ends_them() -> None:
    assert runs('let s = "no end\nfunc f() {}') == [
        ("code", "let s = "),
        ("quote", '"'),
        ("string", "no end"),
        ("code", "\nfunc f() {}"),
    ], "a single-line string ends with its line"
    assert runs('let s = "a \\(f(\n1)) b') == [
        ("code", "let s = "),
        ("quote", '"'),
        ("string", "a \\("),
        ("interpolation", "f("),
        ("code", "\n1)) b"),
    ], "and so does an interpolation in it"
    assert runs('let s = """\nabc') == [("code", "let s = "), ("quote", '"""'), ("string", "\nabc")]
    assert runs("/* a /* b */") == [("comment", "/* a /* b */")]


def test_byte_spans_count_bytes_and_spans_count_characters() -> None:
    text = 'let é = "ü\\(x)"'
    data = text.encode("utf-8")
    by_bytes = [(kind.value, data[start:end].decode("utf-8")) for start, end, kind in byte_spans(data)]
    assert (
        by_bytes
        == runs(text)
        == [
            ("code", "let é = "),
            ("quote", '"'),
            ("string", "ü\\("),
            ("interpolation", "x"),
            ("string", ")"),
            ("quote", '"'),
        ]
    )
    assert byte_spans(data)[1].start == 9
    assert spans(text)[1].start == 8


def test_a_backquoted_name_may_hold_a_quote() -> None:
    assert runs('func `a "quoted" /* name`() {}') == [("code", 'func `a "quoted" /* name`() {}')]


def test_lines_are_numbered_as_the_compiler_and_git_number_them(tmp_path: Path) -> None:
    # A form feed or U+2028 is no line break to Swift or git; str.splitlines made it one.
    text = "let a = 1\x0c let b = 2\r\n// \u2028 comment\nlet c = 3\n"
    assert split_lines(text) == ["let a = 1\x0c let b = 2", "// \u2028 comment", "let c = 3"]
    assert [d.name for d in scan_declarations(text) if d.start == 3] == ["c"]
    path = tmp_path / "F.swift"
    path.write_text(text, encoding="utf-8", newline="")
    assert source_line(str(path), 3) == "let c = 3"
    path.write_text("let d = 4\n", encoding="utf-8")
    os.utime(path, ns=(1, 10**18))  # another modification time: the file is read again
    assert source_line(str(path), 1) == "let d = 4"
    assert source_line(str(path), 2) == ""
    assert source_line(str(tmp_path / "missing.swift"), 1) == ""
