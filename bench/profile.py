"""Profiles behind the benchmark's misses, with pyinstrument (`pip install -e .[bench]`).

`python -m bench.profile --scale M` profiles, on the already built package of that scale:
a cold ingestion (empty cache), warm find_references, warm blast_radius of the hub file,
the refresh after a one-file change (rebuilt, then restored), and `import xcindex.server.sdk` (the stdio server's start-up). Text profiles are written under
`$XCINDEX_BENCH_DIR/profiles/` and their top lines printed.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pyinstrument import Profiler

from bench import measure
from bench.build import bench_dir, swift_build
from bench.generate import load_manifest
from bench.stats import Stopwatch
from xcindex import Engine
from xcindex.indexstore.database import Database
from xcindex.indexstore.pool import WorkerPool

REFRESH_DATABASE_STEPS = (  # the records are written by the index workers, in their processes
    "known_units",
    "known_failures",
    "known_records",
    "drop_units",
    "replace_units",
    "recompute_live_units",
    "collect_garbage",
)


async def profiled(name: str, out: Path, work: Callable[[], Awaitable[object]]) -> None:
    profiler = Profiler(interval=0.0005, async_mode="enabled")
    profiler.start()
    await work()
    profiler.stop()
    text = profiler.output_text(unicode=True, color=False, show_all=False)
    (out / f"{name}.txt").write_text(text, encoding="utf-8")
    print(f"\n===== {name} =====")
    print("\n".join(text.splitlines()[:60]))


async def main_async(scale: str, out: Path, iterations: int) -> None:
    base = bench_dir()
    root = base / scale
    manifest = load_manifest(root)
    warm_cache = base / "cache" / scale
    with measure.cache_env(warm_cache):
        async with Engine(measure.engine_config()) as engine:
            subjects = await measure.resolve_subjects(engine, root, manifest["queries"][:1])
    subject = subjects[0]

    cold_cache = measure.fresh_dir(base / "tmp" / "profile-cold")
    try:
        with measure.cache_env(cold_cache):

            async def cold() -> None:
                async with Engine(measure.engine_config()) as engine:
                    await engine.find_symbol(subject.name, project_path=str(root))

            await profiled(f"{scale}-cold-ingestion", out, cold)
    finally:
        shutil.rmtree(cold_cache, ignore_errors=True)

    hub = str(root / manifest["blast_radius"][1])
    with measure.cache_env(warm_cache):
        async with Engine(measure.engine_config()) as engine:
            await engine.find_references(usr=subject.usr, project_path=str(root))

            async def references() -> None:
                for _ in range(iterations):
                    await engine.find_references(usr=subject.usr, project_path=str(root))

            await profiled(f"{scale}-warm-find-references-x{iterations}", out, references)

            async def blast() -> None:
                for _ in range(max(1, iterations // 20)):
                    await engine.blast_radius(hub, project_path=str(root))

            await profiled(f"{scale}-warm-blast-radius-hub", out, blast)

            edit = manifest["edit"]
            path = root / edit["path"]
            original = path.read_bytes()
            try:
                path.write_bytes(original + edit["append"].encode())
                await anyio.to_thread.run_sync(swift_build, root)

                with timed_steps() as steps, Stopwatch() as whole:
                    await engine.find_references(usr=subject.usr, project_path=str(root))
                lines = [f"{whole.seconds * 1000:9.1f} ms  the first find_references after the rebuild"]
                lines += [
                    f"{seconds * 1000:9.1f} ms  {name} (x{calls})" for name, (seconds, calls) in steps.items()
                ]
                text = "\n".join(lines) + "\n"
                (out / f"{scale}-refresh-after-edit.txt").write_text(text, encoding="utf-8")
                print(f"\n===== {scale}-refresh-after-edit (time inside each step) =====\n{text}")
            finally:
                path.write_bytes(original)
                await anyio.to_thread.run_sync(swift_build, root)


@contextlib.contextmanager
def timed_steps() -> Iterator[dict[str, tuple[float, int]]]:
    """Time the refresh's steps, which run in worker threads and processes where a
    sampling profile of the event loop cannot see them: wrap them and add up."""
    steps: dict[str, tuple[float, int]] = {}
    targets: list[tuple[Any, str]] = [(Database, name) for name in REFRESH_DATABASE_STEPS]
    targets.append((WorkerPool, "run"))
    originals = {(owner, name): getattr(owner, name) for owner, name in targets}

    def wrap(owner: Any, name: str, original: Any) -> Any:
        label = f"{owner.__name__}.{name}"

        def record(started: float) -> None:
            seconds, calls = steps.get(label, (0.0, 0))
            steps[label] = (seconds + time.perf_counter() - started, calls + 1)

        if inspect.iscoroutinefunction(original):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    record(started)

            return timed_async

        def timed_sync(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                record(started)

        return timed_sync

    for (owner, name), original in originals.items():
        setattr(owner, name, wrap(owner, name, original))
    try:
        yield steps
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


def import_profile(out: Path) -> None:
    """`python -X importtime -c 'import xcindex.server.sdk'`, the heaviest imports first."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import xcindex.server.sdk"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1].strip()), parts[2].rstrip()))
    rows.sort(reverse=True)
    text = "\n".join(f"{cumulative / 1000:8.1f} ms  {name}" for cumulative, name in rows[:40])
    (out / "import-xcindex-server.txt").write_text(text + "\n", encoding="utf-8")
    print("\n===== import xcindex.server.sdk (cumulative) =====")
    print("\n".join(text.splitlines()[:25]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="M")
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args(argv)
    out = bench_dir() / "profiles"
    out.mkdir(parents=True, exist_ok=True)
    anyio.run(main_async, args.scale.upper(), out, args.iterations)
    import_profile(out)
    print(f"\nprofiles: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
