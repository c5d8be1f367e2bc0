"""The hooks' JSON (without the `json` package) reads and writes what `json` does."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xcindex.hooks import output as hook_json
from xcindex.hooks.events import hook_output

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(value=JSON_VALUES, pad=st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_loads_reads_what_json_writes(value: object, pad: str) -> None:
    text = pad + json.dumps(value, ensure_ascii=False) + pad
    assert hook_json.loads(text) == json.loads(text)
    assert hook_json.loads(text.encode("utf-8")) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "{", '{"a": 1', '{"a": 1} x', "[1,]", "{'a': 1}", "nul", '"\\ud800', "1 2", b"\xff\xfe{}"],
)
def test_loads_refuses_what_json_refuses(text: str | bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 (json's own error: the message varies)
        json.loads(text)
    with pytest.raises(ValueError):  # noqa: PT011
        hook_json.loads(text)


@given(text=st.text())
def test_quote_is_json_dumps(text: str) -> None:
    assert hook_json.quote(text) == json.dumps(text, ensure_ascii=False)


@given(event=st.sampled_from(["SessionStart", "PostToolUse"]), context=st.text())
def test_hook_output_is_the_contract_json(event: str, context: str) -> None:
    assert json.loads(hook_output(event, context)) == {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": context}
    }
