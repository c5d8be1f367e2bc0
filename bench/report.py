"""Render a run's results as markdown: the table printed at the end of a run, and
`docs/benchmarks.md` (method, machine, every figure with its peer and ratio).

Every number comes from the results JSON. The only hand-written part of the document is
the analysis between the ANALYSIS markers, which a regeneration carries over unchanged.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.stats import ratio

ANALYSIS_START = "<!-- analysis:start (hand-written; kept when the file is regenerated) -->"
ANALYSIS_END = "<!-- analysis:end -->"

TOOL_ORDER = (
    "find_symbol",
    "find_references",
    "find_definition",
    "find_overrides",
    "find_conformances",
    "blast_radius",
    "call_hierarchy",
    "type_hierarchy",
    "status",
    "plan_rename (index only)",
    "plan_rename (reconciled)",
)


def _num(value: Any, digits: int = 1, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        text = f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.{digits}f}"
        return f"{text}{unit}"
    return str(value)


def _ratio(ours: Any, theirs: Any) -> str:
    value = ratio(_f(ours), _f(theirs))
    if value is None:
        return "—"
    return f"{value:.3f}x" if value < 0.1 else f"{value:.2f}x"


def _f(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _verdict(value: Any, limit: float, *, at_least: bool = False) -> str:
    number = _f(value)
    if number is None:
        return "—"
    ok = number >= limit if at_least else number <= limit
    return "met" if ok else "missed"


def _get(data: dict[str, Any], *keys: str) -> Any:
    current: Any = data
    for key in keys:
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current


def headline_rows(scale: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """(measure, xcindex, peer, peer name, ratio, target verdict)."""
    rows: list[tuple[str, str, str, str, str, str]] = []
    walk = scale["walk"]["user_1"]
    cold = scale["cold_in_process"]
    rows.append(
        (
            "cold ingestion, occurrences/s",
            _num(cold["occurrences_per_s"], 0),
            _num(walk["occurrences_per_s"], 0),
            "C walk, same records, 1 thread",
            _ratio(cold["occurrences_per_s"], walk["occurrences_per_s"]),
            "≥ 0.50x: "
            + _verdict(
                ratio(_f(cold["occurrences_per_s"]), _f(walk["occurrences_per_s"])), 0.5, at_least=True
            ),
        )
    )
    walk2 = scale["walk"]["user_2"]
    rows.append(
        (
            "cold ingestion, occurrences/s (vs 2 threads)",
            _num(cold["occurrences_per_s"], 0),
            _num(walk2["occurrences_per_s"], 0),
            "C walk, same records, 2 threads",
            _ratio(cold["occurrences_per_s"], walk2["occurrences_per_s"]),
            "",
        )
    )
    lsp_cold = _get(scale, "lsp", "cold", "first_references_s")
    lsp_warm = _get(scale, "lsp", "warm_restart", "first_references_s")
    stdio_none = scale["startup_stdio"]["no_cache"]["first_answer_s"]
    stdio_cache = scale["startup_stdio"]["with_cache"]["first_answer_s"]
    rows.append(
        (
            "first answer, no cache, in-process (s)",
            _num(cold["first_answer_s"], 2),
            _num(lsp_cold, 2),
            "sourcekit-lsp spawn → first references, cold scratch",
            _ratio(cold["first_answer_s"], lsp_cold),
            "≤ 4 s: " + _verdict(cold["first_answer_s"], 4.0),
        )
    )
    rows.append(
        (
            "first answer, no cache, spawn `xcindex serve` → answer (s)",
            _num(stdio_none, 2),
            _num(lsp_cold, 2),
            "sourcekit-lsp spawn → first references, cold scratch",
            _ratio(stdio_none, lsp_cold),
            "≤ 5 s: " + _verdict(stdio_none, 5.0),
        )
    )
    rows.append(
        (
            "first answer, with cache, spawn → answer (s)",
            _num(stdio_cache, 2),
            _num(lsp_warm, 2),
            "sourcekit-lsp spawn → first references, its index kept",
            _ratio(stdio_cache, lsp_warm),
            "≤ 0.8 s: " + _verdict(stdio_cache, 0.8),
        )
    )
    walk_process = _f(walk.get("best_process_s"))
    if walk_process is not None:
        for label, ours, limit in (
            ("first answer, no cache, spawn → answer, vs the walk (s)", stdio_none, 4.0),
            ("first answer, with cache, spawn → answer, vs the walk (s)", stdio_cache, 1.5),
        ):
            value = ratio(_f(ours), walk_process)
            rows.append(
                (
                    label,
                    _num(ours, 2),
                    _num(walk_process, 3),
                    "C walk, same records, spawn → exit",
                    _ratio(ours, walk_process),
                    f"≤ {limit:.1f}x (issue 28): " + _verdict(value, limit),
                )
            )
    renamed = scale.get("rename_first")
    if renamed:
        rows.append(
            (
                "first reconciled plan_rename, fresh cache (s)",
                _num(renamed["first_plan_s"], 2),
                _num(lsp_cold, 2),
                "sourcekit-lsp spawn → first references, indexing the package itself",
                _ratio(renamed["first_plan_s"], lsp_cold),
                "≤ 5 s (issue 28): " + _verdict(renamed["first_plan_s"], 5.0),
            )
        )
        rows.append(
            (
                "later reconciled plans, p50 / max (s)",
                f"{_num(renamed['later_p50_s'], 2)} / {_num(renamed['later_max_s'], 2)}",
                _num(renamed["index_only_plan_s"], 3),
                "the same plan from the index alone",
                _ratio(renamed["later_p50_s"], renamed["index_only_plan_s"]),
                "≤ 1 s (issue 28): " + _verdict(renamed["later_max_s"], 1.0),
            )
        )
    refresh = scale["refresh"]
    rows.append(
        (
            "refresh after a one-file change + rebuild (ms)",
            _num(refresh.get("refresh_ms"), 1),
            _num(_f(refresh.get("compiler_rebuild_s")) and refresh["compiler_rebuild_s"] * 1000, 0),
            "the compiler's incremental rebuild (not ours)",
            _ratio(refresh.get("refresh_ms"), (_f(refresh.get("compiler_rebuild_s")) or 0) * 1000),
            "≤ 100 ms: " + _verdict(refresh.get("refresh_ms"), 100.0),
        )
    )
    fresh = scale.get("edit_to_fresh")
    if fresh:
        goal = {"M": 3.0, "L": 5.0}.get(str(scale.get("scale")))
        for key, label in (("p50_s", "p50"), ("p95_s", "p95")):
            ours = _f(fresh["edit_to_fresh"][key])
            theirs = _f(fresh["compiler_build"][key])
            rows.append(
                (
                    f"edit → fresh find_references, no build, {label} (s)",
                    _num(ours, 2),
                    _num(theirs, 2),
                    f"the compiler's incremental `swift build`, {label}",
                    _ratio(ours, theirs),
                    f"≤ {goal:g} s: " + _verdict(ours, goal) if goal is not None else "",
                )
            )
    moves = scale.get("transitions")
    if moves:
        for kind, label in (
            ("edit_elsewhere", "a call written in a file no answer named"),
            ("new_file", "a new file"),
        ):
            for key in ("p50_s", "p95_s"):
                ours = _f(moves[kind]["to_fresh"][key])
                theirs = _f(moves[kind]["compiler_build"][key])
                rows.append(
                    (
                        f"{label} → fresh, no hook, no build, {key[:3]} (s)",
                        _num(ours, 2),
                        _num(theirs, 2),
                        f"the compiler's incremental `swift build`, {key[:3]}",
                        _ratio(ours, theirs),
                        "≤ 15 s: " + _verdict(ours, 15.0),
                    )
                )
    impact = scale.get("change_impact")
    if impact:
        rows.append(
            (
                "change_impact on a one-function change p50, in-process (ms)",
                _num(impact.get("p50_ms"), 1),
                _num(_get(impact, "git", "p50_ms"), 1),
                "git's own time within it (diff, untracked files, the old text)",
                "",
                "≤ 200 ms: " + _verdict(impact.get("p50_ms"), 200.0),
            )
        )
    refs_in = _get(scale, "warm_in_process", "find_references", "p50_ms")
    refs_stdio = _get(scale, "warm_stdio", "latency", "find_references", "p50_ms")
    lsp_refs = _get(scale, "lsp", "warm_restart", "warm_references", "p50_ms")
    rows.append(
        (
            "warm find_references p50, in-process (ms)",
            _num(refs_in, 2),
            _num(lsp_refs, 2),
            "sourcekit-lsp warm references p50",
            _ratio(refs_in, lsp_refs),
            "≤ 2 ms: " + _verdict(refs_in, 2.0),
        )
    )
    rows.append(
        (
            "warm find_references p50, stdio MCP (ms)",
            _num(refs_stdio, 2),
            _num(lsp_refs, 2),
            "sourcekit-lsp warm references p50",
            _ratio(refs_stdio, lsp_refs),
            "≤ 5 ms: " + _verdict(refs_stdio, 5.0),
        )
    )
    grep_p50 = [_f(item["p50_ms"]) for item in scale["grep"].values()]
    grep_mid = sorted(value for value in grep_p50 if value is not None)
    grep_value = grep_mid[len(grep_mid) // 2] if grep_mid else None
    rows.append(
        (
            "find_references p50 over stdio vs `grep -rnw` (ms)",
            _num(refs_stdio, 2),
            _num(grep_value, 2),
            "grep -rnw, median of the subjects' p50",
            _ratio(refs_stdio, grep_value),
            "",
        )
    )
    blast_in = _get(scale, "warm_in_process", "blast_radius", "p50_ms")
    rows.append(
        (
            "warm blast_radius p50, in-process (ms)",
            _num(blast_in, 2),
            "876",
            "the original, warm, 302 files (published)",
            _ratio(blast_in, 876.0),
            "≤ 20 ms: " + _verdict(blast_in, 20.0),
        )
    )
    rss = _get(scale, "warm_stdio", "rss", "server_rss_mib")
    rows.append(
        (
            "server RSS after a warm open (MiB)",
            _num(rss, 1),
            "",
            "",
            "",
            "≤ 150 MiB: " + _verdict(rss, 150.0),
        )
    )
    database = scale["database"]
    rows.append(
        (
            "database size (MiB)",
            _num(database["database_mib"], 2),
            _num(database["store_mib"], 2),
            "the index store on disk",
            _ratio(database["database_mib"], database["store_mib"]),
            "≤ 1.50x: " + _verdict(ratio(_f(database["database_mib"]), _f(database["store_mib"])), 1.5),
        )
    )
    hook = scale["hook"]["p50_ms"]
    floor = _get(scale, "python_startup", "p50_ms")
    rows.append(
        (
            "post-tool-use hook p50 (ms)",
            _num(hook, 1),
            _num(floor, 1),
            "`python -c pass` (the interpreter's floor)",
            _ratio(hook, floor),
            "≤ 2.00x: " + _verdict(ratio(_f(hook), _f(floor)), 2.0),
        )
    )
    return rows + start_rows(scale)


def start_rows(scale: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """The starts (bench/starts.py), each beside the floor measured interleaved with it."""
    starts = scale.get("starts")
    if not starts:
        return []
    rows: list[tuple[str, str, str, str, str, str]] = []
    quick = starts["quick"]
    floor = quick["python -c pass"]["p50_ms"]
    for command in ("xcindex --version", "xcindex --help"):
        ours = quick[command]["p50_ms"]
        rows.append(
            (
                f"`{command}` p50 (ms)",
                _num(ours, 1),
                _num(floor, 1),
                "`python -c pass`, interleaved",
                _ratio(ours, floor),
                "< 100 ms (issue 28): " + _verdict(ours, 100.0),
            )
        )
    one_shot = starts["one_shot"]
    rows.append(
        (
            "`xcindex refs NAME` with a cache, p50 (ms)",
            _num(one_shot["xcindex refs"]["p50_ms"], 1),
            _num(one_shot["grep -rnw"]["p50_ms"], 1),
            "`grep -rnw` of the name, interleaved",
            _ratio(one_shot["xcindex refs"]["p50_ms"], one_shot["grep -rnw"]["p50_ms"]),
            "",
        )
    )
    hooks = starts["hooks"]
    floor = hooks["python -c pass"]["p50_ms"]
    for event in ("session-start", "post-tool-use", "pre-tool-use"):
        for path in ("plugin launcher", "console script"):
            ours = hooks[f"{event} ({path})"]["p50_ms"]
            rows.append(
                (
                    f"{event} hook through the {path}, p50 (ms)",
                    _num(ours, 1),
                    _num(floor, 1),
                    "`python -c pass`, interleaved",
                    _ratio(ours, floor),
                    "≤ 2.00x (issue 28): " + _verdict(ratio(_f(ours), _f(floor)), 2.0),
                )
            )
    return rows


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def scale_section(name: str, scale: dict[str, Any]) -> str:
    package = scale["package"]
    parts = [
        f"### Scale {name}: {package['swift_files']} Swift files, {package['swift_lines']:,} lines "
        f"(`swift build` in this run: {package['build_s']} s, incremental when already built; "
        f"this scale's run took {scale.get('elapsed_s', '—')} s"
        + (f"; from the run of {scale['run']}" if "run" in scale else "")
        + ")",
        "",
        _table(
            ("measure", "xcindex", "peer", "peer is", "ratio", "target (issue 17 unless named)"),
            headline_rows(scale),
        ),
        "",
        "**Warm latency of every tool** (ms; p50 / p99 over every named subject; in-process = the Engine, "
        "stdio = the real `xcindex serve` through the MCP client):",
        "",
    ]
    rows: list[tuple[str, ...]] = []
    stdio = _get(scale, "warm_stdio", "latency") or {}
    in_process = scale["warm_in_process"]
    for tool in TOOL_ORDER:
        a = in_process.get(tool)
        b = stdio.get(tool)
        if a is None and b is None:
            continue
        rows.append(
            (
                f"`{tool}`",
                "—" if a is None else f"{_num(a['p50_ms'], 2)} / {_num(a['p99_ms'], 2)}",
                "—" if b is None else f"{_num(b['p50_ms'], 2)} / {_num(b['p99_ms'], 2)}",
                "—" if a is None else str(a["n"]),
            )
        )
    if not scale.get("plan_rename_available"):
        rows.append(("`plan_rename`", "not yet landed", "not yet landed", "—"))
    parts.append(_table(("tool", "in-process p50 / p99", "stdio p50 / p99", "samples"), rows))
    parts += [
        "",
        "**Subjects: the index's answer, sourcekit-lsp's agreement with it, and grep's** "
        "(sites = every source occurrence; grep precision/recall are per file):",
        "",
    ]
    agreement = _get(scale, "lsp", "warm_restart", "agreement") or {}
    subject_rows: list[tuple[str, ...]] = []
    for subject in scale["subjects"]:
        grep = scale["grep"][subject["name"]]
        lsp = agreement.get(subject["name"], {})
        subject_rows.append(
            (
                f"{subject['kind']} `{subject['name']}`",
                f"{subject['sites']} in {subject['files']} files",
                _num(lsp.get("lsp_sites"), 0),
                f"{_num(lsp.get('site_precision'), 2)} / {_num(lsp.get('site_recall'), 2)}",
                f"`{grep['word']}`: {grep['files']} files",
                f"{_num(grep['precision'], 2)} / {_num(grep['recall'], 2)}",
                _num(grep["p50_ms"], 2),
            )
        )
    parts.append(
        _table(
            (
                "subject",
                "index",
                "sourcekit-lsp sites",
                "lsp precision / recall (sites)",
                "grep",
                "grep precision / recall (files)",
                "grep p50 ms",
            ),
            subject_rows,
        )
    )
    parts += ["", _details(scale)]
    return "\n".join(parts)


def _details(scale: dict[str, Any]) -> str:
    walk = scale["walk"]
    cold = scale["cold_in_process"]
    startup = scale["startup_stdio"]
    refresh = scale["refresh"]
    lines = [
        "Details:",
        "",
        f"- C walk (user records, 1 thread): {walk['user_1']['records']} records, "
        f"{walk['user_1']['occurrences']:,} occurrences, {walk['user_1']['relations']:,} relations in "
        f"{walk['user_1']['total_s'] * 1000:.1f} ms; 2 threads {walk['user_2']['total_s'] * 1000:.1f} ms; "
        f"every record incl. system modules ({walk['all_1']['records']} records, "
        f"{walk['all_1']['occurrences']:,} occurrences) {walk['all_1']['total_s'] * 1000:.1f} ms "
        f"= {_num(walk['all_1']['occurrences_per_s'], 0)} occurrences/s.",
        f"- Cold ingestion (median of {len(cold.get('runs_first_answer_s', [])) or 1}): "
        f"{cold['records_read']} records, {cold['occurrences']:,} occurrences in {cold['ingest_s'] * 1000:.0f} ms "
        f"of refresh; first find_symbol {cold['first_answer_s'] * 1000:.0f} ms after the Engine started "
        f"(runs: {', '.join(f'{v:.2f}' for v in cold.get('runs_first_answer_s', []))} s); answer correct: "
        f"{_num(cold['correct'])}.",
        f"- Start-up over stdio, no cache: initialize {startup['no_cache']['initialize_s']:.2f} s, first "
        f"find_symbol {startup['no_cache']['first_answer_s']:.2f} s, first find_references "
        f"{startup['no_cache']['first_references_s']:.2f} s after spawn (correct: "
        f"{_num(startup['no_cache']['correct'])}); with cache: initialize "
        f"{startup['with_cache']['initialize_s']:.2f} s, first answer "
        f"{startup['with_cache']['first_answer_s']:.2f} s, first find_references "
        f"{startup['with_cache']['first_references_s']:.2f} s.",
        f"- Refresh after editing `{refresh['edited']}` and rebuilding ({refresh.get('compiler_rebuild_s')} s "
        f"of compiler): the next find_references took {refresh.get('next_answer_ms')} ms, of which the "
        f"refresh {refresh.get('refresh_ms')} ms ({refresh.get('units_read')} units and "
        f"{refresh.get('records_read')} records read, {refresh.get('records_reused')} records reused).",
    ]
    fresh = scale.get("edit_to_fresh")
    if fresh:
        lines.append(
            f"- Edit → fresh find_references without a build (the freshness overlay): {fresh['fresh']} of "
            f"{len(fresh['edits'])} edits answered fresh, {fresh['identical_to_build']} with the same sites "
            f"as the answer after the compiler's incremental build; p50 {fresh['edit_to_fresh']['p50_s']} s, "
            f"p95 {fresh['edit_to_fresh']['p95_s']} s; the build alone p50 {fresh['compiler_build']['p50_s']} s, "
            f"p95 {fresh['compiler_build']['p95_s']} s (edited: "
            + ", ".join(f"`{row['path']}` {row.get('edit_to_fresh_s')} s" for row in fresh["edits"])
            + ")."
        )
    moves = scale.get("transitions")
    if moves:
        for kind, label in (
            ("edit_elsewhere", "A call written into a file no answer named"),
            ("new_file", "A new file"),
        ):
            part = moves[kind]
            lines.append(
                f"- {label} (no hook: the project's watch), until an answer is complete with the new site: "
                f"{part['fresh']} fresh, {part['identical_to_build']} with the same sites as after the build; "
                f"p50 {part['to_fresh']['p50_s']} s, p95 {part['to_fresh']['p95_s']} s; the build alone p50 "
                f"{part['compiler_build']['p50_s']} s."
            )
    cost = scale.get("watch_cost")
    if cost:
        lines.append(
            f"- Knowing what changed: {cost['swift_files']} Swift files in {cost['folders_watched']} folders; a "
            f"sweep {cost['sweep_ms']} ms, opening the watch {cost['watch_open_ms']} ms (once per store), an empty "
            f"watch read {cost['empty_drain_us']} µs per question, about {cost['kernel_memory_kb_estimate']} KB of "
            "kernel memory."
        )
    impact = scale.get("change_impact")
    if impact:
        lines.append(
            f"- change_impact after changing `{impact['function']}` in `{impact['edited']}` (not rebuilt): "
            f"p50 {impact['p50_ms']} ms, p99 {impact['p99_ms']} ms, git {impact['git']['p50_ms']} ms of it; "
            f"changed {', '.join(impact['changed_symbols'])}; {impact['covering_tests']} covering tests, "
            f"{impact['dependent_files']} dependent files, {impact['references']} references."
        )
    lsp = scale.get("lsp")
    if lsp:
        for key, title in (("cold", "cold scratch folder"), ("warm_restart", "its index kept")):
            run = lsp[key]
            lines.append(
                f"- sourcekit-lsp, {title}: ready (synchronize) after {run['ready_s']:.2f} s, first "
                f"references {run['first_references_s']:.2f} s after spawn, same sites as the index: "
                f"{_num(run['first_correct'])}; warm references p50 {run['warm_references']['p50_ms']:.2f} ms, "
                f"p99 {run['warm_references']['p99_ms']:.2f} ms."
            )
    renamed = scale.get("rename_first")
    if renamed:
        plans = "; ".join(
            f"{plan['name']} {plan['seconds']:.2f} s ({plan['summary']['green_verified']} green-verified)"
            for plan in renamed["plans"]
        )
        lines.append(
            f"- Reconciled plan_rename with a fresh cache (sourcekit-lsp reading the build, background "
            f"indexing off): the first ingestion {renamed['ingest_s']:.2f} s, then the plans in turn: {plans}; "
            f"the first one again from the index alone {renamed['index_only_plan_s']:.3f} s; load average "
            f"{renamed['load_average']}."
        )
    rss = _get(scale, "warm_stdio", "rss") or {}
    if rss:
        lines.append(
            f"- Server RSS {rss.get('server_rss_mib')} MiB after the warm open and its first references "
            f"({rss.get('descendants')} child processes: {rss.get('descendants_rss_mib')} MiB more); "
            f"{rss.get('after_all_tools')} MiB after every tool had run."
        )
    phases = ", ".join(f"{name.split(': ', 1)[-1]} {seconds} s" for name, seconds in scale["phase_s"].items())
    lines.append(f"- Phases: {phases}.")
    return "\n".join(lines)


def render_markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]
    head = (
        f"Run of {results['date']} on {machine['host']} ({machine['cpu']}, {machine['cores']} cores, "
        f"{machine['memory_gib']} GiB, {machine['os']}); {machine['swift']}; Python {machine['python']}; "
        f"xcindex {machine['xcindex_commit']}. Warm samples: {results['iterations']} per call; cold and "
        f"start-up figures are the median of {results['repeats']}. Whole run: {results['elapsed_s']} s."
    )
    sections = [scale_section(name, scale) for name, scale in results["scales"].items()]
    if results.get("real"):
        sections.append(real_section(results["real"]))
    return "\n\n".join([head, *sections])


def real_rows(name: str, data: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """(measure, xcindex, peer, peer name, ratio, goal verdict) for one corpus package."""
    walk = data["walk"]
    walk_s = walk.get("best_process_s")
    cold = data["cold_in_process"]
    none_s = _get(data, "startup_stdio", "no_cache", "first_answer_s")
    cached_s = _get(data, "startup_stdio", "with_cache", "first_answer_s")
    rows = [
        (
            "spawn `xcindex serve` → first answer, no cache (s)",
            _num(none_s, 2),
            _num(walk_s, 3),
            "C walk as a process",
            _ratio(none_s, walk_s),
            "≤ 4x: " + _verdict(ratio(_f(none_s), _f(walk_s)), 4.0),
        ),
        (
            "spawn → first answer, with the cache (s)",
            _num(cached_s, 2),
            _num(walk_s, 3),
            "C walk as a process",
            _ratio(cached_s, walk_s),
            "≤ 1.5x: " + _verdict(ratio(_f(cached_s), _f(walk_s)), 1.5),
        ),
        (
            "cold ingestion, occurrences/s",
            _num(cold["occurrences_per_s"], 0),
            _num(walk["occurrences_per_s"], 0),
            "C walk, same records, 1 thread",
            _ratio(cold["occurrences_per_s"], walk["occurrences_per_s"]),
            "",
        ),
    ]
    plans = data.get("rename_first")
    if plans:
        rows.append(
            (
                "first reconciled plan_rename, fresh cache (s)",
                _num(plans["first_plan_s"], 2),
                _num(plans["index_only_plan_s"], 2),
                "the same plan from the index alone",
                _ratio(plans["first_plan_s"], plans["index_only_plan_s"]),
                "≤ 5 s: " + _verdict(plans["first_plan_s"], 5.0),
            )
        )
        rows.append(
            (
                "later reconciled plans, p50 / max (s)",
                f"{_num(plans['later_p50_s'], 2)} / {_num(plans['later_max_s'], 2)}",
                "",
                "",
                "",
                "≤ 1 s: " + _verdict(plans["later_max_s"], 1.0),
            )
        )
    one_shot = data.get("one_shot", {})
    refs = _get(one_shot, "xcindex refs", "p50_ms")
    grep = _get(one_shot, "grep -rnw", "p50_ms")
    rows.append(
        (
            "one-shot `xcindex refs` from a shell (ms)",
            _num(refs, 0),
            _num(grep, 0),
            "grep -rnw",
            _ratio(refs, grep),
            "",
        )
    )
    hooks = data.get("hooks", {})
    hook_floor = _get(hooks, "python -c pass", "p50_ms")
    for label, figures in hooks.items():
        if label == "python -c pass":
            continue
        rows.append(
            (
                f"hook {label} (ms)",
                _num(figures["p50_ms"], 1),
                _num(hook_floor, 1),
                "python -c pass",
                _ratio(figures["p50_ms"], hook_floor),
                "≤ 2x: " + _verdict(ratio(_f(figures["p50_ms"]), _f(hook_floor)), 2.0),
            )
        )
    return rows


def real_section(real: dict[str, Any]) -> str:
    """The starts on each corpus package (`scripts/bench --corpus …`)."""
    parts = ["### The real scale: the corpus packages"]
    for name, data in real.items():
        walk = data["walk"]
        parts.append(
            f"**{name}** ({_num(walk.get('units'), 0)} units, {_num(walk.get('occurrences'), 0)} occurrences; "
            f"first question: `{data['subject']['name']}`; {data['elapsed_s']} s"
            + (f"; run {data['run']}" if "run" in data else "")
            + ")"
        )
        parts.append(
            _table(("measure", "xcindex", "peer", "peer is", "ratio", "goal"), real_rows(name, data))
        )
    return "\n\n".join(parts)


METHOD = """\
# Benchmark: xcindex beside sourcekit-lsp, grep and the raw libIndexStore walk

