"""blast_radius and change_impact on real code: every test a mutation breaks is among the
tests they select, and blast_radius selects within the bounds written down for the mutated
file. change_impact is asked of each mutant as an agent asks it (the edit made, before a
build: the diff against the pristine commit); its recall and precision are held as
blast_radius's are.

Mutants are generated the same way on every run (the first candidate lines of each source
and test file, in path order, for a handful of operators), and tried until KILLED_WANTED
are killed. Each is applied to the built package, built incrementally and tested in full.
Every mutant tried has its verdict written down in EXPECTED (does not build; survives: no
test fails, which proves nothing, so it is listed and not counted; crashes the test
process; or kills: how many tests of which suites fail), and every mutated file the tests
blast_radius may select for it (asked on the pristine index), as the suites that can reach
the file's code, with the tests it must select (those that run it, read by hand) and the ones
it selects outside those suites although they cannot run it (known imprecision, each with
why). All were derived from reading the packages (which tests use which declarations,
transitively) and confirmed by a real run, whose failing tests must all be selected. The
test fails when a verdict changes, when a selection leaves those bounds (a test outside
the suites and not written down, or a test it must select missing, or a test that runs no
package code at all), when a failing test is not selected (recall), and when precision
(selected tests that failed / selected, over the killed mutants that did not crash) falls
below the package's floor, which selecting every test cannot reach.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.corpus.harness import (
    Outcome,
    build_and_test,
    committed,
    ids_of,
    listed_tests,
    prepared,
    restore,
    run_tests,
)
from tests.scoring import MEASURED
from xcindex.engine import Engine
from xcindex.tools.graph.blast_radius import BlastRadiusAnswer
from xcindex.tools.graph.change_impact import ChangeImpactAnswer

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

KILLED_WANTED = 20
MAX_CANDIDATES = 48
PER_FILE = 4
OPERATORS = (
    (" == ", " != "),
    (" < ", " >= "),
    (" > ", " <= "),
    ("return true", "return false"),
    ("return false", "return true"),
    (" + 1", " + 2"),
    (" - 1", " - 2"),
    ("isEmpty", "!isEmpty"),
)
_SKIP = re.compile(r"^\s*(//|/\*|\*|#|import |@available)|func [=<>!+-]|operator")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Mutant:
    path: Path
    line: int
    old: str
    new: str

    def apply(self) -> None:
        lines = self.path.read_text(encoding="utf-8").split("\n")
        lines[self.line - 1] = lines[self.line - 1].replace(self.old, self.new, 1)
        self.path.write_text("\n".join(lines), encoding="utf-8")


def candidates(package: Path) -> list[Mutant]:
    """At most PER_FILE mutants per file (the first lines an operator applies to), round-robin
    over the files so that sources and tests of every target are reached."""
    per_file: list[list[Mutant]] = []
    for path in sorted([*(package / "Sources").rglob("*.swift"), *(package / "Tests").rglob("*.swift")]):
        found: list[Mutant] = []
        for number, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if _SKIP.search(text) or '"' in text:
                continue
            for old, new in OPERATORS:
                if old in text and (old != "isEmpty" or "!isEmpty" not in text):
                    found.append(Mutant(path, number, old, new))
                    break
            if len(found) == PER_FILE:
                break
        if found:
            per_file.append(found)
    ordered: list[Mutant] = []
    for index in range(PER_FILE):
        ordered.extend(found[index] for found in per_file if len(found) > index)
    return ordered[:MAX_CANDIDATES]


def selection_filter(answer: BlastRadiusAnswer) -> str | None:
    """The `--filter` of blast_radius's command; None when it covers the whole suite."""
    if answer.whole_suite:
        return None
    command = answer.swift_test_command
    if command is None:
        return "^$"  # no covering test: run nothing
    return command.split("--filter ", 1)[1].strip("'")


def selection(answer: BlastRadiusAnswer, ids: list[str]) -> set[str]:
    """The identifiers blast_radius's `swift test --filter` selects (all for the whole suite),
    matched the way `swift test` matches its filter: a Swift Testing test's identifier goes on
    past its parentheses (`Module.Suite/test()/…`: `test\\(\\)/` selects it, `test\\(\\)$`
    nothing), where `swift test list` stops."""
    pattern = selection_filter(answer)
    if pattern is None:
        return set(ids)
    return {i for i in ids if re.search(pattern, f"{i}/" if i.endswith(")") else i)}


@dataclass(frozen=True)
class Verdict:
    kind: str
    """`does not build`, `survives`, `crashes` or `kills`."""
    fails: int = 0
    """How many tests fail (kills)."""
    suites: frozenset[str] = frozenset()
    """The suites of the failing tests (kills)."""

    def __str__(self) -> str:
        if self.kind != "kills":
            return self.kind
        return f"kills {self.fails} in {', '.join(sorted(s.rsplit('.', 1)[-1] for s in self.suites))}"


