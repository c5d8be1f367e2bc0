"""Prove the freshness overlay against the compiler: edit a built package, ask without a
build (the overlay re-indexes the edited file), then build and ask again; the two answers
must name the same sites, and the project's `.build` (its index store included) must be
byte-for-byte and mtime-for-mtime as the overlay found it.

The edits run in sequence on one package, each restored afterwards, never with a build
between the restore and the next edit: a restored file is itself a file edited since the
last build (as in a real session). `python -m bench.overlay_proof [--scale M]` runs the
six kinds on a copy of the benchmark package (the figures in docs/benchmarks.md);
tests/integration/test_overlay.py runs them on the fixture in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from xcindex.engine import Engine, EngineConfig

BUILD_TIMEOUT_S = 3600

Site = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class OverlayEdit:
    """One edit: replace `old` with `new` in `path` (relative to the package root); `old`
    empty prepends `new`, `old` None appends it. `subject` is the name asked about after
    the edit (find_references of what find_symbol resolves it to, or find_conformances
    when `conformances`)."""

    kind: str
    path: str
    old: str | None
    new: str
    subject: str
    conformances: bool = False
    builds: bool = True
    """False: the edited package does not compile (a syntax error): the build fails, and
    both answers are the last good index's."""

    def apply(self, text: str) -> str:
        if self.old is None:
            return text + self.new
        if not self.old:
            return self.new + text
        if self.old not in text:
            raise ValueError(f"{self.kind}: {self.old!r} is not in {self.path}")
        return text.replace(self.old, self.new)


@dataclass(frozen=True)
class Answer:
    sites: frozenset[Site]
    completeness: str
    overlay_files: tuple[str, ...]
    stale_files: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ProofOutcome:
    edit: OverlayEdit
    overlay: Answer
    built: Answer
    build_ok: bool
    build_untouched: bool
    overlay_units_left: int
    """Overlay units in the database after the build (superseded ones are dropped)."""
    answer_s: float
    """Edit → the overlay's answer (the compiler run included)."""
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.overlay.sites == self.built.sites

    def problems(self) -> list[str]:
        """What is wrong with this outcome (empty: the proof holds for this edit)."""
        found: list[str] = []
        if not self.build_untouched:
            found.append("the overlay changed .build")
        if not self.identical:
            found.append(
                f"sites differ: overlay only {sorted(self.overlay.sites - self.built.sites)}, "
                f"build only {sorted(self.built.sites - self.overlay.sites)}"
            )
        if self.edit.builds:
            if not self.build_ok:
                found.append("the build failed")
            if self.overlay.completeness != "complete" or self.overlay.stale_files:
                found.append(f"overlay answer is {self.overlay.completeness}: {self.overlay.stale_files}")
            if not self.overlay.overlay_files:
                found.append("the overlay's answer names no overlay file")
            if self.built.overlay_files or self.built.completeness != "complete":
                found.append(
                    f"after the build: {self.built.completeness}, overlay {self.built.overlay_files}"
                )
            if self.overlay_units_left:
                found.append(f"{self.overlay_units_left} overlay unit(s) left after the build")
        else:
            if self.build_ok:
                found.append("the broken package built")
            if self.overlay.completeness != "stale" or "overlay_failed" not in self.overlay.warnings:
                found.append(f"broken file: {self.overlay.completeness}, {self.overlay.warnings}")
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.edit.kind,
            "path": self.edit.path,
            "subject": self.edit.subject,
            "sites": len(self.built.sites),
            "identical": self.identical,
            "buildOk": self.build_ok,
            "buildUntouched": self.build_untouched,
            "overlayCompleteness": self.overlay.completeness,
            "overlayWarnings": list(self.overlay.warnings),
            "builtCompleteness": self.built.completeness,
            "answerMs": round(self.answer_s * 1000, 1),
            "problems": self.problems(),
        }


