"""The registry is the one declaration of each tool: the server, the CLI, the Engine and the
docs follow it, and every real answer fits the outputSchema it declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client

from tests.conftest import CANARY, REPO
from xcindex.engine import Engine, EngineConfig
from xcindex.engine.registry import TOOLS, parameters_markdown
from xcindex.server.sdk import StatusFeed, build_server

XCINDEX = Path(sys.executable).parent / "xcindex"


def test_names_and_commands_are_unique_and_each_tool_is_an_engine_method_and_a_cli_command() -> None:
    assert len({tool.name for tool in TOOLS}) == len(TOOLS)
    assert len({tool.cli.command for tool in TOOLS}) == len(TOOLS)
    for tool in TOOLS:
        assert callable(getattr(Engine, tool.name)), tool.name
        shown = subprocess.run(
            [str(XCINDEX), tool.cli.command, "--help"], capture_output=True, text=True, check=False
        )
        assert shown.returncode == 0, (tool.cli.command, shown.stderr)
        # A default from a factory printed pydantic's marker: "(default PydanticUndefined)".
        assert "Undefined" not in shown.stdout, (tool.cli.command, shown.stdout)
        for name in tool.args.model_fields:
            if name not in ("project_path", "index_store_path", tool.cli.symbol_field):
                # Positionals show their metavar; options their flag.
                if name in tool.cli.positionals:
                    assert name.upper().split("_")[0] in shown.stdout, (tool.cli.command, name)
                else:
                    assert "--" + name.replace("_", "-") in shown.stdout, (tool.cli.command, name)


def test_the_docs_parameter_tables_are_the_registrys() -> None:
    documented = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    begin, end = "<!-- parameters:begin -->\n", "<!-- parameters:end -->"
    section = documented[documented.index(begin) + len(begin) : documented.index(end)]
    assert section == parameters_markdown(), (
        "run `python -m xcindex.engine.registry` and paste it into docs/tools.md"
    )


def test_the_package_exports_every_tools_argument_model() -> None:
    import xcindex

    for tool in TOOLS:
        assert getattr(xcindex, tool.args.__name__) is tool.args


@pytest.mark.toolchain
@pytest.mark.anyio
async def test_every_answer_fits_its_tools_output_schema(canary_store: Path) -> None:
    where = {"projectPath": str(CANARY)}
    greeter = str(CANARY / "Sources/CanaryCore/Greeter.swift")
    async with Engine(EngineConfig(reconcile=False)) as engine, anyio.create_task_group() as tg:
        async with Client(build_server(engine, StatusFeed(engine, tg))) as client:
            listed = await client.list_tools()
            schemas = {tool.name: tool.output_schema for tool in listed.tools}
            found = await client.call_tool("find_symbol", {"symbolName": "UserService", **where})
            usr = found.structured_content["results"][0]["usr"]
            calls: list[tuple[str, dict[str, Any]]] = [
                ("find_symbol", {"symbolName": "UserService"}),
                ("find_symbol", {"symbolName": "NoSuchThingAnywhere"}),
                ("find_references", {"usr": usr}),
                ("find_references", {"symbolName": "fetchUser", "maxResults": 1}),
                ("find_definition", {"usr": usr}),
                ("find_definition", {"usr": "s:NoSuchSymbol"}),
                ("find_overrides", {"usr": usr}),
                ("find_conformances", {"usr": usr}),
                ("blast_radius", {"filePath": greeter}),
                ("call_hierarchy", {"symbolName": "factorial(_:)", "depth": 2}),
                ("call_hierarchy", {"usr": usr, "direction": "outgoing"}),
                ("type_hierarchy", {"symbolName": "Square", "depth": 3}),
                ("type_hierarchy", {"usr": "s:NoSuchSymbol", "direction": "subtypes"}),
                ("change_impact", {}),
                ("change_impact", {"base": "HEAD", "files": [greeter]}),
                ("status", {}),
                ("wait_for_fresh", {"files": [greeter, "/nonexistent/X.swift"], "timeoutSeconds": 0}),
                ("plan_rename", {"usr": usr, "newName": "AccountService"}),
                ("plan_rename", {"usr": usr, "newName": "class"}),
                ("plan_rename", {"usr": "s:NoSuchSymbol", "newName": "Fine"}),
            ]
            seen: set[str] = set()
            for name, arguments in calls:
                result = await client.call_tool(name, {**arguments, **where})
                assert not result.is_error, (name, result.content)
                schema = schemas[name]
                assert schema is not None, name
                jsonschema.validate(result.structured_content, schema)
                seen.add(name)
        tg.cancel_scope.cancel()
    assert seen == {tool.name for tool in TOOLS}, "every registered tool is exercised here"
