"""plan_rename on real code nobody here wrote: every plan applied, built and tested.

For each corpus package, renames of every class the issue names (types, members, protocol
requirements with witnesses in test-function types and extensions, Codable and wrapped
properties, refusals). All plans expected to apply cleanly are computed on the pristine
package, applied together (every range that is not red), built once and tested once: the
same tests must pass. A rename that breaks the package because of a documented limitation
names what it breaks (Breaks: the compile errors on which lines, or exactly which tests
fail), the warning that explains it and the sites that warning must name; it is applied
alone and must break exactly that, and then, with what the warning tells an agent to
rename renamed too, build with the same tests passing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from tests.corpus.harness import (
    Outcome,
    apply_plans,
    build_and_test,
    local_witnesses,
    only,
    prepared,
    restore,
    run_tests,
    store_of,
    utf8_column,
)
from tests.scoring import MEASURED
from xcindex.engine import Engine
from xcindex.tools.rename.plan import RenamePlan, base_name
from xcindex.tools.rename.scan import Mention
from xcindex.vocabulary import WarningCode

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Breaks:
    """What a plan applied alone breaks because of a documented limitation, and the warning
    that explains it."""

    warning: WarningCode
    kind: str
    """The kind of the plan's unprovenSites the warning is about."""
    sites: frozenset[str]
    """`File.swift:line` of every unproven site of that kind: the warning's message names each."""
    renamed: frozenset[str]
    """`File.swift:line` of the declarations an agent following the warning renames too."""
    errors: frozenset[str] = frozenset()
    """`File.swift:line` of every compile error, when the plan alone does not build."""
    failing: frozenset[str] = frozenset()
    """Every test that fails, when it builds (the others pass as before)."""
    crashes: frozenset[str] = frozenset()
    """The tests the test process dies in, when it builds: each, run alone, crashes it, and
    with them skipped every other test passes as before."""


@dataclass(frozen=True)
class Case:
    name: str
    """The symbol's name as the index spells it."""
    file: str
    """The end of its definition's path (which of the same-named symbols)."""
    new_name: str
    expect: str
    """`applies`, or the refusal reason."""
    usr: str | None = None
    """Asked by USR instead (a symbol with no definition here)."""
    breaks: Breaks | None = None
    """Set for a rename expected to break what it names (a documented limitation)."""
    line: int | None = None
    """Its definition's line, where the file declares several symbols of that name."""
    warns: frozenset[str] | None = None
    """The warning codes its plan carries, exactly (None: not checked)."""


LOCAL_TYPES = frozenset({"LoggingTest.swift:542", "LoggingTest.swift:955"})
"""swift-log's two LogHandler types declared in test functions (`customFactory`,
`loggerWithGlobalOverride`): the index records no local declaration, so no plan can prove
their members; the plan names them (`local_conformance`, docs/tools.md)."""


