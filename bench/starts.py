"""The starts an agent pays many times a day, each beside its floor: `xcindex --version` and
`--help`, a one-shot CLI question with a cache, and the three hooks, through the console
script and through the plugin's launcher (`bin/xcindex`, as Claude Code runs them), against
`python -c pass`.

Every figure is a median of whole process runs (spawn to exit), interleaved with its floor's
runs so that a change in the machine's load falls on both.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.measure import XCINDEX

REPO = Path(__file__).resolve().parent.parent
LAUNCHER = REPO / "bin" / "xcindex"
VENV = Path(sys.executable).parent.parent

Command = tuple[Sequence[str], bytes, Mapping[str, str] | None]
"""What to run, its stdin, its environment (None: this process's)."""


def interleaved(commands: Mapping[str, Command], runs: int) -> dict[str, dict[str, float]]:
    """Median and best wall time (ms) of each command, the commands run in turn `runs` times."""
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, (argv, stdin, env) in commands.items():
            started = time.perf_counter()
            subprocess.run(list(argv), input=stdin, capture_output=True, env=env, check=True)
            samples[label].append(time.perf_counter() - started)
    return {
        label: {
            "p50_ms": round(statistics.median(values) * 1000, 2),
            "min_ms": round(min(values) * 1000, 2),
            "n": len(values),
        }
        for label, values in samples.items()
    }


FLOOR: Command = ([sys.executable, "-c", "pass"], b"", None)


def quick_commands(runs: int) -> dict[str, Any]:
    """`xcindex --version` and `--help` beside `python -c pass`."""
    return interleaved(
        {
            "python -c pass": FLOOR,
            "xcindex --version": ([str(XCINDEX), "--version"], b"", None),
            "xcindex --help": ([str(XCINDEX), "--help"], b"", None),
        },
        runs,
    )


def one_shot_question(root: Path, cache: Path, name: str, runs: int) -> dict[str, Any]:
    """`xcindex refs NAME --project ROOT` with the warm cache, beside `grep -rnw` of its word
    and `python -c pass`."""
    env = {**os.environ, "XCINDEX_CACHE_DIR": str(cache)}
    word = name.split("(")[0].split(".")[-1]
    return interleaved(
        {
            "python -c pass": FLOOR,
            "xcindex refs": ([str(XCINDEX), "refs", name, "--project", str(root)], b"", env),
            "grep -rnw": (
                ["grep", "-rnw", "--include=*.swift", word, str(root / "Sources"), str(root / "Tests")],
                b"",
                None,
            ),
        },
        runs,
    )


def plugin_data(folder: Path) -> Path:
    """A plugin data folder holding a ready environment of the plugin's version, made of this
    virtual environment (links), as the plugin's set-up leaves one."""
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))["version"]
    venv = folder / f"venv-{version}"
    (venv / "bin").mkdir(parents=True)
    for name in ("python", "xcindex"):
        (venv / "bin" / name).symlink_to(VENV / "bin" / name)
    (venv / "pyvenv.cfg").symlink_to(VENV / "pyvenv.cfg")
    (venv / "lib").symlink_to(VENV / "lib")
    (venv / ".xcindex-ready").write_text(f"{version}\n", encoding="utf-8")
    return folder


def hook_payloads(root: Path) -> dict[str, bytes]:
    edited = next(iter(sorted((root / "Sources").rglob("*.swift"))))
    common = {"session_id": "bench", "cwd": str(root)}
    return {
        "session-start": json.dumps(
            {**common, "hook_event_name": "SessionStart", "source": "startup"}
        ).encode(),
        "post-tool-use": json.dumps(
            {
                **common,
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(edited)},
            }
        ).encode(),
        "pre-tool-use": json.dumps(
            {
                **common,
                "hook_event_name": "PreToolUse",
                "tool_name": "Grep",
                "tool_input": {"pattern": edited.stem, "glob": "*.swift"},
            }
        ).encode(),
    }


def hooks(root: Path, runs: int) -> dict[str, Any]:
    """Each hook through the console script (`xcindex hook EVENT`) and through the plugin's
    launcher with a ready environment, beside `python -c pass`."""
    payloads = hook_payloads(root)
    with tempfile.TemporaryDirectory(prefix="xcindex-bench-hooks-") as tmp:
        data = plugin_data(Path(tmp) / "data")
        env = {
            **os.environ,
            "TMPDIR": tmp,
            "CLAUDE_PROJECT_DIR": str(root),
            "CLAUDE_PLUGIN_ROOT": str(REPO),
            "CLAUDE_PLUGIN_DATA": str(data),
        }
        commands: dict[str, Command] = {"python -c pass": FLOOR}
        for event, payload in payloads.items():
            commands[f"{event} (console script)"] = ([str(XCINDEX), "hook", event], payload, env)
            commands[f"{event} (plugin launcher)"] = ([str(LAUNCHER), "hook", event], payload, env)
        return interleaved(commands, runs)