NO_BUILD = Verdict("does not build")
SURVIVES = Verdict("survives")
CRASHES = Verdict("crashes")


def kills(fails: int, *in_suites: str) -> Verdict:
    return Verdict("kills", fails, frozenset(in_suites))


@dataclass(frozen=True)
class Expected:
    selects: frozenset[str]
    """The suites (`Module.Suite`) whose tests can reach the file's code: blast_radius selects
    among their tests (per test: those that reach it)."""
    mutants: dict[int, Verdict]
    """Each mutant of the file tried (by line) and its verdict."""
    must: frozenset[str] = frozenset()
    """Tests (`Module.Suite/test`) that run the file's code, read by hand: always selected."""
    also: frozenset[str] = frozenset()
    """Tests outside `selects` that blast_radius selects although they cannot run the file's
    code: known imprecision, each written down with why."""


NEVER = frozenset(
    {
        # Its body is commented out (a TODO): it runs nothing.
        "YamsTests.SpecTests/testSpecExample2_11_MappingBetweenSequences",
        # It checks String.lineRange(for:), the standard library's, alone.
        "YamsTests.StringTests/testConfirmBehaviorOfStandardLibraryAPI",
    }
)
"""Tests that run no code of their package: never selected, whatever changes."""


def suites(module: str, names: str) -> frozenset[str]:
    """`Module.Suite` for each space-separated suite name."""
    return frozenset(f"{module}.{name}" for name in names.split())


L, M = "LoggingTests.", "InMemoryLoggingTests.InMemoryLogHandlerTests"
LOG_ALL = frozenset({M}) | suites(
    "LoggingTests",
    "CompatibilityTest GlobalLoggerTest LocalLoggerTest LockTestSuite LogEventTest LoggingTest MDCTest "
    "MetadataAttributesTests MetadataProviderTest MetadataValueInterpolationTests SendableTest "
    "StreamLogHandlerTest SwiftLogNoOpLogHandlerTest TaskLocalLoggerTest",
)
LOG_BUT_LOCKS = LOG_ALL - {L + "LockTestSuite"}
"""Every suite that uses Logger: all but LockTestSuite (LockTest.swift uses `Lock` alone)."""
LOGGING_TEST = frozenset({L + "LoggingTest", L + "GlobalLoggerTest", L + "StreamLogHandlerTest"})
"""LoggingTest.swift's suite, and the two whose files use its `Logger.MetadataProvider.exampleProvider`
(GlobalLoggingTest.swift:180, StreamLogHandlerTest.swift:169)."""

Y = "YamsTests."
YAMS_ALL = suites(
    "YamsTests",
    "ConstructorTests EmitterTests EncoderTests MarkTests NodeInternalHelpersTests NodeTests PerformanceTests "
    "RepresenterTests ResolverTests SpecTests StringTests YamlErrorTests",
)
"""The suites `swift test list` lists here (the non-final XCTestCase classes of AnchorCodingTests,
ClassReferenceDecodingTests, TagCodingTests and the like are not among them)."""
YAMS_CORE = YAMS_ALL - {Y + "StringTests"}
"""Node.swift and the files it reaches or that reach it (Tag holds the Resolver and the Constructor,
every node case a Tag and a Mark; Representer's protocols are Node's; YamlError is thrown by the
Representer): every suite but StringTests, whose file uses String+Yams's extension alone."""
YAMS_EMITTING = suites(
    "YamsTests", "EmitterTests EncoderTests PerformanceTests RepresenterTests SpecTests YamlErrorTests"
)
"""Emitter.swift (`Emitter`, `dump`, `serialize`) is used by Encoder.swift, whose `_YAMLCodingKey`
Decoder.swift uses: the suites using `dump`/`serialize`/Emitter (Emitter, Representer, Spec,
YamlError), YAMLEncoder (Encoder) or YAMLDecoder (Encoder, Performance)."""
YAMS_DECODING = frozenset({Y + "EncoderTests", Y + "PerformanceTests"})
"""The suites using YAMLDecoder, which Decoder.swift declares."""
STRING_HOLDERS = frozenset(
    {Y + "StringTests/testLineNumberColumnAndContentsAtOffset", Y + "StringTests/testSubstringAtLine"}
)
"""StringTests' tests hold Strings and call String+Yams alone: they cannot run the String
witnesses these files declare (`String.construct(from:)`, `String.represented()`), but a
generic dispatch point is taken as reached from any code holding a value of the type."""


def named_tests(suite: str, names: str) -> frozenset[str]:
    """`Module.Suite/test` for each space-separated test name."""
    return frozenset(f"{suite}/{name}" for name in names.split())


