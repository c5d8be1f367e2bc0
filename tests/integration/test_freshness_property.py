"""Issue 24's property on the fixture: random edit scripts written from a shell, asked through
`xcindex serve` with no hook, every `complete` answer equal to what a real build then gives
(tests/freshness_scripts.py says how, and what is checked when the build fails), and every
step that compiles answered `complete` within 15 s. With the watch (inotify) and with sweeps
(XCINDEX_WATCH=0)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CANARY, build_package
from tests.freshness_scripts import PackageSpec, Tally, Use, run_property, snapshot
from tests.scoring import MEASURED

pytestmark = [pytest.mark.toolchain]

EVERYWHERE = ("CanaryCore", "CanaryFeatures", "CanaryCoreTests")
SPEC = PackageSpec(
    name="SwiftCanary",
    uses=(
        Use(
            "fetchUser(id:)",
            "Sources/CanaryCore/UserService.swift",
            "func {fn}(_ value: UserService) -> String? {{\n    value.fetchUser(id: 1)\n}}",
            EVERYWHERE,
        ),
        Use(
            "factorial(_:)",
            "Sources/CanaryCore/ShapeMath.swift",
            "func {fn}() -> Int {{\n    factorial(3)\n}}",
            EVERYWHERE,
        ),
        Use(
            "load(id:)",
            "Sources/CanaryCore/UserRepository.swift",
            "func {fn}(_ value: UserRepository) -> UserProfile? {{\n    value.load(id: 1)\n}}",
            EVERYWHERE,
        ),
        Use(
            "displayName",
            "Sources/CanaryCore/UserProfile.swift",
            "func {fn}(_ value: UserProfile) -> String {{\n    value.displayName\n}}",
            EVERYWHERE,
        ),
        Use(
            "Ticket",
            "Sources/CanaryCore/Ticket.swift",
            "func {fn}(_ value: Ticket) -> String {{\n    value.title\n}}",
            EVERYWHERE,
        ),
        Use(
            "greetAll(_:)",
            "Sources/CanaryCore/Greeter.swift",
            "func {fn}() -> [String] {{\n    greetAll([EnglishGreeter()])\n}}",
            EVERYWHERE,
        ),
    ),
    structural_roots=("Sources/CanaryCore", "Sources/CanaryFeatures", "Tests/CanaryCoreTests"),
    insert_roots=(
        "Sources/CanaryCore",
        "Sources/CanaryFeatures",
        "Sources/canary-tool",
        "Tests/CanaryCoreTests",
    ),
)
SCRIPTS = 3
"""Scripts per mode; each has one step of every kind (six), plus an undo per failed build."""


@pytest.fixture(scope="module")
def built_canary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("property") / "SwiftCanary"
    # Built afresh (no .build copied): a copied store would keep the fixture's own units, whose
    # files exist too, and every answer and truth would name both folders.
    shutil.copytree(CANARY, root, symlinks=True, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    build_package(root)
    snapshot(root)
    return root


@pytest.mark.parametrize("watch", [True, False], ids=["watch", "sweep"])
def test_an_answer_never_says_complete_when_it_is_not(
    built_canary: Path, tmp_path: Path, watch: bool
) -> None:
    tally = Tally(f"freshness property, SwiftCanary, {'watch' if watch else 'sweeps'}")
    try:
        run_property(SPEC, built_canary, tally, tmp_path, watch=watch, examples=SCRIPTS, steps=6)
    finally:
        MEASURED.extend(tally.lines())
    assert not tally.lies, "\n".join(tally.lies)
    assert not tally.not_fresh, "\n".join(tally.not_fresh)
    assert tally.scripts == SCRIPTS
    assert tally.compared.total() >= 6 * SCRIPTS, "too few complete answers compared to prove anything"
