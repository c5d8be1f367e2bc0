"""The independent reader itself, checked against facts read by hand in the fixture's
sources (each expectation names the file and line it was read from), so that what later
tests take as truth is known to be true."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANARY
from tests.truth.store_dump import (
    BASE_OF,
    CALL,
    CALLED_BY,
    CHILD_OF,
    CLASS,
    DEFINITION,
    DYNAMIC,
    EXTENDED_BY,
    EXTENSION,
    IMPLICIT,
    OVERRIDE_OF,
    PROTOCOL,
    RELATIONS,
    LiveIndex,
    dump,
    dumper,
    role_names,
)

pytestmark = pytest.mark.toolchain

CORE = CANARY.resolve() / "Sources" / "CanaryCore"
GREETER = str(CORE / "Greeter.swift")
SHAPES = str(CORE / "Shapes.swift")
C_TARGET = CANARY.resolve() / "Sources" / "CanaryC"

REQUIREMENT = "s:10CanaryCore7GreeterP5greetSSyF"
DEFAULT = "s:10CanaryCore7GreeterPAAE5greetSSyF"
PIRATE_GREET = "s:10CanaryCore13PirateGreeterV5greetSSyF"
GREET_ALL = "s:10CanaryCore8greetAllySaySSGSayAA7Greeter_pGF"
SQUARE = "s:10CanaryCore6SquareC"


@pytest.fixture
def truth(canary_truth: LiveIndex) -> LiveIndex:
    return canary_truth


def at(truth: LiveIndex, usr: str, path: str, line: int, column: int) -> set[str]:
    """The roles of `usr`'s live occurrences at one place ({} when there is none)."""
    return {
        name
        for o in truth.occurrences.get(usr, ())
        if o.where == (path, line, column)
        for name in role_names(o.roles)
    }


def defined_at(truth: LiveIndex, usr: str) -> tuple[str, int, int]:
    found = truth.definition(usr)
    assert found is not None, usr
    return found.where


def relations_at(truth: LiveIndex, usr: str, path: str, line: int) -> set[tuple[str, str]]:
    return {
        (name, r.usr)
        for o in truth.occurrences.get(usr, ())
        if (o.path, o.line) == (path, line)
        for r in o.relations
        for name in role_names(r.roles)
    }


def test_a_protocol_requirement_its_default_and_a_witness(truth: LiveIndex) -> None:
    # Greeter.swift:1 `public protocol Greeter {`
    greeter = truth.symbols["s:10CanaryCore7GreeterP"]
    assert (greeter.name, greeter.kind, greeter.language) == ("Greeter", PROTOCOL, 100)
    assert defined_at(truth, greeter.usr) == (GREETER, 1, 17)
    # Greeter.swift:2 `    func greet() -> String`: the requirement, a member of Greeter.
    assert at(truth, REQUIREMENT, GREETER, 2, 10) == {"definition", "dynamic", "childOf"}
    assert truth.related(REQUIREMENT, CHILD_OF) == {greeter.usr}
    # Greeter.swift:5-6 `extension Greeter {` / `    public func greet() -> String {`: the
    # default implementation, a member of the extension, which extends Greeter.
    (extension,) = truth.related(DEFAULT, CHILD_OF)
    assert truth.symbols[extension].kind == EXTENSION
    assert at(truth, greeter.usr, GREETER, 5, 11) == {"reference", "extendedBy"}
    assert truth.related(greeter.usr, EXTENDED_BY) == {extension}
    assert truth.related(DEFAULT, OVERRIDE_OF) == {REQUIREMENT}
    assert at(truth, DEFAULT, GREETER, 6, 17) >= {"definition", "overrideOf"}
    # Greeter.swift:18 `    public func greet() -> String {` in PirateGreeter, and
    # CanaryFeatures/ProfileFeature.swift:37, in `extension ProfileFeature: Greeter`: witnesses.
    assert at(truth, PIRATE_GREET, GREETER, 18, 17) == {"definition", "childOf", "overrideOf"}
    feature_greet = "s:14CanaryFeatures14ProfileFeatureV5greetSSyF"
    feature = str(CANARY.resolve() / "Sources" / "CanaryFeatures" / "ProfileFeature.swift")
    assert defined_at(truth, feature_greet) == (feature, 37, 17)
    assert truth.relating(REQUIREMENT, OVERRIDE_OF) == {DEFAULT, PIRATE_GREET, feature_greet}


