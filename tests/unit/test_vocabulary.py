"""Every documented code is produced by a real path, or the docs say it is reserved and why."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

import pytest

from xcindex import vocabulary as warnings

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "xcindex"
VOCABULARIES: list[type[StrEnum]] = [
    warnings.WarningCode,
    warnings.Completeness,
    warnings.RefusalReason,
    warnings.Tier,
    warnings.RangeReason,
    warnings.ProjectKind,
    warnings.MatchedBy,
]


def code_outside_the_vocabulary() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py") if p.name != "vocabulary.py")


@pytest.mark.parametrize("vocabulary", VOCABULARIES, ids=lambda v: v.__name__)
def test_every_code_is_used_or_documented_as_reserved(vocabulary: type[StrEnum]) -> None:
    code = code_outside_the_vocabulary()
    reserved = (REPO / "docs" / "tools.md").read_text(encoding="utf-8").split("## Reserved codes", 1)[1]
    reserved = reserved.split("\n## ", 1)[0]
    for member in vocabulary:
        # Qualified: a bare member name also matches another vocabulary's member of that name.
        used = re.search(rf"\b{vocabulary.__name__}\.{member.name}\b", code)
        assert (
            used
            or f"`{member.value}`" in reserved
            or f" `{member.value}` " in reserved
            or (f"{member.value}`" in reserved)
        ), f"{vocabulary.__name__}.{member.name} is neither produced nor documented as reserved"


def test_the_reserved_codes_are_really_unused() -> None:
    code = code_outside_the_vocabulary()
    for member in (warnings.Completeness.NO_INDEX, warnings.RangeReason.OBJC_BRIDGE):
        assert not re.search(rf"\b{type(member).__name__}\.{member.name}\b", code), (
            f"{member} is produced: take it out of the reserved list"
        )


def test_every_warning_code_is_in_the_documented_vocabulary() -> None:
    """docs/tools.md names each warning code an answer can carry (the contract's by their
    documented families, `sourcekit_lsp_*`): a code added to xcindex.vocabulary without its
    row in "Warning codes" fails here."""
    docs = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    families = re.findall(r"`([a-z_]+_)\*`", docs)
    missing = [
        code.value
        for code in warnings.WarningCode
        if f"`{code.value}`" not in docs and not code.value.startswith(tuple(families))
    ]
    assert not missing, f"warning codes missing from docs/tools.md: {missing}"
