"""The response budget: how much of an answer an agent's context receives.

A client shows the model either the text rendering or the structured content (Claude Code
forwards the structured content when there is one; others forward the text), and some may
show both. So the MCP server renders every answer such that the two *together* stay under
about 20k tokens, estimated as characters / 4 (no tokenizer: the estimate is deliberately
simple, and the margin below covers its error for paths and identifiers). Lists that would
overflow are cut, the answer says so (`truncated`, counts) and the text says how to get
the rest. The embedding API and the CLI render without a budget: they get everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

CHARS_PER_TOKEN = 4
RESPONSE_BUDGET_TOKENS = 20_000
RESPONSE_BUDGET_CHARS = RESPONSE_BUDGET_TOKENS * CHARS_PER_TOKEN
"""Text rendering + structured JSON of one tool result, together."""
LISTS_BUDGET_CHARS = 64_000
"""What an answer's lists may take (in both renderings); the rest of the budget is left to
counts, headers, notes and the verdict (whose own lists are capped at VERDICT_LISTED)."""
VERDICT_LISTED = 20
"""Stale and session-edited files listed in an answer's verdict under a budget."""


def json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def item_cost(item_json: Any) -> int:
    """What one list item costs in both renderings: its JSON, and a text line that is never
    longer than its JSON (paths, names and positions, without the keys)."""
    return 2 * json_size(item_json) + 2


def fitting(items: Sequence[T], cost: Callable[[T], int], budget: int | None) -> int:
    """How many leading `items` fit in `budget` characters (all of them when None)."""
    if budget is None:
        return len(items)
    spent = 0
    for count, item in enumerate(items):
        spent += cost(item)
        if spent > budget:
            return count
    return len(items)


def estimated_tokens(text: str, structured: Any) -> int:
    return (len(text) + json_size(structured)) // CHARS_PER_TOKEN
