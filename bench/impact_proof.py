"""Measure change_impact for real: mutate a built package, rebuild, run the full `swift test`,
and check that every failing test is among change_impact's covering tests.

For each mutation (a text replacement in one file): apply it, `swift build --build-tests`,
run every test, ask change_impact (against the package's own git HEAD), then restore the
file. A mutation that fails no test (a survivor) proves nothing: it is listed, and left out
of recall and precision. Over the killed ones, recall (failing tests that were covering)
must be 1.0; precision (covering tests that failed) is reported beside what selecting the
whole suite would score: a covering test reaches the changed code, but need not notice the
change. `python -m bench.impact_proof [--scale M]` runs it on a copy of the benchmark
package (the numbers in docs/benchmarks.md); tests/integration/test_change_impact_mutations.py
runs it on the fixture in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

_XCTEST_FAILED = re.compile(r"Test Case '(?:[\w.]+\.)?(\w+)\.(\w+)' failed")
_TESTING_FAILED = re.compile(r"✘ Test (\w+)\([^)]*\)(?: with \d+ test cases?)? failed")
_BUILD_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    """Relative to the package root."""
    old: str
    new: str
    kind: str  # body | signature | added | removed


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    baseline: frozenset[str]
    failing: frozenset[str]
    covering: frozenset[str]
    via: dict[str, str]
    """Each covering test's `reachedVia`."""
    command_length: int
    """Characters of the answer's `swiftTestCommand`."""
    filtered_failing: frozenset[str]
    changed: tuple[str, ...]
    executables: tuple[str, ...]
    """Executables the change reaches (`selection.executables`): top-level code changes no symbol."""
    answer_ms: float
    git_ms: float
    suite: frozenset[str]
    """Every test of the package (`swift test list`), named as failing_tests names them."""

    @property
    def killed(self) -> bool:
        return bool(self.failing)

    @property
    def recall(self) -> float | None:
        """None for a survivor: with nothing failing there is nothing to find."""
        return len(self.failing & self.covering) / len(self.failing) if self.failing else None

    @property
    def precision(self) -> float | None:
        """None for a survivor; 0.0 when nothing is selected but something failed."""
        if not self.failing:
            return None
        return len(self.failing & self.covering) / len(self.covering) if self.covering else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "mutation": self.mutation.name,
            "failingBefore": sorted(self.baseline),
            "kind": self.mutation.kind,
            "failing": sorted(self.failing),
            "covering": len(self.covering),
            "reachedVia": {
                how: sum(1 for v in self.via.values() if v == how) for how in sorted(set(self.via.values()))
            },
            "commandLength": self.command_length,
            "missed": sorted(self.failing - self.covering),
            "recall": None if self.recall is None else round(self.recall, 3),
            "precision": None if self.precision is None else round(self.precision, 3),
            "filteredRunFails": sorted(self.filtered_failing),
            "changedSymbols": list(self.changed),
            "executables": list(self.executables),
            "answerMs": round(self.answer_ms, 1),
            "gitMs": round(self.git_ms, 1),
        }


def test_id(listed: str, kind: str) -> str:
    """A test as `swift test list` names it (`Module.Class/method`, `Module.Suite/func()`,
    `Module.func(x:)`) as the test run names a failure: `Class/method` for XCTest, the
    function's base name for Swift Testing."""
    name = listed.split(".", 1)[1] if "." in listed else listed
    if kind == "xctest":
        return name
    return name.rsplit("/", 1)[-1].split("(")[0]


def suite_tests(root: Path) -> frozenset[str]:
    """Every test `swift test list` names (`Module.Class/method`, `Module.Suite/func()`,
    `Module.func()`), as failing_tests names them."""
    listed = _run(["swift", "test", "list", "--skip-build"], root).stdout.split()
    return frozenset(test_id(t, "testing" if t.endswith(")") else "xctest") for t in listed)


