"""The set-up started in the background, and what a session is told about it.

A set-up must outlive whoever started it: Claude Code stops the MCP server when a session
(or `claude mcp list`) ends and a hook as soon as it answers, and an install killed with
them would start over at every session. So the installer runs in a session of its own
(`start_new_session`), started through a short-lived middle process so that it is never a
child the starter would have to reap; its output is appended to `install.log`.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

from xcindex.plugin.setup import Plugin, SetupState, data_folder_problem, setup_state

LAUNCH = Path(__file__).resolve().parent / "launch.py"
SPAWN_TIMEOUT_S = 30.0


def launch_command(plugin: Plugin, mode: str) -> list[str]:
    return [
        sys.executable,
        "-I",
        "-B",
        str(LAUNCH),
        str(plugin.root),
        plugin.version,
        str(plugin.data),
        str(plugin.fallback),
        mode,
    ]


def spawn_installer(plugin: Plugin) -> None:
    """Start the installer in a session of its own and return (the middle process's job:
    `launch.py … setup-detached`)."""
    with plugin.log.open("ab") as log:
        subprocess.Popen(
            launch_command(plugin, "setup"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )


def start_setup(plugin: Plugin) -> None:
    """Start the set-up so that it survives us and is never our child to reap. A failure
    note of an earlier set-up goes first: it no longer says how this one is going."""
    with contextlib.suppress(OSError):
        plugin.failed.unlink()
    subprocess.run(
        launch_command(plugin, "setup-detached"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=SPAWN_TIMEOUT_S,
        check=False,
    )


def ensure_setup(plugin: Plugin) -> tuple[SetupState, str | None]:
    """The set-up's state after starting it if nothing is installing (a failed set-up is
    tried again: the network may be back); the data folder's problem when it cannot start."""
    state = setup_state(plugin)
    if state.kind in ("ready", "installing"):
        return state, None
    if problem := data_folder_problem(plugin):
        return state, problem
    start_setup(plugin)
    return state, None


def installing_words(state: SetupState) -> str:
    return f"{state.step}, {state.seconds:.0f} s so far"


def session_start_text(plugin: Plugin) -> str:
    state, problem = ensure_setup(plugin)
    if problem is not None:
        return f"[xcindex] xcindex cannot set itself up: {problem}"
    if state.kind == "installing":
        return (
            f"[xcindex] xcindex is still setting itself up (first start of the plugin: "
            f"{installing_words(state)}); its tools answer once it is done. /xcindex-setup shows progress."
        )
    if state.kind == "failed":
        return (
            f"[xcindex] The last xcindex set-up failed ({state.reason}); it is being tried again in the "
            f"background (log: {plugin.log}). If it fails again, run /xcindex-setup to see why."
        )
    return (
        "[xcindex] xcindex is setting itself up in the background (first start of the plugin, about a "
        f"minute; log: {plugin.log}). Its tools answer once it is done; run /xcindex-setup to finish or "
        "check the set-up."
    )


def session_start_answer(plugin: Plugin) -> str:
    """The SessionStart hook's JSON line while xcindex is not installed."""
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": session_start_text(plugin),
            }
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