CASES: dict[str, list[Case]] = {
    "swift-log": [
        # The local types' `var logLevel` (:555, :970) no longer satisfies the requirement:
        # the compiler reports each type at its declaration.
        Case(
            "logLevel",
            "Logging/LogHandler.swift",
            "minimumLevel",
            "applies",
            breaks=Breaks(
                WarningCode.UNPROVEN_OCCURRENCES,
                "local_conformance",
                LOCAL_TYPES,
                renamed=frozenset({"LoggingTest.swift:555", "LoggingTest.swift:970"}),
                errors=LOCAL_TYPES,
            ),
        ),
        Case("Level", "Logging/Logger.swift", "Severity", "applies"),
        # The local types' `log(event:)` (:543, :982) no longer witnesses the requirement: it
        # builds, and the default `emit(event:)` of `extension LogHandler` takes over. It calls the
        # deprecated `log(level:message:metadata:source:…)`, whose default and the one without
        # `source:` call each other until the stack overflows (signal 11) in the test whose local
        # handler logs; `customFactory`'s never does.
        Case(
            "log(event:)",
            "Logging/LogHandler.swift",
            "emit(event:)",
            "applies",
            breaks=Breaks(
                WarningCode.UNPROVEN_OCCURRENCES,
                "local_conformance",
                LOCAL_TYPES,
                renamed=frozenset({"LoggingTest.swift:543", "LoggingTest.swift:982"}),
                crashes=frozenset({"LoggingTests.LoggingTest/loggerWithGlobalOverride()"}),
            ),
        ),
        Case("metadataProvider", "Logging/LogHandler.swift", "metadataSource", "applies"),
        Case("standardOutput(label:)", "Handlers/StreamLogHandler.swift", "stdout", "applies"),
        Case("bootstrap(_:)", "Logging/LoggingSystem.swift", "install", "applies"),
        Case(
            "SwiftLogNoOpLogHandler", "Handlers/SwiftLogNoOpLogHandler.swift", "SilentLogHandler", "applies"
        ),
        Case("MultiplexLogHandler", "Handlers/MultiplexLogHandler.swift", "FanOutLogHandler", "applies"),
        Case(
            "InMemoryLogHandler", "InMemoryLogging/InMemoryLogHandler.swift", "RecordingLogHandler", "applies"
        ),
        Case("MetadataValue", "Logging/Logger.swift", "MetaValue", "applies"),
        Case("label", "Logging/Logger.swift", "name", "applies"),
        Case("init(label:)", "Logging/Logger.swift", "make", "special_member_not_renameable"),
        Case("subscript(metadataKey:)", "Logging/LogHandler.swift", "entry", "special_member_not_renameable"),
        Case("description", "Logging/Logger.swift", "text", "sdk_symbol_rename"),
        Case("event", "Logging/LogHandler.swift", "record", "local_symbol_not_renameable"),
        Case("String", "", "Text", "sdk_symbol_rename", usr="s:SS"),
        Case(
            "JSONEncoder", "", "Encoder2", "sdk_symbol_rename", usr="s:20FoundationEssentials11JSONEncoderC"
        ),
        # Issue 26: a new name the enum already has (`case debug`).
        Case("trace", "Logging/Logger.swift", "debug", "name_collision"),
    ],
    "yams": [
        Case("Node", "Yams/Node.swift", "YamlNode", "applies"),
        Case("construct(from:)", "Yams/Constructor.swift", "make(from:)", "applies"),
        Case("Parser", "Yams/Parser.swift", "YamlParser", "applies"),
        Case("Emitter", "Yams/Emitter.swift", "YamlEmitter", "applies"),
        Case("Resolver", "Yams/Resolver.swift", "TagResolver", "applies"),
        Case("Constructor", "Yams/Constructor.swift", "NodeConstructor", "applies"),
        Case("YamlError", "Yams/YamlError.swift", "YamsError", "applies"),
        Case("Mark", "Yams/Mark.swift", "Position", "applies"),
        Case("YAMLEncoder", "Yams/Encoder.swift", "YamlWriter", "applies"),
        Case("YAMLDecoder", "Yams/Decoder.swift", "YamlReader", "applies"),
        Case("represented()", "Yams/Representer.swift", "asNode()", "applies"),
        Case("Anchor", "Yams/Anchor.swift", "NodeAnchor", "applies"),
        Case("compose(yaml:_:_:_:)", "Yams/Parser.swift", "composeNode", "applies"),
        Case("init(stringLiteral:)", "Yams/Node.swift", "x", "special_member_not_renameable"),
        Case("encode(to:)", "YamsTests/EncoderTests.swift", "write(to:)", "compiler_required_name"),
        Case("Int", "", "Integer", "sdk_symbol_rename", usr="s:Si"),
        # Issue 26: a requirement whose witnesses (Node.Scalar.tag, …) the index relates to it
        # only at their conformances; a requirement the standard library's Int.+ witnesses
        # (`extension Int: SexagesimalConvertible {}`); a property of a type Codable by hand
        # with unkeyed containers (no key: no warning); a new name Node already has.
        Case("tag", "Yams/Tag.swift", "nodeTag", "applies", warns=frozenset({"unproven_occurrences"})),
        Case("+(_:_:)", "Yams/Constructor.swift", "plus", "sdk_symbol_rename"),
        Case(
            "optionalString",
            "YamsTests/EncoderTests.swift",
            "maybeString",
            "applies",
            line=1093,
            warns=frozenset(),
        ),
        Case("scalar", "Yams/Node.Scalar.swift", "mapping", "name_collision"),
    ],
}


