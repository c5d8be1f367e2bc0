"""Edit → fresh find_references without a build (the freshness overlay), beside the
compiler's own incremental build for the same edit: one phase of `bench.run`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.measure import Site, _swift_build, cache_env
from bench.stats import Stopwatch, percentile
from xcindex import Engine
from xcindex.engine import EngineConfig


def fresh_edits(families: int, count: int) -> list[dict[str, str]]:
    """`count` one-file edits spread over the package's families and its three library
    modules: two comment lines inserted at the top of a file, which moves every site in
    it; `subject` is a method that file references."""
    edits: list[dict[str, str]] = []
    for index in range(count):
        k = (index * families) // count + 1
        k %= families
        module, name, subject = (
            ("BenchFeatures", f"Feature{k}", f"Base{k}.compute(x:)"),
            ("BenchDomain", f"Derived{k}", f"Base{k}.compute(x:)"),
            ("BenchCore", f"Models{k}", f"Base{(k + 1) % families}.compute(x:)"),
        )[index % 3]
        edits.append({"path": f"Sources/{module}/Family{k}/{name}.swift", "subject": subject})
    return edits


FRESH_LIMIT_S = 120.0
"""An edit whose answer is not fresh within this long counts as not fresh."""


async def _answer_sites(engine: Engine, root: Path, usr: str) -> tuple[set[Site], dict[str, Any]]:
    """Every site of the answer, page after page (the hub function has 1,752 sites at L: a
    first page of 500 never showed the new one, so L's transitions were all timed out), and
    the first page's answer (its completeness)."""
    sites: set[Site] = set()
    first: dict[str, Any] | None = None
    offset: int | None = 0
    while offset is not None:
        answer = await engine.find_references(usr=usr, project_path=str(root), max_results=500, offset=offset)
        page = dict(answer.to_json())
        first = first or page
        sites |= {site.key for site in answer.sites}
        following = page.get("nextOffset")
        offset = following if isinstance(following, int) else None
    assert first is not None
    return sites, first


async def edit_to_fresh(root: Path, cache: Path, edits: list[dict[str, str]]) -> dict[str, Any]:
    """For each edit, with a warm engine (the overlay on, as by default): write it, then ask
    find_references until the answer is fresh (complete, the edited file's sites at their
    new lines) and time it from the write; then the compiler's own incremental `swift
    build --build-tests` for the same edit and the next answer, whose sites must be the
    same. The file is restored and rebuilt (not timed) before the next edit."""
    samples: list[float] = []
    builds: list[float] = []
    after_build: list[float] = []
    rows: list[dict[str, Any]] = []
    with cache_env(cache):
        async with Engine(EngineConfig(overlay=True, reconcile=False)) as engine:
            for edit in edits:
                path = root / edit["path"]
                found = await engine.find_symbol(edit["subject"], project_path=str(root))
                assert found.resolved is not None, edit["subject"]
                usr = found.resolved.symbol.usr
                before, _ = await _answer_sites(engine, root, usr)
                moved = {(p, line + 2, column) for p, line, column in before if p == str(path)}
                original = path.read_bytes()
                row: dict[str, Any] = {"path": edit["path"], "subject": edit["subject"], "fresh": False}
                try:
                    started = time.perf_counter()
                    path.write_bytes(b"// edited by the benchmark\n// twice\n" + original)
                    asked = 0
                    while time.perf_counter() - started < FRESH_LIMIT_S:
                        asked += 1
                        sites, answer = await _answer_sites(engine, root, usr)
                        if answer["completeness"] == "complete" and moved <= sites:
                            row["fresh"] = True
                            break
                    elapsed = time.perf_counter() - started
                    row.update({"edit_to_fresh_s": round(elapsed, 3), "questions": asked})
                    if row["fresh"]:
                        samples.append(elapsed)
                    with Stopwatch() as build:
                        _swift_build(root)
                    with Stopwatch() as next_answer:
                        built, built_answer = await _answer_sites(engine, root, usr)
                    builds.append(build.seconds)
                    after_build.append(build.seconds + next_answer.seconds)
                    row.update(
                        {
                            "compiler_build_s": round(build.seconds, 2),
                            "same_sites_as_build": built == sites,
                            "after_build": built_answer["completeness"],
                        }
                    )
                finally:
                    path.write_bytes(original)
                    _swift_build(root)
                rows.append(row)
    return {
        "edits": rows,
        "fresh": sum(1 for row in rows if row["fresh"]),
        "identical_to_build": sum(1 for row in rows if row.get("same_sites_as_build")),
        "edit_to_fresh": _p50_p95(samples),
        "compiler_build": _p50_p95(builds),
        "build_then_answer": _p50_p95(after_build),
    }


def _p50_p95(samples_s: list[float]) -> dict[str, Any]:
    return {
        "n": len(samples_s),
        "p50_s": round(percentile(samples_s, 0.50), 3),
        "p95_s": round(percentile(samples_s, 0.95), 3),
        "max_s": round(max(samples_s), 3) if samples_s else None,
    }


HUB_FUNCTION = "benchClamp(_:limit:)"
"""Called from every family: a new call of it can appear in any file."""


def _probe_call(number: int) -> str:
    return f"\npublic func benchProbe{number}() -> Int {{ benchClamp({number}, limit: 2) }}\n"


async def _poll(engine: Engine, root: Path, started: float, ready: Any) -> tuple[bool, float, int]:
    asked = 0
    while time.perf_counter() - started < FRESH_LIMIT_S:
        asked += 1
        if await ready():
            return True, time.perf_counter() - started, asked
    return False, time.perf_counter() - started, asked


async def transitions(root: Path, cache: Path, families: int, count: int) -> dict[str, Any]:
    """Two transitions an agent's session is made of, without any hook (the project's watch
    sees them), each `count` times: a call of the hub function written into a file no
    answer named ("edit elsewhere"), and a new file with a type and a call ("new file").
    Timed from the write to the first answer that is complete and has the new site (and,
    for the new file, finds the new type); then the compiler's incremental build and the
    answer after it, whose sites must be the same. Each edit is undone and rebuilt (not
    timed) before the next."""
    kinds: dict[str, dict[str, list[float]]] = {
        "edit_elsewhere": {"fresh": [], "build": []},
        "new_file": {"fresh": [], "build": []},
    }
    rows: list[dict[str, Any]] = []
    with cache_env(cache):
        async with Engine(EngineConfig(overlay=True, reconcile=False)) as engine:
            found = await engine.find_symbol(HUB_FUNCTION, project_path=str(root))
            assert found.resolved is not None
            usr = found.resolved.symbol.usr
            for index in range(count):
                k = (index * families) // max(count, 1) % families
                for kind in kinds:
                    number = index * 2 + (kind == "new_file")
                    folder = root / "Sources" / "BenchFeatures" / f"Family{k}"
                    if kind == "edit_elsewhere":
                        path = folder / f"Feature{k}.swift"
                        original: bytes | None = path.read_bytes()
                        text = _probe_call(number)
                        data = (original or b"") + text.encode()
                        site = (str(path), (original or b"").count(b"\n") + 2, 35 + len(str(number)))
                    else:
                        path = folder / f"Probe{number}.swift"
                        original = None
                        text = f"import BenchCore\n\npublic struct Probe{number} {{}}\n" + _probe_call(number)
                        data = text.encode()
                        site = (str(path), 5, 35 + len(str(number)))
                    name = f"Probe{number}"

                    async def ready(site: Site = site, kind: str = kind, name: str = name) -> bool:
                        sites, answer = await _answer_sites(engine, root, usr)
                        if answer["completeness"] != "complete" or site not in sites:
                            return False
                        if kind == "new_file":
                            symbol = await engine.find_symbol(name, project_path=str(root))
                            return str(symbol.freshness.completeness) == "complete" and bool(symbol.matches)
                        return True

                    row: dict[str, Any] = {"kind": kind, "path": str(path.relative_to(root))}
                    try:
                        started = time.perf_counter()
                        path.write_bytes(data)
                        fresh_now, elapsed, asked = await _poll(engine, root, started, ready)
                        sites, _ = await _answer_sites(engine, root, usr)
                        row.update({"fresh": fresh_now, "to_fresh_s": round(elapsed, 3), "questions": asked})
                        if fresh_now:
                            kinds[kind]["fresh"].append(elapsed)
                        with Stopwatch() as build:
                            _swift_build(root)
                        built, _ = await _answer_sites(engine, root, usr)
                        kinds[kind]["build"].append(build.seconds)
                        row.update(
                            {
                                "compiler_build_s": round(build.seconds, 2),
                                "same_sites_as_build": built == sites,
                            }
                        )
                    finally:
                        if original is None:
                            path.unlink(missing_ok=True)
                        else:
                            path.write_bytes(original)
                        _swift_build(root)
                    rows.append(row)
    return {
        "edits": rows,
        **{
            kind: {
                "fresh": sum(1 for row in rows if row["kind"] == kind and row["fresh"]),
                "identical_to_build": sum(
                    1 for row in rows if row["kind"] == kind and row.get("same_sites_as_build")
                ),
                "to_fresh": _p50_p95(samples["fresh"]),
                "compiler_build": _p50_p95(samples["build"]),
            }
            for kind, samples in kinds.items()
        },
    }


def watch_cost(root: Path, repeats: int = 5) -> dict[str, Any]:
    """What knowing about changes costs on this package's tree: one sweep (a stat of every
    Swift file), opening the watch (a walk and one inotify watch per folder), and reading an
    empty watch (what a question with nothing changed pays)."""
    from xcindex.project.watch import TreeWatch, sweep

    roots = [root / "Sources", root / "Tests"]
    sweeps, opens, drains = [], [], []
    files = folders = 0
    for _ in range(repeats):
        with Stopwatch() as swept:
            files = len(sweep(roots))
        sweeps.append(swept.seconds)
        with Stopwatch() as opened:
            watch = TreeWatch.open(roots)
        opens.append(opened.seconds)
        assert watch is not None
        folders = watch.folders
        with Stopwatch() as drained:
            watch.drain()
        drains.append(drained.seconds)
        watch.close()
    return {
        "swift_files": files,
        "folders_watched": folders,
        "sweep_ms": round(percentile(sweeps, 0.5) * 1000, 1),
        "watch_open_ms": round(percentile(opens, 0.5) * 1000, 1),
        "empty_drain_us": round(percentile(drains, 0.5) * 1e6, 1),
        "kernel_memory_kb_estimate": folders,
    }
