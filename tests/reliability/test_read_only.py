"""Read-only: asking never writes the project, and no caller's string reaches a shell.

- Every tool (plan_rename with sourcekit-lsp included) answers for the fixture, and the
  fixture's tree (sources and `.build`, the index store itself) is byte-for-byte and
  mtime-for-mtime what it was. The server's own writes go to its cache folder (the
  database, sourcekit-lsp's scratch build) and the session ledger only: with a private
  HOME, TMPDIR and working directory, the index tools leave all three empty.
- sourcekit-lsp is the toolchain's: SwiftPM and clang keep their per-user caches under
  `~/.cache` and `~/.local/share` and temporary files in TMPDIR. That is allowed (and
  documented in docs/reliability.md); anything else in HOME is not.
- Strings built to run a command if they ever reached a shell — in every argument, and as
  the name of the folder sourcekit-lsp is started in — leave no trace.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY, load_expected
from tests.reliability.harness import RawServer, new_tag, result_text, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

TOOLCHAIN_CACHES = (".cache", ".local")
"""What sourcekit-lsp's SwiftPM and clang may create in HOME."""


def snapshot(root: Path) -> dict[str, tuple[int, int, int, str]]:
    """(mode, size, mtime, content) of every file and folder under `root`: a file's content
    is its SHA-256 (the sources and the index store the server reads, and every build
    product beside them: 0.2 s for the fixture's 780 files), a symlink's is its target."""
    found: dict[str, tuple[int, int, int, str]] = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if stat.S_ISREG(info.st_mode):
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        elif stat.S_ISLNK(info.st_mode):
            content = os.readlink(path)
        else:
            content = ""
        found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns, content)
    return found


def private_places(tmp_path: Path) -> dict[str, Path]:
    places = {name: tmp_path / name for name in ("home", "tmp", "cwd", "cache", "project")}
    for place in places.values():
        place.mkdir()
    return places


def env_with(places: dict[str, Path]) -> dict[str, str]:
    return server_env(
        places["cache"],
        new_tag(),
        {
            "HOME": str(places["home"]),
            "TMPDIR": str(places["tmp"]),
            "CLAUDE_PROJECT_DIR": str(places["project"]),
        },
    )


async def every_tool(server: RawServer, *, with_lsp: bool = True) -> dict[str, dict[str, Any]]:
    project = {"projectPath": str(CANARY)}
    found = await server.call_tool("find_symbol", {"symbolName": "UserService", **project})
    usr = found["structuredContent"]["results"][0]["usr"]
    source = str(CANARY / "Sources" / "CanaryCore" / "UserService.swift")
    calls: dict[str, dict[str, Any]] = {
        "find_references": {"usr": usr},
        "find_definition": {"usr": usr},
        "find_overrides": {"usr": usr},
        "find_conformances": {"usr": usr},
        "blast_radius": {"filePath": source},
        "status": {},
        "wait_for_fresh": {"files": [source], "timeoutSeconds": 0},
        "call_hierarchy": {"usr": usr, "direction": "outgoing"},
        "type_hierarchy": {"usr": usr, "direction": "supertypes"},
        "change_impact": {},
    }
    if with_lsp:  # the one tool that starts sourcekit-lsp
        calls["plan_rename"] = {"usr": usr, "newName": "AccountService"}
    answers = {"find_symbol": found}
    for tool, arguments in calls.items():
        answers[tool] = await server.call_tool(tool, {**arguments, **project})
    return answers


