"""The "real" scale: the starts measured on the corpus packages (real open-source code nobody
here wrote) beside the C walk of the same index store, in the same run.

`scripts/bench --corpus swift-log,yams,swift-atomics` prepares each package with
`shared/corpus/prepare` (unpacked and built once, in the bench folder) and measures what an
agent pays at every start: the raw walk (as a process, spawn to exit: the peer of a spawned
server's first answer), the cold ingestion, spawn `xcindex serve` → first answer with no
cache and with one, the first reconciled plan_rename with a fresh cache and the later ones,
a one-shot `xcindex refs` from a shell and the hooks. The benchmark's generated packages are
regular; these are not (swift-atomics: 82k occurrences in generic code on protocols with
static requirements).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from argparse import Namespace
from pathlib import Path
from typing import Any

from bench import measure, rename_first, starts
from bench.build import compile_walker, run_walker, store_of
from xcindex import Engine
from xcindex.project.toolchain import find_library

REPO = Path(__file__).resolve().parent.parent

SUBJECTS: dict[str, tuple[dict[str, str], tuple[tuple[str, str], ...]]] = {
    "swift-log": (
        {"kind": "struct", "name": "Logger", "grep": "Logger"},
        (("MultiplexLogHandler", "FanOutLogHandler"), ("StreamLogHandler", "TextLogHandler")),
    ),
    "yams": (
        {"kind": "enum", "name": "Node", "grep": "Node"},
        (("Mark", "Position"), ("Resolver", "TagResolver")),
    ),
    "swift-atomics": (
        {"kind": "class", "name": "ManagedAtomic", "grep": "ManagedAtomic"},
        (("UnsafeAtomic", "RawAtomic"), ("ManagedAtomicLazyReference", "LazyAtomicReference")),
    ),
}
"""What each package is asked: the first question (a type most of the package uses), and two
renames of types with uses in sources and tests (the second, and the first again, are the
later plans)."""


def shared_dir() -> Path:
    beside = REPO.parent / "shared"
    return beside if (beside / "corpus" / "prepare").is_file() else Path("/work/shared")


def prepare(name: str, base: Path) -> Path:
    """The built package (unpacked and built once per bench folder)."""
    result = subprocess.run(
        [str(shared_dir() / "corpus" / "prepare"), str(base / "corpus"), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"preparing the corpus package {name} failed: {result.stderr.strip()}")
    return Path(result.stdout.strip().splitlines()[-1])


async def measure_package(name: str, base: Path, args: Namespace) -> dict[str, Any]:
    """Every start on one corpus package, beside the walk of its store."""
    started = time.perf_counter()
    root = prepare(name, base)
    store = store_of(root)
    query, pairs = SUBJECTS[name]
    binary = compile_walker(base, find_library())
    result: dict[str, Any] = {"package": name, "root": str(root)}
    runs = [run_walker(binary, store, scope="user", threads=1) for _ in range(args.repeats)]
    process = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        run_walker(binary, store, scope="user", threads=1)
        process.append(time.perf_counter() - began)
    walk = min(runs, key=lambda run: float(run["total_s"]))
    walk["best_process_s"] = round(min(process), 4)
    result["walk"] = walk

    cold_root = base / "tmp-real"
    warm = base / "cache" / f"real-{name}"
    with measure.cache_env(warm):
        async with Engine(measure.engine_config()) as engine:
            subject = (await measure.resolve_subjects(engine, root, [query]))[0]
    result["subject"] = subject.to_json()
    colds = [
        await measure.cold_in_process(root, measure.fresh_dir(cold_root / f"cold-{attempt}"), subject)
        for attempt in range(args.repeats)
    ]
    result["cold_in_process"] = sorted(colds, key=lambda run: float(run["first_answer_s"]))[len(colds) // 2]
    result["startup_stdio"] = await measure.startup_stdio(root, cold_root, subject, args.repeats)
    shutil.rmtree(cold_root, ignore_errors=True)
    if not args.skip_lsp:
        renames = [rename_first.Rename(old, new, None) for old, new in pairs]
        result["rename_first"] = await rename_first.reconciled_plans(
            root, measure.fresh_dir(base / "tmp-real-rename"), renames
        )
        shutil.rmtree(base / "tmp-real-rename", ignore_errors=True)
    result["one_shot"] = starts.one_shot_question(root, warm, subject.name, max(3, args.iterations // 4))
    result["hooks"] = starts.hooks(root, max(20, args.iterations))
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    return result
