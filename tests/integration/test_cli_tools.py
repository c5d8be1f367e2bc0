"""`xcindex <tool>` for people: the real command on the real fixture.

Golden output (in `golden/`, checked by hand against the fixture's expected answers) is what
a person reads in a pipe: grouped by file, paths relative to the working directory, no
colour. Colour appears only on a terminal, and never with NO_COLOR; `--json` is the MCP
tool's structured content; exit codes say success (0), no results (1), error (2).
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import CANARY, canary_path, canary_source_count, load_expected

pytestmark = pytest.mark.toolchain

XCINDEX = str(Path(sys.executable).parent / "xcindex")
GOLDEN = Path(__file__).parent / "golden"
ANSI = "\x1b["


def environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "TERM")}
    env.update(extra)
    return env


def xcindex(
    *args: str, cwd: Path = CANARY, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [XCINDEX, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(env or environment()),
        timeout=600,
        check=False,
    )


def on_a_terminal(*args: str, env: Mapping[str, str]) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; return the exit code and the screen."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [XCINDEX, *args], cwd=CANARY, stdout=follower, stderr=follower, env=dict(env)
        )
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = process.wait(timeout=600)
    finally:
        os.close(leader)
    return code, b"".join(chunks).decode("utf-8")


GOLDEN_CASES = [
    (["symbol", "fetchUser"], "symbol_fetchUser.txt"),
    (["refs", "UserService"], "refs_UserService.txt"),
    (["def", "UserService"], "def_UserService.txt"),
    (["overrides", "AppDelegate.setUp()"], "overrides_AppDelegate.setUp.txt"),
    (["conformances", "Auditable"], "conformances_Auditable.txt"),
    (["blast", "Sources/CanaryCore/UserService.swift"], "blast_UserService.swift.txt"),
    (["rename", "UserService", "AccountService", "--no-lsp"], "rename_UserService_AccountService.txt"),
]


@pytest.mark.parametrize(("args", "golden"), GOLDEN_CASES, ids=[g for _, g in GOLDEN_CASES])
def test_readable_output_grouped_by_file_matches_the_golden_text(
    canary_store: Path, args: list[str], golden: str
) -> None:
    result = xcindex(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / golden).read_text(encoding="utf-8")
    assert ANSI not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_the_golden_references_are_the_hand_checked_ones(canary_store: Path) -> None:
    """The golden text is not just whatever the code printed once: its sites are the expected ones."""
    expected = {(e["path"], e["line"], e["column"]) for e in load_expected("references.json")["UserService"]}
    shown: set[tuple[str, int, int]] = set()
    current = ""
    for line in (GOLDEN / "refs_UserService.txt").read_text(encoding="utf-8").splitlines()[2:]:
        if line and not line.startswith(" "):
            current = line
        elif line:
            position = line.split()[0]
            row, column = position.split(":")
            shown.add((current, int(row), int(column)))
    assert shown == expected


def test_json_is_the_tools_structured_content(canary_store: Path) -> None:
    result = xcindex("refs", "fetchUser(id:)", "--json", cwd=Path("/"), env=environment())
    assert result.returncode == 2  # no --project, and no project from "/" up
    assert result.stderr == (
        "xcindex refs: error: no Swift package or Xcode project in / or a folder above it: run the "
        "command inside one, or name it with --project PATH (or the store with --index-store PATH).\n"
    )

    result = xcindex("refs", "fetchUser(id:)", "--json", "--project", str(CANARY), cwd=Path("/"))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert set(answer) >= {"results", "totalCount", "truncated", "completeness", "staleFiles", "warnings"}
    expected = load_expected("references.json")["UserService.fetchUser(id:)"]
    assert {(r["path"], r["line"], r["column"]) for r in answer["results"]} == {
        (canary_path(e["path"]), e["line"], e["column"]) for e in expected
    }

    store = canary_store
    by_store = xcindex("symbol", "UserService", "--json", "--index-store", str(store), cwd=Path("/"))
    assert by_store.returncode == 0, by_store.stderr
    [symbol] = json.loads(by_store.stdout)["results"]
    assert symbol["definitionPath"] == canary_path("Sources/CanaryCore/UserService.swift")


def test_exit_codes_tell_no_results_from_errors(canary_store: Path, tmp_path: Path) -> None:
    nothing = [
        xcindex("symbol", "NoSuchSymbolAnywhere"),
        xcindex("refs", "--usr", "s:NoSuchUSR"),
        xcindex("def", "NoSuchSymbolAnywhere"),
        xcindex("blast", "Tests/CanaryCoreTests/FeatureTests.swift"),
        xcindex("rename", "s:NoSuchUSR", "Other", "--no-lsp"),
        xcindex("symbol", "NoSuchSymbolAnywhere", "--json"),
    ]
    for result in nothing:
        assert result.returncode == 1, (result.args, result.stdout, result.stderr)
    assert json.loads(nothing[-1].stdout)["results"] == []
    assert "methods are named with their labels" in nothing[0].stdout

    (tmp_path / "Package.swift").write_text("// swift-tools-version:5.9\n", encoding="utf-8")
    errors = {
        "no index": xcindex("status", "--project", str(tmp_path)),
        "missing project": xcindex("refs", "X", "--project", str(tmp_path / "missing")),
        "not a source file": xcindex("blast", "Sources/Nope.swift"),
        "ambiguous name": xcindex("def", "init"),
        "no subject": xcindex("refs"),
        "bad number": xcindex("refs", "X", "--max-results", "0"),
        "keyword": xcindex("rename", "UserService", "class", "--no-lsp"),
        "unknown option": xcindex("symbol", "X", "--frobnicate"),
    }
    for why, result in errors.items():
        assert result.returncode == 2, (why, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, why
        assert "error" in result.stderr, why
    assert "Build it first: swift build --build-tests" in errors["no index"].stderr
    assert "'init' names" in errors["ambiguous name"].stderr
    assert "s:10CanaryCore11UserServiceC4authAcA11AuthManager_p_tcfc" in errors["ambiguous name"].stderr
    assert "invalid_identifier" in errors["keyword"].stderr


def test_colour_only_on_a_terminal_and_never_with_no_color(canary_store: Path) -> None:
    code, screen = on_a_terminal("refs", "UserService", env=environment(TERM="xterm"))
    assert code == 0
    assert f"{ANSI}1;36mSources/CanaryCore/AppDelegate.swift{ANSI}0m" in screen

    code, screen = on_a_terminal("refs", "UserService", env=environment(TERM="xterm", NO_COLOR="1"))
    assert code == 0
    assert ANSI not in screen
    assert "Sources/CanaryCore/AppDelegate.swift" in screen


def test_a_first_ingestion_shows_progress_on_stderr_only(canary_store: Path, tmp_path: Path) -> None:
    cold = environment(XCINDEX_CACHE_DIR=str(tmp_path / "cold-cache"))
    result = xcindex("refs", "UserService", env=cold)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "refs_UserService.txt").read_text(encoding="utf-8")
    assert re.search(r"xcindex: reading \d+ new record\(s\) of the index store", result.stderr), result.stderr
    assert "records" in result.stderr
    assert "xcindex: indexed in" in result.stderr

    warm = xcindex("refs", "UserService", env=cold)
    assert warm.stdout == result.stdout
    assert "new record" not in warm.stderr


def test_status_waits_for_the_ingestion_and_reports_freshness(canary_store: Path, tmp_path: Path) -> None:
    result = xcindex("status", env=environment(XCINDEX_CACHE_DIR=str(tmp_path / "cold-cache")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Index store  {canary_store.resolve()}\n")
    assert "Freshness    complete: every indexed file is current" in result.stdout
    assert f"{canary_source_count()} live units" in result.stdout
    as_json = json.loads(xcindex("status", "--json").stdout)
    assert as_json["completeness"] == "complete"
    assert as_json["indexStorePath"] == str(canary_store.resolve())


def test_what_the_new_user_review_found_reads_right_on_the_terminal(canary_store: Path) -> None:
    """Names that mean several types' members say so and label each site; a page of candidates
    is a page; a question that does not fit its tool says which does; a subfolder of a
    package is that package."""
    refs = xcindex("refs", "prepare")
    assert refs.returncode == 0, refs.stderr
    assert "NameLeafRunner.prepare()  definition" in refs.stdout
    assert "NameFeatureRunner.prepare()  definition" in refs.stdout
    assert "'prepare' names 3 symbols of different types" in refs.stderr

    page = xcindex("symbol", "prepare", "--max-results", "1")
    assert page.returncode == 0, page.stderr
    assert page.stdout.count("instanceMethod") == 1
    assert "(showing 1-1 of 3; --offset 1 for the next page)" in page.stdout

    not_a_protocol = xcindex("conformances", "UserService")
    assert not_a_protocol.returncode == 2
    assert "'UserService' names no protocol (UserService is a class)" in not_a_protocol.stderr
    assert "xcindex types UserService" in not_a_protocol.stderr

    property_calls = xcindex("calls", "UserProfile.displayName", cwd=CANARY / "Sources" / "CanaryCore")
    assert property_calls.returncode == 1, property_calls.stderr
    assert "UserProfile.displayName (instanceProperty) is not a function" in property_calls.stdout
    assert "xcindex refs" in property_calls.stdout


def test_footers_and_headers_tell_the_next_step(canary_store: Path) -> None:
    """A cut list of references names the `--offset` of the next page; a count of one
    conformer reads in the singular; a type hierarchy with nothing in the asked direction
    says the other direction exists (a new user on a real package met each of these)."""
    page = xcindex("refs", "UserService", "--max-results", "2")
    assert page.returncode == 0, page.stderr
    total = json.loads(xcindex("refs", "UserService", "--json", "--all").stdout)["totalCount"]
    assert f"(showing 1-2 of {total}; --offset 2 for the next page" in page.stdout
    following = xcindex("refs", "UserService", "--max-results", "2", "--offset", "2")
    assert f"(showing 3-4 of {total}; --offset 4 for the next page" in following.stdout

    # Conformers by hand: Greeter's in expected/conformances.json; AsyncJob conforms to
    # AsyncConfigurable, and Circle and Square to Measurable in extensions (Shapes.swift:80,
    # 82; the test's local Ruler is not in the index).
    conformers = {
        "Greeter": len(load_expected("conformances.json")["Greeter"]),
        "AsyncConfigurable": 1,
        "Measurable": 2,
    }
    for protocol, count in conformers.items():
        answer = json.loads(xcindex("conformances", protocol, "--json").stdout)
        assert len(answer["results"]) == count, protocol
        header = xcindex("conformances", protocol).stdout.splitlines()[0]
        verb = "conforms" if count == 1 else "conform"
        assert header.startswith(f"{count} type{'' if count == 1 else 's'} {verb} to {protocol} "), header

    supertypes = xcindex("types", "Greeter", "--direction", "supertypes")
    assert supertypes.returncode == 1, supertypes.stderr
    assert "--direction subtypes asks the other way" in supertypes.stdout
    subtypes = xcindex("types", "Greeter", "--direction", "subtypes")
    assert subtypes.returncode == 0, subtypes.stderr
    assert "asks the other way" not in subtypes.stdout


def test_the_likely_few_leave_out_a_test_reached_only_by_running_an_executable(canary_store: Path) -> None:
    # RenameCases.swift, read by hand: five of RenameCasesTests' tests call its declarations;
    # testTheToolPrintsItsGreeting runs canary-tool (which uses them) as a process, by name.
    # Every one of the six is covering; the likely few are the five a call reaches.
    direct = [
        "testTheStaticWitnessInAnExtensionIsUsed",
        "testTheDefaultImplementationServesTheRefiningProtocol",
        "testSettingsEncodeWithTheirPropertyNames",
        "testTheLocalTypeWitnessesTheRequirements",
        "testTheWrapperClamps",
    ]
    by_name = "testTheToolPrintsItsGreeting"
    ids = {name: f"CanaryCoreTests.RenameCasesTests/{name}" for name in [*direct, by_name]}
    result = xcindex("blast", "Sources/CanaryCore/RenameCases.swift", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)

    def runs(command: str) -> set[str]:
        pattern = command.split("--filter ", 1)[1].strip("'")
        return {name for name, test_id in ids.items() if re.search(pattern, test_id)}

    assert runs(answer["swiftTestCommand"]) == {*direct, by_name}
    assert runs(answer["selection"]["likelyTestCommand"]) == set(direct)
    text = xcindex("blast", "Sources/CanaryCore/RenameCases.swift").stdout
    assert f"The likely few (reached by a direct call): {answer['selection']['likelyTestCommand']}" in text
