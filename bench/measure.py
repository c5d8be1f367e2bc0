"""The measurements of one run on one built package: xcindex in-process and over stdio,
the raw C walk, sourcekit-lsp, grep, the footprint and the post-tool-use hook.

Each function returns plain JSON-able dicts; `bench.run` strings them together and
`bench.report` renders them. Nothing here asserts a target: figures are reported as they
come, and every comparison is computed from the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.stats import Stopwatch, precision_recall, summary_ms
from xcindex import Engine
from xcindex.actors.lsp import LspPool
from xcindex.engine import EngineConfig
from xcindex.indexstore.database import CACHE_ENV, database_path_for
from xcindex.lsp.config import LspPoolConfig
from xcindex.tools.references import find_references as references_query

VENV_BIN = Path(sys.executable).parent
XCINDEX = VENV_BIN / "xcindex"
RENAME_TARGET = "renamedByBench"

Site = tuple[str, int, int]


@dataclass(frozen=True)
class Subject:
    """A named symbol the benchmark asks about, resolved through the index once."""

    kind: str
    name: str
    grep_word: str
    usr: str
    path: str
    line: int
    column: int
    sites: frozenset[Site]
    """Every source occurrence (the index's full answer, no cap): the truth for LSP and grep."""

    @property
    def files(self) -> set[str]:
        return {path for path, _, _ in self.sites}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "usr": self.usr,
            "definition": f"{self.path}:{self.line}:{self.column}",
            "sites": len(self.sites),
            "files": len(self.files),
        }


@contextlib.contextmanager
def cache_env(cache: Path) -> Iterator[None]:
    """Point xcindex (in this process) at `cache` for its databases and LSP scratch."""
    previous = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(cache)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = previous


def engine_config(*, reconcile: bool = True) -> EngineConfig:
    return EngineConfig(reconcile=reconcile)


async def timed(samples: list[float], call: Callable[[], Awaitable[Any]]) -> Any:
    started = time.perf_counter()
    result = await call()
    samples.append(time.perf_counter() - started)
    return result


# --- subjects ---------------------------------------------------------------------------


async def resolve_subjects(engine: Engine, root: Path, queries: list[dict[str, str]]) -> list[Subject]:
    subjects: list[Subject] = []
    for query in queries:
        found = await engine.find_symbol(query["name"], project_path=str(root))
        if not found.matches:
            raise RuntimeError(f"the index has no symbol {query['name']!r}: is the package built?")
        match = found.matches[0]
        usr = match.symbol.usr
        if match.definition is None:
            raise RuntimeError(f"{query['name']!r} resolved to an SDK symbol, not the package's")
        full = await engine._core.run_query(
            partial(references_query, usr=usr, max_results=10**9), project_path=str(root)
        )
        sites = frozenset(site.key for site in full.sites)
        subjects.append(
            Subject(
                query["kind"],
                query["name"],
                query["grep"],
                usr,
                match.definition.path,
                match.definition.line,
                match.definition.column,
                sites,
            )
        )
    return subjects


# --- the tool calls, in-process and over stdio -------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    tool: str
    arguments: dict[str, Any]
    """MCP arguments (projectPath added by the caller)."""


def tool_calls(subjects: list[Subject], blast_files: list[str], *, with_rename: bool) -> list[ToolCall]:
    """Every tool on named symbols of each kind it applies to."""
    calls: list[ToolCall] = []
    for subject in subjects:
        calls.append(ToolCall("find_symbol", {"symbolName": subject.name}))
        calls.append(ToolCall("find_references", {"usr": subject.usr}))
        calls.append(ToolCall("find_definition", {"usr": subject.usr}))
        if "method" in subject.kind or "requirement" in subject.kind:
            calls.append(ToolCall("find_overrides", {"usr": subject.usr}))
        if "protocol" in subject.kind and "requirement" not in subject.kind:
            calls.append(ToolCall("find_conformances", {"usr": subject.usr}))
        if "method" in subject.kind or "requirement" in subject.kind or "function" in subject.kind:
            calls.append(ToolCall("call_hierarchy", {"usr": subject.usr}))
        if subject.kind in ("class", "protocol", "marker protocol", "generic struct"):
            calls.append(ToolCall("type_hierarchy", {"usr": subject.usr, "direction": "subtypes"}))
        if with_rename and subject.kind != "hub function":
            calls.append(ToolCall("plan_rename", {"usr": subject.usr, "newName": RENAME_TARGET}))
    calls += [ToolCall("blast_radius", {"filePath": path}) for path in blast_files]
    calls.append(ToolCall("status", {}))
    return calls


