"""The session ledger's file contract, and the actor that owns the session-edited set."""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcindex.actors.ledger import LedgerActor
from xcindex.errors import ActorGone
from xcindex.project import ledger


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def expected_ledger(tmpdir: str, project: str) -> str:
    """The contract, restated independently of the code under test."""
    digest = hashlib.sha1(project.encode("utf-8")).hexdigest()[:12]
    return f"{tmpdir.removesuffix('/')}/xcindex-edited-{digest}.txt"


# -- the path ----------------------------------------------------------------------------


def test_ledger_path_hashes_the_project_dir_and_trims_one_trailing_slash() -> None:
    env = {"TMPDIR": "/var/folders/xy/T/", "CLAUDE_PROJECT_DIR": "/Users/me/My App"}
    assert str(ledger.ledger_path(environ=env)) == expected_ledger("/var/folders/xy/T", "/Users/me/My App")
    # sha1("/Users/me/My App"), checked by hand: printf "%s" "/Users/me/My App" | sha1sum
    assert os.path.basename(ledger.ledger_path(environ=env)) == "xcindex-edited-3caec08cb60e.txt"


def test_ledger_path_defaults_to_tmp_and_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for env in ({}, {"TMPDIR": "", "CLAUDE_PROJECT_DIR": ""}):
        assert str(ledger.ledger_path(environ=env)) == expected_ledger("/tmp", os.getcwd())


def test_ledger_path_hashes_the_bytes_of_a_non_ascii_project_dir() -> None:
    env = {"TMPDIR": "/t", "CLAUDE_PROJECT_DIR": "/Users/zoë/Prøject"}
    assert str(ledger.ledger_path(environ=env)) == expected_ledger("/t", "/Users/zoë/Prøject")


def test_an_explicit_project_dir_wins_over_the_environment() -> None:
    env = {"TMPDIR": "/t", "CLAUDE_PROJECT_DIR": "/elsewhere"}
    assert str(ledger.ledger_path("/mine", env)) == expected_ledger("/t", "/mine")


def test_tracked_suffixes_are_the_indexed_sources() -> None:
    assert all(ledger.is_tracked(f"/p/a{s}") for s in (".swift", ".m", ".mm", ".h"))
    assert not any(ledger.is_tracked(f"/p/a{s}") for s in (".py", ".md", ".swiftinterface", ".json", ""))


# -- append, read, clear -------------------------------------------------------------------


