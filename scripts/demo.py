"""The main job: real questions to the real `xcindex serve`, over stdio, as an agent asks them.

Run through `scripts/demo` (which builds the fixture's index first). Prints each call and
the text the agent would read, then the structured content the client also receives.
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
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False)[:3000])


async def main() -> None:
    server = StdioServerParameters(command=str(ROOT / ".venv" / "bin" / "xcindex"), args=["serve"])
    project = str(CANARY)
    async with Client(server) as client:
        tools = await client.list_tools()
        print("Tools offered to the agent:", ", ".join(tool.name for tool in tools.tools))
        questions: list[tuple[str, str, dict[str, Any]]] = [
            ("Where is UserService defined?", "find_symbol", {"symbolName": "UserService"}),
            ("Which fetchUser is it?", "find_symbol", {"symbolName": "fetchUser"}),
            ("Exact method lookup", "find_symbol", {"symbolName": "UserService.fetchUser(id:)"}),
            ("A mistake an agent makes", "find_symbol", {"symbolName": 42}),
            ("No location given", "find_symbol", {"symbolName": "UserService", "projectPath": None}),
        ]
        for title, tool, arguments in questions:
            if "projectPath" not in arguments:
                arguments = {**arguments, "projectPath": project}
            else:
                arguments = {k: v for k, v in arguments.items() if v is not None}
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            show(f"{title}: {tool}({json.dumps(arguments)})", result, (time.perf_counter() - started) * 1000)


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