Generated by `scripts/bench` (see `bench/`); every figure below comes from the run named
under *Results*: nothing in the tables is typed by hand. Re-run with:

```sh
scripts/bench                 # S (default): a few minutes
scripts/bench --scales S,M    # M too: the size of the original's published project
scripts/bench --scales S,M,L  # L too: its first build takes a while on 2 cores
scripts/bench --scales S,M --corpus swift-log,yams,swift-atomics  # the real scale too
```

The packages, their builds, the compiled walker and the warm caches live in
`$XCINDEX_BENCH_DIR` (default `~/.cache/xcindex-bench`), outside git, and are reused.
Raw results are JSON under `bench/results/`.

## Method

- **Workload.** `bench/generate.py` writes a deterministic, dependency-free SwiftPM
  package per scale (S ≈ 50 files, M ≈ 300 files and 40k lines, the size of the project
  behind the original's published numbers, L ≈ 2,000 files): families of an open class
  with a two-level override chain across modules, a protocol with a default
  implementation, a marker protocol, conformances in declarations and in extensions, a
  generic type, cross-file and cross-module calls, an XCTest case and a Swift Testing
  suite, plus one hub utility called everywhere. Built with `swift build --build-tests`.
  The subjects asked about are named in the package's `bench-manifest.json`.
- **The limit.** `bench/walker.c`, compiled with gcc at bench time against the toolchain's
  `libIndexStore.so` (declarations written from the C API: the toolchain ships no header),
  walks every unit, then every record, occurrence and relation (reading each symbol's USR
  and name, roles, line/column). "Same records" = the records of non-system units with a
  main file, which is what xcindex ingests; the walk of every record (system modules
  included) is reported beside it. Best of the repeats.
- **Cold ingestion.** A fresh `XCINDEX_CACHE_DIR`, an `Engine`, one `find_symbol`: the
  refresh's own duration and the database's occurrence count give the rate.
- **Start-up.** Spawn `xcindex serve` through the MCP SDK's stdio client (its default
  mode: `server/discover`, so the 2026-07-28 protocol), then time the first `find_symbol`
  and `find_references` answers from the spawn: with an empty cache, then with the cache
  the first run left. Medians of the repeats.
