"""The real `xcindex hook <event>` command, fed what Claude Code sends (and worse).

Every run must exit 0 and print at most one line; the ledger file must be the one the
original plugin's shell hooks compute, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.conftest import CANARY

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
XCINDEX = str(VENV_BIN / "xcindex")
EDITED = (
    "[xcindex] '{name}' was edited: xcindex re-indexes it on its own in a moment, so answers about its "
    "symbols stay fresh without a build (if it does not compile, they say it is stale and why)."
)
EDITED_OBJC = (
    "[xcindex] '{name}' was edited: xcindex answers about its symbols may be stale until the next build."
)


def expected_ledger(tmpdir: str, project: str) -> Path:
    """`$TMPDIR/xcindex-edited-<sha1(project)[:12]>.txt`, computed here, not by xcindex."""
    digest = hashlib.sha1(project.encode("utf-8")).hexdigest()[:12]
    return Path(f"{tmpdir.removesuffix('/')}/xcindex-edited-{digest}.txt")


def base_env(tmpdir: Path, project: Path | None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CLAUDE_PROJECT_DIR", "CLAUDE_TOOL_INPUT")
    }
    env["TMPDIR"] = f"{tmpdir}/"
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    return env


def run_hook(
    event: str,
    stdin: bytes | None,
    env: Mapping[str, str],
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [XCINDEX, "hook", event],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result
    assert result.stdout.count(b"\n") <= 1, result.stdout
    return result


def context(result: subprocess.CompletedProcess[bytes], event_name: str) -> str:
    """The text a hook hands the model: its stdout must be exactly the hooks contract's JSON,
    `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`, on one line."""
    assert result.stdout.endswith(b"\n"), result.stdout
    assert result.stdout.count(b"\n") == 1, result.stdout
    output = json.loads(result.stdout)
    assert list(output) == ["hookSpecificOutput"]
    specific = output["hookSpecificOutput"]
    assert list(specific) == ["hookEventName", "additionalContext"]
    assert specific["hookEventName"] == event_name
    text = specific["additionalContext"]
    assert isinstance(text, str)
    return text


def edit_payload(tool: str, file_path: object, cwd: Path, **extra: object) -> bytes:
    tool_input: dict[str, object] = {"file_path": file_path, **extra}
    return json.dumps(
        {
            "session_id": "9b1c4c1e-0c1f-4a57-9f63-7c0a3e9b2a10",
            "transcript_path": "/home/dev/.claude/projects/app/9b1c4c1e.jsonl",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_response": {"filePath": str(file_path), "success": True},
        }
    ).encode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "App"
    (folder / "Sources" / "App").mkdir(parents=True)
    (folder / "Package.swift").write_text("// swift-tools-version:5.9\n")
    return folder


@pytest.fixture
def tmpdir(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


# -- post-tool-use ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("Edit", {"old_string": "let a = 1", "new_string": "let a = 2", "replace_all": False}),
        ("Write", {"content": "struct UserService {}\n"}),
        (
            "MultiEdit",
            {"edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]},
        ),
    ],
)
def test_edits_are_recorded_in_the_contract_ledger(
    project: Path, tmpdir: Path, tool: str, extra: dict[str, object]
) -> None:
    source = project / "Sources" / "App" / "UserService.swift"
    result = run_hook(
        "post-tool-use", edit_payload(tool, str(source), project, **extra), base_env(tmpdir, project)
    )
    assert context(result, "PostToolUse") == EDITED.format(name="UserService.swift")
    assert expected_ledger(str(tmpdir), str(project)).read_text() == f"{source}\n"


def test_ledger_path_without_claude_project_dir_hashes_the_working_directory(
    project: Path, tmpdir: Path
) -> None:
    source = project / "Sources" / "App" / "A.swift"
    run_hook("post-tool-use", edit_payload("Edit", str(source), project), base_env(tmpdir, None), cwd=project)
    # getcwd() is the physical path; the tmp folders used here contain no symlinks.
    assert os.path.realpath(project) == str(project)
    assert expected_ledger(str(tmpdir), str(project)).read_text() == f"{source}\n"


def test_relative_paths_are_resolved_against_the_hooks_cwd(project: Path, tmpdir: Path) -> None:
    run_hook(
        "post-tool-use",
        edit_payload("Write", "Sources/App/B.h", project),
        base_env(tmpdir, project),
        cwd=tmpdir,
    )
    assert expected_ledger(str(tmpdir), str(project)).read_text() == f"{project}/Sources/App/B.h\n"


def test_the_older_environment_variable_protocol_still_works(project: Path, tmpdir: Path) -> None:
    env = base_env(tmpdir, project)
    env["CLAUDE_TOOL_INPUT"] = json.dumps({"file_path": f"{project}/Sources/App/C.m"})
    result = run_hook("post-tool-use", None, env)
    assert context(result, "PostToolUse") == EDITED_OBJC.format(name="C.m")
    assert expected_ledger(str(tmpdir), str(project)).read_text() == f"{project}/Sources/App/C.m\n"


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        (None, "no hook input"),
        (b"", "no hook input"),
        (b"{not json", "not valid JSON"),
        (b"\x00\xff\xfe binary", "not valid JSON"),
        (b"[]", "not an object"),
        (b"null", "not an object"),
        (b'{"tool_name": "Edit", "tool_input": []}', "tool_input is not an object"),
        (b'{"tool_name": "Edit", "tool_input": {"file_path": 12}}', "file_path is not a string (got int)"),
        (b'{"tool_name": "Edit", "tool_input": {"file_path": null}}', "names no file_path"),
        (b'{"tool_name": ["Edit"], "tool_input": {}}', "tool_name is not a string"),
    ],
)
def test_malformed_input_exits_zero_with_a_reason(
    project: Path, tmpdir: Path, stdin: bytes | None, reason: str
) -> None:
    result = run_hook("post-tool-use", stdin, base_env(tmpdir, project))
    line = context(result, "PostToolUse")
    assert line.startswith("[xcindex] post-tool-use: ")
    assert reason in line
    assert not expected_ledger(str(tmpdir), str(project)).exists()


def test_non_sources_are_ignored_silently(project: Path, tmpdir: Path) -> None:
    result = run_hook(
        "post-tool-use", edit_payload("Edit", str(project / "README.md"), project), base_env(tmpdir, project)
    )
    assert result.stdout == b""
    assert not expected_ledger(str(tmpdir), str(project)).exists()


@pytest.mark.parametrize("broken", ["missing-folder", "a-file"])
def test_an_unwritable_temporary_folder_exits_zero_with_a_reason(
    project: Path, tmp_path: Path, broken: str
) -> None:
    bad = tmp_path / broken
    if broken == "a-file":
        bad.write_text("not a folder")
    env = base_env(bad, project)
    result = run_hook("post-tool-use", edit_payload("Edit", str(project / "A.swift"), project), env)
    line = context(result, "PostToolUse")
    assert line.startswith("[xcindex] Could not record the edit of 'A.swift' in the session ledger ")
    assert str(expected_ledger(str(bad), str(project))) in line
    start = run_hook("session-start", None, env)
    assert "Could not reset the session ledger" in context(start, "SessionStart")


def run_concurrently(payloads: list[bytes], env: Mapping[str, str], folder: Path) -> list[bytes]:
    """Start one hook per payload, all at once, each with its whole input already waiting."""
    folder.mkdir()
    inputs = []
    for number, payload in enumerate(payloads):
        path = folder / f"input-{number}.json"
        path.write_bytes(payload)
        inputs.append(path.open("rb"))
    try:
        processes = [
            subprocess.Popen(
                [XCINDEX, "hook", "post-tool-use"], stdin=stdin, stdout=subprocess.PIPE, env=dict(env)
            )
            for stdin in inputs
        ]
        outputs = []
        for process in processes:
            out, _ = process.communicate(timeout=120)
            assert process.returncode == 0
            outputs.append(out)
    finally:
        for stdin in inputs:
            stdin.close()
    return outputs


def test_fifty_concurrent_hooks_record_fifty_distinct_lines(
    project: Path, tmpdir: Path, tmp_path: Path
) -> None:
    sources = [project / "Sources" / "App" / f"File{i:02}.swift" for i in range(50)]
    payloads = [edit_payload("Edit", str(source), project) for source in sources]
    outputs = run_concurrently(payloads, base_env(tmpdir, project), tmp_path / "inputs")
    expected = [
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": EDITED.format(name=s.name),
            }
        }
        for s in sources
    ]
    assert [json.loads(out) for out in outputs] == expected
    lines = expected_ledger(str(tmpdir), str(project)).read_text().splitlines()
    assert len(lines) == 50
    assert set(lines) == {str(source) for source in sources}


def test_concurrent_hooks_for_one_file_record_it_once(project: Path, tmpdir: Path, tmp_path: Path) -> None:
    source = project / "Sources" / "App" / "Shared.swift"
    payloads = [edit_payload("MultiEdit", str(source), project, edits=[]) for _ in range(20)]
    run_concurrently(payloads, base_env(tmpdir, project), tmp_path / "inputs")
    assert expected_ledger(str(tmpdir), str(project)).read_text() == f"{source}\n"


# -- pre-tool-use -----------------------------------------------------------------------------


def grep_payload(tool_input: dict[str, object], cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "9b1c4c1e",
            "transcript_path": "/home/dev/.claude/projects/app/9b1c4c1e.jsonl",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Grep",
            "tool_input": tool_input,
        }
    ).encode()


def test_a_grep_over_swift_sources_gets_non_blocking_advice(project: Path, tmpdir: Path) -> None:
    tool_input = {"pattern": "fetchUser", "glob": "*.swift", "output_mode": "content", "-n": True}
    result = run_hook("pre-tool-use", grep_payload(tool_input, project), base_env(tmpdir, project))
    text = context(result, "PreToolUse")
    assert "mcp__xcindex__find_symbol" in text
    assert "mcp__xcindex__find_references" in text


def test_other_greps_and_bad_input_get_no_advice(project: Path, tmpdir: Path) -> None:
    env = base_env(tmpdir, project)
    assert (
        run_hook("pre-tool-use", grep_payload({"pattern": "TODO", "glob": "*.py"}, project), env).stdout
        == b""
    )
    bad = context(run_hook("pre-tool-use", b"\x89PNG", env), "PreToolUse")
    assert bad == "[xcindex] pre-tool-use: the hook input on stdin is not valid JSON; no advice given."


# -- session-start ----------------------------------------------------------------------------


def fake_store(package: Path, unit_mtime: float) -> None:
    units = package / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store" / "v5" / "units"
    units.mkdir(parents=True)
    (units.parent / "records").mkdir()
    unit = units / "App.swift.o-1A2B3C"
    unit.write_bytes(b"unit")
    os.utime(unit, (unit_mtime, unit_mtime))


def test_session_start_reports_and_clears(project: Path, tmpdir: Path) -> None:
    env = base_env(tmpdir, project)
    ledger_file = expected_ledger(str(tmpdir), str(project))
    ledger_file.write_text(f"{project}/Sources/App/Old.swift\n")
    startup = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}).encode()

    no_index = context(run_hook("session-start", startup, env), "SessionStart")
    assert no_index == (
        f"[xcindex] No index found for App: build one with `swift build --build-tests` in {project} "
        "to enable the xcindex tools."
    )
    assert ledger_file.read_bytes() == b""

    now = time.time()
    source = project / "Sources" / "App" / "App.swift"
    source.write_text("struct App {}\n")
    os.utime(source, (now - 100, now - 100))
    os.utime(project / "Package.swift", (now - 100, now - 100))
    fake_store(project, now - 10)
    current = context(run_hook("session-start", startup, env), "SessionStart")
    assert current.startswith("[xcindex] Index is current for App (last built ")

    os.utime(source, (now, now))
    stale = context(run_hook("session-start", startup, env), "SessionStart")
    assert stale.startswith("[xcindex] 1 Swift file(s) newer than the index for App (last built ")
    assert "): Sources/App/App.swift. Rebuild (`swift build --build-tests` in " in stale


def test_session_start_without_a_project(tmp_path: Path, tmpdir: Path) -> None:
    result = run_hook("session-start", None, base_env(tmpdir, tmp_path / "nothing-here"))
    assert context(result, "SessionStart").startswith("[xcindex] No Swift package or Xcode project in ")


def test_no_hook_ever_runs_a_build(project: Path, tmpdir: Path, tmp_path: Path) -> None:
    """A `swift` that records being called sits first on PATH; no hook may call it."""
    spy_bin = tmp_path / "spy-bin"
    spy_bin.mkdir()
    calls = tmp_path / "swift-calls"
    spy = spy_bin / "swift"
    spy.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(calls))}\n')
    spy.chmod(0o755)
    env = base_env(tmpdir, project)
    env["PATH"] = f"{spy_bin}{os.pathsep}{env['PATH']}"
    run_hook("session-start", None, env)
    run_hook("post-tool-use", edit_payload("Edit", str(project / "A.swift"), project), env)
    run_hook("pre-tool-use", grep_payload({"pattern": "App", "type": "swift"}, project), env)
    assert not calls.exists()
    assert not (project / ".build").exists()


# -- packaging and import weight --------------------------------------------------------------


def test_the_plugin_hooks_run_through_the_launcher_and_an_installed_xcindex(
    project: Path, tmpdir: Path, tmp_path: Path
) -> None:
    """hooks/hooks.json as Claude Code runs it (`${CLAUDE_PLUGIN_ROOT}` expanded, the command
    through `sh -c`), with this checkout's xcindex installed on PATH: the launcher adopts it
    (its version is the plugin's) and the hooks answer in the contract's JSON. The clean
    machine, where the launcher installs xcindex itself, is tests/e2e/test_plugin_install.py."""
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(config) == {"SessionStart", "PostToolUse", "PreToolUse"}
    assert [group.get("matcher") for group in config["PostToolUse"]] == ["Edit|Write|MultiEdit"]
    assert [group.get("matcher") for group in config["PreToolUse"]] == ["Grep"]
    env = base_env(tmpdir, project)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env["CLAUDE_PLUGIN_ROOT"] = str(REPO)
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "plugin-data")
    env["HOME"] = str(tmp_path / "home")
    setup = subprocess.run(
        [str(REPO / "bin" / "xcindex"), "--setup"], capture_output=True, env=env, timeout=60, check=False
    )
    assert setup.returncode == 0, setup
    assert setup.stderr.decode() == f"[xcindex] xcindex {_version()} is ready: {VENV_BIN / 'xcindex'}\n"
    payloads = {
        "SessionStart": b'{"hook_event_name": "SessionStart", "source": "startup"}',
        "PostToolUse": edit_payload("Edit", str(project / "A.swift"), project),
        "PreToolUse": grep_payload({"pattern": "fetchUser", "glob": "**/*.swift"}, project),
    }
    texts = {}
    for event, groups in config.items():
        (hook,) = [hook for group in groups for hook in group["hooks"]]
        assert hook["type"] == "command"
        assert hook["command"].startswith('"${CLAUDE_PLUGIN_ROOT}/bin/xcindex" hook ')
        command = hook["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
        result = subprocess.run(
            command, shell=True, input=payloads[event], capture_output=True, env=env, timeout=60, check=False
        )
        assert result.returncode == 0, result
        texts[event] = context(result, event)
    assert texts["PostToolUse"] == EDITED.format(name="A.swift")
    assert texts["SessionStart"].startswith("[xcindex] No index found for App")
    # Under the plugin, the nudge names the tools as the plugin exposes them.
    assert "mcp__plugin_xcindex_xcindex__find_symbol" in texts["PreToolUse"]
    # The server is declared in plugin.json (a .mcp.json at the root would also register it
    # as a project server of anyone working in this checkout, unresolvable there).
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["mcpServers"]["xcindex"] == {
        "command": "${CLAUDE_PLUGIN_ROOT}/bin/xcindex",
        "args": ["serve"],
    }
    assert not (REPO / ".mcp.json").exists()


def _version() -> str:
    from xcindex import __version__

    return __version__


HEAVY = ("anyio", "trio", "mcp", "cffi", "structlog", "lsprotocol", "pydantic")
EVERY_EDIT_AVOIDS = ("json", "dataclasses", "hashlib", "typing", "re", "enum", "pathlib")
"""Standard modules the hooks run on every edit and every search (post-tool-use,
pre-tool-use) do without: they read and write JSON with `hooks.input`/`hooks.output`, the
ledger's records with `_record`, and test a Grep's pattern and glob with hand-written
scanners (`re` with `enum` was a third of pre-tool-use's run)."""
SESSION_START_AVOIDS = (
    "json", "hashlib", "typing", "dataclasses", "subprocess", "shutil", "pathlib", "re", "enum",
)  # fmt: skip
"""session-start (once a session) finds the project, its SwiftPM index store and the
toolchain in plain strings (`pathlib` with its `re` and `urllib`, and the vocabulary's enums,
were half of the hook), with Records rather than dataclasses (which import inspect), and
without shutil or subprocess (nothing is run on Linux)."""


def top_level(modules: Iterable[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_the_hooks_are_import_light(project: Path, tmpdir: Path) -> None:
    """Running every hook in one interpreter loads none of the heavy dependencies, nor the
    standard modules session-start avoids."""
    avoided = (*HEAVY, *SESSION_START_AVOIDS)
    program = (
        "import io, sys\n"
        "from xcindex.cli.main import main\n"
        "for event in ('session-start', 'post-tool-use', 'pre-tool-use'):\n"
        "    sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'))\n"
        "    assert main(['hook', event]) == 0\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {avoided!r})\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env=base_env(tmpdir, project),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "HEAVY []"


def imported_by(event: str, payload: bytes, env: Mapping[str, str]) -> set[str]:
    """What `python -m xcindex hook <event>` imports (`-X importtime`), once it has answered."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "xcindex", "hook", event],
        input=payload,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert b'"additionalContext"' in result.stdout, result.stdout  # the hook did its job
    imported = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}
    assert "xcindex.hooks.events" in imported
    return imported


@pytest.mark.parametrize("event", ["post-tool-use", "pre-tool-use"])
def test_the_hooks_run_on_every_edit_and_search_import_nothing_they_can_do_without(
    project: Path, tmpdir: Path, event: str
) -> None:
    payload = (
        edit_payload("Edit", str(project / "A.swift"), project)
        if event == "post-tool-use"
        else grep_payload({"pattern": "fetchUser", "glob": "*.swift"}, project)
    )
    imported = top_level(imported_by(event, payload, base_env(tmpdir, project)))
    assert imported & {*HEAVY, *EVERY_EDIT_AVOIDS} == set()


SESSION_START = json.dumps(
    {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}
).encode()


def test_session_start_without_an_index_imports_nothing_heavy(project: Path, tmpdir: Path) -> None:
    imported = top_level(imported_by("session-start", SESSION_START, base_env(tmpdir, project)))
    assert imported & {*HEAVY, *SESSION_START_AVOIDS} == set()


@pytest.mark.toolchain
def test_session_start_on_a_built_package_imports_nothing_heavy(canary_store: Path, tmpdir: Path) -> None:
    """The whole way: the index located, its units' times and SwiftPM's build description read."""
    imported = top_level(imported_by("session-start", SESSION_START, base_env(tmpdir, CANARY)))
    assert imported & {*HEAVY, *SESSION_START_AVOIDS} == set()
