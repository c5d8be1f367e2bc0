from __future__ import annotations

import pytest

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
