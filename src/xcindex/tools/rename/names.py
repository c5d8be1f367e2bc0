"""The names plan_rename takes and gives: a valid new name, and a symbol's base name."""

from __future__ import annotations

import os
import unicodedata

from xcindex.tools.rename.answer import Refusal
from xcindex.vocabulary import RefusalReason

DISABLE_ENV = "XCINDEX_DISABLE_PLAN_RENAME"

SWIFT_KEYWORDS = frozenset(
    [
        "associatedtype",
        "class",
        "deinit",
        "enum",
        "extension",
        "fileprivate",
        "func",
        "import",
        "init",
        "inout",
        "internal",
        "let",
        "open",
        "operator",
        "private",
        "precedencegroup",
        "protocol",
        "public",
        "rethrows",
        "static",
        "struct",
        "subscript",
        "typealias",
        "var",
        "break",
        "case",
        "catch",
        "continue",
        "default",
        "defer",
        "do",
        "else",
        "fallthrough",
        "for",
        "guard",
        "if",
        "in",
        "repeat",
        "return",
        "switch",
        "throw",
        "throws",
        "try",
        "while",
        "Any",
        "as",
        "await",
        "false",
        "is",
        "nil",
        "self",
        "Self",
        "super",
        "true",
    ]
)


def is_identifier(text: str) -> bool:
    if not text:
        return False
    first = text[0]
    if not (first == "_" or unicodedata.category(first).startswith("L")):
        return False
    return all(
        c == "_" or unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Mn" for c in text[1:]
    )


def validate_new_name(new_name: str) -> Refusal | None:
    """A plain identifier that is not a keyword, or a backquoted identifier (which may be a
    keyword: `` `default` `` is how Swift spells that name)."""
    remediation = (
        "Pass a Swift identifier: a letter or _ followed by letters, digits or _ (backquote a keyword)."
    )
    if not new_name:
        return Refusal(RefusalReason.INVALID_IDENTIFIER, "newName is empty.", remediation)
    if new_name.startswith("`") or new_name.endswith("`"):
        inner = new_name[1:-1] if len(new_name) >= 2 and new_name[0] == new_name[-1] == "`" else ""
        if is_identifier(inner):
            return None
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' is not a well-formed backquoted identifier.",
            remediation,
        )
    if new_name in SWIFT_KEYWORDS:
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' is a Swift keyword.",
            f"Choose another name, or backquote it (`{new_name}`) if you really mean the keyword.",
        )
    if not is_identifier(new_name):
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' contains characters that are not allowed in an identifier.",
            remediation,
        )
    return None


def early_refusal(new_name: str) -> Refusal | None:
    """What refuses a plan before the index is opened: the kill switch, then the name."""
    if os.environ.get(DISABLE_ENV) == "1":
        return Refusal(
            RefusalReason.DISABLED_BY_ENV,
            f"plan_rename is disabled by {DISABLE_ENV}=1.",
            f"Unset {DISABLE_ENV} to allow rename plans.",
        )
    return validate_new_name(new_name)


def base_name(name: str) -> str:
    """`fetchUser(id:)` → `fetchUser`; `UserService` → `UserService`."""
    return name.split("(", 1)[0]
