"""What the tools cost an agent's context: the catalogue it reads at every session start,
and the answers, which stay within the response budget.

Tokens are estimated as characters / 4 (no tokenizer is installed, and none is needed for a
bound with this much margin); docs/tools.md states the measured figure and this test keeps
it true.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import TextContent

from tests.conftest import CANARY, REPO
from tests.scoring import measured
from xcindex.engine import Engine, EngineConfig
from xcindex.engine.registry import TOOLS
from xcindex.server.sdk import INSTRUCTIONS, StatusFeed, build_server
from xcindex.tools.budget import CHARS_PER_TOKEN, RESPONSE_BUDGET_TOKENS, estimated_tokens

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

CATALOGUE_BUDGET_TOKENS_PER_TOOL = 250
"""On average per tool (2,000 for the first nine, before every parameter carried its description):
what the model reads of tools/list at every session start: names, descriptions, input schemas.
(Clients give the model those three; `outputSchema`, titles and annotations are for the client.)"""

MODEL_READS = ("name", "description", "inputSchema")


async def catalogue() -> list[dict[str, Any]]:
    async with Engine(EngineConfig(reconcile=False)) as engine, anyio.create_task_group() as tg:
        async with Client(build_server(engine, StatusFeed(engine, tg))) as client:
            listed = await client.list_tools()
        tg.cancel_scope.cancel()
    tools: list[dict[str, Any]] = listed.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]
    return tools


async def test_the_tool_catalogue_stays_small_and_the_docs_say_how_small() -> None:
    tools = await catalogue()
    text = json.dumps([{key: tool[key] for key in MODEL_READS} for tool in tools], ensure_ascii=False)
    tokens = len(text) // CHARS_PER_TOKEN
    measured(
        "tool catalogue (tools/list, chars/4)", f"{tokens} tokens ({len(text)} chars, {len(tools)} tools)"
    )
    assert tokens <= CATALOGUE_BUDGET_TOKENS_PER_TOOL * len(tools)
    assert len(tools) == len(TOOLS)
    for tool in tools:
        # Every description says which location to give; optional arguments are plain types.
        assert "projectPath" in tool["description"], tool["name"]
        assert "anyOf" not in json.dumps(tool["inputSchema"]), tool["name"]
        # Every parameter says what it is; the client gets the answer's shape and a title.
        for name, prop in tool["inputSchema"]["properties"].items():
            assert prop.get("description"), (tool["name"], name)
        assert tool["outputSchema"]["type"] == "object", tool["name"]
        assert tool["title"], tool["name"]
        assert tool["annotations"]["idempotentHint"] is True, tool["name"]
    by_name = {tool["name"]: tool for tool in tools}
    assert by_name["find_symbol"]["description"].startswith("Start here")
    assert "usr" in by_name["find_references"]["description"]

    documented = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    stated = re.search(r"The catalogue .*? is about ([\d,]+) tokens", documented, re.S)
    assert stated, "docs/tools.md must state the catalogue's size"
    figure = int(stated.group(1).replace(",", ""))
    assert abs(figure - tokens) <= 0.1 * tokens, f"docs say {figure} tokens, measured {tokens}"
    assert len(INSTRUCTIONS) // CHARS_PER_TOKEN < 200


async def test_every_answer_on_the_fixture_is_far_within_the_response_budget(canary_store: Path) -> None:
    where = {"projectPath": str(CANARY)}
    async with Engine(EngineConfig(reconcile=False)) as engine, anyio.create_task_group() as tg:
        async with Client(build_server(engine, StatusFeed(engine, tg))) as client:
            found = await client.call_tool("find_symbol", {"symbolName": "UserService", **where})
            usr = found.structured_content["results"][0]["usr"]
            calls: list[tuple[str, dict[str, Any]]] = [
                ("find_symbol", {"symbolName": "init"}),
                ("find_references", {"usr": usr, "maxResults": 500}),
                ("find_definition", {"usr": usr}),
                ("find_overrides", {"usr": usr}),
                ("find_conformances", {"usr": usr}),
                ("blast_radius", {"filePath": str(CANARY / "Sources/CanaryCore/UserService.swift")}),
                ("status", {}),
                ("wait_for_fresh", {"files": [str(CANARY / "Sources/CanaryCore/UserService.swift")]}),
            ]
            for tool, arguments in calls:
                result = await client.call_tool(tool, {**arguments, **where})
                assert not result.is_error, (tool, result.content)
                text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
                tokens = estimated_tokens(text, result.structured_content)
                assert tokens < RESPONSE_BUDGET_TOKENS // 4, tool
                if tool == "find_symbol":
                    # A common name is paged (25 candidates, best first): the rest is an offset away.
                    assert result.structured_content["truncated"] is (
                        "nextOffset" in result.structured_content
                    )
                else:
                    assert result.structured_content.get("truncated") in (None, False), tool
        tg.cancel_scope.cancel()
