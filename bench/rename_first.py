"""The first reconciled plan_rename with a fresh cache, and the later ones: how long an agent
waits for sourcekit-lsp to confirm a rename plan.

`bench.run` measures it on each scale's subjects; on its own it measures any built package,
a corpus one included (the corpus cache's lock is held meanwhile, as tests/corpus does):

    python -m bench.rename_first PACKAGE NAME NEW_NAME [NAME NEW_NAME ...] [--own-index]

`--own-index` measures the way before sourcekit-lsp read the build (it prepares and
indexes the package itself in its scratch folder), for the before/after figures.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from bench.measure import cache_env
from xcindex import Engine
from xcindex.engine import EngineConfig
from xcindex.lsp.config import LspPoolConfig


@dataclass(frozen=True)
class Rename:
    name: str
    new_name: str
    usr: str | None = None
    """None: the symbol `name` resolves to (find_symbol)."""


async def reconciled_plans(
    root: Path, cache: Path, renames: Sequence[Rename], *, read_build: bool = True
) -> dict[str, Any]:
    """With `cache` an empty folder: the first ingestion (a find_symbol), then the first
    reconciled plan (sourcekit-lsp started, ready and asked), then every other rename and the
    first one again (later plans), then the first one from the index alone (what the plan
    itself costs)."""
    where = str(root)
    config = EngineConfig(lsp=LspPoolConfig(scratch_root=cache / "sourcekit-lsp", read_build=read_build))
    plans: list[dict[str, Any]] = []
    with cache_env(cache):
        async with Engine(config) as engine:
            started = time.perf_counter()
            usrs = []
            for rename in renames:
                found = await engine.find_symbol(rename.name, project_path=where)
                usr = rename.usr or (found.resolved.symbol.usr if found.resolved is not None else None)
                if usr is None:
                    raise SystemExit(f"{rename.name} does not name one symbol in {root}")
                usrs.append(usr)
            ingested = time.perf_counter() - started
            order = [*range(len(renames)), 0]
            for position, index in enumerate(order):
                started = time.perf_counter()
                plan = await engine.plan_rename(usrs[index], renames[index].new_name, project_path=where)
                plans.append(
                    {
                        "name": renames[index].name,
                        "first": position == 0,
                        "seconds": round(time.perf_counter() - started, 3),
                        "summary": plan.summary(),
                        "warnings": sorted({str(code) for code, _ in plan.warnings}),
                    }
                )
            started = time.perf_counter()
            await engine.plan_rename(
                usrs[0], renames[0].new_name, project_path=where, reconcile_with_lsp=False
            )
            index_only = time.perf_counter() - started
    later = [plan["seconds"] for plan in plans[1:]]
    return {
        "read_build": read_build,
        "ingest_s": round(ingested, 3),
        "first_plan_s": plans[0]["seconds"],
        "later_plans_s": later,
        "later_p50_s": round(statistics.median(later), 3) if later else None,
        "later_max_s": max(later) if later else None,
        "index_only_plan_s": round(index_only, 3),
        "load_average": round(os.getloadavg()[0], 2),
        "plans": plans,
    }


@contextmanager
def corpus_lock(root: Path) -> Iterator[None]:
    """The corpus cache's lock (tests/corpus/harness.py `hold_cache`) when `root` is in it:
    the proofs apply renames to those very packages."""
    lock_path = root.parent / ".lock"
    if not lock_path.exists():
        yield
        return
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rename_first", description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("renames", nargs="+", help="NAME NEW_NAME pairs")
    parser.add_argument("--own-index", action="store_true", help="sourcekit-lsp indexes the package itself")
    args = parser.parse_args(argv)
    if len(args.renames) % 2:
        parser.error("renames come in NAME NEW_NAME pairs")
    pairs = [Rename(name, new) for name, new in zip(args.renames[::2], args.renames[1::2], strict=True)]
    root = args.package.resolve()
    cache = Path(tempfile.mkdtemp(prefix="xcindex-bench-rename-"))
    try:
        with corpus_lock(root):
            result = anyio.run(lambda: reconciled_plans(root, cache, pairs, read_build=not args.own_index))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