EXPECTED: dict[str, dict[str, Expected]] = {
    "swift-log": {
        # InMemoryLogHandler is used by InMemoryLogHandlerTests.swift alone.
        "Sources/InMemoryLogging/InMemoryLogHandler.swift": Expected(
            frozenset({M}), {73: kills(1, M), 74: kills(1, M), 75: kills(1, M)}
        ),
        # MultiplexLogHandler is used by LoggingTest.swift alone: the ten tests that name it.
        "Sources/Logging/Handlers/MultiplexLogHandler.swift": Expected(
            LOGGING_TEST,
            {110: kills(2, L + "LoggingTest"), 134: NO_BUILD},
            must=named_tests(
                L + "LoggingTest",
                "multiplex() multiplexLogHandlerWithVariousLogLevels() "
                "multiplexLogHandlerNeedNotMaterializeValuesMultipleTimes() "
                "multiplexLogHandlerMetadata_settingMetadataThroughToUnderlyingHandlers() "
                "multiplexLogHandlerMetadata_readingHandlerMetadata() multiplexMetadataProviderSet() "
                "multiplexMetadataProviderExtract() multiplexerIsValue() "
                "multiplexLogHandlerMetadataWithAttributes_settingAndReading() "
                "multiplexLogHandlerMetadataWithAttributes_forwardsEventWithAttributes()",
            ),
        ),
        # LoggingSystem's default factory (LoggingSystem.swift:30): every Logger(label:).
        "Sources/Logging/Handlers/StreamLogHandler.swift": Expected(
            LOG_BUT_LOCKS, {184: NO_BUILD, 189: NO_BUILD, 193: NO_BUILD}
        ),
        # LoggingSystem's locks, and LockTest.swift.
        "Sources/Logging/Locks.swift": Expected(LOG_ALL, {94: CRASHES, 170: CRASHES}),
        # MetadataValue's string interpolation, which StreamLogHandler.swift:198 uses.
        "Sources/Logging/Logger+Attributes.swift": Expected(
            LOG_BUT_LOCKS,
            {
                49: NO_BUILD,
                85: kills(
                    32,
                    L + "MetadataValueInterpolationTests",
                    L + "LogEventTest",
                    L + "LoggingTest",
                    L + "MetadataAttributesTests",
                ),
                88: kills(9, L + "MetadataValueInterpolationTests", L + "MetadataAttributesTests"),
            },
        ),
        "Sources/Logging/Logger.swift": Expected(
            LOG_BUT_LOCKS,
            {
                1300: CRASHES,
                1330: kills(
                    36,
                    M,
                    L + "TaskLocalLoggerTest",
                    L + "LoggingTest",
                    L + "GlobalLoggerTest",
                    L + "LocalLoggerTest",
                    L + "LogEventTest",
                    L + "SendableTest",
                    L + "MDCTest",
                ),
                1332: kills(1, L + "LoggingTest"),
            },
        ),
        # Logger.MetadataProvider, which Logger.swift uses.
        "Sources/Logging/MetadataProvider.swift": Expected(LOG_BUT_LOCKS, {109: NO_BUILD}),
        # A test file nothing else uses selects its own suite.
        "Tests/InMemoryLoggingTests/InMemoryLogHandlerTests.swift": Expected(
            frozenset({M}), {112: kills(1, M)}
        ),
        "Tests/LoggingTests/LogEventTest.swift": Expected(
            frozenset({L + "LogEventTest"}), {185: kills(1, L + "LogEventTest")}
        ),
        "Tests/LoggingTests/LoggingTest.swift": Expected(
            LOGGING_TEST,
            {
                278: kills(1, L + "LoggingTest"),
                319: kills(1, L + "LoggingTest"),
                329: kills(1, L + "LoggingTest"),
            },
        ),
        # `0...add - 1` and `remove + 1...add` only move which random keys are checked.
        "Tests/LoggingTests/MDCTest.swift": Expected(
            frozenset({L + "MDCTest"}), {28: SURVIVES, 36: SURVIVES}
        ),
        "Tests/LoggingTests/StreamLogHandlerTest.swift": Expected(
            frozenset({L + "StreamLogHandlerTest"}), {155: kills(1, L + "StreamLogHandlerTest")}
        ),
        "Tests/LoggingTests/TaskLocalLoggerTest.swift": Expected(
            frozenset({L + "TaskLocalLoggerTest"}),
            {365: kills(1, L + "TaskLocalLoggerTest"), 370: kills(1, L + "TaskLocalLoggerTest")},
        ),
        # TestLogging, TestLogHandler, MDC, TestLibrary: used by nine test files; and
        # StreamLogHandlerTest through LoggingTest.swift. Line 229 is in History.atLevel(level:),
        # called only by History's trace/debug/info/warning/error, which no test reads.
        "Tests/LoggingTests/TestLogger.swift": Expected(
            suites(
                "LoggingTests",
                "CompatibilityTest GlobalLoggerTest LocalLoggerTest LogEventTest LoggingTest MDCTest "
                "MetadataProviderTest SendableTest StreamLogHandlerTest TaskLocalLoggerTest",
            ),
            {
                82: NO_BUILD,
                229: SURVIVES,
                320: kills(
                    13,
                    L + "LoggingTest",
                    L + "TaskLocalLoggerTest",
                    L + "GlobalLoggerTest",
                    L + "LocalLoggerTest",
                    L + "MetadataProviderTest",
                ),
            },
        ),
    },
    "yams": {
        "Sources/Yams/Constructor.swift": Expected(
            YAMS_CORE,
            {
                81: SURVIVES,
                155: kills(
                    12, Y + "ConstructorTests", Y + "EncoderTests", Y + "NodeTests", Y + "ResolverTests"
                ),
            },
            also=STRING_HOLDERS,
        ),
        "Sources/Yams/Decoder.swift": Expected(
            YAMS_DECODING,
            {234: SURVIVES, 240: SURVIVES},
            # Decoder.swift's `extension FixedWidthInteger where Self: SignedInteger` gives the
            # signed integers `construct(from:)`; testArray calls `array(of: Int.self)`, but Int
            # has its own (Constructor.swift:335), which wins: every signed integer is taken
            # as using the extension's.
            also=frozenset({Y + "NodeTests/testArray"}),
        ),
        "Sources/Yams/Emitter.swift": Expected(YAMS_EMITTING, {161: NO_BUILD, 481: CRASHES}),
        # YAMLEncoder, and Emitter.swift and Decoder.swift through it.
        "Sources/Yams/Encoder.swift": Expected(YAMS_EMITTING, {123: CRASHES, 176: SURVIVES}),
        "Sources/Yams/Mark.swift": Expected(YAMS_CORE, {29: kills(3, Y + "YamlErrorTests"), 32: CRASHES}),
        "Sources/Yams/Node.Alias.swift": Expected(YAMS_CORE, {36: SURVIVES, 43: SURVIVES}),
        "Sources/Yams/Node.Mapping.swift": Expected(
            YAMS_CORE,
            {70: NO_BUILD, 77: kills(4, Y + "ConstructorTests", Y + "NodeTests", Y + "RepresenterTests")},
        ),
        "Sources/Yams/Node.Scalar.swift": Expected(
            YAMS_CORE,
            {100: kills(19, Y + "EmitterTests", Y + "EncoderTests", Y + "SpecTests"), 107: CRASHES},
        ),
        "Sources/Yams/Node.Sequence.swift": Expected(
            YAMS_CORE,
            {74: NO_BUILD, 81: kills(4, Y + "ConstructorTests", Y + "NodeTests", Y + "RepresenterTests")},
        ),
        "Sources/Yams/Node.swift": Expected(
            YAMS_CORE,
            {226: kills(19, Y + "EmitterTests", Y + "EncoderTests", Y + "SpecTests"), 228: SURVIVES},
        ),
        # Parser is used by Decoder.swift and by every suite but Emitter, NodeInternalHelpers and String.
        "Sources/Yams/Parser.swift": Expected(
            YAMS_ALL - {Y + "EmitterTests", Y + "NodeInternalHelpersTests", Y + "StringTests"},
            {193: SURVIVES, 329: CRASHES},
        ),
        "Sources/Yams/Representer.swift": Expected(
            YAMS_CORE, {56: kills(17, Y + "SpecTests"), 64: SURVIVES}, also=STRING_HOLDERS
        ),
        "Sources/Yams/Resolver.swift": Expected(YAMS_CORE, {68: SURVIVES, 73: kills(1, Y + "ResolverTests")}),
        # String+Yams is used by Mark.swift and YamlError.swift, and by StringTests.swift.
        # YamlError's `description` (a CustomStringConvertible witness) calls it for a reader
        # error (`lineNumberColumnAndContents(at:)`, passed to flatMap: a reference, not a
        # call) and, through Mark.snippet(from:), for scanner and parser errors; the tests
        # that describe such an error (`"\(error)"`: a string interpolation, the library's
        # `appendInterpolation`) run it.
        "Sources/Yams/String+Yams.swift": Expected(
            YAMS_ALL,
            {38: kills(1, Y + "StringTests")},
            must=named_tests(Y + "StringTests", "testLineNumberColumnAndContentsAtOffset testSubstringAtLine")
            | named_tests(
                Y + "YamlErrorTests", "testYamlErrorReader testYamlErrorScanner testYamlErrorParser"
            ),
        ),
        "Sources/Yams/Tag.swift": Expected(
            YAMS_CORE,
            {
                57: kills(
                    66,
                    Y + "ConstructorTests",
                    Y + "EmitterTests",
                    Y + "EncoderTests",
                    Y + "NodeTests",
                    Y + "PerformanceTests",
                    Y + "RepresenterTests",
                    Y + "ResolverTests",
                    Y + "SpecTests",
                )
            },
        ),
        "Sources/Yams/YamlError.swift": Expected(YAMS_CORE, {109: kills(2, Y + "YamlErrorTests")}),
        # Its suite is not listed by `swift test list`; but the file also makes Int conform to
        # RawRepresentable (`extension Int: @retroactive RawRepresentable`, with `rawValue`
        # and `init(rawValue:)`), which the whole test module sees: any test handing an Int
        # to generic code over RawRepresentable can run it.
        "Tests/YamsTests/AnchorCodingTests.swift": Expected(YAMS_ALL, {453: NO_BUILD}),
        # Suites `swift test list` does not list: nothing to select, nothing to run.
        "Tests/YamsTests/ClassReferenceDecodingTests.swift": Expected(frozenset(), {239: SURVIVES}),
        # Line 141: `MemoryLayout<Int>.size != 8` makes the expected integers Int64, which the
        # test's YamsAssertEqual still finds equal.
        "Tests/YamsTests/ConstructorTests.swift": Expected(
            frozenset({Y + "ConstructorTests"}), {141: SURVIVES}
        ),
        # Its `_testRoundTrip` is also used by the Anchor, ClassReference and Tag coding suites, not listed.
        "Tests/YamsTests/EncoderTests.swift": Expected(
            frozenset({Y + "EncoderTests"}), {494: kills(1, Y + "EncoderTests")}
        ),
        "Tests/YamsTests/MarkTests.swift": Expected(
            frozenset({Y + "MarkTests"}), {16: kills(1, Y + "MarkTests")}
        ),
        "Tests/YamsTests/NodeTests.swift": Expected(frozenset({Y + "NodeTests"}), {141: NO_BUILD}),
        "Tests/YamsTests/PerformanceTests.swift": Expected(
            frozenset({Y + "PerformanceTests"}), {169: kills(2, Y + "PerformanceTests")}
        ),
        "Tests/YamsTests/RepresenterTests.swift": Expected(
            frozenset({Y + "RepresenterTests"}), {62: kills(1, Y + "RepresenterTests")}
        ),
        # The helpers of the Constructor, Node, Representer and Spec suites; line 50 is YamsAssertEqual's
        # `case (nil, nil)`, which none of their comparisons reaches.
        "Tests/YamsTests/TestHelper.swift": Expected(
            frozenset({Y + "ConstructorTests", Y + "NodeTests", Y + "RepresenterTests", Y + "SpecTests"}),
            {50: SURVIVES},
        ),
    },
}

