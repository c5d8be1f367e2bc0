"""call_hierarchy and type_hierarchy next to sourcekit-lsp's callHierarchy and typeHierarchy
on the fixture (depth 1, the real sourcekit-lsp on a built copy). Each of the sixteen
questions has its verdict written down below: it agrees exactly (the same callers or
callees at the same call sites, the same types at the same anchors), or it differs by the
exact items listed, each under the documented kind that explains it (docs/tools.md;
bench/lsp_hierarchy.py's `differences` sorts every difference, sites only sourcekit-lsp
lists included, and grants a kind only on evidence outside xcindex's answer). The test
fails when any question's verdict changes, either way.

The expected items were checked by hand against the fixture's source:

- dynamic dispatch: `totalArea` calls `shape.area()` (ShapeMath.swift:8) through
  `Shape.area()`, which `Polygon.area()` witnesses and `Rectangle.area()` and
  `Square.area()` override; `describe()` calls `area()` (Shapes.swift:31) on a Polygon,
  which can run either override. sourcekit-lsp follows one level of overrides incoming and
  none outgoing; the test accepts xcindex's extra call only when sourcekit-lsp's own
  `definition` at the site and `implementation` from there reach the method;
- super calls: `super.area()` in `Square.area()` (Shapes.swift:60) runs
  `Rectangle.area()`, never `Square.area()`, which sourcekit-lsp lists as its callee;
- outgoing: `String(total) + " " + parity` (ShapeMath.swift:44) and
  `label + " of area " + String(area())` (Shapes.swift:31) call the standard library's
  `String.init` and `+`, and read `label` through its getter;
- a call site after non-ASCII text: AppDelegate.swift:13 has 👋 (4 UTF-8 bytes, 2 UTF-16
  units) before `fetchUser`; sourcekit-lsp gives the UTF-8 column 47 as a UTF-16 offset;
- a call inside a freestanding macro's arguments: `#expect(factorial(n) == expected)`
  (ShapesTests.swift:41), which sourcekit-lsp places at the macro's `#` (column 5);
- types: `extension Circle: Measurable {}` (Shapes.swift:80), `extension Square:
  Measurable {}` (:82), `extension ProfileFeature: Greeter` (ProfileFeature.swift:36) and
  `extension Greeter` (Greeter.swift:5), where sourcekit-lsp anchors them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from bench.lsp_hierarchy import DIFFERENCE_KINDS, compare, differences
from tests.conftest import CANARY, swift_executable
from tests.scoring import measured

pytestmark = [pytest.mark.toolchain]

CORE = "Sources/CanaryCore"
AGREES: dict[str, list[str]] = {}
EXPECTED: dict[tuple[str, str, str], dict[str, list[str]]] = {
    ("calls", "factorial(_:)", "incoming"): {
        "macro_argument": [
            "caller factorialOf (Tests/CanaryCoreTests/ShapesTests.swift:40) at "
            "Tests/CanaryCoreTests/ShapesTests.swift:41:5"
        ],
    },
    ("calls", "isOdd(_:)", "incoming"): AGREES,
    ("calls", "Square.area()", "incoming"): {
        "dispatch": [
            f"caller describe ({CORE}/Shapes.swift:30) at {CORE}/Shapes.swift:31:38",
            "caller scaledArea (Tests/CanaryCoreTests/ShapesTests.swift:24) at Tests/CanaryCoreTests/ShapesTests.swift:25:15",
            f"caller totalArea ({CORE}/ShapeMath.swift:5) at {CORE}/ShapeMath.swift:8:24",
        ],
        "super_call": [f"caller area ({CORE}/Shapes.swift:59) at {CORE}/Shapes.swift:60:15"],
    },
    ("calls", "Rectangle.area()", "incoming"): {
        "dispatch": [
            "caller scaledArea (Tests/CanaryCoreTests/ShapesTests.swift:24) at Tests/CanaryCoreTests/ShapesTests.swift:25:15",
            f"caller totalArea ({CORE}/ShapeMath.swift:5) at {CORE}/ShapeMath.swift:8:24",
        ],
    },
    ("calls", "Shape.area()", "incoming"): AGREES,
    ("calls", "AppDelegate.setUp()", "incoming"): AGREES,
    ("calls", "UserService.fetchUser(id:)", "incoming"): {
        "utf16_column": [
            f"caller setUp ({CORE}/AppDelegate.swift:11) at {CORE}/AppDelegate.swift:13:49 (xcindex column 47)"
        ],
    },
    ("calls", "summary(_:)", "outgoing"): {
        "external_callee": [
            f"callee + at {CORE}/ShapeMath.swift:44:26",
            f"callee + at {CORE}/ShapeMath.swift:44:32",
            f"callee init at {CORE}/ShapeMath.swift:44:12",
        ],
    },
    ("calls", "Polygon.describe()", "outgoing"): {
        "dispatch": [
            f"callee area ({CORE}/Shapes.swift:45) at {CORE}/Shapes.swift:31:38",
            f"callee area ({CORE}/Shapes.swift:59) at {CORE}/Shapes.swift:31:38",
        ],
        "external_callee": [
            f"callee + at {CORE}/Shapes.swift:31:15",
            f"callee + at {CORE}/Shapes.swift:31:29",
            f"callee init at {CORE}/Shapes.swift:31:31",
        ],
        "implicit_accessor": [f"callee getter:label ({CORE}/Shapes.swift:26) at {CORE}/Shapes.swift:31:9"],
    },
    ("types", "Square", "supertypes"): AGREES,
    ("types", "NamedShape", "supertypes"): AGREES,
    ("types", "Shape", "subtypes"): AGREES,
    ("types", "Measurable", "subtypes"): {
        "extension_item": [
            f"Circle at {CORE}/Shapes.swift:80 (xcindex: {CORE}/Shapes.swift:68)",
            f"Square at {CORE}/Shapes.swift:82 (xcindex: {CORE}/Shapes.swift:54)",
        ],
    },
    ("types", "Polygon", "subtypes"): AGREES,
    ("types", "AppDelegate", "subtypes"): AGREES,
    ("types", "Greeter", "subtypes"): {
        "extension_item": [
            "ProfileFeature at Sources/CanaryFeatures/ProfileFeature.swift:36 "
            "(xcindex: Sources/CanaryFeatures/ProfileFeature.swift:3)",
            f"only sourcekit-lsp: Greeter at {CORE}/Greeter.swift:5",
        ],
    },
}
"""Each question's differences by kind, items sorted; AGREES: none."""


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hierarchy-lsp") / "SwiftCanary"
    shutil.copytree(CANARY, root, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    subprocess.run([swift_executable(), "build", "--build-tests"], cwd=root, check=True, capture_output=True)
    return Path(os.path.realpath(root))


def test_each_hierarchy_question_agrees_with_sourcekit_lsp_or_differs_as_written_down(
    built_copy: Path,
) -> None:
    results = anyio.run(compare, built_copy, tuple(EXPECTED))
    changed: dict[str, object] = {}
    for question, result in zip(EXPECTED, results, strict=True):
        found = differences(result, built_copy)
        measured(f"vs sourcekit-lsp: {result.question}", json.dumps(found) if found else "agrees")
        if found != EXPECTED[question] or result.agrees != (not found):
            changed[result.question] = {"expected": EXPECTED[question], "found": found, **result.to_json()}
    agreeing = sum(1 for r in results if r.agrees)
    measured(
        "hierarchies vs sourcekit-lsp on the fixture", f"{agreeing} of {len(results)} questions agree exactly"
    )
    assert not changed, json.dumps(changed, indent=2)
    # Each documented kind shows on the fixture (so the list in docs/tools.md stays true).
    assert {kind for found in EXPECTED.values() for kind in found} == set(DIFFERENCE_KINDS)