- **Refresh.** With a warm engine, one file gets a new function, `swift build
  --build-tests` runs (not counted), and the next `find_references` is timed; the refresh's
  own duration comes from the index actor. The file is then restored and rebuilt.
- **Edit → fresh.** With a warm engine (the overlay on, as by default), two comment lines
  are inserted at the top of one library file (each edit a different file, spread over
  the families and the three library modules), and `find_references` of a method the file
  references is asked until the answer is `complete` with the file's sites at their new
  lines; the time runs from the write. Then `swift build --build-tests` runs for the same
  edit (timed: the compiler's own way to a fresh index) and the next answer must name the
  same sites. The file is restored and rebuilt before the next edit. p50 and p95 over the
  edits.
- **Warm latency.** Every tool on every subject kind it applies to (class, protocol, marker
  protocol, overridden method, protocol requirement, property, generic struct, hub
  function; blast radius of a family file and of the hub), after one warm-up call, through
  the Engine and through the real stdio server. `plan_rename` with and without
  sourcekit-lsp reconciliation in-process; reconciled (the server's default) over stdio.
- **sourcekit-lsp.** Through xcindex's own LSP pool (`LspPool`, JSON-RPC over anyio):
  spawn → `initialize` → `workspace/synchronize` (its background index) → the first
  `textDocument/references` at the first subject's definition; once with an empty scratch
  folder (it builds and indexes the package itself) and once with its index kept. Then
  warm references on every subject, and their agreement with the index (sites).
- **grep.** `grep -rnw --include=*.swift WORD Sources Tests` with the subject's base name:
  latency, and per-file precision and recall against the index's full answer.
- **Footprint.** The server's RSS (from `/proc`) after the warm open and its first
  references; the SQLite database (with its WAL) against the index store on disk; the
  `post-tool-use` hook end to end (process start included) against `python -c pass`.
- **Reconciled plan_rename.** A fresh cache, an Engine, a find_symbol (the first
  ingestion), then the first reconciled `plan_rename` (sourcekit-lsp started, ready and
  asked: it reads the build's index store through a view in the cache), then the other
  subjects' plans and the first again (the later plans), then the first from the index
  alone. `python -m bench.rename_first PACKAGE NAME NEW …` measures a corpus package the
  same way (`--own-index`: sourcekit-lsp indexing the package itself, as before).
- **Starts** (`bench/starts.py`). Whole process runs, each command interleaved with
  `python -c pass` (medians): `xcindex --version` and `--help`; `xcindex refs NAME` with the
  warm cache beside `grep -rnw`; each hook (session-start, post-tool-use, pre-tool-use with
  its event's stdin) through the console script and through the plugin's launcher
  `bin/xcindex` with a ready environment (made of links to the bench's own), as Claude Code
  runs them. The spawned server's first answer is also set beside the C walk run as a
  process (spawn → exit). xcindex's bytecode is compiled before the run, as an install does.
- Targets are issue 17's (stated for M and L) unless the row names issue 28; they are
  shown for every scale.
"""


def write_docs(path: Path, results: dict[str, Any], results_file: Path) -> None:
    """Regenerate the document, keeping the hand-written analysis if there is one."""
    analysis = f"{ANALYSIS_START}\n_No analysis written yet._\n{ANALYSIS_END}"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        if ANALYSIS_START in text and ANALYSIS_END in text:
            start = text.index(ANALYSIS_START)
            analysis = text[start : text.index(ANALYSIS_END) + len(ANALYSIS_END)]
    body = "\n".join(
        [
            METHOD,
            "## Results",
            "",
            f"From `{results_file}`.",
            "",
            render_markdown(results),
            "",
            "## Analysis",
            "",
            analysis,
            "",
        ]
    )
    path.write_text(body, encoding="utf-8")


def merge(paths: Sequence[Path]) -> dict[str, Any]:
    """Several runs' results as one (later files win per scale and per corpus package), each
    keeping the date of the run it came from: L is usually run apart from S and M, and the
    corpus packages (`--corpus`) apart from both."""
    merged: dict[str, Any] = {}
    for path in paths:
        results = json.loads(path.read_text(encoding="utf-8"))
        for scale in [*results["scales"].values(), *results.get("real", {}).values()]:
            scale["run"] = f"{results['date']}, {path.name}"
        if not merged:
            merged = results
        else:
            merged["scales"].update(results["scales"])
            merged.setdefault("real", {}).update(results.get("real", {}))
            merged["elapsed_s"] = round(float(merged["elapsed_s"]) + float(results["elapsed_s"]), 1)
            merged["date"] = f"{merged['date']} + {results['date']}"
            # Each run's own settings, in the same order as the dates.
            merged["machine"]["xcindex_commit"] = (
                f"{merged['machine']['xcindex_commit']} + {results['machine']['xcindex_commit']}"
            )
            merged["iterations"] = f"{merged['iterations']} + {results['iterations']}"
            merged["repeats"] = f"{merged['repeats']} + {results['repeats']}"
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.report RESULTS.json [MORE.json …]`: regenerate docs/benchmarks.md."""
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    paths = [path.resolve() for path in args.results]
    merged = merge(paths)
    docs = repo / "docs" / "benchmarks.md"
    write_docs(docs, merged, Path(", ".join(str(path.relative_to(repo)) for path in paths)))
    print(render_markdown(merged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