PRECISION_FLOOR = {"swift-log": 0.11, "yams": 0.11}
"""Selected tests that failed / selected, over the killed mutants that did not crash: measured
104 / 914 = 0.114 (swift-log) and 153 / 1360 = 0.113 (Yams), selecting per test, a test that
reaches a dispatch point only when it also reaches code holding a value of the
implementation's type (by suite and without that: 104 / 1029 = 0.101 and 153 / 1394 =
0.110; per test without it, 104 / 1299 = 0.080 on swift-log: every test that logs selected
for InMemoryLogHandler.swift and LogEventTest.swift's private handlers). Yams was 153 / 1241
= 0.123 while string interpolation was not seen to describe a value: String+Yams.swift then
selected 2 tests, leaving out the YamlErrorTests that describe a reader, scanner or parser
error through it; it now selects 100 (every test reaching code that throws a YamlError,
which a caller may describe). Selecting every test scores 0.037 and 0.082. A change to a
core file reaches nearly every suite. Raise the floors (and the expected selections) as
precision improves."""


IMPACT_PRECISION_FLOOR = {"swift-log": 0.22, "yams": 0.13}
"""The same for change_impact, asked of each mutant as an agent asks it (the edit made, not
built: one declaration changed): measured 104 / 419 = 0.248 (swift-log) and 153 / 1063 =
0.144 (Yams), recall 1.0 on both. A change to `Logger.MetadataValue.==` (a witness only
library code runs) first missed 25 of its 36 failing tests: they compare `Logger.Metadata`
values, and code naming that typealias (`[String: MetadataValue]`) was not taken as holding
a MetadataValue; it now is, and the answer selects 148 (all 36 among them)."""


