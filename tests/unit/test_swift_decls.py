"""The diff parser and the declaration scanner change_impact stands on."""

from __future__ import annotations

from xcindex.tools.swift_decls import Hunk, innermost, mask, parse_diff, scan_declarations, signature_and_body

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
    assert innermost(list(decls.values()), 7) is area
    assert innermost(list(decls.values()), 9) is decls[("struct", "Box", 0)]
    assert decls[("func", "area", 1)].key != area.key, "overloads stay apart"


def test_signature_and_body_tell_the_two_kinds_of_change_apart() -> None:
    lines = SOURCE.splitlines()
    [one_liner] = [d for d in scan_declarations(SOURCE) if d.name == "area" and d.ordinal == 1]
    signature, body = signature_and_body(one_liner, lines)
    assert signature == "public func area(scale: Int) -> Int"
    assert body == "{ scale }"
