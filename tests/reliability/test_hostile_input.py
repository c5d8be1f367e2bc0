"""Bad input through the real MCP layer: one long-lived `xcindex serve`, a real client.

Hypothesis draws the arguments of every tool the server lists (read from `tools/list`, so
a new tool is covered the day it is registered): wrong types, missing and extra fields,
huge and negative numbers, empty and enormous strings, relative paths, `..`, symlinks,
files that are not what their names claim, FIFOs, NUL bytes, U+FFFD (what non-UTF-8 bytes
become on the wire; raw bytes are sent in test_raw_wire.py), invalid USRs and Swift
keywords as new names. Each call must come back as a valid answer or as an `isError` text
from the documented catalogue, naming the problem; never a traceback, an exception class
name or the catch-all "failed unexpectedly"; the server's log must not record a crash; and
the same server process must answer a good question right afterwards.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult

from tests.conftest import CANARY, REPO, load_expected
from tests.reliability.harness import (
    EXCEPTION_NAME,
    XCINDEX,
    new_tag,
    server_env,
    tagged_processes,
    without_echoes,
)
from xcindex.engine.registry import TOOLS
from xcindex.vocabulary import Completeness, RangeReason, RefusalReason, Tier, WarningCode

pytestmark = [pytest.mark.toolchain]

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- the documented catalogue of error texts -----------------------------------------------

ERROR_CATALOGUE: dict[str, tuple[str, str]] = {
    # key: (pattern the whole text must match, the snippet docs/tools.md documents it by)
    "missing_location": (
        r"Error: Either 'projectPath' or 'indexStorePath' must be provided\.",
        "Either 'projectPath' or 'indexStorePath' must be provided.",
    ),
    "invalid_arguments": (r"Error: invalid arguments for \w+: .+\.", "Error: invalid arguments for <tool>"),
    "not_absolute": (
        r"Error: '(projectPath|indexStorePath)' must be an absolute path; got '.*'\.",
        "must be an absolute path; got",
    ),
    "empty_or_nul": (
        r"Error: '(projectPath|indexStorePath|filePath)' must be a non-empty path without NUL characters\.",
        "must be a non-empty path without NUL characters",
    ),
    "refused_by_file_system": (
        r"Error: '(projectPath|indexStorePath)' cannot be used: .+ \('.*'\)\.",
        "cannot be used: <reason>",
    ),
    "package_without_store": (
        r"Error: No index store for the Swift package at '.*' \(looked for \.build/<triple>/debug/index/store\)\."
        r" Build it first: swift build --build-tests --package-path '.*'",
        "No index store for the Swift package at",
    ),
    "store_missing": (
        r"Error: No index store at '.*': the folder does not exist\.",
        "the folder does not exist",
    ),
    "store_is_a_file": (
        r"Error: '.*' is a file, not an index store folder\.",
        "is a file, not an index store folder",
    ),
    "not_a_store": (
        r"Error: '.*' is not an index store \(it has no v5/units folder\)\. .+",
        "has no v5/units folder",
    ),
    "project_missing": (r"Error: projectPath '.*' does not exist\.", "projectPath '<path>' does not exist."),
    "not_a_project": (
        r"Error: projectPath '.*' is neither an \.xcodeproj/\.xcworkspace nor a Swift package .+",
        "is neither an .xcodeproj/.xcworkspace nor a Swift package",
    ),
    "no_derived_data": (
        r"Error: No DerivedData folder for '.*' under .* — you haven't built the project in Xcode\. Build it first\.",
        "No DerivedData folder for",
    ),
    "derived_data_without_store": (
        r"Error: DerivedData folder '.*' exists but has no Index\.noindex/DataStore .+",
        "exists but has no Index.noindex/DataStore",
    ),
    "not_a_source_file": (
        r"Error: '.*' is not a source file of this index \(no live unit compiles it\)\. .+",
        "is not a source file of this index",
    ),
    "unknown_tool": (r"Error: unknown tool '.*'\. Known tools: .+\.", "unknown tool '<name>'"),
    "files_not_absolute": (
        r"Error: 'files' must be absolute paths; got '.*'\.",
        "'files' must be absolute paths",
    ),
    "ambiguous_name": (
        r"Error: '.*' names \d+ symbols; give one of their usr values instead: .*\.",
        "symbols; give one of their usr values instead",
    ),
    "not_a_git_repository": (
        r"Error: .* is not inside a git repository: change_impact compares against a git revision\.",
        "is not inside a git repository",
    ),
    "unknown_revision": (
        r"Error: git does not know the revision '.*' in .*\.",
        "git does not know the revision",
    ),
    "no_git": (
        r"Error: change_impact needs git, and no `git` is on PATH: install git\.",
        "no `git` is on PATH",
    ),
    "git_failed": (
        r"Error: git \S+ (failed in .*: .*|took longer than .* s in .*\.)",
        "git <command> failed in <repository>",
    ),
    "not_a_folder": (
        r"Error: .* is not a folder: give projectPath as the package or project folder\.",
        "is not a folder: give projectPath as the package or project folder",
    ),
    "no_sources": (
        r"Error: This index has no source files, so there is no repository to compare\.",
        "This index has no source files",
    ),
    "still_ingesting": (
        r"Error: The first ingestion of this index is still running \(\d+/\d+ records read\); ask again in a moment\.",
        "The first ingestion of this index is still running",
    ),
}

CATCH_ALL = "failed unexpectedly"


def catalogue_entry(text: str) -> str | None:
    for key, (pattern, _) in ERROR_CATALOGUE.items():
        if re.fullmatch(pattern, text, flags=re.DOTALL):
            return key
    return None


# -- the server under test -----------------------------------------------------------------


@dataclass
class LiveServer:
    portal: BlockingPortal
    client: Client
    schemas: dict[str, dict[str, Any]]
    tag: str
    log_file: Path
    store: str
    usrs: list[str]
    sources: list[str]
    hostile_paths: list[str]
    calls: int = 0
    _log_offset: int = field(default=0)

    def call(self, name: str, arguments: Any) -> CallToolResult:
        self.calls += 1
        result: CallToolResult = self.portal.call(partial(self.client.call_tool, name, arguments))
        return result

    def server_pids(self) -> set[int]:
        return {p.pid for p in tagged_processes(self.tag) if p.ppid == os.getpid()}

    def new_log(self) -> str:
        text = self.log_file.read_text(encoding="utf-8", errors="replace")
        fresh, self._log_offset = text[self._log_offset :], len(text)
        return fresh


def make_hostile_tree(root: Path, store: Path) -> list[str]:
    """Symlinks, loops, FIFOs and files whose names lie about what they are."""
    root.mkdir(parents=True)
    (root / "store-link").symlink_to(store)
    (root / "package-link").symlink_to(CANARY)
    (root / "loop").symlink_to(root / "loop")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "NotAPackage" / "Package.swift").mkdir(parents=True)
    (root / "Garbage").mkdir()
    (root / "Garbage" / "Package.swift").write_bytes(b"\xde\xad\xbe\xef\x00 not swift")
    garbage_units = (
        root / "GarbageBuilt" / ".build" / "x86_64-unknown-linux-gnu" / "debug" / "index" / "store"
    )
    (garbage_units / "v5" / "units").mkdir(parents=True)
    (garbage_units / "v5" / "records").mkdir()
    (garbage_units / "v5" / "units" / "Main.swift.o-GARBAGE").write_bytes(os.urandom(512))
    (root / "GarbageBuilt" / "Package.swift").write_text("// swift-tools-version:5.9\n", encoding="utf-8")
    (root / "Fake.xcodeproj").write_text("not a project", encoding="utf-8")
    (root / "FakeDir.xcworkspace").mkdir()
    (root / "file-store").write_text("not a store", encoding="utf-8")
    (root / "units-is-a-file" / "v5").mkdir(parents=True)
    (root / "units-is-a-file" / "v5" / "units").write_text("", encoding="utf-8")
    (root / "empty-store" / "v5" / "units").mkdir(parents=True)
    (root / "fifo-store" / "v5" / "units").mkdir(parents=True)
    os.mkfifo(root / "fifo-store" / "v5" / "units" / "unit-fifo")
    os.mkfifo(root / "fifo")
    os.mkfifo(root / "Fifo.swift")
    (root / "Dir.swift").mkdir()
    (root / "binary.swift").write_bytes(os.urandom(256))
    (root / "source-link.swift").symlink_to(CANARY / "Sources" / "CanaryCore" / "Greeter.swift")
    (root / "héllo wörld 世界").mkdir()
    names = [
        "store-link",
        "package-link",
        "package-link/Package.swift",
        "loop",
        "loop/x.xcodeproj",
        "dangling",
        "NotAPackage",
        "NotAPackage/Package.swift",
        "Garbage",
        "Garbage/Package.swift",
        "GarbageBuilt",
        "Fake.xcodeproj",
        "FakeDir.xcworkspace",
        "file-store",
        "units-is-a-file",
        "empty-store",
        "fifo-store",
        "fifo",
        "Fifo.swift",
        "Dir.swift",
        "binary.swift",
        "source-link.swift",
        "héllo wörld 世界",
    ]
    return [str(root / name) for name in names] + [
        "/",
        "/dev/null",
        "/dev/zero",
        "/proc/self/environ",
        "/proc/self/fd/0",
        "/etc/passwd",
        f"{store}/..",
        f"{store}/../store",
        f"{store}/v5",
        f"{store}/v5/units",
        f"/tmp/../{str(store).lstrip('/')}",
        str(CANARY / "Package.swift"),
        str(CANARY / "Sources"),
        "/" + "a" * 300,
        "/a" * 2000,
        "/tmp/nul\x00byte",
        "/tmp/\ufffd\ufffd",
        "~",
        "~/x",
        "~nosuchuser/x",
        "fixtures/SwiftCanary",
        "./Package.swift",
        "..",
        "../../etc/passwd",
        " /tmp",
        "/tmp\n",
    ]


@pytest.fixture(scope="module")
def live(
    canary_store: Path, warm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("hostile")
    hostile = make_hostile_tree(workdir / "tree", canary_store)
    tag = new_tag()
    log_file = workdir / "server.log"
    params = StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", "--log-file", str(log_file)],
        env=server_env(warm_cache, tag, {"CLAUDE_PROJECT_DIR": str(workdir)}),
        cwd=str(REPO),
    )
    with (
        start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(Client(params, read_timeout_seconds=300)) as client,
    ):
        listed = portal.call(client.list_tools)
        schemas = {tool.name: tool.input_schema for tool in listed.tools}
        live = LiveServer(portal, client, schemas, tag, log_file, str(canary_store), [], [], hostile)
        for entry in load_expected("symbols.json")[:40]:
            found = live.call("find_symbol", {"symbolName": entry["name"], "indexStorePath": live.store})
            live.usrs.extend(r["usr"] for r in (found.structured_content or {}).get("results", []))
            live.sources.append(str((CANARY / entry["definitionPath"]).resolve()))
        assert live.usrs, "the fixture's symbols are found"
        yield live


# -- what every answer must look like --------------------------------------------------------


def check_answer(live: LiveServer, tool: str, arguments: Any, result: CallToolResult) -> None:
    texts = [block.text for block in result.content if block.type == "text"]
    assert texts, f"{tool}: an answer without text"
    text = "\n".join(texts)
    assert CATCH_ALL not in text, f"{tool}({arguments!r}) crashed into the catch-all: {text}"
    leaked = EXCEPTION_NAME.findall(without_echoes(text, arguments))
    assert not leaked, f"{tool}({arguments!r}) leaked {leaked}: {text[:2000]}"
    if result.is_error:
        assert catalogue_entry(text) is not None, f"{tool}({arguments!r}): an undocumented error: {text!r}"
        if text.startswith("Error: invalid arguments"):
            sent = set(arguments) if isinstance(arguments, dict) else set()
            schema_fields = set(live.schemas.get(tool, {}).get("properties", {}))
            # 'files.0' names files; an extra key is quoted as it was sent.
            named = any(f"'{name}" in text for name in sent | schema_fields) or "give exactly one of" in text
            assert named, f"{tool}: the error names no argument: {text}"
        return
    structured = result.structured_content
    assert isinstance(structured, dict), f"{tool}: no structured content"
    check_verdict(tool, structured)


VERDICT_TOOLS = frozenset(tool.name for tool in TOOLS if "completeness" in tool.output_schema["properties"])
"""The tools whose answers carry the verdict fields (plan_rename and wait_for_fresh have their own)."""


def check_verdict(tool: str, structured: dict[str, Any]) -> None:
    codes = {str(code) for code in WarningCode}
    for warning in structured.get("warnings", []):
        assert warning["code"] in codes, f"{tool}: undocumented warning code {warning}"
        assert warning["message"]
    if tool in VERDICT_TOOLS:
        assert structured["completeness"] in {str(c) for c in Completeness}
        assert structured["completeness"] != Completeness.NO_INDEX, "no_index is never returned with data"
    elif tool == "plan_rename":
        refusal = structured["refusal"]
        assert refusal is None or refusal["reason"] in {str(r) for r in RefusalReason}
        for rename_range in structured["ranges"]:
            assert rename_range["tier"] in {str(t) for t in Tier}
            assert set(rename_range["reasons"]) <= {str(r) for r in RangeReason}


SHORT_WAIT = 0.2
"""Seconds: a valid timeout is honoured (wait_for_fresh on a file no unit compiles waits for
all of it), so the drawn ones are kept short."""


def bounded(live: LiveServer, tool: str, arguments: Any) -> Any:
    """The arguments with a short wait when the tool waits and none was given (default 60 s)."""
    if isinstance(arguments, dict) and "timeoutSeconds" in live.schemas.get(tool, {}).get("properties", {}):
        return {"timeoutSeconds": SHORT_WAIT, **arguments}
    return arguments


def logged_events(log: str) -> set[str]:
    """The events of the server's JSON log lines."""
    events: set[str] = set()
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            events.add(str(record.get("event")))
    return events


