"""The hooks' logic, in process: input parsing, what each hook records and says.

The real command (`xcindex hook <event>` in a subprocess) is exercised in
tests/integration/test_hooks_cli.py.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from xcindex.hooks import events as hooks
from xcindex.hooks import input as hook_input
from xcindex.hooks.grep_advice import swift_identifier
from xcindex.project import ledger
from xcindex.project.candidates import Project, choose_project, find_projects
from xcindex.vocabulary import ProjectKind

NOTE = (
    "[xcindex] '{name}' was edited: xcindex re-indexes it on its own in a moment, so answers about its "
    "symbols stay fresh without a build (if it does not compile, they say it is stale and why)."
)
STALE_NOTE = (
    "[xcindex] '{name}' was edited: xcindex answers about its symbols may be stale until the next build."
)


def make_package(
    root: Path, *, sources: dict[str, float] | None = None, units: list[float] | None = None
) -> Path:
    """A Swift package folder; with `units`, a SwiftPM index store holding units of those mtimes."""
    root.mkdir(parents=True, exist_ok=True)
    manifest = root / "Package.swift"
    manifest.write_text("// swift-tools-version:5.9\n")
    os.utime(manifest, (1_000_000_000, 1_000_000_000))  # older than any index (it is a Swift file too)
    for relative, mtime in (sources or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("struct S {}\n")
        os.utime(path, (mtime, mtime))
    if units is not None:
        store = root / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store" / "v5"
        (store / "units").mkdir(parents=True)
        (store / "records").mkdir()
        for number, mtime in enumerate(units):
            unit = store / "units" / f"unit-{number}"
            unit.write_bytes(b"unit")
            os.utime(unit, (mtime, mtime))
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A hook's environment, with a toolchain of stand-ins: session-start looks for
    libIndexStore and sourcekit-lsp (a file, an executable), never runs them."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    library = tmp_path / "toolchain" / "libIndexStore.so"
    library.parent.mkdir()
    library.write_bytes(b"")
    lsp = tmp_path / "toolchain" / "sourcekit-lsp"
    lsp.write_text("#!/bin/sh\n")
    lsp.chmod(0o755)
    return {
        "TMPDIR": str(temp) + "/",
        "CLAUDE_PROJECT_DIR": str(project),
        "XCINDEX_LIBINDEXSTORE": str(library),
        "SOURCEKIT_LSP_PATH": str(lsp),
    }


def ledger_of(env: dict[str, str]) -> Path:
    return Path(ledger.ledger_path(env["CLAUDE_PROJECT_DIR"], env))


def post(tool: str, tool_input: object, cwd: str = "/work") -> bytes:
    payload = {
        "session_id": "0f1e2d3c",
        "transcript_path": "/home/me/.claude/projects/x/0f1e2d3c.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"filePath": "ignored", "success": True},
    }
    return json.dumps(payload).encode()


def grep(tool_input: dict[str, object], cwd: str) -> bytes:
    payload = {
        "session_id": "0f1e2d3c",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Grep",
        "tool_input": tool_input,
    }
    return json.dumps(payload).encode()


# -- input ----------------------------------------------------------------------------------


def test_parses_the_current_protocol_and_the_older_environment_variable() -> None:
    call = hook_input.parse_tool_call(post("Edit", {"file_path": "/a/B.swift"}), {})
    assert call == hook_input.ToolCall("Edit", {"file_path": "/a/B.swift"}, "/work")
    older = hook_input.parse_tool_call(b"", {"CLAUDE_TOOL_INPUT": '{"file_path": "/a/C.swift"}'})
    assert older == hook_input.ToolCall(None, {"file_path": "/a/C.swift"}, None)
    # Unreadable stdin falls back to the environment variable too.
    fallback = hook_input.parse_tool_call(b"{oops", {"CLAUDE_TOOL_INPUT": '{"path": "/a/D.h"}'})
    assert fallback.tool_input == {"path": "/a/D.h"}
    bare = hook_input.parse_tool_call(b'{"file_path": "/a/E.m"}', {})
    assert bare.tool_input == {"file_path": "/a/E.m"}
    relative_cwd = hook_input.parse_tool_call(b'{"tool_input": {}, "cwd": "not/absolute"}', {})
    assert relative_cwd.cwd is None


@pytest.mark.parametrize(
    ("stdin", "environ", "message"),
    [
        (b"", {}, "no hook input"),
        (b"   \n", {"CLAUDE_TOOL_INPUT": ""}, "no hook input"),
        (b"not json", {}, "not valid JSON"),
        (b"\xff\xfe\x00garbage", {}, "not valid JSON"),
        (b"[1, 2]", {}, "JSON list, not an object"),
        (b'"text"', {}, "JSON str, not an object"),
        (b'{"tool_name": 7, "tool_input": {}}', {}, "tool_name is not a string"),
        (b'{"tool_name": "Edit", "tool_input": "x"}', {}, "tool_input is not an object"),
        (b"", {"CLAUDE_TOOL_INPUT": "nope"}, "CLAUDE_TOOL_INPUT is not valid JSON"),
        (b"[" * 100_000, {}, "not valid JSON"),
    ],
)
def test_bad_input_is_reported_not_raised(stdin: bytes, environ: dict[str, str], message: str) -> None:
    with pytest.raises(hook_input.HookInputError, match=message):
        hook_input.parse_tool_call(stdin, environ)


# -- post-tool-use ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (
            "Edit",
            {"file_path": "/src/App/A.swift", "old_string": "a", "new_string": "b", "replace_all": False},
        ),
        ("Write", {"file_path": "/src/App/A.swift", "content": "struct A {}\n"}),
        ("MultiEdit", {"file_path": "/src/App/A.swift", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ("Edit", {"path": "/src/App/A.swift"}),
    ],
)
def test_an_edit_of_a_swift_file_is_recorded_with_a_note(
    env: dict[str, str], tool: str, tool_input: dict[str, object]
) -> None:
    assert hooks.post_tool_use(env, post(tool, tool_input)) == NOTE.format(name="A.swift")
    assert ledger_of(env).read_text() == "/src/App/A.swift\n"
    hooks.post_tool_use(env, post(tool, tool_input))
    assert ledger_of(env).read_text() == "/src/App/A.swift\n"


def test_the_note_says_stale_until_the_build_without_the_overlay_and_for_objective_c(
    env: dict[str, str],
) -> None:
    # The freshness overlay re-indexes Swift files only, and only when it is on.
    assert hooks.post_tool_use(env, post("Edit", {"file_path": "/src/App/B.m"})) == STALE_NOTE.format(
        name="B.m"
    )
    off = {**env, "XCINDEX_OVERLAY": "0"}
    assert hooks.post_tool_use(off, post("Edit", {"file_path": "/src/App/A.swift"})) == STALE_NOTE.format(
        name="A.swift"
    )


def test_relative_paths_are_made_absolute_against_the_hooks_cwd(env: dict[str, str]) -> None:
    hooks.post_tool_use(env, post("Edit", {"file_path": "Sources/./Core/../Core/B.mm"}, cwd="/repo"))
    assert ledger.read(ledger_of(env)) == {"/repo/Sources/Core/B.mm"}


def test_other_files_and_other_tools_are_ignored_silently(env: dict[str, str]) -> None:
    assert hooks.post_tool_use(env, post("Edit", {"file_path": "/src/README.md"})) is None
    assert hooks.post_tool_use(env, post("Read", {"file_path": "/src/A.swift"})) is None
    assert not ledger_of(env).exists()


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        ({"file_path": 42}, "file_path is not a string (got int)"),
        ({"file_path": ["/a.swift"]}, "file_path is not a string (got list)"),
        ({}, "names no file_path"),
        ({"file_path": ""}, "names no file_path"),
    ],
)
def test_a_tool_input_without_a_usable_path_says_why(
    env: dict[str, str], tool_input: dict[str, object], message: str
) -> None:
    line = hooks.post_tool_use(env, post("Edit", tool_input))
    assert line is not None
    assert line.startswith("[xcindex] post-tool-use: ")
    assert message in line
    assert line.endswith("no edit recorded.")


def test_an_unwritable_temporary_folder_is_reported(env: dict[str, str], tmp_path: Path) -> None:
    env["TMPDIR"] = str(tmp_path / "missing")
    line = hooks.post_tool_use(env, post("Write", {"file_path": "/src/A.swift"}))
    assert line == (
        f"[xcindex] Could not record the edit of 'A.swift' in the session ledger {ledger_of(env)}: "
        "No such file or directory. xcindex answers about its symbols may be stale until the next build."
    )


# -- pre-tool-use ----------------------------------------------------------------------------


def advice(line: str | None) -> str:
    """The handler's text: `main` wraps it in the hooks contract's JSON (checked below)."""
    assert line is not None
    assert "\n" not in line
    return line


SOURCE_SCOPES: list[dict[str, object]] = [
    {"glob": "*.swift"},
    {"glob": "Sources/**/*.{swift,h}"},
    {"type": "swift"},
    {"type": "objc"},
    {"path": "/src/App/UserService.swift"},
]


@pytest.mark.parametrize("scope", SOURCE_SCOPES)
def test_a_symbol_search_over_swift_sources_gets_advice(
    env: dict[str, str], scope: dict[str, object]
) -> None:
    text = advice(hooks.pre_tool_use(env, grep({"pattern": "UserService", **scope}, "/nowhere")))
    assert "`UserService` looks like a Swift symbol" in text
    assert "mcp__xcindex__find_symbol" in text
    assert "mcp__xcindex__find_references" in text
    assert "mcp__plugin_" not in text


@pytest.mark.parametrize("scope", SOURCE_SCOPES)
def test_a_plain_text_search_over_swift_sources_gets_nothing(
    env: dict[str, str], scope: dict[str, object]
) -> None:
    """TODOs, log messages and string literals are Grep's job: no advice costs the agent's context."""
    for pattern in ("TODO", "FIXME: remove", "could not connect"):
        assert hooks.pre_tool_use(env, grep({"pattern": pattern, **scope}, "/nowhere")) is None


def test_a_symbol_search_in_a_named_text_file_gets_nothing(env: dict[str, str], tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", sources={"Sources/Core/A.swift": time.time()})
    assert hooks.pre_tool_use(env, grep({"pattern": "Logger", "path": "README.md"}, str(package))) is None


def test_under_the_plugin_the_advice_names_the_plugins_tool_names(env: dict[str, str]) -> None:
    """A plugin's MCP tools are `mcp__plugin_<plugin>_<server>__<tool>`; Claude Code sets
    CLAUDE_PLUGIN_ROOT for a plugin's hooks."""
    env["CLAUDE_PLUGIN_ROOT"] = "/home/me/.claude/plugins/cache/xcindex/xcindex/0.1.0"
    text = advice(hooks.pre_tool_use(env, grep({"pattern": "UserService", "type": "swift"}, "/nowhere")))
    for tool in ("find_symbol", "find_references", "find_definition", "blast_radius", "plan_rename"):
        assert f"mcp__plugin_xcindex_xcindex__{tool}" in text
    assert "mcp__xcindex__" not in text