async def usr_for(engine: Engine, store: Path, case: Case) -> str:
    if case.usr is not None:
        return case.usr

    def lookup(db: object) -> list[str]:
        from xcindex.indexstore.database import Database
        from xcindex.tools.common import canonical_occurrence

        assert isinstance(db, Database)
        found = []
        for symbol in db.symbols_by_name(case.name):
            definition = canonical_occurrence(db.occurrences_of(symbol.id))
            if (
                definition is not None
                and definition.path.endswith(case.file)
                and case.line in (None, definition.line)
            ):
                found.append((definition.line, symbol.usr))
        return [usr for _line, usr in sorted(found)]

    usrs = await engine._core.run_query(lookup, index_store_path=str(store))
    assert usrs, f"no {case.name} defined in {case.file}"
    return str(usrs[0])


_PLANS: dict[str, tuple[dict[Case, RenamePlan], float]] = {}


async def plans_for(package_name: str) -> tuple[dict[Case, RenamePlan], float]:
    """Every case's plan, reconciled with sourcekit-lsp, computed once per session on the
    pristine package; with the time the first plan took (sourcekit-lsp starting)."""
    if package_name in _PLANS:
        return _PLANS[package_name]
    package = prepared(package_name)
    store = store_of(package)
    plans: dict[Case, RenamePlan] = {}
    first_plan_s = 0.0
    async with Engine() as engine:
        for case in CASES[package_name]:
            usr = await usr_for(engine, store, case)
            began = time.monotonic()
            plans[case] = await engine.plan_rename(
                usr, case.new_name.split("(")[0], project_path=str(package)
            )
            if not first_plan_s and case.expect == "applies":
                first_plan_s = time.monotonic() - began
    _PLANS[package_name] = (plans, first_plan_s)
    return plans, first_plan_s


@pytest.mark.parametrize("package_name", ["swift-log", "yams"])
async def test_every_range_of_every_corpus_plan_is_on_the_old_names_bytes(package_name: str) -> None:
    plans, _ = await plans_for(package_name)
    checked = 0
    for case, plan in plans.items():
        assert plan.ranges or case.expect != "applies", case.name
        old = base_name(plan.old_name or case.name).encode()
        for r in plan.ranges:
            line = Path(r.path).read_bytes().split(b"\n")[r.line - 1]
            column = utf8_column(r.path, r.line, r.column, r.source)
            assert line[column - 1 : column - 1 + len(old)] == old, (case.name, r, line)
            end = utf8_column(r.path, r.line, r.end_column, r.source)
            assert end - column == len(old), (case.name, r, line)
            checked += 1
    MEASURED.append(f"corpus ranges on the old name {package_name}: {checked} of {checked}")


def batch_is_sound(cases: list[Case]) -> None:
    """Plans applied together cannot hide one another's misses only if no case's new name is
    another case's old name and no two cases share an old name (a missed site then keeps an
    old name that no longer exists)."""
    olds = [base_name(c.name) for c in cases]
    assert len(set(olds)) == len(olds), olds
    assert not {c.new_name.split("(")[0] for c in cases} & set(olds), cases


def same_tests(outcome: Outcome, baseline: Outcome) -> bool:
    """It built, and the tests that pass are the unchanged package's, with none failing."""
    return outcome.built and outcome.passed == baseline.passed and not outcome.failed


def applied(package: Path, plans: list[RenamePlan], also: list[Mention] | None = None) -> Outcome:
    """The plans (and, for the first, the sites in `also`) applied, built and tested; then
    the package restored."""
    try:
        apply_plans(plans, [(plans[0], site) for site in also or []])
        return build_and_test(package)
    finally:
        restore(package)


