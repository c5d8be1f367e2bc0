"""The diff parser and the declaration scanner change_impact stands on."""

from __future__ import annotations

from xcindex.project.git import Hunk, parse_diff
from xcindex.swift.declarations import (
    innermost,
    scan_declarations,
    signature_and_body,
)
from xcindex.swift.lexer import mask

SOURCE = """// A comment with func inside(
/* block { comment */
public struct Box {
    let label = "a { brace"
    public func area() -> Int {
        let inner = 1 // local, not a member
        return inner * 2
    }

    @discardableResult
    public func grow(
        by amount: Int
    ) -> Int {
        amount
    }

    public func area(scale: Int) -> Int { scale }
}

extension Box: Equatable {}
"""


def test_a_zero_context_diff_gives_each_files_hunks_on_both_sides() -> None:
    diff = parse_diff(
        "diff --git a/A.swift b/A.swift\n--- a/A.swift\n+++ b/A.swift\n@@ -3 +3,2 @@\n-x\n+y\n+z\n"
        "@@ -10,2 +11,0 @@\n-a\n-b\n"
        "diff --git a/New.swift b/New.swift\nnew file mode 100644\n--- /dev/null\n+++ b/New.swift\n"
        "@@ -0,0 +1 @@\n+x\n"
    )
    assert [(d.old_path, d.new_path) for d in diff] == [("A.swift", "A.swift"), (None, "New.swift")]
    assert diff[0].hunks == [Hunk(3, 1, 3, 2), Hunk(10, 2, 11, 0)]
    assert list(diff[0].hunks[1].new_lines()) == []
    assert list(diff[1].hunks[0].new_lines()) == [1]


def test_comments_and_strings_are_blanked_and_positions_kept() -> None:
    lines = mask(SOURCE)
    assert "func" not in lines[0]
    assert "{" not in lines[1]
    assert "{" not in lines[3]
    assert len(lines) == len(SOURCE.splitlines())
    assert all(len(a) == len(b) for a, b in zip(lines, SOURCE.splitlines(), strict=True))


def test_member_declarations_run_to_their_closing_brace_and_locals_are_not_members() -> None:
    decls = {(d.keyword, d.name, d.ordinal): d for d in scan_declarations(SOURCE)}
    assert set(decls) == {
        ("struct", "Box", 0),
        ("let", "label", 0),
        ("func", "area", 0),
        ("func", "grow", 0),
        ("func", "area", 1),
        ("extension", "Box", 0),
    }
    area = decls[("func", "area", 0)]
    assert (area.start, area.end, area.body_line) == (5, 8, 5)
    grow = decls[("func", "grow", 0)]
    assert (grow.start, grow.name_line, grow.end) == (10, 11, 15), "attribute line above included"
    assert decls[("struct", "Box", 0)].end == 18
    assert innermost(list(decls.values()), 7) == [area]
    assert innermost(list(decls.values()), 9) == [decls[("struct", "Box", 0)]]
    assert decls[("func", "area", 1)].key != area.key, "overloads stay apart"


def test_signature_and_body_tell_the_two_kinds_of_change_apart() -> None:
    lines = SOURCE.splitlines()
    [one_liner] = [d for d in scan_declarations(SOURCE) if d.name == "area" and d.ordinal == 1]
    signature, body = signature_and_body(one_liner, lines)
    assert signature == "public func area(scale: Int) -> Int"
    assert body == "{ scale }"


def test_spaces_inside_a_string_literal_are_its_value_not_layout() -> None:
    # `"[\(rank)] \(title)"` to `"[\(rank)]  \(title)"` changes what the code returns: a body
    # change (change_impact called it `moved`, touched with the same text); re-spacing the
    # code around the literal stays the same text.
    def body(source: str) -> str:
        [decl] = scan_declarations(source)
        return signature_and_body(decl, source.splitlines())[1]

    before = body('var text: String {\n    "[\\(rank)] \\(title)"\n}\n')
    assert body('var text: String {\n    "[\\(rank)]  \\(title)"\n}\n') != before
    assert body('var text: String {\n        "[\\(rank)] \\(title)"   \n}\n') == before


