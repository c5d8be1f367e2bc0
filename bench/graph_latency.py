"""Warm in-process latency of the graph tools on one built benchmark package, per subject.

`python -m bench.graph_latency --scale M` asks call_hierarchy (incoming and outgoing, depth
1), type_hierarchy (supertypes and subtypes) about the benchmark's own subjects, after one
warm-up call each, and prints p50/p99 per tool and per (tool, subject), so the subject that
sets a tool's p99 is named; with the process's CPU time per call beside the wall time, a
figure the other sessions sharing the machine move less. The benchmark proper (`bench.run`) pools the same calls per
tool; this script is the closer look.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench.measure import Subject, cache_env, engine_config, resolve_subjects
from bench.stats import summary_ms
from xcindex import Engine

BENCH_ROOT = Path.home() / ".cache" / "xcindex-bench"


def graph_calls(subject: Subject) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    if any(word in subject.kind for word in ("method", "requirement", "function")):
        calls.append(("call_hierarchy incoming", {"usr": subject.usr, "direction": "incoming"}))
        calls.append(("call_hierarchy outgoing", {"usr": subject.usr, "direction": "outgoing"}))
    if subject.kind in ("class", "protocol", "marker protocol", "generic struct"):
        calls.append(("type_hierarchy subtypes", {"usr": subject.usr, "direction": "subtypes"}))
        calls.append(("type_hierarchy supertypes", {"usr": subject.usr, "direction": "supertypes"}))
    return calls


async def ask(engine: Engine, root: Path, label: str, args: dict[str, Any]) -> int:
    where = str(root)
    if label.startswith("call_hierarchy"):
        calls = await engine.call_hierarchy(args["usr"], direction=args["direction"], project_path=where)
        return len(calls.groups)
    types = await engine.type_hierarchy(args["usr"], direction=args["direction"], project_path=where)
    return len(types.links)


async def measure(root: Path, cache: Path, iterations: int) -> dict[str, Any]:
    manifest = json.loads((root / "bench-manifest.json").read_text())
    per_tool: dict[str, list[float]] = {}
    per_subject: dict[str, dict[str, Any]] = {}
    with cache_env(cache):
        async with Engine(engine_config(reconcile=False)) as engine:
            subjects = await resolve_subjects(engine, root, manifest["queries"])
            for subject in subjects:
                for label, args in graph_calls(subject):
                    size = await ask(engine, root, label, args)  # warm-up
                    samples: list[float] = []
                    cpu: list[float] = []
                    for _ in range(iterations):
                        started, started_cpu = time.perf_counter(), time.process_time()
                        await ask(engine, root, label, args)
                        samples.append(time.perf_counter() - started)
                        cpu.append(time.process_time() - started_cpu)
                    per_tool.setdefault(label, []).extend(samples)
                    per_subject[f"{label} {subject.name}"] = {
                        **summary_ms(samples),
                        "cpu_p50_ms": summary_ms(cpu)["p50_ms"],
                        "items": size,
                    }
    return {
        "per_tool": {label: summary_ms(samples) for label, samples in per_tool.items()},
        "per_subject": per_subject,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", default="M")
    parser.add_argument("--root", type=Path, help="a built benchmark package (default: the shared one)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--cache", type=Path, help="xcindex's cache folder (default: a temporary one)")
    args = parser.parse_args()
    root = args.root or BENCH_ROOT / args.scale
    with tempfile.TemporaryDirectory(prefix="xcindex-graph-latency-") as temporary:
        cache = args.cache or Path(temporary)
        result = anyio.run(measure, root, cache, args.iterations)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
