"""A store rewritten under our feet: `swift build` runs while a client keeps asking.

A private copy of the fixture is built once; then a function that mentions `UserService`
is appended to AppDelegate.swift and the package is rebuilt (so the compiler really
rewrites units and records), then the change is taken back and it is rebuilt again. During
both builds a client asks, round after round and several questions at a time, over one
stdio session. Every answer must be the old truth or the new one (never an error, never a
mix, never `partial`), the first round after each build must be the new truth, and the
database must pass SQLite's integrity check afterwards.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import build_package, load_expected
from tests.reliability.conftest import swift_build
from tests.reliability.harness import database_integrity, new_tag, stdio_parameters

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

APPENDED = "\nfunc reliabilityProbe() -> UserService? { nil }\n"
PROBE_COLUMN = len("func reliabilityProbe() -> ") + 1
BUILD_WITHIN = 900.0
"""Seconds: a bound, so that a hung build fails the test instead of hanging it."""

Site = tuple[str, int, int]


def relative_sites(root: Path, results: list[dict[str, Any]]) -> frozenset[Site]:
    return frozenset((str(Path(r["path"]).relative_to(root)), r["line"], r["column"]) for r in results)


def expected_sites(key: str, file: str) -> frozenset[Site]:
    return frozenset((e["path"], e["line"], e["column"]) for e in load_expected(file)[key])


async def ask_round(client: Client, root: Path, usrs: dict[str, str]) -> dict[str, Any]:
    """Five questions at once; returns what each answered, in comparable form."""
    store = {"projectPath": str(root)}
    questions: dict[str, tuple[str, dict[str, Any]]] = {
        "references": ("find_references", {"usr": usrs["UserService"], "maxResults": 500}),
        "probe": ("find_symbol", {"symbolName": "reliabilityProbe"}),
        "overrides": ("find_overrides", {"usr": usrs["AppDelegate.setUp()"]}),
        "conformances": ("find_conformances", {"usr": usrs["Auditable"]}),
        "status": ("status", {}),
    }
    answers: dict[str, Any] = {}

    async def ask(name: str, tool: str, arguments: dict[str, Any]) -> None:
        result = await client.call_tool(tool, {**store, **arguments})
        text = "\n".join(block.text for block in result.content if block.type == "text")
        assert not result.is_error, f"{tool} during a rebuild: {text}"
        structured = result.structured_content
        assert isinstance(structured, dict)
        assert structured["completeness"] in ("complete", "stale"), f"{tool}: {structured['completeness']}"
        if name == "probe":
            answers[name] = frozenset(
                (Path(r["definitionPath"]).name, r["definitionLine"])
                for r in structured["results"]
                if r["definitionPath"] is not None  # an SDK symbol the project uses: no source here
            )
        elif name == "status":
            answers[name] = structured["unreadable"]
        else:
            answers[name] = relative_sites(root, structured["results"])

    async with anyio.create_task_group() as tg:
        for name, (tool, arguments) in questions.items():
            tg.start_soon(ask, name, tool, arguments)
    return answers


async def rounds_while(
    client: Client, root: Path, usrs: dict[str, str], build: subprocess.Popen[bytes], log: Path
) -> list[dict[str, Any]]:
    """Ask round after round until the build has ended, then once more."""
    seen: list[dict[str, Any]] = []
    try:
        with anyio.fail_after(BUILD_WITHIN):
            while build.poll() is None:
                seen.append(await ask_round(client, root, usrs))
    finally:
        if build.poll() is None:  # a failed round or the bound: the build must not outlive us
            build.kill()
            build.wait()
    assert build.returncode == 0, log.read_text(errors="replace")[-3000:]
    seen.append(await ask_round(client, root, usrs))
    return seen


async def test_answers_during_a_rebuild_are_old_or_new_truth(canary_copy: Path, tmp_path: Path) -> None:
    root = canary_copy.resolve()
    build_package(root)
    source = root / "Sources" / "CanaryCore" / "AppDelegate.swift"
    original = source.read_text(encoding="utf-8")
    probe_line = original.count("\n") + 2

    old: dict[str, Any] = {
        "references": expected_sites("UserService", "references.json"),
        "probe": frozenset(),
        "overrides": expected_sites("AppDelegate.setUp()", "overrides.json"),
        "conformances": frozenset(
            (e["path"], e["line"], e["column"]) for e in load_expected("conformances.json")["Auditable"]
        ),
        "status": [],
    }
    new = {
        **old,
        "references": old["references"]
        | {("Sources/CanaryCore/AppDelegate.swift", probe_line, PROBE_COLUMN)},
        "probe": frozenset({("AppDelegate.swift", probe_line)}),
    }

    cache = tmp_path / "cache"
    async with Client(
        stdio_parameters(cache, new_tag(), tmp_path, log_file=tmp_path / "server.log"),
        read_timeout_seconds=300,
    ) as client:
        usrs: dict[str, str] = {}
        for key, name in (
            ("UserService", "UserService"),
            ("AppDelegate.setUp()", "AppDelegate.setUp()"),
            ("Auditable", "Auditable"),
        ):
            found = await client.call_tool("find_symbol", {"symbolName": name, "projectPath": str(root)})
            [result] = (found.structured_content or {})["results"]
            usrs[key] = result["usr"]
        assert await ask_round(client, root, usrs) == old

        rounds = 0
        for change, before, after in ((original + APPENDED, old, new), (original, new, old)):
            source.write_text(change, encoding="utf-8")
            log = tmp_path / "build.log"
            seen = await rounds_while(client, root, usrs, swift_build(root, log), log)
            rounds += len(seen)
            for answers in seen:
                for question, answer in answers.items():
                    assert answer in (before[question], after[question]), (
                        f"{question}: neither old nor new truth"
                    )
            assert seen[-1] == after, "the first round after the build is the new truth"
        assert rounds > 4, "the questions really overlapped the builds"

    assert set(database_integrity(cache).values()) == {"ok"}
