"""The session ledger end to end: Claude Code's post-tool-use hook records an edit, and the
real server, started in the same session, says so in its answers and its rename plans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

from tests.conftest import CANARY, load_expected
from tests.truth.store_dump import live

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

XCINDEX = str(Path(sys.executable).parent / "xcindex")
EDITED = CANARY / "Sources" / "CanaryCore" / "AppDelegate.swift"


def session_env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "XCINDEX_CACHE_DIR": os.environ["XCINDEX_CACHE_DIR"],
        "TMPDIR": f"{tmp_path}/",
        "CLAUDE_PROJECT_DIR": str(CANARY),
    }


def indexed_mtime(path: Path) -> int:
    """When the fixture's build wrote the unit of `path` (the newest unit naming it), read
    with the independent dump of the store."""
    store = next((CANARY / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    return max(unit.mtime_ns for unit in live(store).units if unit.main_file == str(path))


def hook(event: str, payload: dict[str, Any] | None, env: dict[str, str]) -> str:
    result = subprocess.run(
        [XCINDEX, "hook", event],
        input=None if payload is None else json.dumps(payload).encode(),
        stdin=subprocess.DEVNULL if payload is None else None,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result
    return result.stdout.decode()


async def test_an_edit_recorded_by_the_hook_marks_answers_stale_and_rename_ranges_red(tmp_path: Path) -> None:
    # The overlay off: the edit stays unindexed, as when the compiler cannot re-index it.
    env = {**session_env(tmp_path), "XCINDEX_OVERLAY": "0"}
    indexed, content = EDITED.stat(), EDITED.read_bytes()
    # The edit, after every site (the hand-checked ranges stay where they are): the file is
    # newer than its unit, with other content than the unit indexed.
    EDITED.write_bytes(content + b"\n// an edit\n")
    os.utime(EDITED, ns=(indexed.st_atime_ns, time.time_ns()))
    try:
        await _edited_then_rebuilt(env, tmp_path)
    finally:
        EDITED.write_bytes(content)
        os.utime(EDITED, ns=(indexed.st_atime_ns, indexed.st_mtime_ns))


async def _edited_then_rebuilt(env: dict[str, str], tmp_path: Path) -> None:
    hook("session-start", None, env)
    note = hook(
        "post-tool-use",
        {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(EDITED)}},
        env,
    )
    assert "AppDelegate.swift" in note

    params = StdioServerParameters(command=XCINDEX, args=["serve"], env=env)
    async with Client(params, read_timeout_seconds=300) as client:
        where = {"projectPath": str(CANARY)}
        found = await client.call_tool("find_symbol", {"symbolName": "UserService.fetchUser(id:)", **where})
        usr = found.structured_content["results"][0]["usr"]

        refs = await client.call_tool("find_references", {"usr": usr, **where})
        answer = refs.structured_content
        assert answer["completeness"] == "stale"
        assert answer["sessionEditedFiles"] == [str(EDITED)]
        text = "\n".join(block.text for block in refs.content if isinstance(block, TextContent))
        assert "AppDelegate.swift" in text
        assert "edited" in text

        plan = (
            await client.call_tool("plan_rename", {"usr": usr, "newName": "loadUser", **where})
        ).structured_content
        assert plan["indexFreshness"]["filesEditedThisSession"] == 1
        in_edited = [r for r in plan["ranges"] if r["path"] == str(EDITED)]
        # The hand-checked range in the edited file (expected/rename.json).
        want = [
            (r["line"], r["column"], r["endColumn"])
            for r in load_expected("rename.json")["UserService.fetchUser(id:)"]["ranges"]
            if r["path"] == "Sources/CanaryCore/AppDelegate.swift"
        ]
        assert [(r["line"], r["column"], r["endColumn"]) for r in in_edited] == want == [(13, 47, 56)]
        assert all(r["tier"] == "red-stale" and "session_edited" in r["reasons"] for r in in_edited)
        assert all(r["tier"] != "red-stale" for r in plan["ranges"] if r["path"] != str(EDITED))

        status = (await client.call_tool("status", where)).structured_content
        assert status["sessionEditedFiles"] == [str(EDITED)]
        assert status["completeness"] == "stale"

        # Rebuilt after the edit (its unit is newer than the file again): the ledger still
        # lists the file, and no answer calls it edited or stale any more.
        os.utime(EDITED, ns=(EDITED.stat().st_atime_ns, indexed_mtime(EDITED) - 1))
        again = await client.call_tool("find_references", {"usr": usr, **where})
        assert again.structured_content["completeness"] == "complete"
        assert again.structured_content["sessionEditedFiles"] == []
        status = (await client.call_tool("status", where)).structured_content
        assert status["sessionEditedFiles"] == []
        assert status["completeness"] == "complete"

        # A new session clears the ledger: answers stay complete.
        hook("session-start", None, env)
        again = await client.call_tool("find_references", {"usr": usr, **where})
        assert again.structured_content["completeness"] == "complete"

        # An edit in another project is that project's business: this index stays complete.
        elsewhere = tmp_path / "Other" / "Sources" / "Other.swift"
        hook(
            "post-tool-use",
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": str(elsewhere)},
            },
            env,
        )
        status = (await client.call_tool("status", where)).structured_content
        assert status["sessionEditedFiles"] == []
        assert status["completeness"] == "complete"