def command_selection(command: str | None, ids: list[str]) -> set[str]:
    """The identifiers a `swift test --filter '…'` command runs (nothing without a command),
    matched as `swift test` matches (see `selection`)."""
    if not command:
        return set()
    pattern = command.split("--filter ", 1)[1].strip("'") if "--filter " in command else ""
    return {i for i in ids if re.search(pattern, f"{i}/" if i.endswith(")") else i)}


def verdict_of(outcome: Outcome, ids: list[str]) -> Verdict:
    if not outcome.built:
        return NO_BUILD
    if outcome.crashed:
        return CRASHES
    if not outcome.failed:
        return SURVIVES
    owners = {i for name in outcome.failed for i in ids_of(name, ids)}
    return kills(len(outcome.failed), *{i.split("/")[0] for i in owners})


@pytest.mark.parametrize("package_name", ["swift-log", "yams"])
async def test_blast_radius_selects_the_tests_written_down_and_every_test_a_mutation_breaks(
    package_name: str,
) -> None:
    started = time.monotonic()
    package = committed(prepared(package_name))
    baseline = run_tests(package)
    assert baseline.passed, baseline.output
    assert not baseline.failed, baseline.output
    ids = listed_tests(package)
    for name in baseline.passed:
        assert ids_of(name, ids), f"{name} is not in `swift test list`: names cannot be matched"
    expected = EXPECTED[package_name]
    mutants = candidates(package)
    answers: dict[Path, BlastRadiusAnswer] = {}
    impacts: dict[Mutant, ChangeImpactAnswer] = {}
    async with Engine() as engine:
        for mutant in mutants:
            if mutant.path not in answers:
                answers[mutant.path] = await engine.blast_radius(str(mutant.path), project_path=str(package))
        # change_impact of each mutant as an agent asks it, the edit made and not yet built:
        # the diff against the pristine commit, one declaration changed.
        for mutant in mutants[: KILLED_WANTED * 2]:
            text = mutant.path.read_text(encoding="utf-8")
            try:
                mutant.apply()
                impacts[mutant] = await engine.change_impact(project_path=str(package))
            finally:
                mutant.path.write_text(text, encoding="utf-8")
    restore(package)
    rows: list[str] = []
    wrong: list[str] = []
    tried: set[tuple[str, int]] = set()
    killed = counted = 0
    selected_total = hits_total = failing_total = 0
    impact_selected = impact_hits = 0
    for mutant in mutants:
        if killed >= KILLED_WANTED:
            break
        answer = answers[mutant.path]
        chosen = selection(answer, ids)
        impact = impacts[mutant]
        impact_chosen = command_selection(impact.swift_test_command, ids)
        file = str(mutant.path.relative_to(package))
        tried.add((file, mutant.line))
        try:
            mutant.apply()
            full = build_and_test(package)
            # A crashed test process does not say which test it died in (Swift Testing
            # runs them in parallel): the selection, run alone, must be killed too.
            alone = (
                run_tests(package, test_filter=selection_filter(answer))
                if full.killed and full.crashed
                else None
            )
        finally:
            restore(package)
        verdict = verdict_of(full, ids)
        where = f"{file}:{mutant.line} `{mutant.old.strip()}`→`{mutant.new.strip()}`"
        want = expected.get(file)
        if want is None or want.mutants.get(mutant.line) != verdict:
            why = f" ({full.errors[:2] or full.output[-800:]})" if not full.built else ""
            wrong.append(
                f"{where}: {verdict}{why}, expected {want.mutants.get(mutant.line) if want else 'no such file'}"
            )
        if want is not None:
            # The bounds hold for the tests it lists; its command may run more, and says so
            # (a long selection names partly selected classes whole).
            listed = {t.case.id for t in answer.selection.tests} & set(ids)
            outside = sorted(i for i in listed if i.split("/")[0] not in want.selects and i not in want.also)
            if outside:
                wrong.append(f"{where}: selects {len(outside)} outside {sorted(want.selects)}: {outside[:8]}")
            if listed & NEVER:
                wrong.append(f"{where}: selects tests that run no package code: {sorted(listed & NEVER)}")
            if not want.must <= chosen:
                wrong.append(f"{where}: leaves out tests that run its code: {sorted(want.must - chosen)}")
        failing = {name: ids_of(name, ids) for name in full.failed}
        # Strict: a failing name that could be several tests needs all of them selected.
        missed = sorted(name for name, owners in failing.items() if not owners or not set(owners) <= chosen)
        if alone is not None and not alone.killed:
            missed.append("(the crash: the selection alone passes)")
        if missed:
            wrong.append(f"{where}: MISSED {missed}")
        impact_missed = sorted(
            name for name, owners in failing.items() if not owners or not set(owners) <= impact_chosen
        )
        if impact_missed and not full.crashed:
            wrong.append(f"{where}: change_impact MISSED {impact_missed}")
        if full.killed:
            killed += 1
            if not full.crashed:
                counted += 1
                owners = {i for found in failing.values() for i in found}
                selected_total += len(chosen)
                hits_total += len(owners & chosen)
                failing_total += len(owners)
                impact_selected += len(impact_chosen)
                impact_hits += len(owners & impact_chosen)
        rows.append(
            f"{where}: {verdict.kind.upper() if verdict.kind == 'survives' else verdict}"
            + (" (selection alone: killed too)" if alone is not None and alone.killed else "")
            + f"; {len(chosen)} selected"
            + (" (whole suite)" if answer.whole_suite else "")
            + f"; command {len(answer.swift_test_command or '')} chars"
            + f"; change_impact {len(impact_chosen)} selected, command "
            + f"{len(impact.swift_test_command or '')} chars"
        )
    untried = sorted(
        f"{f}:{line}" for f, want in expected.items() for line in want.mutants if (f, line) not in tried
    )
    if untried:
        wrong.append(f"expected but not tried: {untried}")
    elapsed = time.monotonic() - started
    precision = hits_total / selected_total if selected_total else 0.0
    impact_precision = impact_hits / impact_selected if impact_selected else 0.0
    everything = failing_total / (len(ids) * counted) if counted else 0.0
    MEASURED.append(
        f"corpus mutations {package_name}: {killed} killed of {len(rows)} tried ({len(mutants)} candidates) "
        f"in {elapsed:.0f} s; survivors {sum('SURVIVES' in r for r in rows)}; precision {precision:.3f} "
        f"({hits_total} of {selected_total} selected tests failed; floor {PRECISION_FLOOR[package_name]}; "
        f"selecting every test: {everything:.3f}); change_impact of each mutant: precision "
        f"{impact_precision:.3f} ({impact_hits} of {impact_selected}; floor {IMPACT_PRECISION_FLOOR[package_name]})"
    )
    MEASURED.extend(f"  {row}" for row in rows)
    if killed < KILLED_WANTED:
        wrong.append(f"only {killed} mutants were killed: the harness proves too little")
    if everything >= PRECISION_FLOOR[package_name]:
        wrong.append(f"the floor {PRECISION_FLOOR[package_name]} does not rule out selecting every test")
    if precision < PRECISION_FLOOR[package_name]:
        wrong.append(f"precision {precision:.3f} is below the floor {PRECISION_FLOOR[package_name]}")
    if impact_precision < IMPACT_PRECISION_FLOOR[package_name]:
        wrong.append(
            f"change_impact's precision {impact_precision:.3f} is below its floor {IMPACT_PRECISION_FLOOR[package_name]}"
        )
    assert not wrong, "\n".join(wrong)