def test_an_identifier_search_in_a_swift_project_names_the_symbol(
    env: dict[str, str], tmp_path: Path
) -> None:
    package = make_package(tmp_path / "pkg", sources={"Sources/Core/A.swift": time.time()})
    for pattern in (
        "UserService",
        r"\bfetchUser\(",
        "func fetchUser",
        r"class\s+AppDelegate",
        "fetchUser(id:)",
    ):
        text = advice(
            hooks.pre_tool_use(env, grep({"pattern": pattern, "path": "Sources/Core"}, str(package)))
        )
        name = swift_identifier(pattern)
        assert name is not None
        assert f"`{name}` looks like a Swift symbol" in text


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        (r"\.deposit\(", "deposit"),
        (r"\bdecode\(", "decode"),
        ("log(", "log"),
        (r"\.count\b", "count"),
        (".isEmpty", "isEmpty"),
        (r"deposit\(amount:", "deposit"),
    ],
)
def test_a_call_or_member_search_of_a_one_word_name_gets_advice(
    env: dict[str, str], pattern: str, name: str
) -> None:
    """Most Swift methods are one lowercase word: `\\.deposit\\(` in *.swift is a symbol search."""
    text = advice(hooks.pre_tool_use(env, grep({"pattern": pattern, "glob": "*.swift"}, "/nowhere")))
    assert text.startswith(f"[xcindex] `{name}` looks like a Swift symbol. ")


