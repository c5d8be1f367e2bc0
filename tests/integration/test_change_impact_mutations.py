"""change_impact measured for real on the fixture: fifteen mutations (bodies, signatures, an
added and a removed declaration, a `==` only XCTest calls, one of three cases on a line, a
library witness of a protocol only the test target declares and adopts: the index says so
implicitly, at the conformance), each rebuilt and run with the full `swift test`; every
failing test must be among the covering tests (recall 1.0), and the answer's own
`swiftTestCommand` must reproduce every failure. Precision is printed, not asserted: a
covering test reaches the changed code but need not notice the change."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from bench.impact_proof import Mutation, measure, prepare_repository, summary
from tests.conftest import CANARY, swift_executable
from tests.scoring import measured

pytestmark = [pytest.mark.toolchain]

CORE = "Sources/CanaryCore"
MUTATIONS = (
    Mutation(
        "override body",
        f"{CORE}/Shapes.swift",
        "        width * height\n",
        "        width * height + 1\n",
        "body",
    ),
    Mutation(
        "recursive base case", f"{CORE}/ShapeMath.swift", "        return 1\n", "        return 2\n", "body"
    ),
    Mutation("mutual recursion branch", f"{CORE}/ShapeMath.swift", "n == 0 ? false", "n == 0 ? true", "body"),
    Mutation("computed property", f"{CORE}/Shapes.swift", '        "polygon"\n', '        "poly"\n', "body"),
    Mutation("witness body", f"{CORE}/Shapes.swift", "3 * radius * radius", "4 * radius * radius", "body"),
    Mutation(
        "signature with a default",
        f"{CORE}/ShapeMath.swift",
        "public func squareArea(side: Int) -> Int {\n    let square = Square(side: side)\n    return square.area()",
        "public func squareArea(side: Int, scale: Int = 2) -> Int {\n    let square = Square(side: side)\n"
        "    return square.area() * scale",
        "signature",
    ),
    Mutation(
        "added override",
        f"{CORE}/Shapes.swift",
        '    override open var label: String {\n        "rectangle"\n    }\n',
        '    override open var label: String {\n        "rectangle"\n    }\n\n'
        '    override public func describe() -> String {\n        "a rectangle"\n    }\n',
        "added",
    ),
    Mutation(
        "removed override",
        f"{CORE}/Shapes.swift",
        '    override public var label: String {\n        "square"\n    }\n',
        "",
        "removed",
    ),
    Mutation(
        "default implementation", f"{CORE}/Greeter.swift", '        "Hello"\n', '        "Hi"\n', "body"
    ),
    Mutation("base class method", f"{CORE}/AppDelegate.swift", '"👋 "', '"🙂 "', "body"),
    Mutation("shared service", f"{CORE}/UserService.swift", '"user-\\(id)"', '"usr-\\(id)"', "body"),
    Mutation(
        "a hand-written == only library code calls",
        f"{CORE}/Ticket.swift",
        "lhs.title == rhs.title",
        "lhs.title != rhs.title",
        "body",
    ),
    Mutation(
        "one of several cases on a line",
        f"{CORE}/Ticket.swift",
        "normal = 2, high = 3",
        "normal = 2, high = 4",
        "signature",
    ),
    Mutation(
        "overload body",
        f"{CORE}/UserRepository.swift",
        "profiles.first { $0.id == id }",
        "profiles.last { $0.id == id }",
        "body",
    ),
    Mutation(
        "a library witness only a test-target protocol dispatches to",
        f"{CORE}/ImplicitCases.swift",
        "Set(items) == Set(other.items)",
        "Set(items) != Set(other.items)",
        "body",
    ),
)


def test_every_failing_test_is_a_covering_test(tmp_path: Path) -> None:
    swift_executable()
    root = prepare_repository(CANARY, tmp_path / "SwiftCanary")
    outcomes = anyio.run(measure, root, MUTATIONS)
    result = summary(outcomes)
    for case in result["cases"]:
        measured(
            f"change_impact mutation '{case['mutation']}'",
            f"failing {case['failing']} covering {case['covering']} recall {case['recall']} "
            f"precision {case['precision']} changed {case['changedSymbols']} ({case['answerMs']} ms)",
        )
    measured(
        "change_impact on the fixture",
        f"{result['mutations']} mutations, {result['failingTests']} failing tests, recall {result['recall']}, "
        f"precision {result['precision']}",
    )
    assert result["failingTests"] > 0, "the mutations must break something, or this proves nothing"
    for outcome in outcomes:
        assert outcome.recall == 1.0, outcome.to_json()
        assert outcome.filtered_failing == outcome.failing, outcome.to_json()
        assert outcome.changed, outcome.to_json()
