"""The freshness overlay on a real build: an edited file is re-indexed on its own, answers
about it are fresh without a build, and they match, site for site, what a full `swift
build` gives afterwards. The project's `.build` (its index store included) is left
byte-for-byte and mtime-for-mtime as it was, and a later build supersedes the overlay.

The six kinds of edit run in sequence on one built copy (bench/overlay_proof.py, which
also runs them on the benchmark's M package), each restored afterwards without a build in
between, as in a real session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from bench.overlay_proof import OverlayEdit, prove, swift_build, tree_snapshot
from tests.conftest import CANARY, build_package, load_expected, swift_executable
from xcindex.engine import Engine, EngineConfig
from xcindex.indexstore.cache import cache_dir
from xcindex.overlay.arguments import build_dir_for_store, load_invocations
from xcindex.vocabulary import Tier

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

PROFILE = "Sources/CanaryFeatures/ProfileFeature.swift"
APP = "Sources/CanaryCore/AppDelegate.swift"
AUDITABLE = "Sources/CanaryCore/Auditable.swift"
FETCH = "UserService.fetchUser(id:)"

EDITS = [
    OverlayEdit("lines_inserted_above", PROFILE, "", "// one\n// two\n// three\n", FETCH),
    OverlayEdit(
        "call_added",
        PROFILE,
        None,
        "\nextension ProfileFeature {\n    public func twice(_ s: UserService) -> String? {\n"
        "        s.fetchUser(id: 1) ?? s.fetchUser(id: 2)\n    }\n}\n",
        FETCH,
    ),
    OverlayEdit("call_removed", APP, '(userService.fetchUser(id: 1) ?? "guest")', '"guest"', FETCH),
    OverlayEdit(
        "renamed_at_declaration",
        PROFILE,
        "func fullName(for id: Int)",
        "func completeName(for id: Int)",
        "ProfileFeature.completeName(for:)",
    ),
    OverlayEdit(
        "new_conformer",
        AUDITABLE,
        None,
        "\npublic struct OverlayAudit: Auditable {\n    public init() {}\n}\n",
        "Auditable",
        conformances=True,
    ),
    OverlayEdit("syntax_error", PROFILE, None, "\nfunc broken( {\n", FETCH, builds=False),
]


@pytest.fixture(scope="module")
def built_copy(canary_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the built fixture (its .build too, minus the path-bound module cache),
    built once where it lies. Its store also holds the original fixture's units (the same
    symbols, declared in a second place), which answers about the copy leave out."""
    root = tmp_path_factory.mktemp("overlay") / "SwiftCanary"
    shutil.copytree(CANARY, root, symlinks=True, ignore=shutil.ignore_patterns("ModuleCache", ".swiftpm"))
    build_package(root)
    return root


