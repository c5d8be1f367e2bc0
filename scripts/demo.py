"""The main job: real questions to the real `xcindex serve`, over stdio, as an agent asks them.

Run through `scripts/demo` (which builds the fixture's index first). Prints each call and
the text the agent would read, then the structured content the client also receives; the
last two calls are deliberate mistakes, to show the errors an agent gets. It ends with one
line saying whether every answer was the one expected (exit 1 if not).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
CANARY = ROOT / "fixtures" / "SwiftCanary"


def show(title: str, result: Any, elapsed_ms: float) -> None:
    print(f"\n=== {title}  ({elapsed_ms:.1f} ms)")
    for block in result.content:
        print(block.text)
    if result.structured_content is not None:
        print("--- structuredContent:")
        rendered = json.dumps(result.structured_content, indent=2, ensure_ascii=False)
        print(
            rendered
            if len(rendered) < 1200
            else rendered[:1200] + "\n  … (cut here; the client receives all of it)"
        )


ASKED: list[tuple[str, bool]] = []
"""(tool, whether the answer was what the demo expects: an answer, or the deliberate error)."""


async def ask(
    client: Client, title: str, tool: str, arguments: dict[str, Any], *, mistake: bool = False
) -> Any:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    show(f"{title}: {tool}({json.dumps(arguments)})", result, (time.perf_counter() - started) * 1000)
    ASKED.append((tool, result.is_error is mistake))
    return result


async def main() -> None:
    server = StdioServerParameters(
        command=str(ROOT / ".venv" / "bin" / "xcindex"), args=["serve", "--log-level", "warning"]
    )
    where = {"projectPath": str(CANARY)}
    async with Client(server, read_timeout_seconds=600) as client:
        tools = await client.list_tools()
        print("Tools offered to the agent:", ", ".join(tool.name for tool in tools.tools))
        await ask(client, "Is the index fresh?", "status", where)
        await ask(
            client, "Where is UserService defined?", "find_symbol", {"symbolName": "UserService", **where}
        )
        found = await ask(client, "Which fetchUser?", "find_symbol", {"symbolName": "fetchUser", **where})
        usr = found.structured_content["results"][0]["usr"]
        await ask(client, "Who calls it? (USR-first)", "find_references", {"usr": usr, **where})
        setup = await ask(
            client, "AppDelegate.setUp", "find_symbol", {"symbolName": "AppDelegate.setUp()", **where}
        )
        await ask(
            client,
            "Who overrides it?",
            "find_overrides",
            {"usr": setup.structured_content["results"][0]["usr"], **where},
        )
        marker = await ask(client, "The marker protocol", "find_symbol", {"symbolName": "Auditable", **where})
        await ask(
            client,
            "Who conforms to it?",
            "find_conformances",
            {"usr": marker.structured_content["results"][0]["usr"], **where},
        )
        await ask(
            client,
            "What does editing UserService.swift reach?",
            "blast_radius",
            {"filePath": str(CANARY / "Sources/CanaryCore/UserService.swift"), **where},
        )
        await ask(
            client,
            "Who calls fetchUser, two levels up?",
            "call_hierarchy",
            {"usr": usr, "direction": "incoming", "depth": 2, **where},
        )
        await ask(
            client,
            "What is AppDelegate's family?",
            "type_hierarchy",
            {"symbolName": "AppDelegate", "direction": "subtypes", "depth": 3, **where},
        )
        await ask(client, "What does the working tree's diff reach?", "change_impact", where)
        await ask(
            client,
            "Rename AppDelegate.setUp() to configure(): the plan, checked with sourcekit-lsp "
            "(the first call waits for sourcekit-lsp's own index, ~10 s cold)",
            "plan_rename",
            {"usr": setup.structured_content["results"][0]["usr"], "newName": "configure", **where},
        )
        await ask(client, "The index and sourcekit-lsp now", "status", where)
        print("\n--- Two deliberate mistakes, to show what an agent is told (errors expected here):")
        await ask(client, "A wrong argument type", "find_symbol", {"symbolName": 42, **where}, mistake=True)
        await ask(client, "No location given", "find_symbol", {"symbolName": "UserService"}, mistake=True)


def closing_line() -> tuple[str, int]:
    wrong = [tool for tool, expected in ASKED if not expected]
    if wrong:
        return f"\nDemo FAILED: {len(wrong)} of {len(ASKED)} calls did not answer as expected: {wrong}.", 1
    return (
        f"\nDemo done: {len(ASKED)} calls to the real `xcindex serve` answered as expected (the last two "
        "were the deliberate mistakes). Next: `.venv/bin/xcindex refs UserService --project "
        "fixtures/SwiftCanary` from a terminal, or the Claude Code plugin (README)."
    ), 0


if __name__ == "__main__":
    anyio.run(main)
    line, code = closing_line()
    print(line)
    sys.exit(code)