async def test_the_index_tools_write_nothing_outside_the_cache(canary_store: Path, tmp_path: Path) -> None:
    places = private_places(tmp_path)
    before = snapshot(CANARY)
    store_files = {str(path.relative_to(CANARY)) for path in canary_store.rglob("*") if path.is_file()}
    assert store_files, canary_store
    assert store_files <= set(before), "the snapshot covers the index store"
    async with RawServer(env_with(places), cwd=places["cwd"]) as server:
        await server.initialize()
        answers = await every_tool(server)
        tools = {tool["name"] for tool in (await server.request("tools/list"))["result"]["tools"]}
    assert set(answers) == tools, "every tool was asked"
    for tool, answer in answers.items():
        assert not answer.get("isError"), f"{tool}: {result_text(answer)}"
    renamed = load_expected("rename.json")["UserService"]
    assert renamed["newName"] == "AccountService"
    assert answers["plan_rename"]["structuredContent"]["summary"]["green_verified"] == len(renamed["ranges"])
    assert snapshot(CANARY) == before, "the project tree was written"
    assert list(places["cwd"].iterdir()) == []
    home = {path.name for path in places["home"].iterdir()}
    assert home <= set(TOOLCHAIN_CACHES), (
        f"HOME got {home} (only sourcekit-lsp's toolchain caches may appear)"
    )
    assert (places["cache"] / "sourcekit-lsp").is_dir(), "sourcekit-lsp built in the cache, not in .build"


async def test_without_sourcekit_lsp_nothing_at_all_is_written_outside_the_cache(
    canary_store: Path, tmp_path: Path
) -> None:
    places = private_places(tmp_path)
    async with RawServer(env_with(places), cwd=places["cwd"]) as server:
        await server.initialize()
        answers = await every_tool(server, with_lsp=False)
    assert not any(answer.get("isError") for answer in answers.values())
    for place in ("home", "tmp", "cwd"):
        assert list(places[place].iterdir()) == [], f"the server wrote into {place}"


SHELL_BAIT = ("$(touch {m})", "`touch {m}`", "; touch {m}", "| touch {m}", "&& touch {m}", "\n touch {m}")


async def test_no_string_from_a_caller_reaches_a_shell(canary_store: Path, tmp_path: Path) -> None:
    places = private_places(tmp_path)
    marker = tmp_path / "marker"
    baits = [bait.format(m=marker) for bait in SHELL_BAIT]
    # A package whose folder name is bait: plan_rename roots sourcekit-lsp (and its builds)
    # there. A name cannot hold "/", so this bait would create "pwned" in some working folder.
    bait_package = tmp_path / "Pkg $(touch pwned) `touch pwned` ; touch pwned"
    (bait_package / "Sources" / "Pkg").mkdir(parents=True)
    (bait_package / "Package.swift").write_text(
        '// swift-tools-version:5.9\nimport PackageDescription\nlet package = Package(name: "Pkg", targets: [.target(name: "Pkg")])\n',
        encoding="utf-8",
    )
    (bait_package / "Sources" / "Pkg" / "Pkg.swift").write_text("public struct Pkg {}\n", encoding="utf-8")
    async with RawServer(env_with(places), cwd=places["cwd"]) as server:
        await server.initialize()
        found = await server.call_tool(
            "find_symbol", {"symbolName": "UserService", "indexStorePath": str(canary_store)}
        )
        usr = found["structuredContent"]["results"][0]["usr"]
        plan = await server.call_tool(
            "plan_rename",
            {
                "usr": usr,
                "newName": "Renamed",
                "indexStorePath": str(canary_store),
                "projectPath": str(bait_package),
            },
        )
        assert not plan.get("isError"), result_text(plan)
        tools = (await server.request("tools/list"))["result"]["tools"]
        for tool in tools:
            for bait in baits:
                arguments: dict[str, Any] = {}
                for name, spec in tool["inputSchema"]["properties"].items():
                    if spec.get("type") == "string":
                        arguments[name] = bait if name != "indexStorePath" else f"/{bait}"
                    elif spec.get("type") == "array":
                        arguments[name] = [f"/{bait}.swift"]
                    elif name == "timeoutSeconds":
                        arguments[name] = 0
                await server.call_tool(tool["name"], arguments)
                await server.call_tool(tool["name"], {**arguments, "indexStorePath": str(canary_store)})
    assert not os.path.exists(marker), "a caller's string ran as a command"
    assert not list(tmp_path.rglob("pwned")), "a folder name ran as a command"