@pytest.mark.parametrize("pattern", ["deposit", "decode", "TODO(", "log message", r"\bTODO\b"])
def test_a_lone_lowercase_word_or_a_marker_is_still_plain_text(env: dict[str, str], pattern: str) -> None:
    assert hooks.pre_tool_use(env, grep({"pattern": pattern, "glob": "*.swift"}, "/nowhere")) is None


@pytest.mark.parametrize(
    "tool_input",
    [
        {"pattern": "UserService"},  # no Swift project around
        {"pattern": "TODO"},
        {"pattern": "UserService", "glob": "*.py"},
        {"pattern": "UserService", "type": "py"},
        {"pattern": "fetch.*User"},
    ],
)
def test_other_greps_get_no_advice(
    env: dict[str, str], tmp_path: Path, tool_input: dict[str, object]
) -> None:
    assert hooks.pre_tool_use(env, grep(tool_input, str(tmp_path))) is None


def test_plain_text_searches_in_a_swift_project_get_no_advice(env: dict[str, str], tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg")
    for pattern in ("TODO", "user", "error: .*", "Could not load"):
        assert hooks.pre_tool_use(env, grep({"pattern": pattern}, str(package))) is None


def test_pre_tool_use_ignores_other_tools_and_reports_bad_input(env: dict[str, str]) -> None:
    other = json.dumps({"tool_name": "Glob", "tool_input": {"pattern": "**/*.swift"}}).encode()
    assert hooks.pre_tool_use(env, other) is None
    assert (
        hooks.pre_tool_use(env, b"{")
        == "[xcindex] pre-tool-use: the hook input on stdin is not valid JSON; no advice given."
    )
    wrong = grep({"pattern": "X", "glob": 3}, "/")
    assert (
        hooks.pre_tool_use(env, wrong)
        == "[xcindex] pre-tool-use: glob is not a string (got int); no advice given."
    )


# -- session-start ----------------------------------------------------------------------------


def session_start(env: dict[str, str], source: str = "startup") -> str:
    payload = {"session_id": "s", "hook_event_name": "SessionStart", "source": source, "cwd": "/x"}
    return hooks.session_start(env, json.dumps(payload).encode())


def test_session_start_without_a_project(env: dict[str, str]) -> None:
    assert session_start(env) == (
        f"[xcindex] No Swift package or Xcode project in {env['CLAUDE_PROJECT_DIR']} (or a folder above "
        "it): the xcindex tools have nothing to answer about here."
    )


def test_a_session_started_in_a_subfolder_finds_its_package(env: dict[str, str]) -> None:
    now = time.time()
    project = make_package(
        Path(env["CLAUDE_PROJECT_DIR"]) / "Package",
        sources={"Sources/A/A.swift": now - 100},
        units=[now - 50],
    )
    env["CLAUDE_PROJECT_DIR"] = str(project / "Sources" / "A")
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(now - 50))
    assert session_start(env) == (
        f"[xcindex] Index is current for Package (last built {built}): "
        "the xcindex tools (mcp__xcindex__*) answer from it."
    )