def tree_snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder` with its content hash and mtime."""
    snapshot: dict[str, tuple[str, int]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            snapshot[str(path)] = (digest, path.stat().st_mtime_ns)
    return snapshot


def swift_build(root: Path, swift: str = "swift") -> bool:
    result = subprocess.run(
        ["nice", "-n", "10", swift, "build", "--build-tests", "--package-path", str(root)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    return result.returncode == 0


def _sites(root: Path, rows: Sequence[Any]) -> frozenset[Site]:
    """Every row in the package's own files (a copied store may hold another copy's units),
    as sorted (key, value) pairs."""
    top = str(root) + "/"
    return frozenset(
        tuple(sorted((str(k), json.dumps(v, sort_keys=True)) for k, v in row.items()))
        for row in rows
        if str(row.get("path", "")).startswith(top)
    )


async def ask(engine: Engine, root: Path, edit: OverlayEdit) -> Answer:
    found = await engine.find_symbol(edit.subject, project_path=str(root))
    if found.resolved is None:
        raise ValueError(f"{edit.kind}: {edit.subject} resolves to no symbol")
    usr = found.resolved.symbol.usr
    if edit.conformances:
        answer: dict[str, Any] = dict((await engine.find_conformances(usr, project_path=str(root))).to_json())
    else:
        answer = dict(
            (await engine.find_references(usr=usr, project_path=str(root), max_results=500)).to_json()
        )
    return Answer(
        _sites(root, answer["results"]),
        str(answer["completeness"]),
        tuple(answer.get("overlayFiles", ())),
        tuple(answer["staleFiles"]),
        tuple(str(w["code"]) for w in answer["warnings"]),
    )


async def prove(
    root: Path,
    edits: Sequence[OverlayEdit],
    *,
    build: Callable[[Path], bool] = swift_build,
    config: EngineConfig | None = None,
) -> list[ProofOutcome]:
    """Each edit in turn (see the module's docstring); the files are restored at the end
    of each, whatever happens."""
    outcomes: list[ProofOutcome] = []
    build_dir = root / ".build"
    for edit in edits:
        source = root / edit.path
        original = source.read_text(encoding="utf-8")
        try:
            async with Engine(config or EngineConfig(overlay=True)) as engine:
                await engine.settle(project_path=str(root))
                before = await anyio.to_thread.run_sync(tree_snapshot, build_dir)
                started = time.perf_counter()
                source.write_text(edit.apply(original), encoding="utf-8")
                overlay = await ask(engine, root, edit)
                answer_s = time.perf_counter() - started
                untouched = await anyio.to_thread.run_sync(tree_snapshot, build_dir) == before
                build_ok = await anyio.to_thread.run_sync(build, root)
                built = await ask(engine, root, edit)
                left = await engine._core.run_query(
                    lambda db: len(db.overlay_live_files()) + len(db.superseded_overlay_units()),
                    project_path=str(root),
                )
            outcomes.append(ProofOutcome(edit, overlay, built, build_ok, untouched, left, answer_s))
        finally:
            source.write_text(original, encoding="utf-8")
    return outcomes


def bench_edits(k: int = 5) -> list[OverlayEdit]:
    """The six kinds of edit on family `k` of the generated benchmark package."""
    feature = f"Sources/BenchFeatures/Family{k}/Feature{k}.swift"
    return [
        OverlayEdit(
            "lines_inserted_above", feature, "", "// one\n// two\n// three\n", f"Base{k}.compute(x:)"
        ),
        OverlayEdit(
            "call_added",
            feature,
            None,
            f"\nextension Feature{k} {{\n    public func again() -> Int {{\n"
            f"        runService{k}(service, times: 1) + runService{k}(Impl{k}A(), times: 2)\n    }}\n}}\n",
            f"runService{k}(_:times:)",
        ),
        OverlayEdit(
            "call_removed",
            feature,
            f" + Record{k}(id: {k}, status: .running).score()",
            "",
            f"Record{k}.score()",
        ),
        OverlayEdit(
            "renamed_at_declaration",
            feature,
            "step16(input:",
            "stage16(input:",
            f"Feature{k}.stage16(input:)",
        ),
        OverlayEdit(
            "new_conformer",
            f"Sources/BenchDomain/Family{k}/Impl{k}.swift",
            None,
            f"\npublic struct Audit{k}: Marker{k} {{\n    public init() {{}}\n}}\n",
            f"Marker{k}",
            conformances=True,
        ),
        OverlayEdit(
            "syntax_error",
            feature,
            None,
            "\nfunc broken( {\n",
            f"Base{k}.compute(x:)",
            builds=False,
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="M")
    parser.add_argument("--root", type=Path, help="a built copy of the package (default: generate one)")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    args = parser.parse_args(argv)
    root: Path = args.root or Path(os.environ.get("XCINDEX_CACHE_DIR", "/tmp")) / "overlay-proof" / args.scale
    if args.root is None:
        from bench.generate import generate, write_package

        write_package(generate(args.scale), root)
    if not swift_build(root):
        raise SystemExit(f"swift build failed in {root}")
    outcomes = anyio.run(prove, root, bench_edits())
    rows = [outcome.to_json() for outcome in outcomes]
    for row in rows:
        print(json.dumps(row, sort_keys=True))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if any(row["problems"] for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
