"""What the quick paths import: `xcindex --version` and `--help` nothing heavy, a tool's
`--help` that tool alone, and a server's first answer only the tool it is.

Read from the interpreter's own record (`-X importtime`), not from xcindex: a module added to
one of these paths by a top-level import shows here. The hooks' diet is held by
tests/integration/test_hooks_cli.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from tests.conftest import CANARY
from tests.line_client import LineClient

HEAVY = frozenset({"anyio", "trio", "mcp", "cffi", "structlog", "lsprotocol", "pydantic", "pydantic_core"})
OTHER_TOOLS = (
    "xcindex.tools.references",
    "xcindex.tools.conformances",
    "xcindex.tools.graph",
    "xcindex.tools.rename",
    "xcindex.engine.runs",
    "xcindex.engine.reads",
)
"""Modules of the tools a find_symbol answer is not (and of the runs of the others)."""


def modules_in(importtime: str) -> set[str]:
    return {
        line.split("|")[-1].strip() for line in importtime.splitlines() if line.startswith("import time:")
    }


def imported(arguments: Sequence[str]) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "xcindex", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout, "the command printed its answer"
    return modules_in(result.stderr)


def top_level(modules: Iterable[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def under(modules: Iterable[str], prefixes: Sequence[str]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


@pytest.mark.parametrize("arguments", [["--version"], ["--help"]])
def test_version_and_help_import_nothing_heavy_and_no_tool(arguments: list[str]) -> None:
    modules = imported(arguments)
    assert top_level(modules) & HEAVY == set()
    assert under(modules, ("xcindex.tools",)) <= {"xcindex.tools", "xcindex.tools.limits"}
    assert under(modules, ("xcindex.engine.api", "xcindex.engine.core", "xcindex.actors")) == set()


def test_a_tools_help_loads_that_tool_alone() -> None:
    modules = imported(["symbol", "--help"])
    assert "xcindex.tools.find_symbol" in modules
    assert under(modules, OTHER_TOOLS) == set()
    assert top_level(modules) & {"anyio", "trio", "mcp", "cffi", "structlog", "lsprotocol"} == set()


@pytest.mark.toolchain
def test_a_servers_first_answer_loads_only_the_tool_asked(canary_store: Path) -> None:
    client = LineClient(
        [sys.executable, "-X", "importtime", "-m", "xcindex", "serve", "--log-level", "warning"],
        env=os.environ,
    )
    try:
        client.initialize()
        listed = client.request(1, "tools/list")["result"]["tools"]
        answer = client.request(
            2,
            "tools/call",
            {"name": "find_symbol", "arguments": {"symbolName": "UserService", "projectPath": str(CANARY)}},
            within_s=120,
        )
        assert answer["result"]["isError"] is False, answer
        assert answer["result"]["structuredContent"]["results"], answer
        assert client.close() == 0
    finally:
        client.kill()
    # Every tool is listed, and none was loaded for it; the answer loaded its own.
    assert len(listed) == 12
    modules = modules_in(client.stderr)
    assert "xcindex.tools.find_symbol" in modules
    assert under(modules, OTHER_TOOLS) == set()
    assert top_level(modules) & {"mcp", "structlog", "lsprotocol", "trio"} == set()