def test_session_start_without_libindexstore_says_the_tools_cannot_answer(env: dict[str, str]) -> None:
    now = time.time()
    make_package(Path(env["CLAUDE_PROJECT_DIR"]), sources={"Sources/A/A.swift": now - 100}, units=[now - 50])
    env["XCINDEX_LIBINDEXSTORE"] = "/nowhere/libIndexStore.so"
    assert session_start(env) == (
        "[xcindex] xcindex cannot read the index of project: XCINDEX_LIBINDEXSTORE points at "
        "'/nowhere/libIndexStore.so', which is not a file. Until then its tools answer with this error."
    )


def test_session_start_without_sourcekit_lsp_says_what_it_costs(env: dict[str, str]) -> None:
    now = time.time()
    make_package(Path(env["CLAUDE_PROJECT_DIR"]), sources={"Sources/A/A.swift": now - 100}, units=[now - 50])
    env["SOURCEKIT_LSP_PATH"] = "/nowhere/sourcekit-lsp"
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(now - 50))
    assert session_start(env) == (
        f"[xcindex] Index is current for project (last built {built}): the xcindex tools "
        "(mcp__xcindex__*) answer from it. (sourcekit-lsp: SOURCEKIT_LSP_PATH points at "
        "/nowhere/sourcekit-lsp, which does not exist. Until one is found, plan_rename's ranges are not "
        "verified by it and the other tools answer from the index alone.)"
    )