def ask_and_check(live: LiveServer, tool: str, arguments: Any) -> None:
    arguments = bounded(live, tool, arguments)
    before = live.server_pids()
    result = live.call(tool, arguments)
    log = live.new_log()
    check_answer(live, tool, arguments, result)
    if currently_in_test_context():  # the outcome mix, for --hypothesis-show-statistics
        text = "\n".join(block.text for block in result.content if block.type == "text")
        event(f"{tool}: {'error ' + str(catalogue_entry(text)) if result.is_error else 'answer'}")
    # The crash event, not the words: an argument may spell them (the log echoes it).
    assert "tool_call_crashed" not in logged_events(log), f"{tool}({arguments!r}) crashed:\n{log}"
    assert "Traceback" not in log, f"{tool}({arguments!r}) logged a traceback:\n{log}"
    # The same server process answers a good question right afterwards.
    good = live.call("find_symbol", {"symbolName": "UserService", "indexStorePath": live.store})
    assert not good.is_error
    assert [r["name"] for r in (good.structured_content or {})["results"]] == ["UserService"]
    assert len(before) == 1
    assert live.server_pids() == before


# -- strategies ------------------------------------------------------------------------------

TEXT = st.characters(exclude_categories=["Cs"])
"""Any Unicode scalar value (a lone surrogate cannot be encoded as UTF-8 JSON at all)."""