def at(path: str, line: int) -> str:
    return f"{Path(path).name}:{line}"


def limitation_holds(package: Path, case: Case, plan: RenamePlan, baseline: Outcome) -> list[str]:
    """What differs from the case's Breaks: the warning and the sites it names, what the plan
    alone breaks, what following the warning renames, and whether that then passes."""
    breaks = case.breaks
    assert breaks is not None
    wrong: list[str] = []
    named = {at(m.path, m.line) for m in plan.unproven if m.kind == breaks.kind}
    if named != breaks.sites:
        wrong.append(f"its {breaks.kind} sites are {sorted(named)}, expected {sorted(breaks.sites)}")
    if not any(
        code == breaks.warning and breaks.kind in text and all(s in text for s in breaks.sites)
        for code, text in plan.warnings
    ):
        wrong.append(f"no {breaks.warning} warning names {sorted(breaks.sites)}: {plan.warnings}")
    crashing: dict[str, bool] = {}
    rest: Outcome | None = None
    try:
        apply_plans([plan])
        alone = build_and_test(package)
        if breaks.crashes and alone.crashed:
            crashing = {t: run_tests(package, test_filter=only([t])).crashed for t in breaks.crashes}
            rest = run_tests(package, skip=only(breaks.crashes))
    finally:
        restore(package)
    if breaks.errors:
        errors = {at(path, line) for path, line, _ in alone.errors}
        if alone.built or errors != breaks.errors:
            wrong.append(
                f"alone: errors at {sorted(errors)}, expected {sorted(breaks.errors)}; {unlike(alone, baseline)}"
            )
    elif breaks.crashes:
        if not alone.crashed:
            wrong.append(f"alone: expected the test process to crash; {unlike(alone, baseline)}")
        elif (
            rest is None
            or not all(crashing.values())
            or rest.failed
            or (rest.passed != baseline.passed - breaks.crashes)
        ):
            wrong.append(f"alone: crashing {crashing}; without them: {rest and unlike(rest, baseline)}")
    elif (
        not alone.built or alone.failed != breaks.failing or alone.passed != baseline.passed - breaks.failing
    ):
        wrong.append(f"alone: expected exactly {sorted(breaks.failing)} to fail; {unlike(alone, baseline)}")
    followed = local_witnesses(plan)
    if {at(m.path, m.line) for m in followed} != breaks.renamed:
        wrong.append(f"the warning leads to renaming {sorted(at(m.path, m.line) for m in followed)}")
    after = applied(package, [plan], followed)
    if not same_tests(after, baseline):
        wrong.append(f"with the warned sites renamed too: {unlike(after, baseline)}")
    return wrong


def unlike(outcome: Outcome, baseline: Outcome) -> str:
    """How a run differs from the unchanged package's, for the failure message."""
    if not outcome.built:
        return "; ".join(f"{p}:{line}: {m}" for p, line, m in outcome.errors[:5]) or outcome.output[-1500:]
    return (
        f"exit {outcome.exit_code}; failed {sorted(outcome.failed)[:5]}; "
        f"no longer passing {sorted(baseline.passed - outcome.passed)[:5]}; "
        f"newly passing {sorted(outcome.passed - baseline.passed)[:5]}; output: {outcome.output[-1500:]}"
    )


