"""One structured `tool_call` log event per call of the real `xcindex serve`, readable with
nothing but a JSON parser: what docs/troubleshooting.md tells people to look for."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from tests.conftest import CANARY

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

XCINDEX = Path(sys.executable).parent / "xcindex"


def events(log_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines() if line.strip()]


async def test_every_tool_call_is_one_json_event_with_what_debugging_needs(
    canary_store: Path, tmp_path: Path, anyio_backend: str
) -> None:
    log_file = tmp_path / "xcindex.log"
    parameters = StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", "--backend", anyio_backend, "--log-level", "info", "--log-file", str(log_file)],
        env={
            "XCINDEX_CACHE_DIR": os.environ["XCINDEX_CACHE_DIR"],
            "PATH": os.environ["PATH"],
            "CLAUDE_PROJECT_DIR": os.environ["CLAUDE_PROJECT_DIR"],
        },
    )
    where = {"projectPath": str(CANARY)}
    async with Client(parameters, read_timeout_seconds=300) as client:
        found = await client.call_tool("find_symbol", {"symbolName": "UserService", **where})
        assert not found.is_error
        await client.call_tool("find_references", {"symbolName": "UserService", "usr": "both", **where})
        await client.call_tool("blast_radius", {"filePath": "/nowhere/File.swift", **where})
        await client.call_tool("status", {"projectPath": "x" * 300})

    calls = [event for event in events(log_file) if event["event"] == "tool_call"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [
        ("find_symbol", "ok"),
        ("find_references", "invalid"),
        ("blast_radius", "error"),
        ("status", "error"),
    ]
    ok = calls[0]
    assert ok["args"] == {"symbolName": "UserService", "projectPath": str(CANARY)}
    assert ok["duration_ms"] > 0
    # The size of what the client received: text plus structured content, a token per 4 characters.
    [content] = found.content
    assert isinstance(content, TextContent)
    received = len(content.text) + len(json.dumps(found.structured_content, ensure_ascii=False))
    assert (ok["result_chars"], ok["result_tokens"]) == (received, received // 4)
    assert ok["completeness"] == "complete"
    assert ok["warning_codes"] == []
    assert ok["truncated"] is False
    assert ok["level"] == "info"
    assert ok["logger"] == "xcindex.server"
    assert ok["timestamp"].endswith("Z")
    assert "error" not in ok
    assert "give exactly one of 'symbolName' or 'usr'" in calls[1]["error"]
    assert "is not a source file of this index" in calls[2]["error"]
    assert calls[3]["args"]["projectPath"] == "x" * 200 + "…"
    assert all(c["result_tokens"] < 1000 for c in calls[1:])
