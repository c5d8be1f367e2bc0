"""Every index-backed tool against the fixture's hand-checked answers: recall and precision 1.0."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import CANARY, canary_source_count, load_expected, loose, swift_executable
from tests.scoring import score
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def rel(path: str, root: Path = CANARY) -> str:
    return str(Path(path).relative_to(root.resolve()))


async def usr_of(engine: Engine, store: Path, entry: dict[str, Any], root: Path = CANARY) -> str:
    """The USR of an expected symbol, found through find_symbol and pinned by its definition
    site (in `root`, the fixture or a copy of it)."""
    answer = await engine.find_symbol(entry["name"], index_store_path=str(store))
    for match in answer.to_json()["results"]:
        if match["definitionPath"] is not None and (
            rel(match["definitionPath"], root),
            match["definitionLine"],
        ) == (
            entry["definitionPath"],
            entry["definitionLine"],
        ):
            return str(match["usr"])
    raise AssertionError(f"find_symbol({entry['name']!r}) did not find {entry['key']}: {answer.to_json()}")


def witness_site(result: dict[str, Any], path: Callable[[str], str]) -> tuple[Any, ...]:
    """An override's anchor with the conformances the index records it at implicitly."""
    conformances = frozenset(
        (path(c["path"]), c["line"], c["column"], c["conformingType"])
        for c in result.get("conformanceSites", [])
    )
    return (path(result["path"]), result["line"], result["column"], conformances)


@pytest.fixture
def symbols() -> dict[str, dict[str, Any]]:
    return {entry["key"]: entry for entry in load_expected("symbols.json")}


