"""The real `xcindex serve`, spoken to over stdio by the MCP SDK's own client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import CANARY, load_expected
from xcindex.engine.registry import TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

XCINDEX = Path(sys.executable).parent / "xcindex"
DOCUMENTED_SYMBOL_KEYS = {
    *("usr", "name", "kind", "language", "definitionPath", "definitionLine"),
    *("container", "module", "signature", "matchedBy"),
}
DOCUMENTED_OCCURRENCE_KEYS = {"usr", "symbolName", "path", "line", "column", "roles"}
CONTRACT_TOOLS = {
    "find_symbol",
    "find_references",
    "find_definition",
    "find_overrides",
    "find_conformances",
    "blast_radius",
    "status",
    "plan_rename",
}
"""The tools the contract (shared/spec/xcindex-tools.txt) names; the server offers these and more."""


def server_parameters(*extra_args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", *extra_args],
        env={
            "XCINDEX_CACHE_DIR": os.environ["XCINDEX_CACHE_DIR"],
            "PATH": os.environ["PATH"],
            # The test session's own ledger (conftest), never the developer's.
            "CLAUDE_PROJECT_DIR": os.environ["CLAUDE_PROJECT_DIR"],
            **(env or {}),
        },
    )


@pytest.fixture
async def client(canary_store: Path) -> AsyncIterator[Client]:
    async with Client(server_parameters(), read_timeout_seconds=300) as connected:
        yield connected


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, {"projectPath": str(CANARY), **arguments})


async def test_tools_list_and_find_symbol_in_the_documented_shape(client: Client) -> None:
    tools = await client.list_tools()
    listed = {tool.name for tool in tools.tools}
    assert listed == {tool.name for tool in TOOLS}, "the server lists exactly the registry's tools"
    assert listed >= CONTRACT_TOOLS
    for tool in tools.tools:
        assert tool.description
        assert "projectPath" in tool.description

    result = await call(client, "find_symbol", symbolName="UserService")
    assert not result.is_error
    [symbol] = result.structured_content["results"]
    assert set(symbol) == DOCUMENTED_SYMBOL_KEYS
    assert symbol["kind"] == "class"
    assert symbol["language"] == "swift"
    assert symbol["definitionPath"] == str((CANARY / "Sources/CanaryCore/UserService.swift").resolve())
    assert symbol["usr"] in text_of(result)

    result = await call(client, "find_symbol", symbolName="fetchUser(id:)")
    [method] = result.structured_content["results"]
    expected = next(e for e in load_expected("symbols.json") if e["key"] == "UserService.fetchUser(id:)")
    assert (method["name"], method["kind"], method["definitionLine"]) == (
        "fetchUser(id:)",
        "instanceMethod",
        expected["definitionLine"],
    )
    assert result.structured_content["completeness"] == "complete"


async def test_every_tool_answers_end_to_end(client: Client) -> None:
    found = await call(client, "find_symbol", symbolName="AppDelegate.setUp()")
    usr = found.structured_content["results"][0]["usr"]
    refs = await call(client, "find_references", usr=usr)
    assert not refs.is_error
    assert all(set(r) == DOCUMENTED_OCCURRENCE_KEYS for r in refs.structured_content["results"])
    assert len(refs.structured_content["results"]) == len(
        load_expected("references.json")["AppDelegate.setUp()"]
    )
    definition = await call(client, "find_definition", usr=usr)
    site = definition.structured_content["result"]
    expected_site = next(e for e in load_expected("symbols.json") if e["key"] == "AppDelegate.setUp()")
    assert (site["usr"], site["path"], site["line"], site["column"]) == (
        usr,
        str(CANARY / expected_site["definitionPath"]),
        expected_site["definitionLine"],
        expected_site["definitionColumn"],
    )
    overrides = await call(client, "find_overrides", usr=usr)
    assert len(overrides.structured_content["results"]) == len(
        load_expected("overrides.json")["AppDelegate.setUp()"]
    )

    protocol = await call(client, "find_symbol", symbolName="Auditable")
    conformances = await call(
        client, "find_conformances", usr=protocol.structured_content["results"][0]["usr"]
    )
    assert {c["conformingType"] for c in conformances.structured_content["results"]} == {
        c["type"] for c in load_expected("conformances.json")["Auditable"]
    }

    radius = await call(client, "blast_radius", filePath=str(CANARY / "Sources/CanaryCore/Greeter.swift"))
    assert not radius.is_error
    assert set(radius.structured_content) >= {"affectedFiles", "directDependents", "coveringTests"}
    assert "swift test --filter" in text_of(radius)

    status = await call(client, "status")
    assert status.structured_content["staleFileCount"] == 0
    assert status.structured_content["summary"].startswith("Index store found at")


async def test_plan_rename_answers_a_fenced_sorted_json_plan_equal_to_its_structured_content(
    client: Client,
) -> None:
    found = await call(client, "find_symbol", symbolName="UserService.fetchUser(id:)")
    usr = found.structured_content["results"][0]["usr"]
    result = await call(client, "plan_rename", usr=usr, newName="loadUser", maxRanges=2)
    assert not result.is_error
    text = text_of(result)
    assert text.startswith("```json\n")
    assert text.endswith("\n```")
    body = text.removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(body) == result.structured_content
    assert body == json.dumps(result.structured_content, indent=2, sort_keys=True, ensure_ascii=False)
    plan = result.structured_content
    expected_count = len(load_expected("rename.json")["UserService.fetchUser(id:)"]["ranges"])
    assert plan["oldName"] == "fetchUser(id:)"
    assert len(plan["ranges"]) == 2
    assert plan["truncated"] is True
    assert sum(plan["summary"].values()) == expected_count
    assert plan["refusal"] is None

    keyword = await call(client, "plan_rename", usr=usr, newName="class")
    assert not keyword.is_error
    assert keyword.structured_content["refusal"]["reason"] == "invalid_identifier"
    too_many = await call(client, "plan_rename", usr=usr, newName="x", maxRanges=5001)
    assert too_many.is_error
    assert "'maxRanges'" in text_of(too_many)


async def test_bad_arguments_get_a_clear_error_and_the_server_keeps_answering(client: Client) -> None:
    wrong_type = await call(client, "find_symbol", symbolName=42)
    assert wrong_type.is_error
    assert (
        text_of(wrong_type)
        == "Error: invalid arguments for find_symbol: 'symbolName': Input should be a valid string."
    )

    missing = await client.call_tool("find_symbol", {"symbolName": "UserService"})
    assert missing.is_error
    assert text_of(missing) == "Error: Either 'projectPath' or 'indexStorePath' must be provided."

    extra = await call(client, "find_symbol", symbolName="UserService", symbol_name="typo")
    assert "'symbol_name' is not an argument of find_symbol" in text_of(extra)

    relative = await client.call_tool(
        "find_symbol", {"symbolName": "X", "projectPath": "fixtures/SwiftCanary"}
    )
    assert text_of(relative).startswith("Error: 'projectPath' must be an absolute path")

    unknown = await client.call_tool("no_such_tool", {})
    assert unknown.is_error

    for result in (wrong_type, missing, extra, relative, unknown):
        assert "Traceback" not in text_of(result)
    again = await call(client, "find_symbol", symbolName="UserService")
    assert not again.is_error


async def test_a_package_without_an_index_says_how_to_build_one(tmp_path: Path) -> None:
    (tmp_path / "Package.swift").write_text("// swift-tools-version:5.9\n", encoding="utf-8")
    async with Client(server_parameters(), read_timeout_seconds=60) as client:
        result = await client.call_tool("status", {"projectPath": str(tmp_path)})
    assert result.is_error
    assert text_of(result) == (
        f"Error: No index store for the Swift package at '{tmp_path}' (looked for "
        ".build/<triple>/debug/index/store). Build it first: swift build --build-tests "
        f"--package-path '{tmp_path}'"
    )


async def test_the_trio_backend_serves_the_same_answer(canary_store: Path) -> None:
    async with Client(server_parameters("--backend", "trio"), read_timeout_seconds=300) as client:
        result = await call(client, "find_symbol", symbolName="UserService")
    assert result.structured_content["results"][0]["name"] == "UserService"


async def test_a_first_ingestion_reports_progress_and_status_does_not_wait(
    canary_store: Path, tmp_path: Path
) -> None:
    notifications: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notifications.append((progress, total))

    params = server_parameters(env={"XCINDEX_CACHE_DIR": str(tmp_path / "cold-cache")})
    async with Client(params, read_timeout_seconds=300) as client:
        result = await client.call_tool(
            "find_symbol",
            {"symbolName": "UserService", "indexStorePath": str(canary_store)},
            progress_callback=on_progress,
        )
        assert result.structured_content["results"]
        status = await call(client, "status")
        assert status.structured_content["completeness"] == "complete"
    # The store was cold in this cache: the call waited for the ingestion and heard about it.
    assert notifications
    assert all(total is None or progress <= total for progress, total in notifications)