async def call_engine(engine: Engine, root: Path, call: ToolCall, *, reconcile: bool = True) -> Any:
    where = str(root)
    args = call.arguments
    match call.tool:
        case "find_symbol":
            return await engine.find_symbol(args["symbolName"], project_path=where)
        case "find_references":
            return await engine.find_references(usr=args["usr"], project_path=where)
        case "find_definition":
            return await engine.find_definition(args["usr"], project_path=where)
        case "find_overrides":
            return await engine.find_overrides(args["usr"], project_path=where)
        case "find_conformances":
            return await engine.find_conformances(args["usr"], project_path=where)
        case "blast_radius":
            return await engine.blast_radius(args["filePath"], project_path=where)
        case "call_hierarchy":
            return await engine.call_hierarchy(args["usr"], project_path=where)
        case "type_hierarchy":
            return await engine.type_hierarchy(args["usr"], direction=args["direction"], project_path=where)
        case "status":
            return await engine.status(project_path=where)
        case "plan_rename":
            return await engine.plan_rename(
                args["usr"], args["newName"], project_path=where, reconcile_with_lsp=reconcile
            )
    raise ValueError(f"unknown tool {call.tool}")


def label(call: ToolCall, reconcile: bool) -> str:
    if call.tool == "plan_rename":
        return "plan_rename (reconciled)" if reconcile else "plan_rename (index only)"
    return call.tool


async def warm_in_process(
    root: Path, cache: Path, calls: list[ToolCall], iterations: int, *, rename_modes: tuple[bool, ...]
) -> dict[str, Any]:
    """p50/p99 of every tool against a warm database, through the Engine."""
    samples: dict[str, list[float]] = {}
    with cache_env(cache):
        async with Engine(engine_config()) as engine:
            for call in calls:
                for reconcile in rename_modes if call.tool == "plan_rename" else (True,):
                    await call_engine(engine, root, call, reconcile=reconcile)  # warm-up
                    bucket = samples.setdefault(label(call, reconcile), [])
                    for _ in range(iterations):
                        await timed(bucket, partial(call_engine, engine, root, call, reconcile=reconcile))
    return {tool: summary_ms(values) for tool, values in samples.items()}


def server_parameters(cache: Path) -> StdioServerParameters:
    env = {**os.environ, CACHE_ENV: str(cache)}
    return StdioServerParameters(command=str(XCINDEX), args=["serve", "--log-level", "warning"], env=env)


def process_tree_rss(pid: int) -> dict[str, float]:
    """RSS (MiB) of a process and of its descendants (the ingestion workers, sourcekit-lsp)."""

    def rss_of(p: int) -> float:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    descendants: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child in children.get(current, []):
            descendants.append(child)
            frontier.append(child)
    return {
        "server_rss_mib": round(rss_of(pid), 1),
        "descendants_rss_mib": round(sum(rss_of(child) for child in descendants), 1),
        "descendants": len(descendants),
    }


