"""The attribute lines plan_rename reads above a property (for property_wrapper_derived_name):
attributes alone, arguments spanning lines included, never a previous declaration."""

from __future__ import annotations

import pytest

from xcindex.tools.rename.meaning import attributes_only


@pytest.mark.parametrize(
    "text",
    [
        "    @Clamped",
        "    @MainActor @objc",
        '    @Option(name: .shortAndLong, help: "How many (at most 3).")',
        '    @Option(\n        name: .long,\n        help: ArgumentHelp("x")\n    )',
        '    @available(*, deprecated, renamed: "other")',
        "    @Generic<Int>(value: 1)",
    ],
)
def test_attribute_lines(text: str) -> None:
    assert attributes_only(text)


@pytest.mark.parametrize(
    "text",
    [
        "    @Flag var verbose = false",
        "    @OptionGroup var common: Common",
        '    @Option(help: "x") var count: Int?',
        "    var plain = 1",
        "    /// @Option in a comment",
        "",
        "    @Option(name: .long,",
    ],
)
def test_declarations_and_other_lines(text: str) -> None:
    assert not attributes_only(text)