SWIFT_KEYWORDS = [
    "class",
    "func",
    "let",
    "var",
    "init",
    "deinit",
    "self",
    "Self",
    "Any",
    "protocol",
    "extension",
    "return",
    "if",
    "in",
    "is",
    "as",
    "try",
    "throws",
    "nil",
    "true",
    "_",
    "`class`",
    "`self`",
    "some",
    "actor",
    "await",
]
NAMES = [
    "UserService",
    "fetchUser(id:)",
    "fetchUser",
    "UserService.fetchUser(id:)",
    "Vector2D.+(_:_:)",
    "+",
    "==",
    "subscript(_:)",
    "init(auth:)",
    "'; DROP TABLE symbols; --",
    "%",
    "_%",
    "*",
    "(",
    ")",
    "()",
    ".",
    "..",
    "a.b.c.d(",
    "$(rm -rf ~)",
    "`whoami`",
    "\x00",
    "name\x00with nul",
    "\ufffd",
    "👋",
    "İstanbul",
    " UserService",
    "UserService\n",
    "é" * 4096,
]
BAD_USRS = [
    "s:",
    "c:",
    "s:10CanaryCore11UserServiceCX",
    "s:Si",
    "s:SS",
    "c:@F@main",
    "c:objc(cs)NSObject",
    "$s10CanaryCore",
    "not a usr",
    "s:" + "9" * 4000,
    "s:10CanaryCore11UserServiceC\x00",
    "' OR 1=1 --",
]


