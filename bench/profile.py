"""Profiles behind the benchmark's misses, with pyinstrument (`pip install -e .[bench]`).

`python -m bench.profile --scale M` profiles, on the already built package of that scale:
a cold ingestion (empty cache), warm find_references, warm blast_radius of the hub file,
and `import xcindex.server` (the stdio server's start-up). Text profiles are written under
`$XCINDEX_BENCH_DIR/profiles/` and their top lines printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio
from pyinstrument import Profiler

from bench import measure
from bench.build import bench_dir
from bench.generate import load_manifest
from xcindex import Engine


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


def import_profile(out: Path) -> None:
    """`python -X importtime -c 'import xcindex.server'`, the heaviest imports first."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import xcindex.server"],
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
    print("\n===== import xcindex.server (cumulative) =====")
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
