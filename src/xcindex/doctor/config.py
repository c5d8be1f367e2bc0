"""The doctor's agent-configuration check: is xcindex wired into Claude Code, once?

The Claude Code plugin brings the MCP server (its tools named `mcp__plugin_xcindex_xcindex__*`)
and the hooks. A project's `.mcp.json` and `.claude/settings.json` can bring the same by hand
(`mcp__xcindex__*`). Both at once registers the server twice and runs every hook twice, so
`--install` writes the project files only when the plugin is not installed, and never edits an
existing file.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from xcindex.doctor.report import Report
from xcindex.project.candidates import Project

PLUGIN_NAME = "xcindex"
PLUGIN_HOWTO = (
    "claude plugin marketplace add /path/to/an/xcindex/checkout, then claude plugin install "
    "xcindex@xcindex (walk-through: docs/plugin.md in the checkout)"
)


def plugin_install(environ: Mapping[str, str], project_root: Path) -> str | None:
    """Where this machine says the xcindex plugin is installed and enabled; None if nowhere.

    Looked at: `CLAUDE_PLUGIN_ROOT` (the doctor runs under the plugin), Claude Code's
    `~/.claude/plugins/installed_plugins.json`, and `enabledPlugins` in the user's and the
    project's settings (`xcindex@<marketplace>`).
    """
    if root := environ.get("CLAUDE_PLUGIN_ROOT"):
        return f"CLAUDE_PLUGIN_ROOT={root}"
    home = Path(environ.get("HOME") or Path.home())
    claude = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    installed = _json(claude / "plugins" / "installed_plugins.json")
    plugins = installed.get("plugins", installed) if isinstance(installed, dict) else None
    if isinstance(plugins, dict) and any(_is_ours(key) for key in plugins):
        return str(claude / "plugins" / "installed_plugins.json")
    for settings in (
        claude / "settings.json",
        project_root / ".claude" / "settings.json",
        project_root / ".claude" / "settings.local.json",
    ):
        value = _json(settings)
        enabled = value.get("enabledPlugins") if isinstance(value, dict) else None
        if isinstance(enabled, dict) and any(_is_ours(key) and on for key, on in enabled.items()):
            return str(settings)
    return None


def _is_ours(key: object) -> bool:
    return isinstance(key, str) and key.split("@", 1)[0] == PLUGIN_NAME


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_configuration(report: Report, project: Project, install: bool) -> None:
    report.section("Agent configuration")
    root = project.root
    plugin = plugin_install(os.environ, root)
    mcp_file = root / ".mcp.json"
    settings = root / ".claude" / "settings.json"
    declares_server = mcp_file.exists() and _mentions(mcp_file, '"xcindex"')
    runs_hooks = settings.exists() and (
        _mentions(settings, "xcindex hook") or _mentions(settings, "hook session-start")
    )
    if plugin is not None:
        report.ok(
            f"The xcindex Claude Code plugin is installed ({plugin}): it brings the server and the hooks."
        )
        if declares_server or runs_hooks:
            twice = " and ".join(
                str(path) for path, found in ((mcp_file, declares_server), (settings, runs_hooks)) if found
            )
            report.fail(
                f"{twice} also register(s) xcindex: Claude Code starts the server twice "
                "(mcp__xcindex__* beside mcp__plugin_xcindex_xcindex__*) and runs each hook twice.",
                "Remove the xcindex entries from those files (the plugin covers them), or uninstall the plugin.",
            )
        elif install:
            report.info("Nothing written: the plugin already registers the server and the hooks.")
        return
    command = _xcindex_command()
    if mcp_file.exists():
        if declares_server:
            report.ok(f"{mcp_file} declares the xcindex server.")
        else:
            report.info(
                f"{mcp_file} does not declare an 'xcindex' server (left as it is); add: "
                + json.dumps(_mcp_server(command))
            )
    elif install:
        _write_json(mcp_file, {"mcpServers": {"xcindex": _mcp_server(command)}})
        report.ok(f"Wrote {mcp_file}: MCP server 'xcindex' runs `{shlex.join([*command, 'serve'])}`.")
    else:
        report.info(
            f"No .mcp.json in {root}: install the Claude Code plugin ({PLUGIN_HOWTO}), "
            "or run the doctor with --install to write one for this project."
        )
    if settings.exists():
        if runs_hooks:
            report.ok(f"{settings} runs the xcindex hooks.")
        else:
            report.info(
                f"{settings} has no xcindex hooks (left as it is); the plugin brings them ({PLUGIN_HOWTO})."
            )
    elif install:
        settings.parent.mkdir(exist_ok=True)
        _write_json(settings, {"hooks": hook_configuration(command)})
        report.ok(
            f"Wrote {settings}: the xcindex hooks (SessionStart; PostToolUse on Edit|Write|MultiEdit; "
            "PreToolUse on Grep)."
        )
    else:
        report.info(
            f"No project hooks in {settings}: the plugin brings them, or run the doctor with --install."
        )


def _mentions(path: Path, text: str) -> bool:
    try:
        return text in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _write_json(path: Path, value: object) -> None:
    # Exclusive creation: never overwrite a file that appeared since we looked.
    with path.open("x", encoding="utf-8") as handle:
        handle.write(json.dumps(value, indent=2) + "\n")


def _xcindex_command() -> list[str]:
    """How this machine runs xcindex: the name when it is on PATH, else this install's path."""
    if shutil.which("xcindex"):
        return ["xcindex"]
    beside = Path(sys.executable).parent / "xcindex"
    if os.access(beside, os.X_OK):
        return [str(beside)]
    return [sys.executable, "-m", "xcindex"]


def _mcp_server(command: list[str]) -> dict[str, object]:
    return {"command": command[0], "args": [*command[1:], "serve"]}


def hook_configuration(command: list[str]) -> dict[str, object]:
    """The `hooks` section of Claude Code settings that runs the three xcindex hooks."""

    def hook(event: str, timeout: int) -> dict[str, object]:
        return {"type": "command", "command": shlex.join([*command, "hook", event]), "timeout": timeout}

    return {
        "SessionStart": [{"hooks": [hook("session-start", 30)]}],
        "PostToolUse": [{"matcher": "Edit|Write|MultiEdit", "hooks": [hook("post-tool-use", 10)]}],
        "PreToolUse": [{"matcher": "Grep", "hooks": [hook("pre-tool-use", 10)]}],
    }
