"""The safety net's lexer: which written occurrences of a name are code, comments or text."""

from __future__ import annotations

from pathlib import Path

from xcindex.tools.rename.scan import classify, local_conformances, scan_tree, unproven_warnings

SOURCE = '''\
/// Uses ``logLevel`` to filter; see logLevel.
struct H {
    var logLevel: Int  // logLevel
    /* nested /* logLevel */ still comment logLevel */
    func f() -> String {
        let x = "logLevel \\(logLevel) logLevel"
        let raw = #"logLevel \\#(logLevel)"#
        let multi = """
            logLevel
            \\(self.logLevel)
            """
        return x + $logLevel + logLevelx + xlogLevel
    }
    @available(*, deprecated, renamed: "logLevel")
    var level: Int { logLevel }
}
'''


def kinds(text: str) -> list[tuple[int, str]]:
    data = text.encode()
    found = classify(data, b"logLevel")
    return [(data.count(b"\n", 0, offset) + 1, kind) for offset, kind in found]


def test_each_occurrence_is_classified_by_where_it_is_written() -> None:
    assert kinds(SOURCE) == [
        (1, "doc_link"),
        (1, "comment"),
        (3, "code"),
        (3, "comment"),
        (4, "comment"),
        (4, "comment"),
        (6, "string"),
        (6, "code"),
        (6, "string"),
        (7, "string"),
        (7, "code"),
        (9, "string"),
        (10, "code"),
        (12, "code"),
        (14, "available_renamed"),
        (15, "code"),
    ]


def test_scan_reports_what_no_range_covers_and_what_the_index_explains(tmp_path: Path) -> None:
    (tmp_path / "Sources").mkdir()
    (tmp_path / ".build" / "x").mkdir(parents=True)
    source = tmp_path / "Sources" / "H.swift"
    source.write_text(SOURCE, encoding="utf-8")
    (tmp_path / ".build" / "x" / "Gen.swift").write_text("let logLevel = 1\n", encoding="utf-8")
    real = str(source.resolve())
    covered = {(real, 3, 9)}
    result = scan_tree(tmp_path, "logLevel", covered, lambda path: {(15, 22)} if path == real else None)
    code = [(m.line, m.column) for m in result.unproven]
    # Line 3 is covered by a range; line 15's use is some other symbol the index knows.
    assert code == [(6, 29), (7, 33), (10, 20), (12, 21)]
    assert all(m.text and m.path == str(source) for m in result.unproven)
    assert {m.kind for m in result.text_mentions} == {"comment", "doc_link", "string", "available_renamed"}
    assert result.files_scanned == 1  # .build is never read


def test_types_declared_in_function_bodies_adopting_the_protocol_are_named(tmp_path: Path) -> None:
    source = tmp_path / "T.swift"
    source.write_text(
        "struct Known: LogHandler {}\n"
        "func test() {\n"
        "    struct Local: Sendable, LogHandler {\n"
        "        var logLevel: Int { 1 }\n"
        "    }\n"
        "    final class Other: NSObject {}\n"
        "    enum E: String, LogHandlerish { case a }\n"
        "}\n"
    )
    unproven = scan_tree(tmp_path, "logLevel", set(), lambda _path: {(1, 8)}).unproven
    assert [(m.line, m.kind) for m in unproven] == [(4, "code")]
    local = local_conformances(unproven, {"LogHandler"}, lambda _path: {(1, 8)})
    assert [(m.line, m.column, m.end_column, m.kind) for m in local] == [(3, 29, 39, "local_conformance")]
    assert local[0].text == "struct Local: Sendable, LogHandler {"
    assert local_conformances(unproven, set(), lambda _path: None) == ()
    warnings = unproven_warnings("logLevel", (*unproven, *local))
    assert [str(code) for code, _ in warnings] == ["unproven_occurrences", "unproven_occurrences"]
    assert f"{source}:3" in warnings[1][1]


def test_a_package_manifest_is_no_unproven_site_unless_the_index_compiles_it(tmp_path: Path) -> None:
    """`name:` in Package.swift is PackageDescription's label, never the renamed symbol: a new
    user renaming a property called `name` got every target's `name:` as an unproven site."""
    manifest = 'let package = Package(name: "P", targets: [.target(name: "P")])\n'
    (tmp_path / "Package.swift").write_text(manifest, encoding="utf-8")
    (tmp_path / "Package@swift-5.9.swift").write_text(manifest, encoding="utf-8")
    sources = tmp_path / "Sources" / "P"
    sources.mkdir(parents=True)
    (sources / "Package.swift").write_text("struct Package { var name = 1 }\nlet n = Package().name\n")
    (sources / "Other.swift").write_text("func f(name: Int) {}\n", encoding="utf-8")
    indexed = {
        str((sources / "Package.swift").resolve()): {(1, 22)},
        str((sources / "Other.swift").resolve()): set(),
    }
    result = scan_tree(tmp_path, "name", set(), lambda path: indexed.get(path))
    found = sorted((Path(m.path).relative_to(tmp_path).as_posix(), m.line, m.column) for m in result.unproven)
    # The two manifests are left out; a source file called Package.swift is read like any other.
    assert found == [("Sources/P/Other.swift", 1, 8), ("Sources/P/Package.swift", 2, 19)]


def test_regex_literals_and_backquoted_names_are_read_as_swift_reads_them() -> None:
    # Each line type-checks with swiftc 6.3 (a `logLevel` and `f` declared around them).
    source = (
        'let a = #/logLevel"/#; let d = logLevel\n'  # regex text, then code (was: code, then string)
        'func `named "quoted"`() -> Int { logLevel }\n'  # a quote in a name opens no string
        'let b = "\\(f(")")) logLevel \\(logLevel)"\n'  # a `)` in a string in an interpolation
        'let c = ##"logLevel"# \\#(logLevel) \\##(logLevel)"##\n'
    )
    assert kinds(source) == [
        (1, "string"),
        (1, "code"),
        (2, "code"),
        (3, "string"),
        (3, "code"),
        (4, "string"),
        (4, "string"),
        (4, "code"),
    ]


def test_a_type_declared_in_a_comment_or_a_literal_is_no_local_conformance(tmp_path: Path) -> None:
    source = tmp_path / "T.swift"
    source.write_text(
        "func test() {\n"
        "    /// struct Example: LogHandler {\n"
        '    let doc = """\n'
        "        struct Fake: LogHandler {\n"
        '        """\n'
        "    struct Local: LogHandler { var logLevel: Int { 1 } }\n"
        "}\n"
    )
    unproven = scan_tree(tmp_path, "logLevel", set(), lambda _path: set()).unproven
    assert [(m.line, m.kind) for m in unproven] == [(6, "code")]
    local = local_conformances(unproven, {"LogHandler"}, lambda _path: set())
    assert [(m.line, m.column) for m in local] == [(6, 19)]


def test_an_escaped_character_starts_no_word_of_the_text() -> None:
    # `\tabs` is a tab and `abs`; after an escaped backslash, `tabs` is text.
    data = b'let s = "\\tabs \\\\tabs"'
    assert classify(data, b"tabs") == [(data.rindex(b"tabs"), "string")]
