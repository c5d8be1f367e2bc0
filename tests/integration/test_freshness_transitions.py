"""What changes in a project without a hook: a file created, edited or deleted from a shell,
asked about at once, with the watch (inotify) and without it (a sweep per question). An
answer says `complete` only when it is what the compiler's index of the files as they are now
says (docs/tools.md, "Freshness"); sites are checked by hand against the files written here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.conftest import CANARY, build_package, swift_executable
from xcindex.engine import Engine, EngineConfig

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

CORE = Path("Sources/CanaryCore")


@pytest.fixture(scope="module")
def built_copy(canary_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("transitions") / "SwiftCanary"
    shutil.copytree(CANARY, root, symlinks=True, ignore=shutil.ignore_patterns("ModuleCache", ".swiftpm"))
    build_package(root)
    return root


@pytest.fixture(params=[True, False], ids=["watch", "sweep"])
def watch(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def scratch(built_copy: Path) -> Iterator[list[Path]]:
    """Files a test creates (removed after it), and files it changes (put back after it)."""
    created: list[Path] = []
    before = {
        path: path.read_bytes()
        for top in ("Sources", "Tests")
        for path in (built_copy / top).rglob("*.swift")
    }
    yield created
    for path in created:
        path.unlink(missing_ok=True)
    for path, data in before.items():
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


def config(tmp_path: Path, watch: bool) -> EngineConfig:
    return EngineConfig(project_dir=str(tmp_path), watch=watch)


Sites = frozenset[tuple[str, int, int]]


def sites(answer: object) -> set[tuple[str, int, int]]:
    return {(s.occurrence.path, s.occurrence.line, s.occurrence.column) for s in answer.sites}  # type: ignore[attr-defined]


async def test_a_new_file_is_found_and_its_references_count(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    project = str(built_copy)
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        assert str(before.freshness.completeness) == "complete"
        new = built_copy / CORE / "NewThing.swift"
        scratch.append(new)
        new.write_text("public struct NewThing {\n    public var service: UserService?\n}\n")
        found = await engine.find_symbol("NewThing", project_path=project)
        assert [(m.symbol.name, m.definition and m.definition.line) for m in found.matches] == [
            ("NewThing", 1)
        ]
        assert str(found.freshness.completeness) == "complete"
        after = await engine.find_references("UserService", project_path=project)
        assert sites(after) - sites(before) == {(str(new), 2, 25)}
        assert str(after.freshness.completeness) == "complete"
        status = await engine.status(project_path=project)
        assert status.new_files == ()
        assert str(status.completeness) == "complete", status.summary()


async def test_a_call_written_from_a_shell_in_a_file_no_answer_named_counts_at_once(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    project = str(built_copy)
    ticket = built_copy / CORE / "Ticket.swift"
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        assert not any(path == str(ticket) for path, _, _ in sites(before))
        lines = ticket.read_text().splitlines()
        ticket.write_text("\n".join([*lines, "", "func makeService() -> UserService? { nil }", ""]))
        after = await engine.find_references("UserService", project_path=project)
        assert sites(after) - sites(before) == {(str(ticket), len(lines) + 2, 23)}
        assert str(after.freshness.completeness) == "complete"
        assert str(ticket) in after.freshness.overlay_files


async def test_an_edit_put_back_with_its_old_time_stops_counting_at_once(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    # `cp -p`, `touch -r` or an undo that keeps times: the file is older than what the
    # overlay compiled from it, yet not newer than the build. The overlay's sites go.
    project = str(built_copy)
    ticket = built_copy / CORE / "Ticket.swift"
    original = ticket.read_text()
    times = ticket.stat()
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        ticket.write_text(original + "\nfunc makeService() -> UserService? { nil }\n")
        edited = await engine.find_references("UserService", project_path=project)
        assert len(sites(edited) - sites(before)) == 1
        ticket.write_text(original)
        os.utime(ticket, ns=(times.st_atime_ns, times.st_mtime_ns))
        after = await engine.find_references("UserService", project_path=project)
        assert sites(after) == sites(before)
        assert str(after.freshness.completeness) == "complete"


async def test_a_file_written_back_as_it_was_indexed_is_current_again_without_a_build(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    # `git checkout -- F`, `git stash pop` of nothing, an undo: the file is written again,
    # later than its unit, with the content its unit indexed. Nothing is stale then, and the
    # overlay compiles nothing for it. The same size with one letter changed stays stale.
    project = str(built_copy)
    ticket = built_copy / CORE / "Ticket.swift"
    original = ticket.read_bytes()
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        assert str((await engine.status(project_path=project)).completeness) == "complete"
        ticket.write_bytes(original + b"\n// an edit\n")
        edited = await engine.status(project_path=project)
        assert str(ticket) in edited.stale_files
        ticket.write_bytes(original)  # what `git checkout -- Ticket.swift` writes, at a new time
        assert ticket.stat().st_mtime_ns > os.stat(sorted(built_copy.rglob("*.swiftmodule"))[0]).st_mtime_ns
        status = await engine.status(project_path=project)
        assert (str(status.completeness), status.stale_files) == ("complete", ())
        after = await engine.find_references("UserService", project_path=project)
        assert sites(after) == sites(before)
        assert str(after.freshness.completeness) == "complete"
        assert str(ticket) not in after.freshness.overlay_files

        swapped = original.replace(b"Ticket", b"Tickex", 1)
        assert len(swapped) == len(original)
        assert swapped != original
        ticket.write_bytes(swapped)
        status = await engine.status(project_path=project)
        assert str(ticket) in status.stale_files


async def test_callers_of_a_changed_signature_that_still_compile_move_to_the_new_declaration(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    # A defaulted parameter added: every call site, unchanged, now calls another function
    # (a new USR). No answer may say `complete` with the calls still on the old one.
    project = str(built_copy)
    service = built_copy / CORE / "UserService.swift"
    calls = {
        (str(built_copy / CORE / "AppDelegate.swift"), 13, 47),  # UTF-8 columns: "👋" is 4 bytes
        (str(built_copy / "Sources/CanaryFeatures/ProfileFeature.swift"), 13, 28),
        (str(built_copy / "Tests/CanaryCoreTests/FeatureTests.swift"), 7, 24),
        (str(built_copy / "Tests/CanaryCoreTests/UserServiceTests.swift"), 14, 32),
        (str(built_copy / "Tests/CanaryCoreTests/UserServiceTests.swift"), 15, 30),
    }
    declared = (str(service), 8, 17)

    async def settled(name: str, other: str | None = None) -> tuple[set[Sites], set[Sites]]:
        """The sites of `name` (and of the USR `other`) once both answers say `complete`;
        every `complete` answer on the way is returned for checking."""
        deadline = anyio.current_time() + 15
        seen: tuple[set[Sites], set[Sites]] = (set(), set())
        while True:
            found = await engine.find_symbol(name, project_path=project)
            assert found.resolved is not None
            usr = found.resolved.symbol.usr
            answers = [await engine.find_references(usr=usr, project_path=project)]
            if other is not None:
                answers.append(await engine.find_references(usr=other, project_path=project))
            done = True
            for kept, answer in zip(seen, answers, strict=False):
                if str(answer.freshness.completeness) == "complete":
                    kept.add(frozenset(sites(answer)))
                else:
                    done = False
            if done:
                return seen
            assert anyio.current_time() < deadline, [a.freshness for a in answers]
            await anyio.sleep(0.2)

    async with Engine(config(tmp_path, watch)) as engine:
        before, _ = await settled("UserService.fetchUser(id:)")
        assert before == {frozenset({*calls, declared})}
        old = await engine.find_symbol("UserService.fetchUser(id:)", project_path=project)
        assert old.resolved is not None
        text = service.read_text()
        service.write_text(
            text.replace("func fetchUser(id: Int)", "func fetchUser(id: Int, cached: Bool = false)")
        )
        now, gone = await settled("UserService.fetchUser(id:cached:)", old.resolved.symbol.usr)
        assert now == {frozenset({*calls, declared})}
        assert gone == {frozenset()}


async def test_a_file_moved_with_its_time_kept_still_declares_what_it_declared(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    # `git mv` (a rename keeps the file's time, older than the build): its declarations must
    # be found at the new path, not vanish from a `complete` answer.
    project = str(built_copy)
    ticket = built_copy / CORE / "Ticket.swift"
    moved = built_copy / CORE / "TicketMoved.swift"
    line = ticket.read_text().splitlines().index("public struct Ticket: Hashable {") + 1
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_symbol("Ticket", project_path=project)
        assert [(m.definition and m.definition.path) for m in before.matches] == [str(ticket)]
        scratch.append(moved)
        try:
            ticket.rename(moved)
            deadline = anyio.current_time() + 15
            while True:
                found = await engine.find_symbol("Ticket", project_path=project)
                if str(found.freshness.completeness) == "complete":
                    break
                assert anyio.current_time() < deadline, found.freshness
                await anyio.sleep(0.2)
            assert [(m.definition and (m.definition.path, m.definition.line)) for m in found.matches] == [
                (str(moved), line)
            ]
        finally:
            if moved.exists():
                moved.rename(ticket)


async def test_a_new_overload_takes_the_calls_it_matches_better(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    # `xcPick(_: Int)` written beside `xcPick(_: Any)`: the unchanged call `xcPick(1)` now
    # calls the new one. No answer may say `complete` with it still on the old one.
    project = str(built_copy)
    loose, call, tight = (built_copy / CORE / f"{n}.swift" for n in ("PickAny", "PickCall", "PickInt"))
    scratch.extend([loose, call, tight])
    loose.write_text("public func xcPick(_ value: Any) -> Int { 1 }\n")
    call.write_text("func xcPickOne() -> Int {\n    xcPick(1)\n}\n")

    seen: list[object] = []

    async def sites_of(defined_in: Path) -> set[tuple[str, int, int]] | None:
        """The sites of the xcPick declared in `defined_in`, once the answer is complete."""
        found = await engine.find_symbol("xcPick(_:)", project_path=project)
        usrs = [m.symbol.usr for m in found.matches if m.definition and m.definition.path == str(defined_in)]
        seen[:] = [found.freshness, [(m.symbol.usr, m.definition) for m in found.matches]]
        if len(usrs) != 1 or str(found.freshness.completeness) != "complete":
            return None
        answer = await engine.find_references(usr=usrs[0], project_path=project)
        seen[:] = [answer.freshness, sites(answer)]
        return sites(answer) if str(answer.freshness.completeness) == "complete" else None

    async def settled(defined_in: Path) -> set[tuple[str, int, int]]:
        deadline = anyio.current_time() + 15
        while (found := await sites_of(defined_in)) is None:
            assert anyio.current_time() < deadline, seen
            await anyio.sleep(0.2)
        return found

    async with Engine(config(tmp_path, watch)) as engine:
        assert await settled(loose) == {(str(loose), 1, 13), (str(call), 2, 5)}
        tight.write_text("public func xcPick(_ value: Int) -> Int { 2 }\n")
        assert await settled(tight) == {(str(tight), 1, 13), (str(call), 2, 5)}
        assert await settled(loose) == {(str(loose), 1, 13)}


async def test_a_deleted_file_stops_counting_at_once(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    """A file the last build indexed, then deleted from a shell: its sites go."""
    project = str(built_copy)
    doomed = built_copy / CORE / "Doomed.swift"
    scratch.append(doomed)
    doomed.write_text("func doomedService() -> UserService? { nil }\n")
    build_package(built_copy)
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        assert (str(doomed), 1, 25) in sites(before)
        assert str(before.freshness.completeness) == "complete"
        doomed.unlink()
        after = await engine.find_references("UserService", project_path=project)
        assert sites(before) - sites(after) == {(str(doomed), 1, 25)}
        assert str(after.freshness.completeness) == "complete"
        gone = await engine.find_symbol("doomedService", project_path=project)
        assert gone.matches == ()
    build_package(built_copy)


async def test_a_new_file_outside_every_target_is_named_and_never_counted(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    project = str(built_copy)
    stray = built_copy / "Sources" / "Stray.swift"
    scratch.append(stray)
    async with Engine(config(tmp_path, watch)) as engine:
        await engine.settle(project_path=project)
        stray.write_text("struct Stray { var service: UserService? }\n")
        found = await engine.find_symbol("Stray", project_path=project)
        assert found.matches == ()
        codes = [(str(w.code), w.message) for w in found.freshness.warnings]
        assert [code for code, _ in codes] == ["file_outside_targets"]
        assert str(stray) in codes[0][1]
        # SwiftPM compiles it into no module: the answer is what a build gives.
        assert str(found.freshness.completeness) == "complete"


async def test_an_edit_that_does_not_compile_makes_every_answer_stale_naming_it(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    project = str(built_copy)
    box = built_copy / CORE / "Box.swift"
    async with Engine(config(tmp_path, watch)) as engine:
        await engine.settle(project_path=project)
        box.write_text(box.read_text() + "\nfunc broken( {\n")
        answer = await engine.find_references("UserService", project_path=project)
        assert str(answer.freshness.completeness) == "stale"
        assert str(box) in answer.freshness.stale_files
        assert "overlay_failed" in [str(w.code) for w in answer.freshness.warnings]


def test_the_cli_finds_a_new_file_with_no_server_running(
    built_copy: Path, scratch: list[Path], tmp_path: Path
) -> None:
    xcindex = Path(__import__("sys").executable).parent / "xcindex"
    new = built_copy / CORE / "CliThing.swift"
    scratch.append(new)
    new.write_text("public struct CliThing {}\n")
    result = subprocess.run(
        [str(xcindex), "symbol", "CliThing", "--project", str(built_copy), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert '"name": "CliThing"' in result.stdout
    assert '"completeness": "complete"' in result.stdout


def test_the_cli_says_a_file_written_back_as_it_was_indexed_is_current(
    built_copy: Path, scratch: list[Path], tmp_path: Path
) -> None:
    # One-shot CLI calls, no server between them to re-index anything: the second status
    # sees the edit, the third the file written back with its indexed content.
    xcindex = Path(__import__("sys").executable).parent / "xcindex"
    service = built_copy / CORE / "UserService.swift"
    original = service.read_bytes()

    def status() -> str:
        result = subprocess.run(
            [str(xcindex), "status", "--project", str(built_copy), "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def session_start() -> str:
        # What the plugin's session-start hook tells the agent about this project.
        env = {k: v for k, v in os.environ.items() if k != "CLAUDE_TOOL_INPUT"}
        result = subprocess.run(
            [str(xcindex), "hook", "session-start"],
            input=b'{"hook_event_name": "SessionStart", "source": "startup"}',
            capture_output=True,
            env={**env, "CLAUDE_PROJECT_DIR": str(built_copy), "TMPDIR": f"{tmp_path}/"},
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.decode()

    def doctor_freshness() -> str:
        result = subprocess.run(
            [str(xcindex), "doctor", "--project", str(built_copy)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return result.stdout.split("== Freshness ==", 1)[1].split("==", 1)[0]

    assert '"completeness": "complete"' in status()
    assert "Index is current" in session_start()
    assert "[ OK ] No Swift files newer than the index." in doctor_freshness()
    service.write_bytes(original + b"\n// an edit\n")
    assert f'"{service}"' in status()
    assert "1 Swift file(s) newer than the index" in session_start()
    assert "[FAIL] 1 Swift file(s) newer than the index: Sources/CanaryCore/UserService.swift" in (
        doctor_freshness()
    )
    service.write_bytes(original)
    restored = status()
    assert '"completeness": "complete"' in restored
    assert f'"{service}"' not in restored
    assert "Index is current" in session_start()
    assert "[ OK ] No Swift files newer than the index." in doctor_freshness()


async def test_a_file_using_a_deleted_declaration_is_stale_until_it_compiles_again(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    """Deleting a file whose declaration another file uses: the user no longer compiles
    (the build would fail), so an answer naming it is not `complete`; once the user is
    fixed, answers are complete again."""
    project = str(built_copy)
    provider = built_copy / CORE / "Provider.swift"
    user = built_copy / CORE / "ProviderUser.swift"
    scratch.extend([provider, user])
    provider.write_text("func provided() -> UserService? { nil }\n")
    user.write_text("func useProvided() -> UserService? { provided() }\n")
    build_package(built_copy)
    async with Engine(config(tmp_path, watch)) as engine:
        before = await engine.find_references("UserService", project_path=project)
        assert {(str(provider), 1, 20), (str(user), 1, 23)} <= sites(before)
        provider.unlink()
        after = await engine.find_references("UserService", project_path=project)
        assert (str(provider), 1, 20) not in sites(after)
        assert str(after.freshness.completeness) == "stale"
        assert str(user) in after.freshness.stale_files
        assert "overlay_failed" in [str(w.code) for w in after.freshness.warnings]
        user.write_text("func useProvided() -> UserService? { nil }\n")
        fixed = await engine.find_references("UserService", project_path=project)
        assert str(fixed.freshness.completeness) == "complete"
        assert (str(user), 1, 23) in sites(fixed)
    for path in (provider, user):
        path.unlink(missing_ok=True)
    build_package(built_copy)


async def test_wait_for_fresh_returns_fresh_for_a_new_file_without_a_build(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    project = str(built_copy)
    new = built_copy / CORE / "WaitedThing.swift"
    scratch.append(new)
    async with Engine(config(tmp_path, watch)) as engine:
        await engine.settle(project_path=project)
        new.write_text("public struct WaitedThing {}\n")
        waited = await engine.wait_for_fresh([str(new)], project_path=project, timeout_s=30)
        assert waited.fresh, waited.to_json()
        assert [str(f.state) for f in waited.files] == ["fresh"]


async def test_a_declaration_added_to_a_library_and_called_from_its_tests_is_fresh_without_a_build(
    built_copy: Path, scratch: list[Path], tmp_path: Path, watch: bool
) -> None:
    """The call is in another module (the tests): it compiles only against the library as it
    is now, which the overlay emits for it (the build's module does not have the function)."""
    project = str(built_copy)
    library = built_copy / CORE / "Box.swift"
    tests = built_copy / "Tests" / "CanaryCoreTests" / "TicketTests.swift"
    async with Engine(config(tmp_path, watch)) as engine:
        await engine.settle(project_path=project)
        library.write_text(library.read_text() + "\npublic func freshlyAdded() -> Int { 1 }\n")
        lines = tests.read_text().splitlines()
        tests.write_text("\n".join([*lines, "", "func callsTheNewOne() -> Int { freshlyAdded() }", ""]))
        first = await engine.find_references("freshlyAdded()", project_path=project)
        if str(first.freshness.completeness) == "complete":  # in time: it must be the truth
            assert (str(tests), len(lines) + 2, 32) in sites(first)
        waited = await engine.wait_for_fresh([str(library), str(tests)], project_path=project, timeout_s=60)
        assert waited.fresh, waited.to_json()
        found = await engine.find_references("freshlyAdded()", project_path=project)
        assert str(found.freshness.completeness) == "complete", [
            (str(w.code), w.message[:300]) for w in found.freshness.warnings
        ]
        assert (str(tests), len(lines) + 2, 32) in sites(found)


async def test_a_package_copied_with_its_build_answers_about_the_copy_only(
    built_copy: Path, tmp_path: Path
) -> None:
    """The copy's store still holds the original's units (they name the original's files,
    which exist): an answer about the copy must not list the other folder's sites, and a
    declaration renamed in the copy is not "still declared" by the original's file."""
    project = str(built_copy)
    async with Engine(config(tmp_path, True)) as engine:
        found = await engine.find_references("displayName", project_path=project)
        paths = {s.occurrence.path for s in found.sites}
        assert paths, "displayName has sites in the fixture"
        assert all(path.startswith(project + "/") for path in paths), sorted(paths - {project})
        assert (str(built_copy / CORE / "UserRepository.swift"), 13, 29) in sites(found)


@pytest.fixture(scope="module")
def built_without_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture built as `swift build` builds it: its test targets planned, not compiled."""
    root = tmp_path_factory.mktemp("no-tests") / "SwiftCanary"
    shutil.copytree(CANARY, root, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    subprocess.run(
        [swift_executable(), "build", "--package-path", str(root)], check=True, capture_output=True
    )
    return root


def golden_sites(name: str) -> set[tuple[str, int, int]]:
    """The hand-checked sites of tests/integration/golden/<name>.txt, relative."""
    text = (Path(__file__).parent / "golden" / f"{name}.txt").read_text(encoding="utf-8")
    found: set[tuple[str, int, int]] = set()
    path = ""
    for line in text.splitlines()[1:]:
        if line and not line.startswith(" "):
            path = line
        elif match := re.match(r"\s+(\d+):(\d+)\s", line):
            found.add((path, int(match[1]), int(match[2])))
    return found


async def test_a_package_built_without_its_tests_counts_their_files_before_it_says_complete(
    built_without_tests: Path, tmp_path: Path, watch: bool
) -> None:
    # `swift build` alone plans the test targets and compiles none of them: their files have
    # no unit. An answer without their sites must not say `complete`.
    project = str(built_without_tests)
    truth = golden_sites("refs_UserService")
    assert any(path.startswith("Tests/") for path, _, _ in truth)
    async with Engine(config(tmp_path, watch)) as engine:
        deadline = anyio.current_time() + 60
        while True:
            answer = await engine.find_references("UserService", project_path=project)
            relative = {
                (str(Path(p).relative_to(built_without_tests)), line, col) for p, line, col in sites(answer)
            }
            if str(answer.freshness.completeness) == "complete":
                assert relative == truth
                break
            assert anyio.current_time() < deadline, answer.freshness
            await anyio.sleep(0.5)


async def test_change_impact_names_a_new_file_outside_every_target_and_does_not_wait_for_it(
    built_copy: Path, scratch: list[Path]
) -> None:
    # A new-user trial: an untracked Swift file no target compiles (swift-log's
    # Package@swift-6.1.swift, a snippet) made every change_impact answer `stale` for ever
    # ("rebuild before trusting"), while status said complete: no build ever indexes it.
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(built_copy)]
    if not (built_copy / ".git").exists():
        for command in (
            ["init", "-q"],
            ["add", "Package.swift", "Sources", "Tests"],
            ["commit", "-qm", "base"],
        ):
            await anyio.run_process([*git, *command])
    snippet = built_copy / "Snippets" / "Demo.swift"  # a snippet target: built, never indexed
    script = built_copy / "Scripts" / "Generate.swift"  # in no target's folder
    for path in (snippet, script):
        path.parent.mkdir(exist_ok=True)
        path.write_text("let demo = 1\n", encoding="utf-8")
        scratch.append(path)
    try:
        async with Engine() as engine:
            answer = await engine.change_impact(project_path=str(built_copy))
    finally:
        shutil.rmtree(built_copy / ".git")
        for path in (snippet, script):
            shutil.rmtree(path.parent, ignore_errors=True)
    changed = {str(Path(p).resolve()) for p in answer.changed_files}
    assert {str(snippet.resolve()), str(script.resolve())} <= changed, changed
    assert answer.freshness.stale_files == (), answer.freshness.stale_files
    assert answer.to_json()["completeness"] == "complete"
