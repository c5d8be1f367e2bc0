"""The two example agents in `examples/`, run as a user runs them, against the fixture."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANARY, REPO, canary_path, load_expected

pytestmark = pytest.mark.toolchain


def run_example(name: str, *args: str, cwd: Path = Path("/")) -> subprocess.CompletedProcess[str]:
    # From a neutral folder, so the example can rely on nothing but its argument.
    return subprocess.run(
        [sys.executable, str(REPO / "examples" / name), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
        check=False,
    )


def test_the_asyncio_agent_prepares_a_change(canary_store: Path) -> None:
    result = run_example("asyncio_agent.py", str(CANARY))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"is defined at {canary_path('Sources/CanaryCore/UserService.swift')}:8" in out
    expected = load_expected("references.json")["UserService.fetchUser(id:)"]
    assert f"references: {len(expected)}\n" in out
    for site in expected:
        assert f"{canary_path(site['path'])}:{site['line']}:{site['column']} " in out
    assert "overrides: 0\n" in out
    assert re.search(r"tests to run: swift test --filter '.*CanaryCoreTests\\\.UserServiceTests", out)
    assert "after recording an edit of an unchanged file: completeness=complete, session-edited=[]" in out
    assert result.stderr == ""


def test_the_trio_agent_finds_the_tests_a_protocol_change_reaches(canary_store: Path) -> None:
    result = run_example("trio_agent.py", str(CANARY), "AuthManager")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    conformers = load_expected("conformances.json")["AuthManager"]
    assert f"{len(conformers)} type(s) conform to AuthManager:" in out
    for conformer in conformers:
        assert f"{conformer['type']} at {canary_path(conformer['path'])}:{conformer['line']}" in out
    # The tests that make an AuthManager, read from the fixture: DefaultAuthManager in
    # UserServiceTests' setUp (every test of the class) and in FeatureTests'
    # greetersUseOwnOrDefault; TokenAuthManager in fetchesUserWithTokenAuth, FeatureTests'
    # profileFeatureUsesCore and featureDelegateOverridesSetUp, and UserServiceTests'
    # testAuditCountCountsConformers. The two files' radii name FeatureTests with different
    # tests; the one command of anchored patterns runs the union, exactly (as `swift test`
    # matches a Swift Testing id, which goes on past its parentheses). The radii finish in
    # any order, so a union that let one replace the other would fail here some runs.
    [command] = [line for line in out.splitlines() if line.startswith("run them: swift test --filter '")]
    pattern = command.split("--filter ", 1)[1].strip("'")
    user_service = "CanaryCoreTests.UserServiceTests/"
    runs = [
        *(
            user_service + name
            for name in (
                "testFetchUserReturnsName",
                "testSubDelegateGreetsOnce",
                "testRefreshSessionCounts",
                "testDisplayNameReadAndWrite",
                "testVectorAddition",
                "testBoxMapsValue",
                "testAuditCountCountsConformers",
            )
        ),
        "CanaryCoreTests.fetchesUserWithTokenAuth()/",
        "CanaryCoreTests.FeatureTests/profileFeatureUsesCore()/",
        "CanaryCoreTests.FeatureTests/featureDelegateOverridesSetUp()/",
        "CanaryCoreTests.FeatureTests/greetersUseOwnOrDefault()/",
    ]
    skips = ["CanaryCoreTests.FeatureTests/overloadsAndSubscript()/"]
    assert [t for t in runs if not re.search(pattern, t)] == [], pattern
    assert [t for t in skips if re.search(pattern, t)] == [], pattern
    assert result.stderr == ""


def test_the_examples_say_how_to_call_them() -> None:
    for name in ("asyncio_agent.py", "trio_agent.py"):
        result = run_example(name)
        assert result.returncode == 1
        assert "usage:" in result.stderr
        assert "Traceback" not in result.stderr

    missing = run_example("trio_agent.py", str(CANARY), "NoSuchProtocol")
    assert missing.returncode == 1
    assert "no protocol of that name" in missing.stdout


def test_the_examples_take_a_relative_path_and_say_what_is_wrong_in_one_line(canary_store: Path) -> None:
    """A person types `python examples/asyncio_agent.py SwiftCanary` from the fixtures folder."""
    relative = run_example("asyncio_agent.py", "SwiftCanary", cwd=CANARY.parent)
    assert relative.returncode == 0, relative.stderr
    assert f"is defined at {canary_path('Sources/CanaryCore/UserService.swift')}:8" in relative.stdout
    for name in ("asyncio_agent.py", "trio_agent.py"):
        nowhere = run_example(name, "NoSuchPackage", cwd=CANARY.parent)
        assert nowhere.returncode == 1
        assert "Traceback" not in nowhere.stderr
        assert nowhere.stderr.startswith(f"{REPO / 'examples' / name}: "), nowhere.stderr
        assert str(CANARY.parent / "NoSuchPackage") in nowhere.stderr