def hostile_text(live: LiveServer, field_name: str) -> st.SearchStrategy[str]:
    garbage = st.one_of(
        st.text(TEXT, max_size=40),
        st.text(TEXT, min_size=4090, max_size=4200),
        st.integers(0, 5000).map(lambda n: "x" * n),
    )
    if field_name in ("projectPath", "indexStorePath", "filePath"):
        pieces = st.sampled_from(
            ["..", ".", "tmp", "a" * 256, "é", "\ufffd", " ", "Package.swift", "v5", "units"]
        )
        built = st.lists(pieces, max_size=6).map(lambda parts: "/" + "/".join(parts))
        return st.one_of(st.sampled_from(live.hostile_paths), built, garbage)
    if field_name == "usr":
        return st.one_of(
            st.sampled_from(BAD_USRS),
            st.sampled_from(live.usrs).map(lambda usr: usr[:-1]),
            st.builds(lambda usr, tail: usr + tail, st.sampled_from(live.usrs), st.text(TEXT, max_size=5)),
            garbage,
        )
    if field_name == "newName":
        return st.one_of(st.sampled_from(SWIFT_KEYWORDS), st.sampled_from(NAMES), garbage, st.just(""))
    return st.one_of(st.sampled_from(NAMES), st.sampled_from(SWIFT_KEYWORDS), garbage)