def test_arguments_come_from_the_build_description(built_copy: Path) -> None:
    store = next((built_copy / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    invocations = load_invocations(build_dir_for_store(store))
    profile = invocations[str(built_copy / PROFILE)]
    assert profile.module_name == "CanaryFeatures"
    assert str(built_copy / PROFILE) in profile.sources
    assert profile.import_path.endswith("/debug/Modules")
    assert "-package-name" in profile.flags
    assert "-DSWIFT_PACKAGE" in profile.flags
    # Nothing that writes into .build survives.
    for writes in ("-index-store-path", "-module-cache-path", "-emit-objc-header-path", "-output-file-map"):
        assert writes not in profile.flags
    assert invocations[str(built_copy / APP)].module_name == "CanaryCore"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_six_kinds_of_edit_are_answered_without_a_build_as_the_build_answers_them(
    built_copy: Path,
) -> None:
    swift = swift_executable()
    outcomes = await prove(built_copy, EDITS, build=lambda root: swift_build(root, swift))
    for outcome in outcomes:
        print(outcome.to_json())  # noqa: T201  (the figures of docs/tools.md)
    assert [o.edit.kind for o in outcomes] == [e.kind for e in EDITS]
    assert {o.edit.kind: o.problems() for o in outcomes} == {e.kind: [] for e in EDITS}
    by_kind = {o.edit.kind: o for o in outcomes}
    # What each edit did, as a user would see it (the build agrees, above).
    lines = {dict(site)["line"] for site in by_kind["lines_inserted_above"].overlay.sites}
    assert "16" in lines  # ProfileFeature's call moved from line 13 to 16
    assert len(by_kind["call_added"].overlay.sites) == len(by_kind["lines_inserted_above"].overlay.sites) + 2
    assert (
        len(by_kind["call_removed"].overlay.sites) == len(by_kind["lines_inserted_above"].overlay.sites) - 1
    )
    conformers = {dict(site)["conformingType"] for site in by_kind["new_conformer"].overlay.sites}
    assert '"OverlayAudit"' in conformers
    assert '"TokenAuthManager"' in conformers
    # The broken file keeps its last good sites, labelled stale, with the compiler's reason.
    broken = by_kind["syntax_error"]
    assert broken.overlay.completeness == "stale"
    assert "overlay_failed" in broken.overlay.warnings
    # Every run's private store was removed once read, and every compiler run's temporary
    # folder (the driver leaves its TemporaryDirectory.* in it): nothing accumulates.
    assert list((cache_dir() / "overlay").glob("*/runs/*")) == []
    assert list((cache_dir() / "overlay").glob("*/tmp/*")) == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_copy_lists_its_own_conformance_only_whatever_was_rebuilt(
    built_copy: Path,
) -> None:
    # The copy's store holds the original fixture's units too (its .build was copied): the
    # extension `TokenAuthManager: Auditable` has one USR and a place in each folder. The
    # copy's answer lists its own, and a rebuild (which renumbers its rows) changes nothing.
    async with Engine(EngineConfig(overlay=False)) as engine:
        usr = (await engine.find_symbol("Auditable", project_path=str(built_copy))).resolved
        assert usr is not None

        async def anchors() -> set[str]:
            answer = await engine.find_conformances(usr.symbol.usr, project_path=str(built_copy))
            return {c.anchor.path for c in answer.conformances if c.type_symbol.name == "TokenAuthManager"}

        first = await anchors()
        token = built_copy / "Sources/CanaryFeatures/TokenAuthManager.swift"
        token.write_text(token.read_text(encoding="utf-8"), encoding="utf-8")
        build_package(built_copy)
        assert await anchors() == first == {str(token)}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_sessions_edits_start_the_overlay_in_the_background_and_status_says_so(
    built_copy: Path,
) -> None:
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    root = str(built_copy)
    config = EngineConfig(overlay=True, overlay_debounce_s=0.2, watch_poll_s=0.1)
    try:
        async with Engine(config) as engine:
            await engine.settle(project_path=root)
            since = await engine.status_version(project_path=root)
            source.write_text("// moved\n" + original, encoding="utf-8")
            await engine.record_edit(str(source))
            # The ledger changed: one notification at once; the overlay landing: another.
            with anyio.fail_after(60):
                edited = await engine.wait_status_change(since, project_path=root)
                assert str(source) in edited.edited
                landed = await engine.wait_status_change(edited, project_path=root)
            assert landed.overlay_version > since.overlay_version
            status = (await engine.status(project_path=root)).to_json()
            assert str(source) in status.get("overlayFiles", [])
            assert status["completeness"] == "complete", status
            # No question was needed: the session's answer is fresh already.
            fresh = await engine.wait_for_fresh([str(source)], project_path=root, timeout_s=0)
            assert fresh.fresh
    finally:
        source.write_text(original, encoding="utf-8")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_wait_for_fresh_is_answered_by_the_overlay_and_says_why_a_broken_file_is_not(
    built_copy: Path,
) -> None:
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    root = str(built_copy)
    try:
        async with Engine(EngineConfig(overlay=True)) as engine:
            await engine.settle(project_path=root)
            source.write_text("// moved\n" + original, encoding="utf-8")
            answer = await engine.wait_for_fresh([str(source)], project_path=root, timeout_s=60)
            assert answer.fresh
            assert not answer.timed_out
            source.write_text(original + "\nfunc broken( {\n", encoding="utf-8")
            answer = await engine.wait_for_fresh([str(source)], project_path=root, timeout_s=3)
            assert not answer.fresh
            assert answer.timed_out
            assert [w.code for w in answer.warnings] == ["overlay_failed"]
            assert "expected" in answer.warnings[0].message
    finally:
        source.write_text(original, encoding="utf-8")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_question_that_cannot_wait_says_the_file_is_being_reindexed(built_copy: Path) -> None:
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    root = str(built_copy)
    try:
        # A bound shorter than any compiler run: the answer cannot wait for it.
        async with Engine(EngineConfig(overlay=True, overlay_wait_s=0.001)) as engine:
            await engine.settle(project_path=root)
            source.write_text("// moved\n" + original, encoding="utf-8")
            answer = (await engine.find_references(FETCH, project_path=root)).to_json()
            assert answer["completeness"] == "stale"
            assert [w["code"] for w in answer["warnings"]] == ["overlay_pending"]
            assert "ask again in a moment" in answer["warnings"][0]["message"]
            assert (await engine.wait_for_fresh([str(source)], project_path=root, timeout_s=60)).fresh
            again = (await engine.find_references(FETCH, project_path=root)).to_json()
            assert again["completeness"] == "complete"
            assert again["overlayFiles"] == [str(source)]
    finally:
        source.write_text(original, encoding="utf-8")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_file_put_back_with_its_old_time_is_not_answered_from_its_overlay(built_copy: Path) -> None:
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    stat = source.stat()
    root = str(built_copy)
    try:
        async with Engine(EngineConfig(overlay=True)) as engine:
            await engine.settle(project_path=root)
            before = (await engine.find_references(FETCH, project_path=root)).to_json()
            source.write_text("// moved\n" + original, encoding="utf-8")
            moved = (await engine.find_references(FETCH, project_path=root)).to_json()
            assert moved["overlayFiles"] == [str(source)]
            # Put back as a restore or `cp -p` does: the old content with its old time, older
            # than the overlay's unit, so "newer than its unit" cannot see the change.
            source.write_text(original, encoding="utf-8")
            os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            back = (await engine.find_references(FETCH, project_path=root)).to_json()
            assert back["results"] == before["results"]
            assert back["completeness"] == before["completeness"]
            # As before the edit (an earlier test's restore may have left the file newer than
            # its build, and re-indexed on its own then, too).
            assert back.get("overlayFiles") == before.get("overlayFiles")
    finally:
        source.write_text(original, encoding="utf-8")
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_plan_rename_tiers_an_overlay_covered_file_like_any_other_and_a_broken_one_red(
    built_copy: Path,
) -> None:
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    root = str(built_copy)
    try:
        async with Engine(EngineConfig(overlay=True)) as engine:
            await engine.settle(project_path=root)
            found = await engine.find_symbol(FETCH, project_path=root)
            assert found.resolved is not None
            usr = found.resolved.symbol.usr
            source.write_text("// one\n// two\n" + original, encoding="utf-8")
            await engine.record_edit(str(source))
            plan = await engine.plan_rename(usr, "loadUser", project_path=root, reconcile_with_lsp=False)
            in_file = [r for r in plan.ranges if r.path == str(source)]
            # The hand-checked range of the file (expected/rename.json), two lines down.
            want = [
                (r["line"] + 2, r["column"])
                for r in load_expected("rename.json")[FETCH]["ranges"]
                if r["path"] == PROFILE
            ]
            assert [(r.line, r.column) for r in in_file] == want == [(15, 28)]
            assert all(r.tier is Tier.GREEN_INDEXSTORE for r in in_file), in_file
            text = source.read_text(encoding="utf-8").splitlines()
            assert all(text[r.line - 1][r.column - 1 :].startswith("fetchUser") for r in in_file)

            source.write_text(original + "\nfunc broken( {\n", encoding="utf-8")
            plan = await engine.plan_rename(usr, "loadUser", project_path=root, reconcile_with_lsp=False)
            in_file = [r for r in plan.ranges if r.path == str(source)]
            # Where the file's last indexing (the first edit's overlay) saw it: the overlay of
            # this edit failed (the file does not compile), so red, and maybe off.
            assert [(r.line, r.column) for r in in_file] == want
            assert all(r.tier is Tier.RED_STALE for r in in_file)
            assert "overlay_failed" in [code for code, _ in plan.warnings]
    finally:
        source.write_text(original, encoding="utf-8")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_store_without_build_description_stays_stale_with_overlay_unavailable(
    built_copy: Path, tmp_path: Path
) -> None:
    # A store whose build description is gone (as for an Xcode project): a copy of the
    # store alone, beside no description.json.
    store = next((built_copy / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    lone = tmp_path / "x" / "y" / "index" / "store"
    shutil.copytree(store, lone)
    source = built_copy / PROFILE
    original = source.read_text(encoding="utf-8")
    before = tree_snapshot(built_copy / ".build")
    try:
        async with Engine(EngineConfig(overlay=True)) as engine:
            await engine.settle(index_store_path=str(lone))
            source.write_text("// moved\n" + original, encoding="utf-8")
            answer = (await engine.find_references(FETCH, index_store_path=str(lone))).to_json()
            assert answer["completeness"] == "stale"
            assert [w["code"] for w in answer["warnings"]].count("overlay_unavailable") == 1
    finally:
        source.write_text(original, encoding="utf-8")
    assert tree_snapshot(built_copy / ".build") == before


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_module_written_back_as_built_is_not_emitted_for_the_files_that_import_it(
    built_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CanaryFeatures imports CanaryCore. An edit to a CanaryCore file that was undone (its
    time new, its content the build's) leaves CanaryCore as built: a CanaryFeatures edit is
    compiled against the build's module, with no CanaryCore emitted into the overlay (at L
    that emission took 51 s). A real change to it still is emitted, and its copy removed once
    the change is undone."""
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cache"))
    root = str(built_copy)
    profile, app = built_copy / PROFILE, built_copy / APP
    originals = {profile: profile.read_bytes(), app: app.read_bytes()}
    # Every source as the build compiled it (earlier tests wrote their edits back): its time
    # before the build's, as a checkout keeps it, so the first ingestion reads what each unit indexed.
    store = next((built_copy / ".build").glob("*-unknown-linux-gnu/debug/index/store"))
    before = (build_dir_for_store(store) / "description.json").stat().st_mtime_ns - 60 * 10**9
    for source in [*built_copy.glob("Sources/**/*.swift"), *built_copy.glob("Tests/**/*.swift")]:
        os.utime(source, ns=(before, before))

    def emitted() -> list[Path]:
        return sorted((tmp_path / "cache").glob("**/Modules/CanaryCore.stamp"))

    try:
        async with Engine(EngineConfig(overlay=True)) as engine:
            await engine.settle(project_path=root)
            app.write_bytes(originals[app])  # the edit undone: a new time, the build's content
            profile.write_bytes(b"// one\n" + originals[profile])
            assert (await engine.wait_for_fresh([str(profile)], project_path=root, timeout_s=120)).fresh
            assert emitted() == [], "CanaryCore was emitted though its files are as built"

            app.write_bytes(originals[app] + b"\n// changed\n")
            profile.write_bytes(b"// two\n" + originals[profile])
            assert (await engine.wait_for_fresh([str(profile)], project_path=root, timeout_s=120)).fresh
            assert len(emitted()) == 1, "a changed CanaryCore was not emitted"

            # Undone again: the copy emitted from the change would be found before the build's.
            app.write_bytes(originals[app])
            profile.write_bytes(b"// three\n" + originals[profile])
            assert (await engine.wait_for_fresh([str(profile)], project_path=root, timeout_s=120)).fresh
            assert emitted() == []
            assert sorted((tmp_path / "cache").glob("**/Modules/CanaryCore.*")) == []
    finally:
        for source, content in originals.items():
            source.write_bytes(content)
