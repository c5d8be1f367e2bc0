from __future__ import annotations

import pytest

from xcindex.swift.names import parse_query
from xcindex.tools.common import split_qualified


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("UserService", (None, "UserService")),
        ("fetchUser(id:)", (None, "fetchUser(id:)")),
        ("UserService.fetchUser(id:)", ("UserService", "fetchUser(id:)")),
        ("Outer.Inner.run()", ("Inner", "run()")),
        ("..<(_:_:)", (None, "..<(_:_:)")),
        ("Vector.+(_:_:)", ("Vector", "+(_:_:)")),
        ("Range...<(_:_:)", ("Range", "..<(_:_:)")),
        ("Box.value", ("Box", "value")),
    ],
)
def test_qualified_names_split_only_between_identifiers(name: str, expected: tuple[str | None, str]) -> None:
    assert split_qualified(name) == expected


@pytest.mark.parametrize(
    ("text", "qualifiers", "base", "labels", "types_only"),
    [
        ("send", (), "send", None, False),
        ("NameClient.send(_:)", ("NameClient",), "send", ("_",), False),
        (
            "CanaryCore.NameOuter.Inner.State.resumed",
            ("CanaryCore", "NameOuter", "Inner", "State"),
            "resumed",
            None,
            False,
        ),
        ("NameTree<Int>.insert(_:)", ("NameTree",), "insert", ("_",), False),
        ("Dictionary<String, [Int]>.Index", ("Dictionary",), "Index", None, False),
        ("decode(of:)", (), "decode", ("of",), False),
        ("send(_ payload: String)", (), "send", ("_",), False),
        ("f(id: Int, name: String)", (), "f", ("id", "name"), False),
        ("init(...)", (), "init", None, False),
        ("cancel()", (), "cancel", (), False),
        ("@NameClamped(limit: 10)", (), "NameClamped", None, True),
        ("Vector2D.+", ("Vector2D",), "+", None, False),
        ("..<(_:_:)", (), "..<", ("_", "_"), False),
        ("Range...<(_:_:)", ("Range",), "..<", ("_", "_"), False),
        ("`default`", (), "default", None, False),
    ],
)
def test_typed_names_are_taken_apart_into_path_member_and_labels(
    text: str, qualifiers: tuple[str, ...], base: str, labels: tuple[str, ...] | None, types_only: bool
) -> None:
    query = parse_query(text)
    assert (query.qualifiers, query.base, query.labels, query.types_only) == (
        qualifiers,
        base,
        labels,
        types_only,
    )


@pytest.mark.parametrize(
    "text", ["", " ", "@", "(", ")", "((((", "<<<", "..", "a.", "A<B", "a(b", "``", "a\x00b", "x" * 5000]
)
def test_any_text_parses_without_an_error(text: str) -> None:
    parse_query(text)  # a name that cannot be taken apart is looked up as written
