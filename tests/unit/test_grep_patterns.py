"""The pre-tool-use hook's pattern tests are hand-written scanners (`re` was a third of the
hook's run, on every Grep): here they are held to the regular expressions they replaced,
which stay in this file as the statement of what a symbol search and a glob's extension are.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcindex.hooks import grep_advice

_DECLARATION = r"(?:func|class|struct|enum|protocol|extension|actor|typealias|var|let|case|init|macro)"
IDENTIFIER_SEARCH = re.compile(
    r"^(?:\\b)?(?:(?P<decl>" + _DECLARATION + r")(?:\\s\+|\\s\*|\s+))?(?P<member>\\\.|\.)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>(?:\\b|\\?[()]|:|\\s\*|[A-Za-z_][A-Za-z0-9_]*:)*)$"
)
GLOB_EXTENSION = re.compile(r"\.(\{[^{}]*\}|[A-Za-z0-9_+]+)\s*$")
TARGETS = {"swift", "m", "mm", "h"}


def expected_identifier(pattern: str) -> str | None:
    match = IDENTIFIER_SEARCH.match(pattern.strip())
    if not match:
        return None
    name = match.group("name")
    camel_case = len(name) >= 3 and any(c.isupper() for c in name) and any(c.islower() for c in name)
    called_or_member = bool(match.group("member")) or "(" in match.group("rest")
    if match.group("decl") or camel_case or (called_or_member and not name.isupper()):
        return name
    return None


def expected_glob(glob: str) -> bool | None:
    match = GLOB_EXTENSION.search(glob)
    if not match:
        return None
    return bool({part.strip().lower() for part in match.group(1).strip("{}").split(",")} & TARGETS)


PATTERNS = [
    "UserService", r"\bfetchUser\(", "func fetchUser", r"class\s+AppDelegate", r"class\s*AppDelegate",
    "fetchUser(id:)", r"\.deposit\(", r"\bdecode\(", "log(", r"\.count\b", ".isEmpty", r"deposit\(amount:",
    "deposit", "decode", "TODO(", "log message", r"\bTODO\b", "fetch.*User", "classify", "classifyThing",
    "func", "func (", "funcs foo", "enum Kind", "initialize(", r"init\(", "init(", r"\binit\(", "let x",
    "var  count", "case .some", "macro Foo", "  Padded  ", r"\\bX", r"a\s*:", "a::b", "x(y:z:)", "X.Y",
    "protocol\tP", "typealias T", "_private", "__x(", "A1b", "ABC(", "abc)", r"abc\)", "", " ", "é(",
]  # fmt: skip
GLOBS = [
    "*.swift", "Sources/**/*.{swift,h}", "*.py", "*.{py,md}", "*.Swift ", "*.{}", "{a,b}", ".swift",
    "*.{swift}x", "a.{x}y}", "a.b.c", "a.b+c", "*", "**/*", "x.", "a.{x{y}", "*.{ swift , m }", "*.c++",
]  # fmt: skip


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_grep_pattern_names_the_symbol_the_regular_expression_named(pattern: str) -> None:
    assert grep_advice.swift_identifier(pattern) == expected_identifier(pattern)


@pytest.mark.parametrize("glob", GLOBS)
def test_a_glob_names_the_extensions_the_regular_expression_named(glob: str) -> None:
    assert grep_advice.glob_targets_sources(glob) == expected_glob(glob)


PIECES = st.sampled_from(
    [
        "func", "class", "init", "var", "enum", " ", "\t", "\\s+", "\\s*", "\\b", "\\.", ".", "(", ")",
        "\\(", "\\)", ":", "a", "B", "_", "7", "fetch", "User", "TODO", "label:", "*", "{", "}", ",",
        "swift", "h", "+", "é",
    ]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=8).map("".join))
def test_any_pattern_built_of_the_pieces_reads_as_the_regular_expression_reads_it(pattern: str) -> None:
    assert grep_advice.swift_identifier(pattern) == expected_identifier(pattern)
    assert grep_advice.glob_targets_sources(pattern) == expected_glob(pattern)