def test_session_start_without_an_index_names_the_build_command(env: dict[str, str]) -> None:
    project = make_package(Path(env["CLAUDE_PROJECT_DIR"]), sources={"Sources/A/A.swift": time.time()})
    assert session_start(env) == (
        f"[xcindex] No index found for {project.name}: build one with `swift build --build-tests` "
        f"in {project} to enable the xcindex tools."
    )


def test_session_start_with_a_current_index(env: dict[str, str]) -> None:
    now = time.time()
    project = make_package(
        Path(env["CLAUDE_PROJECT_DIR"]), sources={"Sources/A/A.swift": now - 100}, units=[now - 200, now - 50]
    )
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(now - 50))
    assert session_start(env) == (
        f"[xcindex] Index is current for {project.name} (last built {built}): "
        "the xcindex tools (mcp__xcindex__*) answer from it."
    )


def test_session_start_names_the_first_five_newer_files_newest_first(env: dict[str, str]) -> None:
    now = time.time()
    sources = {f"Sources/A/File{i}.swift": now - 100 + i for i in range(7)}
    sources["Sources/A/Old.swift"] = now - 1000
    # Build products, checkouts and dependencies are not the project's sources.
    for pruned in (".build/checkouts/Dep", ".git/x", "Pods/P", "node_modules/m", "DerivedData/D"):
        sources[f"{pruned}/Newer.swift"] = now
    project = make_package(Path(env["CLAUDE_PROJECT_DIR"]), sources=sources, units=[now - 500])
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(now - 500))
    newest = ", ".join(f"Sources/A/File{i}.swift" for i in (6, 5, 4, 3, 2))
    assert session_start(env) == (
        f"[xcindex] 7 Swift file(s) newer than the index for {project.name} (last built {built}): "
        f"{newest}, .... Rebuild (`swift build --build-tests` in {project}) before trusting xcindex "
        "answers about them."
    )


def test_an_empty_store_is_no_index(env: dict[str, str]) -> None:
    make_package(Path(env["CLAUDE_PROJECT_DIR"]), units=[])
    assert session_start(env).startswith("[xcindex] No index found for project: ")