@dataclass(frozen=True)
class Targeted:
    """A mutant chosen by hand for a kind of reach, asked of change_impact (the diff against
    the pristine commit), with the tests it breaks and the tests to select, both read from
    the package (and the failures confirmed by a full run)."""

    kind: str
    path: str
    line: int
    old: str
    new: str
    fails: frozenset[str]
    selects: frozenset[str]
    via: str


A = "AtomicsTests."
UPDATE_ORDERINGS = ("relaxed", "acquiring", "releasing", "acquiringAndReleasing", "sequentiallyConsistent")
ATOMICS_INT8_AND = frozenset(
    f"{A}BasicAtomicInt8Tests/test_{op}_{ordering}"
    for op in ("loadThenBitwiseAnd", "bitwiseAndThenLoad")
    for ordering in UPDATE_ORDERINGS
)
RAW_EXCHANGE = frozenset(f"{A}BasicAtomicRawRepresentableTests/test_exchange_{o}" for o in UPDATE_ORDERINGS)
OPTIONAL_RAW_EXCHANGE = frozenset(
    f"{A}BasicAtomicOptionalRawRepresentableTests/test_exchange_{o}" for o in UPDATE_ORDERINGS
)
DOUBLE_WORD_MEMORY_ORDER = named_tests(
    A + "DoubleWordTests",
    "testFirstSecondInitializer testHighLowInitializer testPropertySetters testPropertySetters_deprecated",
)
ATOMICS_CASES = (
    # Int8's witness of the static requirement AtomicIntegerStorage.atomicLoadThenBitwiseAnd:
    # only UnsafeAtomic's and ManagedAtomic's generic `_Storage.atomicLoadThenBitwiseAnd(…)`
    # (`Value.AtomicRepresentation`, a static call Swift 6.3 does not mark dynamic) runs it,
    # for an Int8: BasicAtomicInt8Tests' ten AND tests, each of which fails (3 & 8 is 0, 3 | 8 is 11).
    Targeted(
        "a witness reached only through a static requirement",
        "Sources/Atomics/Conformances/autogenerated/IntegerConformances.swift",
        189,
        "_atomicLoadThenBitwiseAnd(",
        "_atomicLoadThenBitwiseOr(",
        ATOMICS_INT8_AND,
        ATOMICS_INT8_AND,
        "dispatch",
    ),
    # DoubleWord's `==`, which only library code calls: XCTAssertEqual compares through it in
    # every BasicAtomicDoubleWordTests test (equal values now differ: all 52 fail). The seven
    # DoubleWordTests tests hold a DoubleWord and call XCTAssertEqual on UInts and UIntPairs:
    # selected, and they pass (which values a library call is handed is not in the index).
    Targeted(
        "a witness of == only library code calls",
        "Sources/Atomics/Types/DoubleWord.swift",
        98,
        "left.first == right.first",
        "left.first != right.first",
        frozenset(),  # filled below: every BasicAtomicDoubleWordTests test
        frozenset(),
        "libraryDispatch",
    ),
    # AtomicRawRepresentableStorage's exchange returns what it stores, not what it held. No
    # code names that type: `enum Fred: Int, AtomicValue` (the tests' own) takes it as its
    # AtomicRepresentation through `extension RawRepresentable where Self: AtomicValue, … {
    # typealias AtomicRepresentation = AtomicRawRepresentableStorage<Self> }`, which the index
    # records at Fred's definition (implicit, overriding the requirement); UnsafeAtomic's and
    # ManagedAtomic's generic `exchange` run it for a Fred. The type's `where` clause is on
    # lines of its own: the declaration scan once lost every member of it (no changed symbol,
    # 0 tests, `complete`). The five exchange tests of BasicAtomicRawRepresentableTests fail;
    # BasicAtomicOptionalRawRepresentableTests' five are selected too and pass: the optional
    # storage's exchange calls `_Storage.atomicExchange` generically, and which storage
    # `_Storage` is there (Int's optional one) is not in the index.
    Targeted(
        "a witness its conformers take through a protocol extension's typealias",
        "Sources/Atomics/Conformances/RawRepresentable.swift",
        85,
        "return Value(rawValue: raw)!",
        "return desired",
        RAW_EXCHANGE,
        RAW_EXCHANGE | OPTIONAL_RAW_EXCHANGE,
        "dispatch",
    ),
    # A helper method of a test class: the four DoubleWordTests tests that call it, not the
    # class's other three and not the module.
    Targeted(
        "a method of a type in a test file",
        "Tests/AtomicsTests/DoubleWord.swift",
        40,
        "return UIntPair(first, second)",
        "return UIntPair(second, first)",
        DOUBLE_WORD_MEMORY_ORDER,
        DOUBLE_WORD_MEMORY_ORDER,
        "directCall",
    ),
)


