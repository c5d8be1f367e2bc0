"""Issue 24's property on real code: swift-log, Yams and swift-atomics, each edited by a
random script from a shell and asked through `xcindex serve` with no hook; every `complete`
answer equal to what a real build then gives, and every step that compiles answered
`complete` within 15 s (tests/freshness_scripts.py says how).

Each package's build is the corpus cache's (built once, `prepared`); a script starts from a
copy of it restored at its own path and leaves it restored. A change to a library's
interface rebuilds its test modules (20-60 s here for swift-log and swift-atomics), so calls,
new files, deletions, renames and broken edits go to their test modules, whose files nothing
else imports; lines are inserted anywhere. Yams rebuilds in about 10 s: its library takes
every kind of step.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.corpus.harness import cache_root, prepared, restore
from tests.freshness_scripts import PackageSpec, Tally, Use, run_property
from tests.scoring import MEASURED

pytestmark = [pytest.mark.toolchain]

LOG_TESTS = ("LoggingTests", "InMemoryLoggingTests")
SPECS = {
    "swift-log": PackageSpec(
        name="swift-log",
        uses=(
            Use(
                "standardOutput(label:)",
                "Sources/Logging/Handlers/StreamLogHandler.swift",
                'func {fn}() -> StreamLogHandler {{\n    StreamLogHandler.standardOutput(label: "prop")\n}}',
                LOG_TESTS,
            ),
            Use(
                "MultiplexLogHandler",
                "Sources/Logging/Handlers/MultiplexLogHandler.swift",
                "func {fn}(_ value: MultiplexLogHandler) -> Logger.Level {{\n    value.logLevel\n}}",
                LOG_TESTS,
            ),
            Use(
                "level",
                "Sources/Logging/LogEvent.swift",
                "func {fn}(_ value: LogEvent) -> Logger.Level {{\n    value.level\n}}",
                LOG_TESTS,
            ),
            Use(
                "SwiftLogNoOpLogHandler",
                "Sources/Logging/Handlers/SwiftLogNoOpLogHandler.swift",
                "func {fn}() -> SwiftLogNoOpLogHandler {{\n    SwiftLogNoOpLogHandler()\n}}",
                LOG_TESTS,
            ),
            Use(
                "entries",
                "Sources/InMemoryLogging/InMemoryLogHandler.swift",
                "func {fn}(_ value: InMemoryLogHandler) -> Int {{\n    value.entries.count\n}}",
                ("InMemoryLoggingTests",),
            ),
        ),
        structural_roots=("Tests/LoggingTests", "Tests/InMemoryLoggingTests"),
        insert_roots=("Sources", "Tests"),
    ),
    "yams": PackageSpec(
        name="yams",
        uses=(
            Use(
                "load(yaml:_:_:_:)",
                "Sources/Yams/Parser.swift",
                'func {fn}() throws -> Any? {{\n    try Yams.load(yaml: "a: 1")\n}}',
                ("Yams", "YamsTests"),
            ),
            Use(
                "Mark",
                "Sources/Yams/Mark.swift",
                "func {fn}(_ value: Mark) -> Int {{\n    value.line\n}}",
                ("Yams", "YamsTests"),
            ),
            Use(
                "Resolver",
                "Sources/Yams/Resolver.swift",
                "func {fn}(_ value: Resolver) -> Int {{\n    value.rules.count\n}}",
                ("Yams", "YamsTests"),
            ),
            Use(
                "YAMLEncoder",
                "Sources/Yams/Encoder.swift",
                "func {fn}() -> YAMLEncoder {{\n    YAMLEncoder()\n}}",
                ("Yams", "YamsTests"),
            ),
            Use(
                "mapping",
                "Sources/Yams/Node.Mapping.swift",
                "func {fn}(_ value: Node) -> Node.Mapping? {{\n    value.mapping\n}}",
                ("Yams", "YamsTests"),
            ),
        ),
        structural_roots=("Sources/Yams", "Tests/YamsTests"),
        insert_roots=("Sources/Yams", "Tests"),
    ),
    "swift-atomics": PackageSpec(
        name="swift-atomics",
        uses=(
            Use(
                "load(ordering:)",
                "Sources/Atomics/Types/ManagedAtomic.swift",
                "func {fn}(_ value: ManagedAtomic<Int>) -> Int {{\n    value.load(ordering: .relaxed)\n}}",
                ("AtomicsTests",),
            ),
            Use(
                "first",
                "Sources/Atomics/Types/DoubleWord.swift",
                "func {fn}(_ value: DoubleWord) -> UInt {{\n    value.first\n}}",
                ("AtomicsTests",),
            ),
            Use(
                "ManagedAtomicLazyReference",
                "Sources/Atomics/Types/ManagedAtomicLazyReference.swift",
                "func {fn}(_ value: ManagedAtomicLazyReference<LifetimeTracked>) -> LifetimeTracked? {{\n"
                "    value.load()\n}}",
                ("AtomicsTests",),
            ),
            Use(
                "AtomicStoreOrdering",
                "Sources/Atomics/Types/AtomicMemoryOrderings.swift",
                "func {fn}() -> AtomicStoreOrdering {{\n    .releasing\n}}",
                ("AtomicsTests",),
            ),
            Use(
                "LifetimeTracked",
                "Tests/AtomicsTests/LifetimeTracked.swift",
                "func {fn}(_ value: LifetimeTracked) -> Int {{\n    value.value\n}}",
                ("AtomicsTests",),
            ),
        ),
        structural_roots=("Tests/AtomicsTests",),
        insert_roots=("Sources/Atomics", "Tests/AtomicsTests"),
    ),
}
SCRIPTS = {"swift-log": 2, "yams": 2, "swift-atomics": 1}
"""Scripts per package (each has one step of every kind, six, plus an undo per failed build):
what fits about ten minutes for the three on two cores; swift-atomics' test module alone is
60,000 lines, and its steps build for 20 s each."""


@contextmanager
def checked_out(name: str) -> Iterator[Path]:
    """The built package, held by this session alone (other sessions running this test wait),
    and restored when done."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{name}.freshness.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        package = prepared(name)
        try:
            yield package
        finally:
            restore(package)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_an_answer_never_says_complete_when_it_is_not(name: str, tmp_path: Path) -> None:
    tally = Tally(f"freshness property, {name}, watch")
    with checked_out(name) as package:
        try:
            run_property(SPECS[name], package, tally, tmp_path, watch=True, examples=SCRIPTS[name], steps=6)
        finally:
            MEASURED.extend(tally.lines())
    assert not tally.lies, "\n".join(tally.lies)
    assert not tally.not_fresh, "\n".join(tally.not_fresh)
    assert tally.scripts == SCRIPTS[name]
    assert tally.compared.total() >= 6 * SCRIPTS[name], "too few complete answers compared to prove anything"
