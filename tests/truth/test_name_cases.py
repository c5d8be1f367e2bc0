"""The independent generator of name-resolution cases, checked by hand on the fixture: what
each name an agent types means, read from the sources (file and line given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus.harness import prepared, store_of
from tests.truth.name_cases import Case, denoted, generate_cases
from tests.truth.store_dump import live

pytestmark = pytest.mark.toolchain


@pytest.fixture(scope="module")
def cases(canary_store: Path) -> list[Case]:
    return generate_cases(live(canary_store))


def meaning(cases: list[Case], form: str, query: str) -> set[str]:
    assert any(c.form == form and c.query == query for c in cases), (form, query)
    return denoted(cases)[query]


SEND = "s:10CanaryCore10NameClientC4sendySiSSF"  # Names.swift:10 `public func send(_ payload: String)`
SEND_PAYLOAD = "s:10CanaryCore10NameClientC4send7payload7retriesSiSS_SitF"  # Names.swift:15
COMMAND_SEND = "s:10CanaryCore11NameCommandO4sendyA2CmF"  # Names.swift:30 `case send`


def test_overloads_named_without_labels_share_a_name_and_labels_tell_them_apart(cases: list[Case]) -> None:
    assert meaning(cases, "Type.member", "NameClient.send") == {SEND, SEND_PAYLOAD}
    assert meaning(cases, "Type.member(labels:)", "NameClient.send(_:)") == {SEND}
    assert meaning(cases, "Module.Type.member(labels:)", "CanaryCore.NameClient.send(payload:retries:)") == {
        SEND_PAYLOAD
    }
    # The bare name also means the enum case; the parameter `send` (Names.swift:19) is not a case.
    assert {SEND, SEND_PAYLOAD, COMMAND_SEND} <= meaning(cases, "bare", "send")
    assert not any("forward4send" in usr and "L_" in usr for usr in denoted(cases)["send"])


def test_a_top_level_function_is_named_by_its_module(cases: list[Case]) -> None:
    # Greeter.swift:23 `public func greetAll(_ greeters: [Greeter]) -> [String] {`
    assert meaning(cases, "Module.Type.member(labels:)", "CanaryCore.greetAll(_:)") == {
        "s:10CanaryCore8greetAllySaySSGSayAA7Greeter_pGF"
    }
    forms = {c.form for c in cases if c.usr == "s:10CanaryCore8greetAllySaySSGSayAA7Greeter_pGF"}
    assert forms == {"bare", "Module.Type.member(labels:)"}


def test_an_inherited_member_means_every_member_of_that_name_the_type_inherits(cases: list[Case]) -> None:
    # RenameCases.swift:5-16: `protocol Configurable { func run() -> String }` (line 7),
    # `protocol AsyncConfigurable: Configurable { func run() async throws -> String }` (line 11),
    # `extension Configurable { public func run() -> String }` (line 16); line 27
    # `public struct AsyncJob: AsyncConfigurable` declares no run().
    assert meaning(cases, "Subclass.member(labels:)", "AsyncJob.run()") == {
        "s:10CanaryCore12ConfigurableP3runSSyF",
        "s:10CanaryCore17AsyncConfigurableP3runSSyYaKF",
        "s:10CanaryCore12ConfigurablePAAE3runSSyF",
    }
    # Greeter.swift:11 `public struct EnglishGreeter: Greeter` relies on the default (line 6).
    assert meaning(cases, "Subclass.member(labels:)", "EnglishGreeter.greet()") == {
        "s:10CanaryCore7GreeterP5greetSSyF",
        "s:10CanaryCore7GreeterPAAE5greetSSyF",
    }
    # Names.swift:53 `open func prepare() {}` in NameBaseRunner; line 56 `open class
    # NameSubRunner: NameBaseRunner {}` inherits it; line 59 NameLeafRunner overrides it.
    assert meaning(cases, "Subclass.member(labels:)", "NameSubRunner.prepare()") == {
        "s:10CanaryCore14NameBaseRunnerC7prepareyyF"
    }
    assert denoted(cases)["NameLeafRunner.prepare()"] == {"s:10CanaryCore14NameLeafRunnerC7prepareyyF"}
    # Shapes.swift:54 Square inherits Rectangle's `width` (line 36), not as an initialiser's.
    assert meaning(cases, "Subclass.member(labels:)", "Square.width") == {
        "s:10CanaryCore9RectangleC5widthSivp"
    }
    assert not [c for c in cases if c.form.startswith("Subclass") and ".init(" in c.query]


def test_what_the_source_does_not_declare_is_never_asked_for(cases: list[Case]) -> None:
    asked = {c.usr for c in cases}
    # Shapes.swift:54: Square's inherited `init(width:height:)`, an implicit declaration.
    assert "s:10CanaryCore6SquareC5width6heightACSi_Sitcfc" not in asked
    # Names.swift:6 `public private(set) var sent = 0`: the property, not its accessors.
    assert "s:10CanaryCore10NameClientC4sentSivp" in asked
    assert not {"s:10CanaryCore10NameClientC4sentSivg", "s:10CanaryCore10NameClientC4sentSivs"} & asked
    # Greeter.swift:5 `extension Greeter {` and Names.swift:10's parameter `payload`.
    assert (
        not {
            "s:e:s:10CanaryCore7GreeterPAAE5greetSSyF",
            "s:10CanaryCore10NameClientC4sendySiSSF7payloadL_SSvp",
        }
        & asked
    )


def test_c_members_are_named_through_their_struct_and_c_has_no_module(cases: list[Case]) -> None:
    # canary_c.h:11 `size_t length;` in the anonymous struct `text`, in an anonymous union
    # of `struct canary_event_s` (line 7).
    length = "c:@S@canary_event_s@Ua@S@canary_c.h@219@FI@length"
    assert {(c.form, c.query) for c in cases if c.usr == length} == {
        ("bare", "length"),
        ("Type.member", "canary_event_s.length"),
    }
    # canary_c.h:18 `int canary_scratch_roundtrip(const char *path);` (defined in canary_c.c:5)
    assert {(c.form, c.query) for c in cases if c.usr == "c:@F@canary_scratch_roundtrip"} == {
        ("bare", "canary_scratch_roundtrip")
    }


def test_an_enums_raw_type_is_no_supertype_and_a_refined_protocols_members_are_inherited() -> None:
    """swift-atomics, read by hand: Tests/AtomicsTests/Basics/BasicTestSupport.swift:53 `enum
    Fred: Int, AtomicValue` and :58 `struct Hyacinth: RawRepresentable, Equatable,
    AtomicOptionalWrappable`; Sources/Atomics/Protocols/AtomicOptionalWrappable.swift:17
    `public protocol AtomicOptionalWrappable: AtomicValue`; AtomicValue.swift:17
    `associatedtype AtomicRepresentation: AtomicStorage`; Conformances/RawRepresentable.swift:19
    `public typealias AtomicRepresentation = …` in `extension RawRepresentable where Self:
    AtomicValue, …`. Int's own `AtomicRepresentation` struct (an extension of Int in
    IntegerConformances.swift) is no member of Fred: Int is Fred's raw type."""
    cases = generate_cases(live(store_of(prepared("swift-atomics"))))
    requirement = "s:7Atomics11AtomicValueP0B14RepresentationQa"
    typealias = "s:SY7AtomicsAA11AtomicValueRzAaB03RawC0SYRpzACSY_0B14Representation0C0QZADRSrlEAEa"
    assert meaning(cases, "Subclass.member(labels:)", "Fred.AtomicRepresentation") == {requirement}
    assert meaning(cases, "Subclass.member(labels:)", "Hyacinth.AtomicRepresentation") == {
        requirement,
        typealias,
    }