def test_append_once_read_and_clear(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    assert ledger.read(target) == frozenset()
    assert ledger.append("/p/A.swift", target)
    assert not ledger.append("/p/A.swift", target)
    assert ledger.append("/p/B.m", target)
    assert target.read_bytes() == b"/p/A.swift\n/p/B.m\n"
    assert ledger.read(target) == {"/p/A.swift", "/p/B.m"}
    ledger.clear(target)
    assert target.read_bytes() == b""
    assert ledger.read(target) == frozenset()


def test_paths_compare_by_real_path_but_are_written_as_given(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "A.swift").write_text("")
    (tmp_path / "link").symlink_to(real)
    target = tmp_path / "ledger.txt"
    via_link = str(tmp_path / "link" / "A.swift")
    assert ledger.append(via_link, target)
    assert not ledger.append(str(real / "A.swift"), target)
    assert not ledger.append(str(real / "sub" / ".." / "A.swift"), target)
    assert target.read_text() == via_link + "\n"
    assert ledger.real_paths(ledger.read(target)) == {str((real / "A.swift").resolve())}


def test_append_refuses_what_cannot_be_one_absolute_line(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    for bad in ("relative/A.swift", "/p/two\nlines.swift", "/p/nul\x00.swift"):
        with pytest.raises(ValueError, match="ledger"):
            ledger.append(bad, target)
    assert not target.exists()


def test_an_unterminated_last_line_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    target.write_bytes(b"/p/A.swift")
    assert ledger.append("/p/B.swift", target)
    assert target.read_bytes() == b"/p/A.swift\n/p/B.swift\n"


def test_reads_what_the_original_plugin_wrote(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    target.write_bytes(b"/p/A.swift\n\n/p/B.h\r\n/p/caf\xc3\xa9.swift\n/p/\xff.m\n")
    assert ledger.read(target) == {"/p/A.swift", "/p/B.h", "/p/café.swift", os.fsdecode(b"/p/\xff.m")}
    # A path that is not UTF-8 goes back out byte for byte.
    assert not ledger.append(os.fsdecode(b"/p/\xff.m"), target)


def test_a_symlink_planted_at_the_ledger_path_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "ledger.txt"
    target.symlink_to(victim)
    for operation in (lambda: ledger.append("/p/A.swift", target), lambda: ledger.clear(target)):
        with pytest.raises(OSError, match="symbolic link") as raised:
            operation()
        assert raised.value.errno == errno.ELOOP
    assert victim.read_text() == "precious\n"


def test_concurrent_appends_from_threads_neither_lose_nor_duplicate(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    paths = [f"/p/File{i}.swift" for i in range(25)]
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        for path in paths:
            ledger.append(path, target)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = target.read_text().splitlines()
    assert sorted(lines) == sorted(paths)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["/p/A.swift", "/p/B.swift", "/q/A.swift", "/p/x/../A.swift", "/p/C.h"])))
def test_the_ledger_holds_each_real_path_once_in_first_seen_order(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder, "ledger.txt")
        for path in paths:
            ledger.append(path, target)
        written = target.read_text().splitlines() if target.exists() else []
    first_seen: dict[str, str] = {}
    for path in paths:
        first_seen.setdefault(os.path.normpath(path), path)
    assert written == list(first_seen.values())


# -- the actor -----------------------------------------------------------------------------


def _old(path: Path) -> None:
    """Make the file's modification time safely in the past (outside the racy window)."""
    past = time.time() - 60
    os.utime(path, (past, past))


@pytest.mark.anyio
async def test_actor_merges_the_ledger_file_with_recorded_edits(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "Sources").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(project)
    target = tmp_path / "ledger.txt"
    ledger.append(str(tmp_path / "alias" / "Sources" / "A.swift"), target)
    actor = LedgerActor(str(project), ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        handle = actor.handle()
        await handle.record_edit("Sources/B.swift")
        await handle.record_edit(str(tmp_path / "alias" / "Sources" / "C.swift"))
        edited = await handle.edited_files()
        tg.cancel_scope.cancel()
    real = project.resolve() / "Sources"
    assert edited == {str(real / "A.swift"), str(real / "B.swift"), str(real / "C.swift")}
    # Recorded edits stay in memory: the hooks' file is not theirs to write.
    assert ledger.read(target) == {str(tmp_path / "alias" / "Sources" / "A.swift")}


@pytest.mark.anyio
async def test_actor_rereads_the_file_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "ledger.txt"
    ledger.append("/p/A.swift", target)
    _old(target)
    reads: list[Path] = []
    real_read = ledger.read

    def counting_read(path: Path | None = None) -> frozenset[str]:
        assert path is not None
        reads.append(path)
        return real_read(path)

    monkeypatch.setattr(ledger, "read", counting_read)
    actor = LedgerActor("/p", ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        handle = actor.handle()
        assert await handle.edited_files() == {"/p/A.swift"}
        assert await handle.edited_files() == {"/p/A.swift"}
        assert len(reads) == 1
        ledger.append("/p/B.swift", target)
        _old(target)
        assert await handle.edited_files() == {"/p/A.swift", "/p/B.swift"}
        assert len(reads) == 2
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_actor_does_not_trust_a_cache_of_a_file_written_just_now(tmp_path: Path) -> None:
    """A rewrite with the same size and the same timestamp tick is still seen."""
    target = tmp_path / "ledger.txt"
    target.write_text("/p/A.swift\n")
    stamp = os.stat(target).st_mtime_ns
    actor = LedgerActor("/p", ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        handle = actor.handle()
        assert await handle.edited_files() == {"/p/A.swift"}
        target.write_text("/p/B.swift\n")
        os.utime(target, ns=(stamp, stamp))
        assert await handle.edited_files() == {"/p/B.swift"}
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_clear_forgets_both_sources_and_truncates_the_file(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    ledger.append("/p/A.swift", target)
    actor = LedgerActor("/p", ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        handle = actor.handle()
        await handle.record_edit("/p/B.swift")
        assert await handle.edited_files() == {"/p/A.swift", "/p/B.swift"}
        await handle.clear()
        assert await handle.edited_files() == frozenset()
        assert target.read_bytes() == b""
        ledger.append("/p/C.swift", target)
        assert await handle.edited_files() == {"/p/C.swift"}
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_clear_without_a_ledger_file_creates_none(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    actor = LedgerActor("/p", ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        await actor.handle().clear()
        tg.cancel_scope.cancel()
    assert not target.exists()


@pytest.mark.anyio
async def test_an_unreadable_ledger_does_not_fail_the_question(tmp_path: Path) -> None:
    target = tmp_path / "ledger.txt"
    target.mkdir()  # reading a folder fails with IsADirectoryError
    actor = LedgerActor("/p", ledger_file=target)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        handle = actor.handle()
        await handle.record_edit("/p/A.swift")
        assert await handle.edited_files() == {"/p/A.swift"}
        with pytest.raises(ValueError, match="file path"):
            await handle.record_edit("")
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_the_default_project_is_claude_project_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/Users/me/App")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    from_env = LedgerActor()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    monkeypatch.chdir(tmp_path)
    from_cwd = LedgerActor()
    for actor in (from_env, from_cwd):
        await actor.mailbox.aclose()  # never run: close its inbox by hand
    assert from_env.project_dir == "/Users/me/App"
    assert str(from_env.ledger_file) == expected_ledger(str(tmp_path), "/Users/me/App")
    assert from_cwd.project_dir == os.getcwd()


@pytest.mark.anyio
async def test_a_stopped_actor_says_so(tmp_path: Path) -> None:
    actor = LedgerActor("/p", ledger_file=tmp_path / "ledger.txt")
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        tg.cancel_scope.cancel()
    with pytest.raises(ActorGone):
        await actor.handle().edited_files(timeout=1)