def test_session_start_clears_the_ledger_except_after_a_compaction(env: dict[str, str]) -> None:
    target = ledger_of(env)
    ledger.append("/src/A.swift", target)
    session_start(env, source="compact")
    assert ledger.read(target) == {"/src/A.swift"}
    session_start(env, source="resume")
    assert ledger.read(target) == frozenset()
    ledger.append("/src/A.swift", target)
    hooks.session_start(env, b"this is not json")
    assert ledger.read(target) == frozenset()


def test_session_start_reports_an_unwritable_temporary_folder(env: dict[str, str], tmp_path: Path) -> None:
    env["TMPDIR"] = str(tmp_path / "missing")
    line = session_start(env)
    assert "\n" not in line
    assert line.endswith(
        f" (Could not reset the session ledger {ledger_of(env)}: No such file or directory; "
        "edits will not be tracked.)"
    )


def test_find_projects_prefers_shallow_packages_then_workspaces_then_projects(tmp_path: Path) -> None:
    (tmp_path / "App.xcodeproj").mkdir()
    (tmp_path / "App.xcworkspace").mkdir()
    (tmp_path / "App.xcodeproj" / "project.xcworkspace").mkdir()  # Xcode's own, inside the bundle
    make_package(tmp_path / "Packages" / "Kit")
    make_package(tmp_path / ".build" / "checkouts" / "Dep")
    make_package(tmp_path / "a" / "b" / "c" / "TooDeep")
    found = find_projects(tmp_path)
    assert found == [
        Project(tmp_path / "App.xcworkspace", ProjectKind.XCODE),
        Project(tmp_path / "App.xcodeproj", ProjectKind.XCODE),
        Project(tmp_path / "Packages" / "Kit", ProjectKind.SWIFTPM),
    ]
    assert [p.name for p in found] == ["App", "App", "Kit"]
    assert [p.root for p in found] == [tmp_path, tmp_path, tmp_path / "Packages" / "Kit"]
    # A project in the folder itself is the one it means, local packages below notwithstanding.
    assert choose_project(tmp_path, found) == found[0]


def test_several_unrelated_projects_below_are_never_adopted(env: dict[str, str]) -> None:
    home = Path(env["CLAUDE_PROJECT_DIR"])
    now = time.time()
    make_package(home / "src" / "Alpha", sources={"Sources/A/A.swift": now - 100}, units=[now - 50])
    make_package(home / "src" / "Beta", sources={"Sources/B/B.swift": now - 100}, units=[now - 50])
    found = find_projects(home)
    assert choose_project(home, found) is None
    assert session_start(env) == (
        f"[xcindex] Several Swift projects below {home} (src/Alpha, src/Beta): the xcindex tools answer "
        "about the one named by their projectPath argument; none is assumed."
    )


def test_one_project_folder_below_is_adopted(tmp_path: Path) -> None:
    (tmp_path / "ios" / "App.xcodeproj").mkdir(parents=True)
    make_package(tmp_path / "ios")
    found = find_projects(tmp_path)
    assert choose_project(tmp_path, found) == Project(tmp_path / "ios", ProjectKind.SWIFTPM)


# -- main ----------------------------------------------------------------------------------


def test_main_always_returns_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(environ: object, stdin: bytes) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(hooks._HANDLERS, "session-start", broken)
    assert hooks.main("session-start") == 0
    assert json.loads(capsys.readouterr().out) == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "[xcindex] The session-start hook could not do its job: RuntimeError: disk on fire",
        }
    }
    assert hooks.main("no-such-event") == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Unknown hook event 'no-such-event'" in captured.err


def test_the_import_light_project_kinds_are_the_vocabularys() -> None:
    """The session-start hook compares plain strings; everyone else compares ProjectKind."""
    from xcindex.project import candidates

    assert ProjectKind.SWIFTPM.value == candidates.SWIFTPM
    assert ProjectKind.XCODE.value == candidates.XCODE
    project = Project("/work/App.xcodeproj", ProjectKind.XCODE)
    assert project.kind is ProjectKind.XCODE
    assert (project.name, project.root_folder) == ("App", "/work")
