"""JSON for the hooks, without importing the `json` package.

A hook runs on every edit and search an agent makes, and `json` imports `re` (and `re`
imports `enum`): a quarter of a hook's run. CPython's own accelerator `_json` parses and
quotes the same way `json` does (it is what `json.loads` and `json.dumps` call); where an
interpreter lacks it, the `json` package is used.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"


class _Context:
    """What `_json.make_scanner` reads from a `json.JSONDecoder` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}  # noqa: RUF012 (the scanner's own cache, as JSONDecoder has)

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def _accelerator() -> Any:
    try:
        return importlib.import_module("_json")
    except ImportError:
        return None


_C = _accelerator()


def loads(raw: bytes | str) -> object:
    """`json.loads`: the same values, the same ValueError (or RecursionError) when the text
    is not one JSON value."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if _C is not None:
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _C.make_scanner(_Context())(text, start)
        except Exception:  # not JSON: `json` itself says why, below
            pass
        else:
            if not text[end:].strip(_WHITESPACE):
                return value
    import json  # the rare path: input that is not one JSON value

    return json.loads(text)


def quote(text: str) -> str:
    """A JSON string literal for `text` (`json.dumps(text, ensure_ascii=False)`)."""
    if _C is None:
        import json

        return json.dumps(text, ensure_ascii=False)
    return str(_C.encode_basestring(text))