@pytest.mark.parametrize("package_name", ["swift-log", "yams"])
async def test_renames_on_real_code_apply_build_and_pass_or_are_refused_or_break_as_documented(
    package_name: str,
) -> None:
    started = time.monotonic()
    plans, first_plan_s = await plans_for(package_name)
    package = prepared(package_name)
    baseline = run_tests(package)
    assert baseline.passed, baseline.output
    assert not baseline.failed, baseline.output
    cases = CASES[package_name]
    rows: list[str] = []
    wrong: list[str] = []
    batch: list[Case] = []
    for case in cases:
        plan = plans[case]
        if case.expect != "applies":
            assert plan.refusal is not None, f"{case.name}: expected {case.expect}, got a plan"
            assert plan.refusal.reason == case.expect, (case.name, plan.refusal)
            rows.append(f"{case.name}: refused {case.expect}")
            continue
        assert plan.refusal is None, (case.name, plan.refusal)
        assert plan.ranges, case.name
        if case.warns is not None:
            assert {str(code) for code, _ in plan.warnings} == case.warns, (case.name, plan.warnings)
        if case.breaks is None:
            batch.append(case)
    batch_is_sound(batch)
    # The cases expected to apply cleanly, all at once: one build, one test run.
    outcome = applied(package, [plans[c] for c in batch])
    builds = 1
    verdicts = dict.fromkeys(batch, "builds, same tests pass")
    if not same_tests(outcome, baseline):
        wrong.append(f"the batch of {len(batch)}: {unlike(outcome, baseline)}")
        for case in batch:  # which of them: each alone
            alone = applied(package, [plans[case]])
            builds += 1
            verdicts[case] = (
                "builds, same tests pass" if same_tests(alone, baseline) else unlike(alone, baseline)
            )
    for case in cases:
        breaks = case.breaks
        if case.expect != "applies" or breaks is None:
            continue
        problems = limitation_holds(package, case, plans[case], baseline)
        builds += 2
        wrong.extend(f"{case.name}: {problem}" for problem in problems)
        if breaks.errors:
            what = f"fails to build at {', '.join(sorted(breaks.errors))}"
        elif breaks.crashes:
            what = f"builds, the test process crashes in {', '.join(sorted(breaks.crashes))} (the rest pass)"
        else:
            what = f"builds, {', '.join(sorted(breaks.failing))} fail(s)"
        verdicts[case] = (
            f"alone {what}, as {breaks.warning} ({breaks.kind} {', '.join(sorted(breaks.sites))}) says; "
            f"with {', '.join(sorted(breaks.renamed))} renamed too: builds, same tests pass"
            + (f" — NOT AS EXPECTED: {problems}" if problems else "")
        )
    for case in cases:
        if case in verdicts:
            plan = plans[case]
            codes = sorted({str(code) for code, _ in plan.warnings})
            rows.append(
                f"{case.name} -> {case.new_name}: {len(plan.ranges)} ranges, {len(plan.unproven)} unproven, "
                f"{len(plan.text_mentions)} text; warnings {codes}; {verdicts[case]}"
            )
    elapsed = time.monotonic() - started
    MEASURED.append(
        f"corpus renames {package_name}: {len(cases)} cases, {builds} build(s) in {elapsed:.0f} s "
        f"(plans apart), first reconciled plan {first_plan_s:.1f} s"
    )
    MEASURED.extend(f"  {row}" for row in rows)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package_name", ["swift-log", "yams"])
async def test_a_refused_collision_is_one_the_compiler_refuses(package_name: str) -> None:
    """Each `name_collision` refusal is true: the same symbol renamed to a free name gives the
    ranges; written with the refused name instead, the package does not build, and the
    compiler complains of the redeclaration (or the override) the refusal named."""
    plans, _ = await plans_for(package_name)
    package = prepared(package_name)
    store = store_of(package)
    refused = [case for case in CASES[package_name] if case.expect == "name_collision"]
    assert refused, "a collision case per package"
    async with Engine() as engine:
        for case in refused:
            refusal = plans[case].refusal
            message = refusal.message if refusal is not None else ""
            usr = await usr_for(engine, store, case)
            free = await engine.plan_rename(usr, case.new_name + "Free", project_path=str(package))
            assert free.refusal is None, (case.name, free.refusal)
            try:
                apply_plans([replace(free, new_name=case.new_name)])
                outcome = build_and_test(package)
            finally:
                restore(package)
            assert not outcome.built, case.name
            complaints = " ".join(error for _path, _line, error in outcome.errors)
            assert "invalid redeclaration" in complaints or "override" in complaints, (case.name, complaints)
            MEASURED.append(
                f"corpus collision {package_name} {case.name} -> {case.new_name}: {message} Build: {complaints[:200]}"
            )