async def test_change_impact_on_swift_atomics_selects_what_each_kind_of_reach_reaches() -> None:
    """Generic code on protocols with static requirements (swift-atomics): each mutant's
    failing tests are all selected, and the selection is the one read from the package.
    Atomics' bodies are `@inlinable`/`@_alwaysEmitIntoClient`, and an incremental `swift
    build` recompiles no client of such a body (the tests would run the old inlined code and
    pass): every test file is touched, so the test module is compiled again."""
    started = time.monotonic()
    package = committed(prepared("swift-atomics"))
    ids = listed_tests(package)
    doubles = frozenset(i for i in ids if i.startswith(f"{A}BasicAtomicDoubleWordTests/"))
    every_double = doubles | frozenset(i for i in ids if i.startswith(f"{A}DoubleWordTests/"))
    assert len(doubles) == 52, len(doubles)
    wrong: list[str] = []
    selected_total = hits_total = 0
    async with Engine() as engine:
        for case in ATOMICS_CASES:
            fails = case.fails or doubles
            selects = case.selects or every_double
            path = package / case.path
            lines = path.read_text(encoding="utf-8").split("\n")
            assert case.old in lines[case.line - 1], (case.path, case.line, lines[case.line - 1])
            try:
                lines[case.line - 1] = lines[case.line - 1].replace(case.old, case.new, 1)
                path.write_text("\n".join(lines), encoding="utf-8")
                answer = await engine.change_impact(project_path=str(package))
                for test_file in (package / "Tests").rglob("*.swift"):
                    test_file.touch()
                full = build_and_test(package)
            finally:
                restore(package)
            listed = {t.case.id for t in answer.selection.tests}
            command = answer.swift_test_command or ""
            chosen = {i for i in ids if command and re.search(command.split("--filter ", 1)[1].strip("'"), i)}
            failed = {i for name in full.failed for i in ids_of(name, ids)}
            vias = {t.via.label for t in answer.selection.tests}
            where = f"{case.kind} ({case.path}:{case.line})"
            if not full.built:
                wrong.append(f"{where}: does not build: {full.errors[:2]}")
            if failed != fails:
                wrong.append(f"{where}: fails {sorted(failed ^ fails)[:6]} unlike what was read")
            if listed != selects:
                wrong.append(f"{where}: selects {sorted(listed ^ selects)[:6]} unlike what was read")
            if not failed <= chosen:
                wrong.append(f"{where}: MISSED {sorted(failed - chosen)[:6]}")
            if vias != {case.via}:
                wrong.append(f"{where}: reached via {sorted(vias)}, expected {case.via}")
            selected_total += len(chosen)
            hits_total += len(failed & chosen)
            MEASURED.append(
                f"  swift-atomics, {where}: {len(failed)} fail, {len(listed)} selected "
                f"({len(failed & chosen)} of them failing), via {sorted(vias)}; command {len(command)} chars"
            )
    precision = hits_total / selected_total if selected_total else 0.0
    MEASURED.append(
        f"corpus mutations swift-atomics: {len(ATOMICS_CASES)} chosen mutants in {time.monotonic() - started:.0f} s; "
        f"precision {precision:.3f} ({hits_total} of {selected_total} selected tests failed)"
    )
    assert not wrong, "\n".join(wrong)