def failing_tests(output: str) -> frozenset[str]:
    failed = {f"{cls}/{method}" for cls, method in _XCTEST_FAILED.findall(output)}
    failed |= set(_TESTING_FAILED.findall(output))
    return frozenset(failed)


def _run(
    command: Sequence[str], cwd: Path, timeout: float = _BUILD_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def build(root: Path) -> None:
    result = _run(["nice", "-n", "10", "swift", "build", "--build-tests"], root)
    if result.returncode != 0:
        raise RuntimeError(f"swift build failed in {root}:\n{(result.stdout + result.stderr)[-3000:]}")


def run_tests(root: Path, pattern: str | None = None) -> str:
    command = ["nice", "-n", "10", "swift", "test", "--skip-build"]
    if pattern is not None:
        command += ["--filter", pattern]
    result = _run(command, root)
    return result.stdout + result.stderr


def prepare_repository(source: Path, destination: Path) -> Path:
    """A copy of a package (without its build folder) committed to a fresh git repository, built."""
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(".build", ".swiftpm", ".git"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "proof", "GIT_AUTHOR_EMAIL": "proof@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "proof", "GIT_COMMITTER_EMAIL": "proof@example.invalid"}
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        subprocess.run(command, cwd=destination, check=True, env=env, capture_output=True)
    build(destination)
    return destination


async def measure(root: Path, mutations: Sequence[Mutation]) -> list[Outcome]:
    from xcindex.engine import Engine, EngineConfig

    outcomes: list[Outcome] = []
    # Tests that fail before any mutation (the benchmark package has one) are not the
    # mutation's doing: they are left out of every case's failing set.
    baseline = failing_tests(await anyio.to_thread.run_sync(run_tests, root))
    suite = await anyio.to_thread.run_sync(suite_tests, root)
    async with Engine(EngineConfig(reconcile=False)) as engine:
        for mutation in mutations:
            target = root / mutation.path
            original = target.read_text(encoding="utf-8")
            if mutation.old not in original:
                raise ValueError(f"{mutation.name}: {mutation.old!r} is not in {mutation.path}")
            target.write_text(original.replace(mutation.old, mutation.new, 1), encoding="utf-8")
            try:
                await anyio.to_thread.run_sync(build, root)
                output = await anyio.to_thread.run_sync(run_tests, root)
                started = time.perf_counter()
                answer = await engine.change_impact(project_path=str(root))
                answer_ms = (time.perf_counter() - started) * 1000
                payload = answer.to_json()
                via = {test_id(t["id"], t["kind"]): t["reachedVia"] for t in payload["coveringTests"]}
                covering = frozenset(via)
                command = payload["swiftTestCommand"]
                filtered: frozenset[str] = frozenset()
                if command is not None:
                    pattern = command.split("--filter ", 1)[1].strip("'")
                    filtered = failing_tests(await anyio.to_thread.run_sync(run_tests, root, pattern))
                outcomes.append(
                    Outcome(
                        mutation,
                        baseline,
                        failing_tests(output) - baseline,
                        covering,
                        via,
                        len(command or ""),
                        filtered - baseline,
                        tuple(f"{c['name']}:{c['change']}" for c in payload["changedSymbols"]),
                        tuple(payload["selection"]["executables"]),
                        answer_ms,
                        payload["gitMs"],
                        suite,
                    )
                )
            finally:
                target.write_text(original, encoding="utf-8")
        await anyio.to_thread.run_sync(build, root)
    return outcomes


def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Recall and precision over the killed mutations (None when none was killed), beside
    the precision an answer selecting the whole suite would score on the same mutations."""
    killed = [o for o in outcomes if o.killed]
    failing = sum(len(o.failing) for o in killed)
    hits = sum(len(o.failing & o.covering) for o in killed)
    covering = sum(len(o.covering) for o in killed)
    everything = sum(len(o.suite) for o in killed)
    return {
        "mutations": len(outcomes),
        "killed": len(killed),
        "survivors": [o.mutation.name for o in outcomes if not o.killed],
        "failingTests": failing,
        "recall": round(hits / failing, 3) if failing else None,
        "precision": round(hits / covering, 3) if covering else None,
        "precisionSelectingEverything": round(failing / everything, 3) if everything else None,
        "medianAnswerMs": round(sorted(o.answer_ms for o in outcomes)[len(outcomes) // 2], 1),
        "medianGitMs": round(sorted(o.git_ms for o in outcomes)[len(outcomes) // 2], 1),
        "cases": [o.to_json() for o in outcomes],
    }


def bench_mutations(k: int = 3) -> list[Mutation]:
    """Ten mutations of family `k` of the generated benchmark package: bodies (an open
    method and its overrides across modules, a chain of calls, a default implementation, a
    witness in an extension, an enum's computed property), a signature, an added override
    and a removed one."""
    core, domain = f"Sources/BenchCore/Family{k}", f"Sources/BenchDomain/Family{k}"
    base, derived = f"{core}/Base{k}.swift", f"{domain}/Derived{k}.swift"
    return [
        Mutation("open method body", base, "return x + seed\n", "return x + seed + 1\n", "body"),
        Mutation(
            "override body",
            derived,
            "return super.compute(x: x) * 2",
            "return super.compute(x: x) * 3",
            "body",
        ),
        Mutation(
            "override of an override",
            derived,
            "return super.compute(x: x) - 1",
            "return super.compute(x: x) - 2",
            "body",
        ),
        Mutation(
            "first of a call chain", base, f"        total += {k} * 1\n", "        total -= 1000\n", "body"
        ),
        Mutation(
            "default implementation", f"{core}/Service{k}.swift", f'"Service{k}("', f'"Svc{k}("', "body"
        ),
        Mutation(
            "witness in an extension",
            f"{domain}/Impl{k}.swift",
            "return value * offset",
            "return value * offset + 1",
            "body",
        ),
        Mutation(
            "enum computed property",
            f"{core}/Models{k}.swift",
            "case .running: return 4",
            "case .running: return 5",
            "body",
        ),
        Mutation(
            "signature with a default",
            base,
            "    public func step0(input: Int) -> Int {\n        var total = input\n",
            "    public func step0(input: Int, bias: Int = -1000) -> Int {\n        var total = input + bias\n",
            "signature",
        ),
        Mutation(
            "added override",
            derived,
            f"open class Middle{k}: Base{k} {{\n",
            f"open class Middle{k}: Base{k} {{\n    override public func label() -> String {{\n"
            f'        return "Middle{k}"\n    }}\n\n',
            "added",
        ),
        Mutation(
            "removed override",
            derived,
            "    public override func compute(x: Int) -> Int {\n        BenchLog.record(x)\n"
            "        return super.compute(x: x) - 1\n    }\n",
            "",
            "removed",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.impact_proof", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="M")
    parser.add_argument("--work", default="/tmp/xcindex-impact-proof")
    parser.add_argument(
        "--mutations", type=Path, help="a JSON list of mutations (name, path, old, new, kind)"
    )
    parser.add_argument("--output", type=Path, help="also write the figures here (JSON)")
    parser.add_argument(
        "--package",
        type=Path,
        help="a Swift package to mutate instead of the generated one (its sources are copied into "
        "--work, committed and built there; e.g. a corpus package with bench/mutations/yams.json)",
    )
    args = parser.parse_args(argv)
    from bench.generate import generate, write_package

    if args.package is not None:
        root = prepare_repository(args.package, Path(args.work) / args.package.name)
    else:
        source = Path(args.work) / f"{args.scale}-source"
        write_package(generate(args.scale), source)
        root = prepare_repository(source, Path(args.work) / args.scale)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
    mutations = (
        [Mutation(**m) for m in json.loads(args.mutations.read_text())]
        if args.mutations
        else bench_mutations()
    )
    result = summary(anyio.run(measure, root, mutations))
    print(json.dumps(result, indent=2))
    if args.output:
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    # Nothing killed proves nothing: that is a failure too.
    return 0 if result["recall"] == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
