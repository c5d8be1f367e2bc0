"""`scripts/bench`: the whole benchmark in one command.

For each scale asked (S and M by default; L on request): generate and build the package
in the bench folder (outside git, reused), compile the C walker, then measure, in this
order: the raw walk, cold ingestion, start-up over stdio (no cache, with a cache),
sourcekit-lsp (from a cold scratch folder, then a warm restart), the first reconciled
plan_rename with a fresh cache and the later ones, warm latency in-process and over stdio
(plan_rename with and without reconciliation), the footprint, the refresh after a one-file
change, edit → fresh find_references without a build (the freshness overlay) beside the
compiler's incremental build, grep, the post-tool-use hook, and the starts (`--version`,
`--help`, a one-shot CLI question, every hook through the console script and the plugin's
launcher) beside `python -c pass`. Writes the JSON under `bench/results/`, prints the table
and regenerates `docs/benchmarks.md`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from bench import fresh, measure, real, rename_first, starts
from bench.build import bench_dir, compile_walker, prepare_package, run_walker, swift_version
from bench.generate import SCALES, load_manifest
from bench.report import render_markdown, write_docs
from xcindex import Engine
from xcindex.project.toolchain import find_library

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
DOCS = REPO / "docs" / "benchmarks.md"

T = TypeVar("T")


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def phase(timings: dict[str, float], name: str, work: Callable[[], T]) -> T:
    log(f"{name}…")
    started = time.perf_counter()
    try:
        return work()
    finally:
        timings[name] = round(time.perf_counter() - started, 1)
        log(f"{name}: {timings[name]} s")


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    # The editable install measures the working tree: say when src/ differs from HEAD.
    dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=REPO, capture_output=True, text=True)
    return {
        "host": platform.node(),
        "os": f"{platform.system()} {platform.release()}",
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory_gib,
        "python": platform.python_version(),
        "swift": swift_version(),
        "libindexstore": str(find_library()),
        "xcindex_commit": (commit.stdout.strip() or "unknown")
        + (" (+ uncommitted src)" if dirty.stdout.strip() else ""),
    }


def walks(binary: Path, store: Path, repeats: int) -> dict[str, Any]:
    """The C walk, best-of-`repeats` by total time (the limit is the fastest it can go); each
    run also timed as a process, spawn to exit (`process_s`: the peer of a spawned server's
    first answer)."""
    out: dict[str, Any] = {}
    for key, scope, threads in (("user_1", "user", 1), ("user_2", "user", 2), ("all_1", "all", 1)):
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            run = run_walker(binary, store, scope=scope, threads=threads)
            run["process_s"] = round(time.perf_counter() - started, 4)
            runs.append(run)
        out[key] = min(runs, key=lambda run: float(run["total_s"]))
        out[key]["best_process_s"] = min(float(run["process_s"]) for run in runs)
    return out


async def measure_scale(scale: str, base: Path, args: argparse.Namespace) -> dict[str, Any]:
    timings: dict[str, float] = {}
    result: dict[str, Any] = {"scale": scale, "phase_s": timings}

    built = phase(timings, f"{scale}: generate + swift build", lambda: prepare_package(scale, base))
    root, store = built.root, built.store
    result["package"] = built.to_json()
    manifest = load_manifest(root)
    binary = compile_walker(base, find_library())
    result["walk"] = phase(timings, f"{scale}: C walk", lambda: walks(binary, store, args.repeats))

    warm_cache = base / "cache" / scale
    scratch = warm_cache / "sourcekit-lsp"
    cold_root = base / "tmp"
    with measure.cache_env(warm_cache):
        async with Engine(measure.engine_config()) as engine:
            subjects = await measure.resolve_subjects(engine, root, manifest["queries"])
    result["subjects"] = [subject.to_json() for subject in subjects]
    blast_files = [str(root / path) for path in manifest["blast_radius"]]
    first = subjects[0]

    log(f"{scale}: cold ingestion x{args.repeats}")
    started = time.perf_counter()
    colds = []
    for attempt in range(args.repeats):
        colds.append(
            await measure.cold_in_process(root, measure.fresh_dir(cold_root / f"cold-{attempt}"), first)
        )
    result["cold_in_process"] = sorted(colds, key=lambda run: float(run["first_answer_s"]))[len(colds) // 2]
    result["cold_in_process"]["runs_first_answer_s"] = [run["first_answer_s"] for run in colds]
    timings[f"{scale}: cold ingestion"] = round(time.perf_counter() - started, 1)

    log(f"{scale}: start-up over stdio")
    started = time.perf_counter()
    result["startup_stdio"] = await measure.startup_stdio(root, cold_root, first, args.repeats)
    timings[f"{scale}: start-up over stdio"] = round(time.perf_counter() - started, 1)
    shutil.rmtree(cold_root, ignore_errors=True)

    with_lsp = not args.skip_lsp and (args.lsp_scale_list is None or scale in args.lsp_scale_list)
    if with_lsp:
        log(f"{scale}: sourcekit-lsp, cold scratch folder")
        started = time.perf_counter()
        shutil.rmtree(scratch, ignore_errors=True)
        cold_lsp = await measure.lsp_session(root, scratch, subjects, args.iterations)
        log(f"{scale}: sourcekit-lsp, warm restart")
        warm_lsp = await measure.lsp_session(root, scratch, subjects, args.iterations)
        result["lsp"] = {"cold": cold_lsp, "warm_restart": warm_lsp}
        timings[f"{scale}: sourcekit-lsp"] = round(time.perf_counter() - started, 1)

    if with_lsp:
        log(f"{scale}: the first reconciled plan_rename with a fresh cache, then the later ones")
        started = time.perf_counter()
        renames = [
            rename_first.Rename(subject.name, measure.RENAME_TARGET, subject.usr)
            for subject in subjects
            if subject.kind != "hub function"
        ]
        result["rename_first"] = await rename_first.reconciled_plans(
            root, measure.fresh_dir(base / "tmp-rename"), renames
        )
        shutil.rmtree(base / "tmp-rename", ignore_errors=True)
        timings[f"{scale}: first reconciled plan"] = round(time.perf_counter() - started, 1)

    with_rename = hasattr(Engine, "plan_rename")
    rename_modes = (False, True) if with_lsp else (False,)
    calls = measure.tool_calls(subjects, blast_files, with_rename=with_rename)
    log(f"{scale}: warm latency in-process")
    started = time.perf_counter()
    result["warm_in_process"] = await measure.warm_in_process(
        root, warm_cache, calls, args.iterations, rename_modes=rename_modes
    )
    timings[f"{scale}: warm in-process"] = round(time.perf_counter() - started, 1)
    log(f"{scale}: warm latency over stdio")
    started = time.perf_counter()
    stdio_calls = [call for call in calls if call.tool != "plan_rename" or with_lsp]
    result["warm_stdio"] = await measure.warm_stdio(root, warm_cache, stdio_calls, args.iterations)
    timings[f"{scale}: warm stdio"] = round(time.perf_counter() - started, 1)
    result["plan_rename_available"] = with_rename
    result["database"] = measure.database_footprint(store, warm_cache)

    log(f"{scale}: change_impact on a one-function change")
    started = time.perf_counter()
    result["change_impact"] = await measure.change_impact_latency(
        root, warm_cache, manifest["blast_radius"][0], args.iterations
    )
    timings[f"{scale}: change_impact"] = round(time.perf_counter() - started, 1)

    log(f"{scale}: refresh after a one-file change")
    started = time.perf_counter()
    result["refresh"] = await measure.refresh_after_edit(root, warm_cache, manifest["edit"], first)
    timings[f"{scale}: refresh after edit"] = round(time.perf_counter() - started, 1)

    log(f"{scale}: edit → fresh find_references (the overlay) x{args.fresh_edits}")
    started = time.perf_counter()
    result["edit_to_fresh"] = await fresh.edit_to_fresh(
        root, warm_cache, fresh.fresh_edits(int(manifest["families"]), args.fresh_edits)
    )
    timings[f"{scale}: edit → fresh"] = round(time.perf_counter() - started, 1)

    log(f"{scale}: edit elsewhere → fresh, new file → found (no hook) x{args.fresh_edits}")
    started = time.perf_counter()
    result["transitions"] = await fresh.transitions(
        root, warm_cache, int(manifest["families"]), max(1, args.fresh_edits // 2)
    )
    timings[f"{scale}: transitions"] = round(time.perf_counter() - started, 1)
    result["watch_cost"] = phase(timings, f"{scale}: watch cost", lambda: fresh.watch_cost(root))

    result["grep"] = phase(
        timings,
        f"{scale}: grep",
        lambda: {subject.name: measure.grep_subject(root, subject, args.iterations) for subject in subjects},
    )
    result["hook"] = phase(timings, f"{scale}: hook", lambda: measure.hook_latency(root, args.iterations))
    result["python_startup"] = measure.python_startup(min(args.iterations, 10))
    result["starts"] = phase(
        timings,
        f"{scale}: starts",
        lambda: {
            # More runs than the warm samples: a whole process is noisier than a call.
            "quick": starts.quick_commands(max(40, args.iterations)),
            "hooks": starts.hooks(root, max(40, args.iterations)),
            "one_shot": starts.one_shot_question(root, warm_cache, first.name, max(3, args.iterations // 4)),
        },
    )
    return result


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scales", default="S", help="comma-separated: S, M, L, XL (default S, a few minutes)"
    )
    parser.add_argument("--iterations", type=int, default=20, help="warm samples per call (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="cold and start-up runs (median; default 3)")
    parser.add_argument(
        "--skip-lsp", action="store_true", help="leave sourcekit-lsp out (and reconciled renames)"
    )
    parser.add_argument(
        "--lsp-scales",
        default=None,
        help="measure sourcekit-lsp only at these scales (default: every scale; its cold index of XL takes long)",
    )
    parser.add_argument(
        "--fresh-edits", type=int, default=6, help="one-file edits for edit → fresh (default 6, each rebuilt)"
    )
    parser.add_argument(
        "--corpus",
        default="",
        help="comma-separated corpus packages to measure the starts on too (the real scale): "
        "swift-log, yams, swift-atomics",
    )
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    args.corpus_list = [name.strip() for name in args.corpus.split(",") if name.strip()]
    strange = [name for name in args.corpus_list if name not in real.SUBJECTS]
    if strange:
        parser.error(f"unknown corpus package(s) {', '.join(strange)}; expected {', '.join(real.SUBJECTS)}")
    args.scale_list = [scale.strip().upper() for scale in args.scales.split(",") if scale.strip()]
    args.lsp_scale_list = (
        None
        if args.lsp_scales is None
        else [scale.strip().upper() for scale in args.lsp_scales.split(",") if scale.strip()]
    )
    unknown = [scale for scale in args.scale_list if scale not in SCALES]
    if unknown:
        parser.error(f"unknown scale(s) {', '.join(unknown)}; expected {', '.join(SCALES)}")
    return args


def compile_bytecode() -> None:
    """Write xcindex's bytecode, as an install does (pip compiles on install): an editable
    checkout run with PYTHONDONTWRITEBYTECODE would otherwise compile every module on every
    start and measure the compiler, not xcindex."""
    import compileall

    compileall.compile_dir(str(REPO / "src" / "xcindex"), quiet=1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_bytecode()
    base = bench_dir()
    base.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "bench_dir": str(base),
        "iterations": args.iterations,
        "repeats": args.repeats,
        "scales": {},
    }
    for scale in args.scale_list:
        scale_started = time.perf_counter()
        results["scales"][scale] = anyio.run(measure_scale, scale, base, args)
        results["scales"][scale]["elapsed_s"] = round(time.perf_counter() - scale_started, 1)
    for name in args.corpus_list:
        log(f"real: {name}")
        results.setdefault("real", {})[name] = anyio.run(real.measure_package, name, base, args)
        log(f"real: {name}: {results['real'][name]['elapsed_s']} s")
    results["elapsed_s"] = round(time.perf_counter() - started, 1)

    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    path = RESULTS / f"{stamp}-{'-'.join([*args.scale_list, *(['real'] if args.corpus_list else [])])}.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = render_markdown(results)
    print(table)
    log(f"results: {path.relative_to(REPO)}")
    if not args.no_docs:
        write_docs(DOCS, results, path.relative_to(REPO))
        log(f"docs: {DOCS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