def valid_value(live: LiveServer, field_name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    if field_name == "projectPath":
        return st.sampled_from([str(CANARY), str(CANARY / "Package.swift")])
    if field_name == "indexStorePath":
        return st.just(live.store)
    if field_name == "usr":
        return st.sampled_from(live.usrs)
    if field_name == "filePath":
        return st.sampled_from(live.sources)
    if field_name == "newName":
        return st.sampled_from(["AccountService", "renamed", "x", "_private", "Ünïcode"])
    if field_name == "symbolName":
        return st.sampled_from([entry["name"] for entry in load_expected("symbols.json")])
    if field_name == "files":
        return st.lists(st.sampled_from(live.sources), min_size=1, max_size=3)
    if spec.get("type") == "integer":
        return st.integers(spec.get("minimum", 0), spec.get("maximum", 1000))
    return st.text(TEXT, min_size=1, max_size=20)


def hostile_number() -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(),
        st.sampled_from([0, -1, -(2**31), 2**31, 2**63, 2**64 + 1, 10**30, -(10**30)]),
    )


WRONG_TYPES: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(TEXT, max_size=5), st.integers(), max_size=2),
    st.text(TEXT, max_size=10),
)


def timeouts(spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Short valid waits, and every kind of invalid one (never a long valid wait)."""
    top = spec.get("maximum", 600)
    return st.one_of(
        st.floats(0, SHORT_WAIT),
        st.sampled_from([-1, -0.001, top + 0.001, 10**30, -(10**30), "1", None, True, [1]]),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x < 0 or x > top),
        st.integers().filter(lambda x: x < 0 or x > top),
    )


def field_value(live: LiveServer, field_name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    types = {spec.get("type")} | {option.get("type") for option in spec.get("anyOf", [])}
    if field_name == "timeoutSeconds":
        return timeouts(spec)
    if "array" in types:
        paths = hostile_text(live, "filePath") | st.sampled_from(live.sources)
        return st.one_of(
            st.lists(st.sampled_from(live.sources), min_size=1, max_size=3),
            st.lists(paths, max_size=5),
            st.lists(
                st.sampled_from(live.sources),
                min_size=spec.get("maxItems", 200) + 1,
                max_size=spec.get("maxItems", 200) + 3,
            ),
            st.lists(WRONG_TYPES, min_size=1, max_size=3),
            WRONG_TYPES,
        )
    if "integer" in types or "number" in types:
        right_type: st.SearchStrategy[Any] = hostile_number() | st.floats(
            allow_nan=False, allow_infinity=False
        )
    else:
        right_type = hostile_text(live, field_name)
    return st.one_of(valid_value(live, field_name, spec), right_type, WRONG_TYPES)


def arguments_for(live: LiveServer, tool: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = live.schemas[tool]
    required = set(schema.get("required", []))

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        for name, spec in schema["properties"].items():
            # Mostly present (the interesting failures are deeper in), sometimes missing.
            keep = draw(st.integers(0, 9)) > (0 if name in required else 3)
            if keep:
                arguments[name] = draw(field_value(live, name, spec))
        extra = draw(
            st.dictionaries(
                st.text(TEXT, min_size=1, max_size=15).filter(lambda key: key not in schema["properties"]),
                WRONG_TYPES,
                max_size=2,
            )
            | st.just({})
        )
        return {**arguments, **extra}

    return build()


# -- the properties ----------------------------------------------------------------------------


def test_the_server_lists_every_tool_we_draw_arguments_for(live: LiveServer) -> None:
    assert set(live.schemas) >= {
        "find_symbol",
        "find_references",
        "find_definition",
        "find_overrides",
        "find_conformances",
        "blast_radius",
        "status",
        "plan_rename",
    }
    for schema in live.schemas.values():
        assert schema.get("additionalProperties") is False


@settings(SETTINGS, max_examples=300)
@given(data=st.data())
def test_any_arguments_to_any_tool_get_an_answer_or_a_documented_error(
    live: LiveServer, data: st.DataObject
) -> None:
    tool = data.draw(st.sampled_from(sorted(live.schemas)), label="tool")
    arguments = data.draw(arguments_for(live, tool), label="arguments")
    ask_and_check(live, tool, arguments)


@SETTINGS
@given(data=st.data())
def test_hostile_paths_in_every_path_argument(live: LiveServer, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(sorted(live.schemas)), label="tool")
    schema = live.schemas[tool]["properties"]
    where = data.draw(st.sampled_from([name for name in schema if name.endswith("Path")]), label="where")
    arguments: dict[str, Any] = {
        name: data.draw(valid_value(live, name, spec), label=name)
        for name, spec in schema.items()
        if name in live.schemas[tool].get("required", [])
    }
    arguments[where] = data.draw(hostile_text(live, where), label="path")
    if where == "projectPath" and data.draw(st.booleans(), label="with a good store"):
        # The store wins, but plan_rename still roots sourcekit-lsp at the projectPath.
        arguments["indexStorePath"] = live.store
    ask_and_check(live, tool, arguments)


@SETTINGS
@given(data=st.data())
def test_symbol_names_usrs_and_new_names(live: LiveServer, data: st.DataObject) -> None:
    tool = data.draw(
        st.sampled_from(
            sorted(
                t
                for t in live.schemas
                if {"usr", "symbolName", "newName"} & set(live.schemas[t]["properties"])
            )
        ),
        label="tool",
    )
    schema = live.schemas[tool]["properties"]
    arguments: dict[str, Any] = {"indexStorePath": live.store}
    for name in ("usr", "symbolName", "newName"):
        if name in schema:
            arguments[name] = data.draw(
                hostile_text(live, name) | valid_value(live, name, schema[name]), label=name
            )
    if tool == "find_references" and data.draw(st.booleans(), label="by usr"):
        arguments.pop("symbolName", None)
    elif tool == "find_references":
        arguments.pop("usr", None)
    ask_and_check(live, tool, arguments)


@pytest.mark.parametrize(
    ("tool", "cap", "top"), [("find_references", "maxResults", 500), ("plan_rename", "maxRanges", 5000)]
)
def test_caps_at_and_beyond_the_documented_bounds(live: LiveServer, tool: str, cap: str, top: int) -> None:
    for value in (-1, 0, 1, top, top + 1):
        arguments: dict[str, Any] = {"usr": live.usrs[0], cap: value, "indexStorePath": live.store}
        if tool == "plan_rename":
            arguments["newName"] = "Renamed"
        ask_and_check(live, tool, arguments)
        result = live.call(tool, arguments)
        assert result.is_error == (not 1 <= value <= top)


@SETTINGS
@given(data=st.data())
def test_caps_of_any_value_and_type(live: LiveServer, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(["find_references", "plan_rename"]), label="tool")
    cap = "maxResults" if tool == "find_references" else "maxRanges"
    arguments: dict[str, Any] = {"usr": data.draw(st.sampled_from(live.usrs)), "indexStorePath": live.store}
    arguments[cap] = data.draw(hostile_number() | WRONG_TYPES, label=cap)
    if tool == "plan_rename":
        arguments["newName"] = "Renamed"
    ask_and_check(live, tool, arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        None,
        {},
        {"projectPath": None, "indexStorePath": None},
        {"projectPath": ["/tmp"]},
        {"indexStorePath": {"path": "/tmp"}},
        {"projectPath": "relative/path"},
        {"indexStorePath": "/" + "a" * 300},
        {"projectPath": "/" + "a" * 300},
        {"projectPath": "/tmp/nul\x00byte"},
        {"indexStorePath": ""},
        {"indexStorePath": "x" * 4097},
    ],
)
def test_whole_argument_objects_that_are_wrong(live: LiveServer, arguments: Any) -> None:
    for tool in sorted(live.schemas):
        ask_and_check(live, tool, arguments)


def test_a_file_path_with_a_nul_byte_is_refused_by_name(live: LiveServer) -> None:
    for file_path in ("/tmp/a\x00b.swift", "\x00"):
        arguments = {"filePath": file_path, "indexStorePath": live.store}
        result = live.call("blast_radius", arguments)
        assert result.is_error
        check_answer(live, "blast_radius", arguments, result)


def test_unknown_tools_are_refused_by_name(live: LiveServer) -> None:
    for name in ("no_such_tool", "", "find_symbol ", "FIND_SYMBOL", "\x00", "x" * 10_000):
        result = live.call(name, {"indexStorePath": live.store})
        assert result.is_error
        check_answer(live, name, {"name": name}, result)


def test_plan_rename_with_a_hostile_project_path_still_answers_with_a_warning(live: LiveServer) -> None:
    """The store locates the index; the projectPath only roots sourcekit-lsp. A projectPath the
    file system refuses, or a relative one, costs the reconciliation, with its warning code."""
    for project in ("/" + "a" * 300, "/tmp/nul\x00byte", "fixtures/SwiftCanary"):
        arguments = {
            "usr": live.usrs[0],
            "newName": "Renamed",
            "indexStorePath": live.store,
            "projectPath": project,
        }
        result = live.call("plan_rename", arguments)
        check_answer(live, "plan_rename", arguments, result)
        codes = {w["code"] for w in (result.structured_content or {})["warnings"]}
        assert {"reconciliation_unavailable", "workspace_root_unresolved"} <= codes, result.structured_content


def test_every_error_text_in_the_catalogue_is_documented() -> None:
    documented = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    missing = [key for key, (_, snippet) in ERROR_CATALOGUE.items() if snippet not in documented]
    assert not missing, f"error texts the server returns but docs/tools.md does not list: {missing}"