def extents(source: str) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(keyword, name) → (first line, name line, last line), for the cases below."""
    return {(d.keyword, d.name): (d.start, d.name_line, d.end) for d in scan_declarations(source)}


def test_an_optional_type_ends_its_statement() -> None:
    # swift-log's InMemoryLogHandler and TestLogger: `?` at the end of a line is an optional,
    # not a continued expression, so the next property is a declaration of its own.
    found = extents(
        "struct Handler {\n"
        "    var metadataProvider: Logger.MetadataProvider?\n"
        "    var logLevel: Logger.Level = .info\n"
        "    @usableFromInline\n"
        "    internal var _source: String?\n"
        "\n"
        "    static func construct(from scalar: Node.Scalar) -> Self?\n"
        "}\n"
    )
    assert found[("var", "metadataProvider")] == (2, 2, 2)
    assert found[("var", "logLevel")] == (3, 3, 3)
    assert found[("var", "_source")] == (4, 5, 5)
    assert found[("func", "construct")] == (7, 7, 7)


def test_operators_are_named_by_their_symbol() -> None:
    # Yams' Node.Scalar and swift-log's Logger: `static func == (…)` and `static func <(…)`.
    found = extents(
        "extension Node.Scalar: Comparable {\n"
        "    public static func < (lhs: Node.Scalar, rhs: Node.Scalar) -> Bool {\n"
        "        lhs.string < rhs.string\n"
        "    }\n"
        "    static func ==(lhs: Self, rhs: Self) -> Bool { true }\n"
        "}\n"
    )
    assert found[("extension", "Node.Scalar")] == (1, 1, 6)
    assert found[("func", "<")] == (2, 2, 4)
    assert found[("func", "==")] == (5, 5, 5)


def test_each_case_on_a_line_is_a_declaration_of_its_own() -> None:
    # Yams' Emitter (`enum State { case initialized, opened, closed }`) and a raw-valued list.
    source = (
        "enum Priority: Int {\n"
        "    case low = 1, normal = 2, high = 3\n"
        "    case `default`\n"
        "}\n"
        "private enum State { case initialized, opened, closed }\n"
    )
    found = extents(source)
    assert {name for keyword, name in found if keyword == "case"} == {
        "low",
        "normal",
        "high",
        "default",
        "initialized",
        "opened",
        "closed",
    }
    assert found[("case", "high")] == (2, 2, 2)
    assert found[("case", "closed")] == (5, 5, 5)
    assert found[("enum", "State")] == (5, 5, 5)
    decls = scan_declarations(source)
    assert {d.name for d in innermost(decls, 2)} == {"low", "normal", "high"}, "a change there is each one's"


def test_attributes_with_nested_arguments_and_multi_line_literals() -> None:
    # swift-log's LockTest (`@Test(.enabled(if: …)) func …`), Yams' ConstructorTests (a
    # multi-line string literal as a property's value) and a multi-line generic typealias.
    found = extents(
        "struct Suite {\n"
        "    @Test(.enabled(if: canImportDispatch)) func testLock() {\n"
        "        run()\n"
        "    }\n"
        '    static let example = """\n'
        "        key: { value }\n"
        "        func notADeclaration()\n"
        '        """\n'
        "    private typealias FactoryBox = ReplaceOnceBox<\n"
        "        @Sendable (_ label: String) -> any LogHandler\n"
        "    >\n"
        "    internal init<F>(\n"
        "        file: F\n"
        "    ) {}\n"
        "    associatedtype IntegerValue: RawRepresentable where IntegerValue.RawValue == Int\n"
        "}\n"
    )
    assert found[("func", "testLock")] == (2, 2, 4)
    assert found[("let", "example")] == (5, 5, 8)
    assert ("func", "notADeclaration") not in found
    assert found[("typealias", "FactoryBox")] == (9, 9, 11)
    assert found[("init", "init")] == (12, 12, 14)
    assert found[("associatedtype", "IntegerValue")] == (15, 15, 15)