def find_server_pid() -> int | None:
    """The `xcindex serve` child of this process (the MCP client spawned it)."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == me and b"serve" in cmdline:
            return int(entry.name)
    return None


@contextlib.asynccontextmanager
async def stdio_client(cache: Path) -> AsyncIterator[Client]:
    async with Client(server_parameters(cache), read_timeout_seconds=3600) as client:
        yield client


async def call_stdio(client: Client, root: Path, call: ToolCall) -> Any:
    result = await client.call_tool(call.tool, {**call.arguments, "projectPath": str(root)})
    if result.is_error:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{call.tool} failed over stdio: {text}")
    return result.structured_content


async def warm_stdio(root: Path, cache: Path, calls: list[ToolCall], iterations: int) -> dict[str, Any]:
    """p50/p99 of every tool over the real stdio server, and its RSS after the warm open."""
    samples: dict[str, list[float]] = {}
    footprint: dict[str, float] = {}
    async with stdio_client(cache) as client:
        await call_stdio(client, root, ToolCall("status", {}))
        pid = find_server_pid()
        for call in calls:
            await call_stdio(client, root, call)
            bucket = samples.setdefault(label(call, True), [])
            for _ in range(iterations):
                await timed(bucket, partial(call_stdio, client, root, call))
            if pid is not None and not footprint and call.tool == "find_references":
                footprint = process_tree_rss(pid)
        if pid is not None:
            footprint["after_all_tools"] = process_tree_rss(pid)["server_rss_mib"]
    return {"latency": {tool: summary_ms(values) for tool, values in samples.items()}, "rss": footprint}


# --- start-up ----------------------------------------------------------------------------


async def first_answer_stdio(root: Path, cache: Path, subject: Subject) -> dict[str, Any]:
    """Spawn `xcindex serve`, then time to its first find_symbol and find_references answers."""
    started = time.perf_counter()
    async with stdio_client(cache) as client:
        initialized = time.perf_counter()
        found = await call_stdio(client, root, ToolCall("find_symbol", {"symbolName": subject.name}))
        first = time.perf_counter()
        refs = await call_stdio(client, root, ToolCall("find_references", {"usr": subject.usr}))
        second = time.perf_counter()
    usrs = {item["usr"] for item in found["results"]}
    return {
        "initialize_s": round(initialized - started, 3),
        "first_answer_s": round(first - started, 3),
        "first_references_s": round(second - started, 3),
        "correct": subject.usr in usrs and refs["totalCount"] == len(subject.sites),
    }


async def startup_stdio(root: Path, folder: Path, subject: Subject, repeats: int) -> dict[str, Any]:
    """Spawn → first answer `repeats` times with an empty cache (each in its own folder under
    `folder`), then as many times with each of those caches; the median run of each."""
    no_cache = [
        await first_answer_stdio(root, fresh_dir(folder / f"stdio-{attempt}"), subject)
        for attempt in range(repeats)
    ]
    with_cache = [
        await first_answer_stdio(root, folder / f"stdio-{attempt}", subject) for attempt in range(repeats)
    ]
    return {
        "no_cache": middle(no_cache, "first_answer_s"),
        "with_cache": middle(with_cache, "first_answer_s"),
    }


def middle(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The median run by `key`, with every run's figure."""
    ordered = sorted(runs, key=lambda run: float(run[key]))
    chosen = dict(ordered[len(ordered) // 2])
    chosen["runs"] = [run[key] for run in runs]
    chosen["median_of"] = len(runs)
    return chosen


async def cold_in_process(root: Path, cache: Path, subject: Subject) -> dict[str, Any]:
    """A first find_symbol against an empty cache: the cold ingestion, with its rate."""
    with cache_env(cache), Stopwatch() as whole:
        async with Engine(engine_config()) as engine:
            with Stopwatch() as first:
                found = await engine.find_symbol(subject.name, project_path=str(root))
            state = await engine.index_state(project_path=str(root))
    report = state.last_refresh
    counts = state.counts
    assert report is not None
    assert counts is not None
    return {
        "first_answer_s": round(first.seconds, 3),
        "with_engine_start_and_stop_s": round(whole.seconds, 3),
        "ingest_s": round(report.duration_s, 3),
        "records_read": report.counters.records_read,
        "units_read": report.counters.units_read,
        "occurrences": counts.occurrences,
        "relations": counts.relations,
        "symbols": counts.symbols,
        "occurrences_per_s": round(counts.occurrences / report.duration_s, 1) if report.duration_s else None,
        "correct": any(match.symbol.usr == subject.usr for match in found.matches),
    }


async def refresh_after_edit(
    root: Path, cache: Path, edit: dict[str, str], subject: Subject
) -> dict[str, Any]:
    """Warm engine; append to one file and rebuild (not timed as ours); time the next
    answer (which refreshes first) and read the refresh's own duration. Restores the file."""
    path = root / edit["path"]
    original = path.read_bytes()
    result: dict[str, Any] = {"edited": edit["path"]}
    with cache_env(cache):
        async with Engine(engine_config()) as engine:
            await engine.find_references(usr=subject.usr, project_path=str(root))
            try:
                path.write_bytes(original + edit["append"].encode())
                with Stopwatch() as rebuild:
                    _swift_build(root)
                result["compiler_rebuild_s"] = round(rebuild.seconds, 2)
                with Stopwatch() as answer:
                    await engine.find_references(usr=subject.usr, project_path=str(root))
                state = await engine.index_state(project_path=str(root))
                report = state.last_refresh
                assert report is not None
                result.update(
                    {
                        "next_answer_ms": round(answer.seconds * 1000, 1),
                        "refresh_ms": round(report.duration_s * 1000, 1),
                        "units_read": report.counters.units_read,
                        "records_read": report.counters.records_read,
                        "records_reused": report.counters.records_reused,
                    }
                )
            finally:
                path.write_bytes(original)
                _swift_build(root)
            await engine.find_references(usr=subject.usr, project_path=str(root))
    return result


def ensure_repository(root: Path) -> None:
    """change_impact compares against git: make the generated package a repository whose
    HEAD is the generated text (.build and .swiftpm excluded in .git/info/exclude, not in a
    tracked file), committing again when a regeneration changed files."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    if not (root / ".git").is_dir():
        git("init", "-q")
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    known = exclude.read_text().splitlines() if exclude.is_file() else []
    missing = [line for line in (".build/", ".swiftpm/") if line not in known]
    if missing:
        exclude.write_text("\n".join([*known, *missing]) + "\n")
    if git("status", "--porcelain"):
        git("add", "-A")
        git("commit", "-q", "--no-verify", "-m", "generated by bench/generate.py")


def one_function_edit(text: str) -> str:
    """Change what one function returns: `step3`'s first `total += …` line gains `+ 1`."""
    start = text.index("func step3(")
    line_start = text.index("total += ", start)
    line_end = text.index("\n", line_start)
    return text[:line_end] + " + 1" + text[line_end:]


async def change_impact_latency(root: Path, cache: Path, path: str, iterations: int) -> dict[str, Any]:
    """change_impact on a one-function change (a body, not yet rebuilt: what an agent asks
    right after editing), warm, through the Engine; git's own share reported apart. The
    file's bytes and modification time are restored afterwards."""
    ensure_repository(root)
    edited = root / path
    original = edited.read_bytes()
    stat = edited.stat()
    samples: list[float] = []
    git_ms: list[float] = []
    result: dict[str, Any] = {"edited": path, "function": "step3(input:)"}
    with cache_env(cache):
        async with Engine(engine_config(reconcile=False)) as engine:
            try:
                edited.write_text(one_function_edit(original.decode()))
                answer = await engine.change_impact(project_path=str(root))  # warm-up
                for _ in range(iterations):
                    answer = await timed(samples, partial(engine.change_impact, project_path=str(root)))
                    git_ms.append(answer.git_ms / 1000)
            finally:
                edited.write_bytes(original)
                os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result.update(
        {
            **summary_ms(samples),
            "git": summary_ms(git_ms),
            "changed_symbols": [f"{c.name} ({c.change})" for c in answer.changed],
            "covering_tests": len(answer.tests),
            "dependent_files": len(answer.dependent_files),
            "references": answer.reference_count,
        }
    )
    return result


def _swift_build(root: Path) -> None:
    subprocess.run(
        ["swift", "build", "--build-tests", "--package-path", str(root)],
        capture_output=True,
        check=True,
    )


# --- sourcekit-lsp -----------------------------------------------------------------------


def lsp_sites(root: Path, locations: list[Any]) -> set[Site]:
    return {
        (str(location.path), location.line, location.utf8_start_column)
        for location in locations
        if location.utf8_start_column is not None
    }


async def lsp_session(root: Path, scratch: Path, subjects: list[Subject], iterations: int) -> dict[str, Any]:
    """One sourcekit-lsp from spawn: initialize + synchronize (its background index) + the
    first references; then warm references on every subject, checked against the index.
    sourcekit-lsp as it runs on its own (it prepares and indexes the package in `scratch`),
    not as plan_rename runs it (reading the build: `rename_first`)."""
    pool = LspPool(
        LspPoolConfig(
            scratch_root=scratch,
            initialize_timeout=120.0,
            request_timeout=120.0,
            ready_timeout=3600.0,
            read_build=False,
        )
    )
    first = subjects[0]
    result: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        try:
            started = time.perf_counter()
            await pool.wait_ready(root)
            ready = time.perf_counter()
            answer = await pool.references(root, Path(first.path), first.line, first.column)
            answered = time.perf_counter()
            found = lsp_sites(root, answer)
            result.update(
                {
                    "ready_s": round(ready - started, 3),
                    "first_references_s": round(answered - started, 3),
                    "first_correct": found == set(first.sites),
                }
            )
            samples: list[float] = []
            agreement: dict[str, Any] = {}
            for subject in subjects:
                answer = await pool.references(root, Path(subject.path), subject.line, subject.column)
                found = lsp_sites(root, answer)
                truth = set(subject.sites)
                precision, recall = precision_recall({str(s) for s in found}, {str(s) for s in truth})
                agreement[subject.name] = {
                    "lsp_sites": len(found),
                    "index_sites": len(truth),
                    "site_precision": round(precision, 3),
                    "site_recall": round(recall, 3),
                }
                for _ in range(iterations):
                    await timed(
                        samples,
                        partial(pool.references, root, Path(subject.path), subject.line, subject.column),
                    )
            result["warm_references"] = summary_ms(samples)
            result["agreement"] = agreement
        finally:
            await pool.aclose()
            tg.cancel_scope.cancel()
    return result


# --- grep, the hook, the footprint -------------------------------------------------------


def grep_subject(root: Path, subject: Subject, iterations: int) -> dict[str, Any]:
    """`grep -rnw WORD Sources Tests`: latency, and file-level precision/recall vs the index."""
    command = ["grep", "-rnw", "--include=*.swift", subject.grep_word, "Sources", "Tests"]
    samples: list[float] = []
    output = ""
    for _ in range(iterations):
        started = time.perf_counter()
        output = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False).stdout
        samples.append(time.perf_counter() - started)
    files = {str(root / line.split(":", 1)[0]) for line in output.splitlines() if line}
    precision, recall = precision_recall(files, subject.files)
    return {
        "word": subject.grep_word,
        "matching_lines": len(output.splitlines()),
        "files": len(files),
        "index_files": len(subject.files),
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        **summary_ms(samples),
    }


def hook_latency(root: Path, iterations: int) -> dict[str, Any]:
    """`xcindex hook post-tool-use` as Claude Code runs it after an Edit, end to end."""
    edited = next(iter(sorted((root / "Sources").rglob("*.swift"))))
    payload = json.dumps(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": str(edited)},
            "cwd": str(root),
        }
    ).encode()
    samples: list[float] = []
    with tempfile.TemporaryDirectory(prefix="xcindex-bench-hook-") as tmp:
        env = {**os.environ, "TMPDIR": tmp, "CLAUDE_PROJECT_DIR": str(root)}
        for _ in range(iterations):
            started = time.perf_counter()
            subprocess.run(
                [str(XCINDEX), "hook", "post-tool-use"],
                input=payload,
                env=env,
                capture_output=True,
                check=True,
            )
            samples.append(time.perf_counter() - started)
    return summary_ms(samples)


def python_startup(iterations: int) -> dict[str, Any]:
    """The interpreter's own start-up, the floor under any Python hook."""
    samples: list[float] = []
    for _ in range(iterations):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append(time.perf_counter() - started)
    return summary_ms(samples)


def tree_size(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())


def database_footprint(store: Path, cache: Path) -> dict[str, Any]:
    with cache_env(cache):
        database = database_path_for(store)
    size = sum(
        Path(str(database) + suffix).stat().st_size
        for suffix in ("", "-wal", "-shm")
        if Path(str(database) + suffix).exists()
    )
    store_size = tree_size(store)
    return {
        "database_mib": round(size / 2**20, 2),
        "store_mib": round(store_size / 2**20, 2),
        "database_to_store": round(size / store_size, 3) if store_size else None,
    }


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