def test_an_implicit_occurrence_is_kept_and_flagged(truth: LiveIndex) -> None:
    # Greeter.swift:11 `public struct EnglishGreeter: Greeter {` declares no greet(): the
    # default implementation serves it, an implicit occurrence at the type's name.
    english = "s:10CanaryCore14EnglishGreeterV"
    assert defined_at(truth, english) == (GREETER, 11, 15)
    (implicit,) = [o for o in truth.references(DEFAULT) if o.implicit]
    assert implicit.where == (GREETER, 11, 15)
    assert {(r.roles, r.usr) for r in implicit.relations} >= {(OVERRIDE_OF, REQUIREMENT)}
    # Tests/CanaryCoreTests/FeatureTests.swift:42 `        let english = EnglishGreeter().greet()`
    # is the only written reference: a call of the default implementation, received by EnglishGreeter.
    (written,) = truth.references(DEFAULT, implicit=False)
    tests = str(CANARY.resolve() / "Tests" / "CanaryCoreTests" / "FeatureTests.swift")
    assert written.where == (tests, 42, 40)
    assert role_names(written.roles) >= {"reference", "call", "receivedBy"}
    assert (RELATIONS["receivedBy"], english) in {(r.roles, r.usr) for r in written.relations}
    # Greeter.swift:11, column 31: `Greeter` in the inheritance clause.
    assert relations_at(truth, "s:10CanaryCore7GreeterP", GREETER, 11) == {("baseOf", english)}


def test_a_call_through_a_protocol_names_its_caller(truth: LiveIndex) -> None:
    # Greeter.swift:23-24 `public func greetAll(...)` / `    greeters.map { $0.greet() }`
    assert defined_at(truth, GREET_ALL) == (GREETER, 23, 13)
    (call,) = [o for o in truth.references(REQUIREMENT) if o.path == GREETER]
    assert (call.line, call.column) == (24, 23)
    assert call.roles & (CALL | DYNAMIC) == CALL | DYNAMIC
    assert truth.related(REQUIREMENT, CALLED_BY) == {GREET_ALL}
    # Its only call is that one (FeatureTests.swift:42-43 call the default and PirateGreeter's).
    assert truth.relations(REQUIREMENT) == {
        "childOf": {"s:10CanaryCore7GreeterP"},
        "calledBy": {GREET_ALL},
        "containedBy": {GREET_ALL},
        "receivedBy": {"s:10CanaryCore7GreeterP"},
    }
    assert REQUIREMENT in truth.relating(GREET_ALL, CALLED_BY)


def test_a_class_chain_its_overrides_and_a_conformance_in_an_extension(truth: LiveIndex) -> None:
    # Shapes.swift:54 `public final class Square: Rectangle {`
    rectangle = "s:10CanaryCore9RectangleC"
    assert truth.symbols[SQUARE].kind == CLASS
    assert defined_at(truth, SQUARE) == (SHAPES, 54, 20)
    assert at(truth, rectangle, SHAPES, 54, 28) == {"reference", "baseOf"}
    assert truth.relating(SQUARE, BASE_OF) == {rectangle}
    # Shapes.swift:59-60 `    override public func area() -> Int {` / `        super.area()`
    square_area, rectangle_area = "s:10CanaryCore6SquareC4areaSiyF", "s:10CanaryCore9RectangleC4areaSiyF"
    assert at(truth, square_area, SHAPES, 59, 26) == {"definition", "childOf", "overrideOf"}
    assert truth.related(square_area, OVERRIDE_OF) == {rectangle_area}
    assert at(truth, rectangle_area, SHAPES, 60, 15) == {"reference", "call", "calledBy", "containedBy"}
    # Shapes.swift:82 `extension Square: Measurable {}`: the base names the extension.
    (extension,) = truth.related(SQUARE, EXTENDED_BY)
    assert defined_at(truth, extension) == (SHAPES, 82, 11)
    assert relations_at(truth, "s:10CanaryCore10MeasurableP", SHAPES, 82) == {("baseOf", extension)}


