"""The plugin as a marketplace install meets it, with this test playing Claude Code's part.

The repository is copied the way a plugin cache holds it (the files git knows, nothing
built), HOME is empty, PATH has a Python and the Swift toolchain but no xcindex, and
`${CLAUDE_PLUGIN_ROOT}` is expanded in the commands as Claude Code expands it. Every hook in
hooks/hooks.json runs with the documented stdin JSON of its event, before and after the set-up;
the MCP server starts from .mcp.json's command, installs itself on its first start (pip, from
the copied tree, with the network), answers a real question about the fixture over stdio with
the MCP client, and starts a second time with no install. Both start times are printed, never
asserted (performance belongs to the benchmark).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import CANARY, REPO, swift_executable
from tests.scoring import MEASURED

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
# Passed through to the clean environment so pip can reach its index behind a proxy.
NETWORK_ENV = (
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def plugin_cache_copy(destination: Path) -> Path:
    """The repository as `/plugin install` leaves it: the files git tracks (and, in a working
    checkout, the new ones it would), no build products, no virtual environment."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if not source.is_file():
            continue  # deleted in the working tree
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def clean_env(tmp_path: Path, plugin_root: Path) -> dict[str, str]:
    """A fresh user's environment: an empty HOME; PATH with a Python >= 3.11 and the Swift
    toolchain, and no xcindex; the variables Claude Code gives a plugin's processes."""
    tools = tmp_path / "path-bin"
    tools.mkdir()
    (tools / "python3").symlink_to(Path(getattr(sys, "_base_executable", sys.executable)).resolve())
    path = os.pathsep.join([str(tools), str(Path(swift_executable()).parent), "/usr/bin", "/bin"])
    assert shutil.which("xcindex", path=path) is None, "PATH must not offer an xcindex"
    home = tmp_path / "home"
    home.mkdir()
    env = {key: os.environ[key] for key in NETWORK_ENV if key in os.environ}
    env.update(
        {
            "HOME": str(home),
            "PATH": path,
            "TMPDIR": f"{tmp_path}/",
            "LANG": "C.UTF-8",
            "CLAUDE_PROJECT_DIR": str(CANARY),
            "CLAUDE_PLUGIN_ROOT": str(plugin_root),
            "CLAUDE_PLUGIN_DATA": str(home / ".claude" / "plugins" / "data" / "xcindex-xcindex"),
            "XCINDEX_CACHE_DIR": str(tmp_path / "db-cache"),
        }
    )
    return env


def expand(command: str, plugin_root: Path) -> str:
    return command.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin_root))


def hook_payloads() -> dict[str, dict[str, Any]]:
    """The stdin JSON Claude Code documents for each event."""
    common = {
        "session_id": "5d2c8f0e-7a1b-4c3d-9e8f-0a1b2c3d4e5f",
        "transcript_path": "/home/user/.claude/projects/canary/5d2c8f0e.jsonl",
        "cwd": str(CANARY),
    }
    edited = CANARY / "Sources" / "CanaryCore" / "UserService.swift"
    return {
        "SessionStart": {**common, "hook_event_name": "SessionStart", "source": "startup"},
        "PostToolUse": {
            **common,
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": str(edited), "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": str(edited), "success": True},
        },
        "PreToolUse": {
            **common,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Grep",
            "tool_input": {"pattern": "fetchUser", "glob": "*.swift", "output_mode": "content"},
        },
    }


def run_hooks(plugin_root: Path, env: dict[str, str]) -> dict[str, bytes]:
    """Every hook command of hooks/hooks.json, as Claude Code runs it; each must exit 0."""
    config = json.loads((plugin_root / "hooks" / "hooks.json").read_text())["hooks"]
    payloads = hook_payloads()
    assert set(config) == set(payloads)
    outputs = {}
    for event, groups in config.items():
        (hook,) = [hook for group in groups for hook in group["hooks"]]
        result = subprocess.run(
            expand(hook["command"], plugin_root),
            shell=True,
            input=json.dumps(payloads[event]).encode(),
            capture_output=True,
            env=env,
            timeout=hook["timeout"],
            check=False,
        )
        assert result.returncode == 0, result
        outputs[event] = result.stdout
    return outputs


