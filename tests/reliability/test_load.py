"""Load: many questions at once, many workspaces, many questions in a row.

- 200 tool calls of every kind in flight at once over one stdio session, each answer
  compared with the hand-checked JSON.
- sourcekit-lsp for 20 workspace roots asked at once through the LspPool the Engine runs
  (its shipped configuration, scratch builds in a temporary folder): the process table
  never holds more sourcekit-lsp children than `max_children`.
- 10,000 mixed calls over one stdio session: the server's resident memory after them stays
  within a stated bound of what it was after a warm-up.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from tests.conftest import CANARY, load_expected
from tests.reliability.harness import new_tag, rss_bytes, server_pid, stdio_parameters
from xcindex.actors.lsp import LspPool
from xcindex.engine import Engine, EngineConfig
from xcindex.errors import CodedError
from xcindex.lsp.config import LspPoolConfig
from xcindex.tools.wait_for_fresh import FileState
from xcindex.vocabulary import WarningCode

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

Check = Callable[[dict[str, Any]], None]
Site = tuple[str, int, int]


def rel(path: str) -> str:
    return str(Path(path).relative_to(CANARY.resolve()))


def occurrence_sites(results: list[dict[str, Any]]) -> set[Site]:
    return {(rel(r["path"]), r["line"], r["column"]) for r in results}


def wanted_sites(expected: list[dict[str, Any]]) -> set[Site]:
    return {(e["path"], e["line"], e["column"]) for e in expected}


async def resolve_usrs(client: Client) -> dict[str, str]:
    """The USR of every hand-checked symbol, pinned by its definition site."""
    usrs: dict[str, str] = {}
    for entry in load_expected("symbols.json"):
        found = await client.call_tool(
            "find_symbol", {"symbolName": entry["name"], "projectPath": str(CANARY)}
        )
        for result in (found.structured_content or {})["results"]:
            if result["definitionPath"] is None:
                continue  # an SDK symbol the project uses: no source here
            if (rel(result["definitionPath"]), result["definitionLine"]) == (
                entry["definitionPath"],
                entry["definitionLine"],
            ):
                usrs[entry["key"]] = result["usr"]
    return usrs


def defines(site: tuple[str, int], results: list[dict[str, Any]]) -> bool:
    return site in {(rel(r["definitionPath"]), r["definitionLine"]) for r in results if r["definitionPath"]}


def question_menu(usrs: dict[str, str]) -> list[tuple[str, dict[str, Any], Check]]:
    """(tool, arguments, check) for every hand-checked answer, and every tool."""
    menu: list[tuple[str, dict[str, Any], Check]] = []

    def equal(field: str, want: Any, convert: Callable[[Any], Any]) -> Check:
        def check(structured: dict[str, Any]) -> None:
            assert convert(structured[field]) == want

        return check

    for entry in load_expected("symbols.json"):
        site = (entry["definitionPath"], entry["definitionLine"])
        menu.append(
            (
                "find_symbol",
                {"symbolName": entry["name"]},
                equal("results", True, partial(defines, site)),
            )
        )
        menu.append(
            (
                "find_definition",
                {"usr": usrs[entry["key"]]},
                equal(
                    "result",
                    (entry["definitionPath"], entry["definitionLine"], entry["definitionColumn"]),
                    lambda result: (rel(result["path"]), result["line"], result["column"]),
                ),
            )
        )
    for key, expected in load_expected("references.json").items():
        menu.append(
            (
                "find_references",
                {"usr": usrs[key], "maxResults": 500},
                equal("results", wanted_sites(expected), occurrence_sites),
            )
        )
    for key, expected in load_expected("overrides.json").items():
        menu.append(
            ("find_overrides", {"usr": usrs[key]}, equal("results", wanted_sites(expected), occurrence_sites))
        )
    for key, expected in load_expected("conformances.json").items():
        menu.append(
            (
                "find_conformances",
                {"usr": usrs[key]},
                equal("results", wanted_sites(expected), occurrence_sites),
            )
        )
    for path, expected in load_expected("blast_radius.json").items():
        menu.append(
            (
                "blast_radius",
                {"filePath": str(CANARY / path)},
                equal("affectedFiles", set(expected["affectedFiles"]), lambda files: {rel(f) for f in files}),
            )
        )
    for key, expected in load_expected("rename.json").items():
        want = {(r["path"], r["line"], r["column"], r["endColumn"]) for r in expected["ranges"]}
        menu.append(
            (
                "plan_rename",
                {"usr": usrs[key], "newName": expected["newName"]},
                equal(
                    "ranges",
                    want,
                    lambda ranges: {(rel(r["path"]), r["line"], r["column"], r["endColumn"]) for r in ranges},
                ),
            )
        )
    for key, case in load_expected("calls.json").items():
        if key.startswith("_"):
            continue
        menu.append(
            (
                "call_hierarchy",
                {"symbolName": key, "direction": case["direction"], "depth": case["depth"]},
                equal(
                    "calls",
                    {call["site"] for call in case["calls"]},
                    lambda calls: {
                        f"{rel(site['path'])}:{site['line']}:{site['column']}"
                        for group in calls
                        for site in group["sites"]
                    },
                ),
            )
        )
    for key, case in load_expected("types.json").items():
        if key.startswith("_"):
            continue
        menu.append(
            (
                "type_hierarchy",
                {"symbolName": key, "direction": case["direction"], "depth": case["depth"]},
                equal(
                    "links",
                    {link["site"] for link in case["links"]},
                    lambda links: {f"{rel(link['path'])}:{link['line']}:{link['column']}" for link in links},
                ),
            )
        )
    # The diff of the working tree against HEAD: whatever it holds, every concurrent answer
    # is the same and names the revision it compared with.
    menu.append(("change_impact", {}, equal("base", "HEAD", str)))
    menu.append(("status", {}, equal("completeness", "complete", str)))
    sources = sorted({e["path"] for sites in load_expected("references.json").values() for e in sites})
    menu.append(
        (
            "wait_for_fresh",
            # The files are fresh, so it answers as soon as its query runs; 0 would race the
            # other 199 calls (see test_a_busy_index_makes_wait_for_fresh_time_out_not_fail).
            {"files": [str(CANARY / path) for path in sources], "timeoutSeconds": 60},
            equal("files", {"fresh"}, lambda files: {f["state"] for f in files}),
        )
    )
    return menu


async def test_200_concurrent_calls_of_every_kind_all_answer_right(
    canary_store: Path, warm_cache: Path, tmp_path: Path
) -> None:
    async with Client(
        stdio_parameters(warm_cache, new_tag(), tmp_path, log_file=tmp_path / "server.log"),
        read_timeout_seconds=600,
    ) as client:
        usrs = await resolve_usrs(client)
        menu = question_menu(usrs)
        assert {tool for tool, _, _ in menu} == {tool.name for tool in (await client.list_tools()).tools}
        calls = list(itertools.islice(itertools.cycle(menu), 200))
        answers: list[CallToolResult | None] = [None] * len(calls)

        async def ask(index: int, tool: str, arguments: dict[str, Any]) -> None:
            answers[index] = await client.call_tool(tool, {"projectPath": str(CANARY), **arguments})

        async with anyio.create_task_group() as tg:
            for index, (tool, arguments, _) in enumerate(calls):
                tg.start_soon(ask, index, tool, arguments)

    for (tool, arguments, check), answer in zip(calls, answers, strict=True):
        assert answer is not None
        assert not answer.is_error, f"{tool}({arguments}): {answer.content}"
        assert isinstance(answer.structured_content, dict)
        check(answer.structured_content)


def tiny_package(root: Path, index: int) -> Path:
    (root / "Sources" / "Tiny").mkdir(parents=True)
    (root / "Package.swift").write_text(
        "// swift-tools-version:5.9\nimport PackageDescription\n"
        f'let package = Package(name: "Tiny{index}", targets: [.target(name: "Tiny")])\n',
        encoding="utf-8",
    )
    (root / "Sources" / "Tiny" / "Tiny.swift").write_text(
        f"public struct Tiny{index} {{}}\npublic let tiny = Tiny{index}()\n", encoding="utf-8"
    )
    return root


def sourcekit_lsp_children() -> list[int]:
    """Our sourcekit-lsp children, from the process table."""
    me = os.getpid()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        head, _, tail = stat.rpartition(b")")
        fields = tail.split()
        if (
            head.partition(b"(")[2] == b"sourcekit-lsp"
            and int(fields[1]) == me
            and fields[0] not in (b"Z", b"X")
        ):
            found.append(int(entry))
    return found


async def test_twenty_workspace_roots_never_hold_more_sourcekit_lsp_children_than_the_bound(
    tmp_path: Path,
) -> None:
    roots = [tiny_package(tmp_path / f"Tiny{index}", index).resolve() for index in range(20)]
    config = replace(
        LspPoolConfig(), scratch_root=tmp_path / "scratch", initialize_timeout=120, request_timeout=120
    )
    bound = config.max_children
    most = 0
    answered: set[Path] = set()
    refused: list[str] = []

    async def watch(done: anyio.Event) -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, len(sourcekit_lsp_children()))
            with anyio.move_on_after(0.02):
                await done.wait()

    async def ask(pool: LspPool, root: Path) -> None:
        # All children may be starting at once: the pool says so, with its code; ask again.
        while True:
            try:
                await pool.symbol_info(root, root / "Sources" / "Tiny" / "Tiny.swift", 1, 15)
            except CodedError as error:
                if error.code is not WarningCode.SOURCEKIT_LSP_NOT_RUNNING:
                    raise
                refused.append(error.message)
                await anyio.sleep(0.1)  # the pool has no event for "a slot is free"
                continue
            answered.add(root)
            return

    pool = LspPool(config)
    done = anyio.Event()
    async with anyio.create_task_group() as outer:
        outer.start_soon(watch, done)
        async with anyio.create_task_group() as tg:
            await tg.start(pool.run)
            async with anyio.create_task_group() as asks:
                for root in roots:
                    asks.start_soon(ask, pool, root)
            await pool.aclose()
        done.set()
    assert answered == set(roots)
    assert most <= bound, f"{most} sourcekit-lsp children at once; the bound is {bound}"
    assert most == bound, "the pool was saturated, or this proves nothing"
    assert sourcekit_lsp_children() == []


RSS_GROWTH_BOUND = 16 * 1024 * 1024
"""Bytes the server's resident set may grow over 10,000 calls once warm (measured: about
1 MB from about 90 MB). The Engine keeps no per-call state (answers are built, rendered and
dropped), SQLite's page cache is capped per connection and the fixture's database is a few
MB, so what is left is allocator noise and the MCP SDK's per-session bookkeeping; a leak of
2 KB per call (one retained answer) would be 20 MB and fail."""


async def test_ten_thousand_mixed_calls_leave_memory_within_a_bound(
    canary_store: Path, warm_cache: Path, tmp_path: Path
) -> None:
    tag = new_tag()
    async with Client(
        stdio_parameters(warm_cache, tag, tmp_path, log_file=tmp_path / "server.log"),
        read_timeout_seconds=600,
    ) as client:
        usrs = await resolve_usrs(client)
        menu = [
            (tool, arguments)
            for tool, arguments, _ in question_menu(usrs)
            if tool != "plan_rename"  # sourcekit-lsp's own memory is not the server's
        ]
        menu += [("find_symbol", {"symbolName": "NoSuchSymbol"}), ("find_definition", {"usr": "s:nope"})]
        calls = itertools.cycle(menu)
        pid = server_pid(tag)

        async def run(count: int, concurrency: int = 8) -> None:
            async def worker(share: int) -> None:
                for _ in range(share):
                    tool, arguments = next(calls)
                    result = await client.call_tool(tool, {"projectPath": str(CANARY), **arguments})
                    assert not result.is_error, result.content

            async with anyio.create_task_group() as tg:
                for _ in range(concurrency):
                    tg.start_soon(worker, count // concurrency)

        await run(1_000)
        warm = rss_bytes(pid)
        await run(10_000)
        after = rss_bytes(pid)
    assert after - warm <= RSS_GROWTH_BOUND, (
        f"RSS grew {(after - warm) / 2**20:.1f} MB over 10,000 calls (warm: {warm / 2**20:.1f} MB)"
    )


async def test_a_busy_index_makes_wait_for_fresh_time_out_not_fail(
    canary_store: Path, tmp_path: Path
) -> None:
    source = str(CANARY / "Sources" / "CanaryCore" / "UserService.swift")
    async with Engine(EngineConfig(project_dir=str(tmp_path))) as engine:
        await engine.find_symbol("UserService", index_store_path=str(canary_store))  # warm: ingested
        # Entered only once the index actor holds its database, as a long query does.
        async with engine._core.holding_index(index_store_path=str(canary_store)):
            answer = await engine.wait_for_fresh([source], timeout_s=0, index_store_path=str(canary_store))
    assert answer.timed_out
    assert [(f.path, f.state) for f in answer.files] == [(source, FileState.UNKNOWN)]