def test_a_stored_property_and_its_implicit_accessors(truth: LiveIndex) -> None:
    # Shapes.swift:69 `    public let radius: Int` in Circle.
    radius, getter = "s:10CanaryCore6CircleV6radiusSivp", "s:10CanaryCore6CircleV6radiusSivg"
    assert defined_at(truth, radius) == (SHAPES, 69, 16)
    assert truth.declarations(getter) == []
    (written_or_not,) = truth.declarations(getter, written=False)
    assert written_or_not.where == (SHAPES, 69, 16)
    assert written_or_not.roles & (DEFINITION | IMPLICIT) == DEFINITION | IMPLICIT
    assert truth.related(getter, RELATIONS["accessorOf"]) == {radius}


def test_a_c_function_declared_in_a_header_and_defined_in_a_file(truth: LiveIndex) -> None:
    header, source = str(C_TARGET / "include" / "canary_c.h"), str(C_TARGET / "canary_c.c")
    usr = "c:@F@canary_scratch_roundtrip"
    # canary_c.h:18 `int canary_scratch_roundtrip(const char *path);`
    # canary_c.c:5 `int canary_scratch_roundtrip(const char *path) {`
    assert {(o.where, frozenset(role_names(o.roles))) for o in truth.declarations(usr)} == {
        ((header, 18, 5), frozenset({"declaration"})),
        ((source, 5, 5), frozenset({"definition"})),
    }
    # canary_c.c:11 `    return remove(path);`: the C library's remove, called from it.
    assert at(truth, "c:@F@remove", source, 11, 12) == {"reference", "call", "calledBy", "containedBy"}
    assert truth.related("c:@F@remove", CALLED_BY) == {usr}
    # C units name no module.
    assert truth.modules[source] == truth.modules[header] == ""
    assert truth.modules[GREETER] == "CanaryCore"


def test_live_files_are_the_sources_and_own_headers_and_each_record_is_read_once(
    canary_store: Path, truth: LiveIndex
) -> None:
    sources = {str(p) for p in CANARY.resolve().glob("Sources/**/*.swift")}
    sources |= {str(p) for p in CANARY.resolve().glob("Tests/**/*.swift")}
    sources |= {str(p) for p in C_TARGET.rglob("*.[ch]")}
    assert set(truth.files) == sources
    # The build's generated sources (SwiftPM's test discovery) have units, but none is live.
    generated = [u for u in truth.dump.units if "/.build/" in u.main_file]
    assert generated
    assert not {u.main_file for u in generated} & truth.files
    # canary_c.h's record is reached from canary_c.c's unit and from the module's unit.
    reaching = [u for u in truth.dump.units if any(d.path.endswith("/canary_c.h") for d in u.dependencies)]
    assert len(reaching) == 2
    raw = subprocess.run(
        [str(dumper()), str(canary_store)], capture_output=True, text=True, check=True
    ).stdout
    headers = [line for line in raw.splitlines() if line.startswith("R\tcanary_c.h-")]
    assert len(headers) == 1
    # System headers' records are dumped (a non-system unit reaches them) but are not live.
    assert any(
        path.startswith("/usr/include/")
        for u in truth.dump.units
        for path in [d.path for d in u.dependencies]
    )
    assert not any(path.startswith("/usr/") for path in truth.files)
    assert truth.dump.unreadable == ()


def test_a_store_that_is_not_one_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot open the index store"):
        dump(tmp_path / "nothing-here")


def test_the_reader_and_the_generator_share_no_code_with_xcindex() -> None:
    """Truth must come from outside the code under test: the truth modules import the
    standard library and each other, nothing else."""
    modules = [p for p in Path(__file__).parent.glob("*.py") if not p.name.startswith(("test_", "conftest"))]
    assert len(modules) > 1
    for path in modules:
        name = path.name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            else:
                continue
            for module in imported:
                top = module.split(".")[0]
                assert top in sys.stdlib_module_names or module.startswith("tests.truth."), (name, module)