def additional_context(stdout: bytes, event: str) -> str:
    """The hooks contract's answer, exactly: one JSON line with these two fields."""
    assert stdout.count(b"\n") == 1, stdout
    output = json.loads(stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert list(output["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == event
    text = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


async def ask(plugin_root: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Start the server from .mcp.json's command; the seconds until it answered `initialize`,
    and its find_references answer about UserService.fetchUser(id:)."""
    server = json.loads((plugin_root / ".mcp.json").read_text())["mcpServers"]["xcindex"]
    params = StdioServerParameters(
        command=expand(server["command"], plugin_root), args=server["args"], env=env, cwd=str(CANARY)
    )
    started = time.monotonic()
    async with Client(params, read_timeout_seconds=900) as client:
        ready = time.monotonic() - started
        answer = await client.call_tool(
            "find_references", {"symbolName": "fetchUser(id:)", "projectPath": str(CANARY)}
        )
        assert not answer.is_error, answer
        assert answer.structured_content is not None
        return ready, answer.structured_content


async def background_outcome(log: Path, within_s: float = 60.0) -> str:
    """install.log once the background set-up has said how it ended (or `within_s` passed)."""
    deadline = time.monotonic() + within_s
    while True:
        text = log.read_text()
        if "is installed" in text or "Cannot set up" in text or time.monotonic() >= deadline:
            return text
        await anyio.sleep(0.2)


async def test_a_marketplace_install_sets_itself_up_and_answers(canary_store: Path, tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugins" / "cache" / "xcindex" / "xcindex" / VERSION)
    env = clean_env(tmp_path, plugin_root)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    venv = data / f"venv-{VERSION}"

    # Before the set-up: no hook waits or fails; session-start says so and starts the install.
    before = run_hooks(plugin_root, env)
    assert before["PostToolUse"] == b""
    assert before["PreToolUse"] == b""
    assert "setting itself up in the background" in additional_context(before["SessionStart"], "SessionStart")

    # The first start of the server finishes (or waits for) that install, then answers.
    first, answer = await ask(plugin_root, env)
    files = {Path(site["path"]).name for site in answer["results"]}
    # The definition, a caller in the app, and the tests that call it.
    assert {"UserService.swift", "AppDelegate.swift", "UserServiceTests.swift"} <= files
    assert (venv / ".xcindex-ready").read_text() == f"{VERSION}\n"
    # The background set-up's log ends with the outcome, whether it installed or waited for
    # the server's own set-up (it looks once a second, so it may say so just after the answer).
    log = await background_outcome(data / "install.log")
    assert f"xcindex {VERSION} is installed" in log, log
    assert not list(plugin_root.rglob("*.egg-info")), "the install wrote into the plugin cache"

    # Once installed, the hooks answer in the hooks contract's JSON with the plugin's tool names.
    after = run_hooks(plugin_root, env)
    assert additional_context(after["SessionStart"], "SessionStart").startswith("[xcindex] ")
    assert additional_context(after["PostToolUse"], "PostToolUse") == (
        "[xcindex] 'UserService.swift' was edited: xcindex re-indexes it on its own in a moment, so "
        "answers about its symbols stay fresh without a build (if it does not compile, they say it is "
        "stale and why)."
    )
    nudge = additional_context(after["PreToolUse"], "PreToolUse")
    assert "mcp__plugin_xcindex_xcindex__find_references" in nudge

    # A later start installs nothing.
    stamp = (venv / ".xcindex-ready").stat().st_mtime_ns
    second, again = await ask(plugin_root, env)
    assert {(site["path"], site["line"]) for site in again["results"]} == {
        (site["path"], site["line"]) for site in answer["results"]
    }
    assert again["sessionEditedFiles"] == [str(CANARY / "Sources" / "CanaryCore" / "UserService.swift")]
    assert (venv / ".xcindex-ready").stat().st_mtime_ns == stamp
    MEASURED.append(
        f"plugin launcher: first start (install included) {first:.1f} s, later start {second:.2f} s "
        "(until the server answered initialize)"
    )


def stamped_environment(data: Path) -> Path:
    """What a finished set-up leaves: venv-<version> with an xcindex and the version stamp
    (made by hand here: this is the other installer's work, which these tests do not watch)."""
    venv = data / f"venv-{VERSION}"
    (venv / "bin").mkdir(parents=True)
    program = venv / "bin" / "xcindex"
    program.write_text("#!/bin/sh\necho stand-in\n")
    program.chmod(0o755)
    (venv / ".xcindex-ready").write_text(f"{VERSION}\n")
    return program


@contextlib.contextmanager
def lock_held_by_another_installer(data: Path) -> Iterator[None]:
    """The install lock as a running installer holds it: the folder, with a live pid."""
    (data / "install.lock").mkdir(parents=True)
    with subprocess.Popen(["sleep", "120"]) as owner:
        try:
            (data / "install.lock" / "pid").write_text(f"{owner.pid}\n")
            yield
        finally:
            owner.kill()


def test_a_set_up_that_waits_for_another_ends_its_log_with_the_outcome(tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    env = clean_env(tmp_path, plugin_root)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    with (
        lock_held_by_another_installer(data),
        subprocess.Popen(
            [str(plugin_root / "bin" / "xcindex"), "--setup"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as waiter,
    ):
        try:
            time.sleep(1.5)
            assert waiter.poll() is None, "the second set-up waits while the first holds the lock"
            program = stamped_environment(data)
            _, stderr = waiter.communicate(timeout=30)
        finally:
            waiter.kill()  # a no-op once it has ended; else it must not go on to install
    said = stderr.decode()
    assert waiter.returncode == 0, said
    assert "Another xcindex set-up is running" in said
    assert said.rstrip().endswith(f"xcindex {VERSION} is installed (by the other set-up): {program}"), said
    assert (data / "install.lock").is_dir(), "the waiter never removes the other installer's lock"


def test_a_set_up_that_gives_up_waiting_says_why_and_fails(tmp_path: Path) -> None:
    plugin_root = plugin_cache_copy(tmp_path / "plugin")
    env = {**clean_env(tmp_path, plugin_root), "XCINDEX_INSTALL_WAIT": "1"}
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    with lock_held_by_another_installer(data):
        result = subprocess.run(
            [str(plugin_root / "bin" / "xcindex"), "--setup"], env=env, capture_output=True, timeout=60
        )
    said = result.stderr.decode()
    assert result.returncode == 1, said
    assert said.rstrip().endswith(
        f"Cannot set up xcindex: {data / 'install.lock'} is held by another installer."
    ), said
    assert not (data / f"venv-{VERSION}").exists(), "nothing was installed while another held the lock"