def test_declarations_sharing_a_line_are_each_found_with_their_own_text() -> None:
    # Seen in a probe package: `public struct Sq: Shape { public init() {}; public func area()
    # -> Int { 4 } }` — a change to area's body was taken for a change to init.
    source = (
        "public struct Sq: Shape { public init() {}; public func area() -> Int { 4 } }\n"
        "struct S {\n"
        "    var a = 1; var b = 2\n"
        "    func g() { if ok { } else { } } func h() {}\n"
        "    func k() { let q = 1; let r = 2 }\n"
        "}\n"
    )
    lines = source.splitlines()
    found = {(d.parent.name if d.parent else "", d.keyword, d.name): d for d in scan_declarations(source)}
    assert sorted(found) == sorted(
        [
            ("", "struct", "Sq"),
            ("Sq", "init", "init"),
            ("Sq", "func", "area"),
            ("", "struct", "S"),
            ("S", "var", "a"),
            ("S", "var", "b"),
            ("S", "func", "g"),
            ("S", "func", "h"),
            ("S", "func", "k"),  # its locals are not members
        ]
    )
    texts = {key: signature_and_body(decl, lines) for key, decl in found.items()}
    assert texts[("Sq", "init", "init")] == ("public init()", "{}")
    assert texts[("Sq", "func", "area")] == ("public func area() -> Int", "{ 4 }")
    assert texts[("S", "var", "a")] == ("var a = 1", "")
    assert texts[("S", "var", "b")] == ("var b = 2", "")
    assert texts[("S", "func", "g")] == ("func g()", "{ if ok { } else { } }")
    assert texts[("S", "func", "h")] == ("func h()", "{}")
    # Both share line 1; a change there is told apart by each one's own text.
    assert {d.name for d in innermost(list(found.values()), 1)} == {"init", "area"}
    changed = source.replace("{ 4 }", "{ 5 }").splitlines()
    assert signature_and_body(found[("Sq", "init", "init")], changed) == texts[("Sq", "init", "init")]
    assert signature_and_body(found[("Sq", "func", "area")], changed) != texts[("Sq", "func", "area")]


def test_a_where_clause_on_lines_of_its_own_and_underscored_modifiers() -> None:
    # As swift-atomics writes them (Sources/Atomics/Conformances/RawRepresentable.swift): the
    # scan ended the extension at its `where` line and missed every member of the type.
    source = (
        "extension RawRepresentable\n"
        "where\n"
        "  Self: AtomicValue,\n"
        "  RawValue: AtomicValue\n"
        "{\n"
        "  public typealias AtomicRepresentation = Storage<Self>\n"
        "}\n"
        "public struct Storage<Wrapped>: AtomicStorage\n"
        "where\n"
        "  Wrapped.RawValue.Value == Wrapped.RawValue?\n"
        "{\n"
        "  @_transparent @_alwaysEmitIntoClient\n"
        "  __consuming public func dispose() -> Wrapped {\n"
        "    _storage.dispose()\n"
        "  }\n"
        "}\n"
        "let elsewhere = 1\n"
        "let next = 2\n"
    )
    found = {(d.keyword, d.name): (d.start, d.end) for d in scan_declarations(source)}
    assert found == {
        ("extension", "RawRepresentable"): (1, 7),
        ("typealias", "AtomicRepresentation"): (6, 6),
        ("struct", "Storage"): (8, 16),
        ("func", "dispose"): (12, 15),
        ("let", "elsewhere"): (17, 17),
        ("let", "next"): (18, 18),
    }