async def test_find_symbol_finds_every_expected_symbol_with_its_kind_and_site(
    canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    async with Engine() as engine:
        for key, entry in symbols.items():
            answer = (await engine.find_symbol(entry["name"], index_store_path=str(canary_store))).to_json()
            # SDK symbols the project uses are candidates too (after the project's, no source here).
            project = [r for r in answer["results"] if r["definitionPath"] is not None]
            assert answer["results"][: len(project)] == project, "the project's candidates come first"
            sites = {
                (r["name"], r["kind"], rel(str(r["definitionPath"])), r["definitionLine"]) for r in project
            }
            assert (
                entry["name"],
                entry["kind"],
                entry["definitionPath"],
                entry["definitionLine"],
            ) in sites, key
            assert all(r["language"] == "swift" for r in answer["results"])
            if entry["kind"] in ("class", "struct", "enum", "protocol"):
                assert len(answer["results"]) == 1, f"one type named {entry['name']}, no extensions: {answer}"
            assert answer["completeness"] == "complete"


async def test_bare_and_qualified_names_resolve_to_the_labelled_symbols(canary_store: Path) -> None:
    async with Engine() as engine:
        bare = (await engine.find_symbol("load", index_store_path=str(canary_store))).to_json()
        assert bare["matchedBy"] == "base_name"
        assert sorted(r["name"] for r in bare["results"]) == ["load(id:)", "load(name:)"]
        qualified = (
            await engine.find_symbol("UserService.fetchUser(id:)", index_store_path=str(canary_store))
        ).to_json()
        assert [r["name"] for r in qualified["results"]] == ["fetchUser(id:)"]
        wrong_type = (
            await engine.find_symbol("AppDelegate.fetchUser(id:)", index_store_path=str(canary_store))
        ).to_json()
        assert wrong_type["results"] == []


async def test_find_references_matches_hand_checked_sites_and_roles(
    canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    async with Engine() as engine:
        for key, expected in load_expected("references.json").items():
            usr = await usr_of(engine, canary_store, symbols[key])
            answer = (
                await engine.find_references(usr=usr, max_results=500, index_store_path=str(canary_store))
            ).to_json()
            got = {
                (rel(r["path"]), r["line"], r["column"]): set(r["roles"]) - {"overrideOf"}
                for r in answer["results"]
            }
            want = {(r["path"], r["line"], r["column"]): set(r["roles"]) for r in expected}
            result = score(f"find_references {key}", want, got)
            assert (result.recall, result.precision) == (1.0, 1.0), result
            assert {k: got[k] for k in want} == want, f"roles differ for {key}"
            keys = [(r["path"], r["line"], r["column"]) for r in answer["results"]]
            assert keys == sorted(keys), "sorted by path, line, column"


async def test_find_references_by_name_covers_every_overload_and_caps_with_a_flag(canary_store: Path) -> None:
    async with Engine() as engine:
        by_name = (await engine.find_references("load", index_store_path=str(canary_store))).to_json()
        expected = load_expected("references.json")
        want = {
            (r["path"], r["line"], r["column"])
            for key in ("UserRepository.load(id:)", "UserRepository.load(name:)")
            for r in expected[key]
        }
        result = score(
            "find_references load (bare)",
            want,
            {(rel(r["path"]), r["line"], r["column"]) for r in by_name["results"]},
        )
        assert (result.recall, result.precision) == (1.0, 1.0), result
        capped = (
            await engine.find_references("UserService", max_results=3, index_store_path=str(canary_store))
        ).to_json()
        assert len(capped["results"]) == 3
        assert capped["truncated"] is True
        assert capped["totalCount"] == len(expected["UserService"])


async def test_find_definition_and_overrides_and_conformances(
    canary_store: Path, symbols: dict[str, dict[str, Any]]
) -> None:
    store = str(canary_store)
    async with Engine() as engine:
        for key in ("UserService", "UserService.fetchUser(id:)", "AuthManager.authenticate(user:)"):
            entry = symbols[key]
            answer = loose(
                (
                    await engine.find_definition(
                        await usr_of(engine, canary_store, entry), index_store_path=store
                    )
                ).to_json()
            )
            site = answer["result"]
            assert (rel(site["path"]), site["line"], site["column"]) == (
                entry["definitionPath"],
                entry["definitionLine"],
                entry["definitionColumn"],
            )
        assert (await engine.find_definition("s:NoSuchSymbol", index_store_path=store)).to_json()[
            "result"
        ] is None

        for key, expected in load_expected("overrides.json").items():
            usr = await usr_of(engine, canary_store, symbols[key])
            answer = loose((await engine.find_overrides(usr, index_store_path=store)).to_json())
            result = score(
                f"find_overrides {key}",
                {witness_site(r, lambda path: path) for r in expected},
                {witness_site(r, rel) for r in answer["results"]},
            )
            assert (result.recall, result.precision) == (1.0, 1.0), result
            names = {(r["path"], r["line"]): r["symbolName"] for r in expected if "symbolName" in r}
            assert {
                (rel(r["path"]), r["line"]): r["symbolName"]
                for r in answer["results"]
                if (rel(r["path"]), r["line"]) in names
            } == names, key

        for key, expected in load_expected("conformances.json").items():
            usr = await usr_of(engine, canary_store, symbols[key])
            answer = loose((await engine.find_conformances(usr, index_store_path=store)).to_json())
            result = score(
                f"find_conformances {key}",
                {(r["type"], r["path"], r["line"], r["column"], r["viaExtension"]) for r in expected},
                {
                    (r["conformingType"], rel(r["path"]), r["line"], r["column"], r["viaExtension"])
                    for r in answer["results"]
                },
            )
            assert (result.recall, result.precision) == (1.0, 1.0), result


async def test_blast_radius_matches_hand_checked_dependents_and_tests(canary_store: Path) -> None:
    async with Engine() as engine:
        for path, expected in load_expected("blast_radius.json").items():
            answer = (
                await engine.blast_radius(str(CANARY / path), index_store_path=str(canary_store))
            ).to_json()
            for field in ("directDependents", "affectedFiles", "coveringTests"):
                result = score(
                    f"blast_radius {path} {field}", expected[field], [rel(p) for p in answer[field]]
                )
                assert (result.recall, result.precision) == (1.0, 1.0), result
            assert set(answer["affectedFiles"]) >= set(answer["directDependents"])
            assert set(answer["coveringTests"]) <= set(answer["affectedFiles"])
            assert str((CANARY / path).resolve()) not in answer["affectedFiles"]
            assert answer["transitiveBounded"] is False
            # As `swift test` matches them: XCTest `M.C/test`, Swift Testing `M.S/f()/File.swift:…`.
            ids = [
                t["id"] + ("/File.swift:1:1" if t["kind"] == "swift-testing" else "")
                for t in answer["selectedTests"]
            ]
            for test in answer["testFilters"]:
                # Anchored at the start: `testFloat` must never run `testFloat80`.
                assert test["filter"].startswith("^CanaryCoreTests\\."), test
                assert sum(bool(re.match(test["filter"], i)) for i in ids) == test["tests"], test
            assert all(any(re.match(t["filter"], i) for t in answer["testFilters"]) for i in ids)
            assert {t["path"] for t in answer["selectedTests"]} == set(answer["coveringTests"])


async def test_blast_radius_names_runnable_test_filters(canary_store: Path) -> None:
    """UserService.swift, read from the fixture: UserServiceTests.setUp() constructs a
    UserService before each of its 7 tests (the whole class); in FeatureTests.swift,
    fetchesUserWithTokenAuth calls fetchUser(id:), and three of the suite's four tests
    construct a UserService (overloadsAndSubscript only reads the repository). The command,
    run for real, runs exactly those 11 tests."""
    async with Engine() as engine:
        answer = (
            await engine.blast_radius(
                str(CANARY / "Sources/CanaryCore/UserService.swift"), index_store_path=str(canary_store)
            )
        ).to_json()
    filters = {(Path(t["path"]).name, t["kind"], t["filter"], t["tests"]) for t in answer["testFilters"]}
    assert filters == {
        ("UserServiceTests.swift", "xctest", r"^CanaryCoreTests\.UserServiceTests/", 7),
        (
            "FeatureTests.swift",
            "swift-testing",
            r"^CanaryCoreTests\.FeatureTests/(?:featureDelegateOverridesSetUp\(\)|greetersUseOwnOrDefault\(\)"
            r"|profileFeatureUsesCore\(\))/",
            3,
        ),
        ("FeatureTests.swift", "swift-testing", r"^CanaryCoreTests\.fetchesUserWithTokenAuth\(\)/", 1),
    }
    assert {t["reachedVia"] for t in answer["selectedTests"]} == {"directCall"}
    command = str(answer["swiftTestCommand"])
    assert command.startswith("swift test --filter '")
    ran = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [
                swift_executable(),
                "test",
                "--skip-build",
                "--filter",
                command.split("--filter ", 1)[1].strip("'"),
            ],
            cwd=CANARY,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    )
    output = ran.stdout + ran.stderr
    xctest = set(re.findall(r"Test Case '[\w.]*?(\w+)\.(\w+)' passed", output))
    testing = set(re.findall(r"✔ Test (\w+)\(\) passed", output))
    assert xctest == {
        ("UserServiceTests", name)
        for name in (
            "testFetchUserReturnsName",
            "testSubDelegateGreetsOnce",
            "testRefreshSessionCounts",
            "testDisplayNameReadAndWrite",
            "testVectorAddition",
            "testBoxMapsValue",
            "testAuditCountCountsConformers",
        )
    }, output
    assert testing == {
        "featureDelegateOverridesSetUp",
        "greetersUseOwnOrDefault",
        "profileFeatureUsesCore",
        "fetchesUserWithTokenAuth",
    }, output


async def test_status_reports_counts_and_no_stale_files_on_a_fresh_build(canary_store: Path) -> None:
    store_path = str(canary_store.resolve())
    async with Engine() as engine:
        await engine.find_symbol(
            "UserService", index_store_path=str(canary_store)
        )  # the first ingestion is done
        answer = loose((await engine.status(index_store_path=str(canary_store))).to_json())
    assert answer["indexStorePath"] == store_path
    assert answer["staleFileCount"] == 0
    assert answer["completeness"] == "complete"
    assert answer["counts"]["liveUnits"] == canary_source_count()  # one unit per source file
    assert answer["indexMtime"].endswith("Z")
