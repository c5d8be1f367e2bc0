"""Every sourcekit-lsp fault → its documented warning code, with real child processes.

The child is tests/faults/fake_lsp.py (a scripted fake, not sourcekit-lsp). After each
fault the test checks the process table: a child that had to go is gone, a child that had
to stay (a timeout, an error response) still answers.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from pathlib import Path
from types import TracebackType

import anyio
import pytest

from tests.ownership import record_writes
from xcindex.actors.lsp import LspPool
from xcindex.actors.lsp_child import LspActor
from xcindex.errors import CodedError
from xcindex.lsp.config import LspPoolConfig
from xcindex.lsp.snapshot import ChildState, LspChildStatus
from xcindex.vocabulary import WarningCode

pytestmark = pytest.mark.anyio

FAKE_LSP = Path(__file__).resolve().with_name("fake_lsp.py")
DEMO = Path("Sources/Demo/Demo.swift")
FETCH_LINE, FETCH_UTF8, FETCH_UTF16 = 3, 49, 42


def fake_config(mode: str, *flags: str, **overrides: float) -> LspPoolConfig:
    settings: dict[str, float] = {
        "initialize_timeout": 5.0,
        "request_timeout": 5.0,
        "ready_timeout": 5.0,
        "backoff_initial": 0.01,
        "backoff_max": 0.5,
        "exit_timeout": 1.0,
        "terminate_timeout": 0.5,
    }
    settings.update(overrides)
    return LspPoolConfig(
        binary=Path(sys.executable),
        arguments=(str(FAKE_LSP), "--mode", mode, *flags),
        **settings,  # type: ignore[arg-type]
    )


class RunningPool:
    """An LspPool running in its own task group for the duration of an `async with`."""

    def __init__(self, config: LspPoolConfig) -> None:
        self.pool = LspPool(config)
        self._tg = anyio.create_task_group()

    async def __aenter__(self) -> LspPool:
        await self._tg.__aenter__()
        await self._tg.start(self.pool.run)
        return self.pool

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.pool.aclose()
        return await self._tg.__aexit__(kind, error, tb)


def process_alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] not in ("Z", "X")  # a zombie nobody reaps is gone for our purposes


async def wait_gone(pids: list[int], timeout: float = 5.0) -> None:
    """Wait (on pidfds, no polling) until none of `pids` runs any more.

    A helper killed with the child's session is not our child: the kernel delivers SIGKILL
    asynchronously and nobody here can wait() for it.
    """
    for pid in pids:
        try:
            descriptor = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            with anyio.fail_after(timeout):
                await anyio.wait_readable(descriptor)
        finally:
            os.close(descriptor)


def started_pids(pool: LspPool, root: Path) -> list[int]:
    return [
        int(match) for line in pool.recent_log(root, 500) for match in re.findall(r"^started pid (\d+)", line)
    ]


def helper_pids(pool: LspPool, root: Path) -> list[int]:
    return [
        int(match) for line in pool.recent_log(root, 500) for match in re.findall(r"helper pid (\d+)", line)
    ]


def not_executable_copy(source: Path, destination: Path) -> Path:
    shutil.copy(source, destination)
    destination.chmod(0o644)
    return destination


def status_of(pool: LspPool, root: Path) -> LspChildStatus:
    [status] = [status for status in pool.status() if status.root == root]
    return status


async def fails_with(code: WarningCode, call: object) -> CodedError:
    assert callable(call)
    with pytest.raises(CodedError) as caught:
        await call()
    assert caught.value.code is code, caught.value.message
    return caught.value


@pytest.mark.parametrize(
    "columns", [(), ("--utf16-columns",)], ids=["utf8-like-sourcekit-lsp", "utf16-per-spec"]
)
async def test_answers_carry_both_column_conventions_computed_from_the_real_text(
    workspace: Path, columns: tuple[str, ...]
) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("normal", *columns)) as pool:
        [reference] = await pool.references(workspace, source, FETCH_LINE, FETCH_UTF8)
        # The fake echoes the asked position (and 3 characters more as the end), with
        # `character` in UTF-8 bytes like sourcekit-lsp's index answers, or per the spec.
        assert reference.path == source
        assert (reference.line, reference.end_line) == (FETCH_LINE, FETCH_LINE)
        assert (reference.utf16_start_column, reference.utf16_end_column) == (FETCH_UTF16, FETCH_UTF16 + 3)
        assert (reference.utf8_start_column, reference.utf8_end_column) == (FETCH_UTF8, FETCH_UTF8 + 3)
        [definition] = await pool.definition(workspace, source, FETCH_LINE, FETCH_UTF8)
        assert definition == reference, "a LocationLink answer reads like a Location"
        assert await pool.symbol_info(workspace, source, FETCH_LINE, FETCH_UTF8) == ["s:4Fake5thingyyF"]
        await pool.wait_ready(workspace)
        status = status_of(pool, workspace)
        assert (status.state, status.ready, status.restarts, status.last_error) == (
            ChildState.RUNNING,
            True,
            0,
            None,
        )
        assert status.pid is not None
        assert process_alive(status.pid)
        log = pool.recent_log(workspace, 100)
        assert sum("didOpen" in line for line in log) == 1, "the file is opened once, not per query"
    assert not process_alive(status.pid)
    assert status_of(pool, workspace).state is ChildState.STOPPED


async def test_a_file_changed_on_disk_is_sent_again_before_the_next_query(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("normal")) as pool:
        await pool.references(workspace, source, FETCH_LINE, FETCH_UTF8)
        source.write_text("// edited\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
        [moved] = await pool.references(workspace, source, FETCH_LINE + 1, FETCH_UTF8)
        assert (moved.line, moved.utf8_start_column, moved.utf16_start_column) == (
            FETCH_LINE + 1,
            FETCH_UTF8,
            FETCH_UTF16,
        )
        await pool.references(workspace, source, FETCH_LINE + 1, FETCH_UTF8)
        log = pool.recent_log(workspace, 100)
    assert sum("didOpen" in line for line in log) == 1
    assert [line for line in log if "didChange" in line] == [
        f"[window/logMessage 4] fake: textDocument/didChange {source.as_uri()} v2"
    ]


async def test_a_hang_in_initialize_is_a_launch_failure_and_leaves_no_process(workspace: Path) -> None:
    async with RunningPool(fake_config("hang-initialize", initialize_timeout=1.0)) as pool:
        error = await fails_with(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, lambda: pool.wait_ready(workspace))
        assert "no answer to initialize within 1 s" in error.message
        [pid] = started_pids(pool, workspace)
        assert not process_alive(pid)
        assert status_of(pool, workspace).state is ChildState.CRASHED


async def test_a_child_that_ignores_sigterm_and_end_of_input_is_killed(workspace: Path) -> None:
    config = fake_config("hang-initialize", "--ignore-sigterm", "--ignore-eof", initialize_timeout=1.0)
    async with RunningPool(config) as pool:
        await fails_with(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, lambda: pool.wait_ready(workspace))
        [pid] = started_pids(pool, workspace)
        assert not process_alive(pid)
        log = "\n".join(pool.recent_log(workspace, 100))
        assert "SIGTERM to it and its helpers" in log
        assert "SIGKILL to it and its helpers" in log


async def test_a_request_timeout_cancels_the_request_and_keeps_the_child(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("hang-references", request_timeout=1.0)) as pool:
        error = await fails_with(
            WarningCode.SOURCEKIT_LSP_TIMEOUT,
            lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
        )
        assert "no answer within 1 s" in error.message
        [pid] = started_pids(pool, workspace)
        assert process_alive(pid)
        assert [reference.line for reference in await pool.definition(workspace, source, 3, 5)] == [3]
        assert started_pids(pool, workspace) == [pid]
        assert any("fake: $/cancelRequest id" in line for line in pool.recent_log(workspace, 100))
        status = status_of(pool, workspace)
        assert (status.state, status.crashes) == (ChildState.RUNNING, 0)


async def test_an_exit_mid_request_is_process_terminated_and_the_next_use_restarts(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("exit-mid-request")) as pool:
        await fails_with(
            WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED,
            lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
        )
        [first] = started_pids(pool, workspace)
        # The next use waits for the dead child to be cleaned up, then starts another one.
        assert len(await pool.definition(workspace, source, FETCH_LINE, FETCH_UTF8)) == 1
        [second] = started_pids(pool, workspace)
        assert second != first
        assert not process_alive(first)
        status = status_of(pool, workspace)
        assert (status.state, status.pid, status.restarts, status.crashes, status.last_error) == (
            ChildState.RUNNING,
            second,
            1,
            1,
            WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED,
        )


async def test_a_malformed_frame_is_a_protocol_error_and_the_child_is_stopped(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("malformed-frame")) as pool:
        await fails_with(
            WarningCode.SOURCEKIT_LSP_PROTOCOL_ERROR,
            lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
        )
        [pid] = started_pids(pool, workspace)
        # The stream cannot be trusted after a bad frame: the child is stopped, then restarted.
        assert len(await pool.definition(workspace, source, FETCH_LINE, FETCH_UTF8)) == 1
        assert not process_alive(pid)
        assert started_pids(pool, workspace) != [pid]


async def test_an_error_response_is_a_protocol_error_and_the_child_is_kept(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("error-response")) as pool:
        error = await fails_with(
            WarningCode.SOURCEKIT_LSP_PROTOCOL_ERROR,
            lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
        )
        assert "-32001" in error.message
        assert "the fake refuses" in error.message
        [pid] = started_pids(pool, workspace)
        assert process_alive(pid)
        assert len(await pool.definition(workspace, source, FETCH_LINE, FETCH_UTF8)) == 1
        assert started_pids(pool, workspace) == [pid]


async def test_a_child_that_crashes_on_every_start_is_given_up(workspace: Path) -> None:
    pids: list[int] = []
    async with RunningPool(fake_config("crash-on-start", backoff_max=60)) as pool:
        for _ in range(5):
            error = await fails_with(
                WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, lambda: pool.wait_ready(workspace)
            )
            assert "exit status 1" in error.message
            pids.extend(started_pids(pool, workspace))
        error = await fails_with(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, lambda: pool.wait_ready(workspace))
        assert re.search(r"gave up after 5 crashes, retrying after (59|60) s", error.message)
        assert status_of(pool, workspace).state is ChildState.GAVE_UP
    assert len(set(pids)) == 5
    assert not any(process_alive(pid) for pid in pids)


async def test_requests_from_the_server_are_answered_and_its_notifications_kept(workspace: Path) -> None:
    source = workspace / DEMO
    async with RunningPool(fake_config("server-requests")) as pool:
        # The fake checks our answers to its four requests and refuses the query otherwise.
        assert len(await pool.references(workspace, source, FETCH_LINE, FETCH_UTF8)) == 1
        [progress] = status_of(pool, workspace).indexing
        assert (progress.title, progress.message, progress.percentage) == ("Indexing", "1 / 2", 50)
        assert "[window/showMessage 3] fake: shown to the user" in pool.recent_log(workspace, 100)


async def test_the_newer_synchronize_spelling_is_tried_when_the_older_is_missing(workspace: Path) -> None:
    async with RunningPool(fake_config("new-spelling")) as pool:
        await pool.wait_ready(workspace)
        await pool.wait_ready(workspace)
        assert status_of(pool, workspace).ready


async def test_an_unreadable_file_is_lsp_file_read_failed_and_the_child_is_kept(workspace: Path) -> None:
    (workspace / "latin1.swift").write_bytes(b"let caf\xe9 = 1\n")
    async with RunningPool(fake_config("normal")) as pool:
        for name in ("missing.swift", "latin1.swift"):
            await fails_with(
                WarningCode.LSP_FILE_READ_FAILED,
                lambda name=name: pool.references(workspace, workspace / name, 1, 1),
            )
        [pid] = started_pids(pool, workspace)
        assert process_alive(pid)
        assert status_of(pool, workspace).crashes == 0


@pytest.mark.parametrize(
    ("make_binary", "code"),
    [
        pytest.param(lambda folder: folder / "absent", WarningCode.SOURCEKIT_LSP_NOT_FOUND, id="missing"),
        pytest.param(
            lambda folder: not_executable_copy(FAKE_LSP, folder / "not-executable"),
            WarningCode.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE,
            id="not-executable",
        ),
    ],
)
async def test_sourcekit_lsp_path_faults(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_binary: object, code: WarningCode
) -> None:
    assert callable(make_binary)
    binary = Path(make_binary(tmp_path))
    monkeypatch.setenv("SOURCEKIT_LSP_PATH", str(binary))
    async with RunningPool(LspPoolConfig()) as pool:
        error = await fails_with(code, lambda: pool.wait_ready(workspace))
        assert str(binary) in error.message
        assert pool.recent_log(workspace, 10) == []


async def test_a_binary_that_cannot_be_executed_is_a_launch_failure(workspace: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "sourcekit-lsp"
    garbage.write_bytes(b"\x00\x01 not a program")
    garbage.chmod(0o755)
    async with RunningPool(LspPoolConfig(binary=garbage)) as pool:
        error = await fails_with(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, lambda: pool.wait_ready(workspace))
        assert "could not launch" in error.message
        assert status_of(pool, workspace).state is ChildState.CRASHED


async def test_sourcekit_lsp_path_names_the_binary_to_run(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = Path(shutil.copy(FAKE_LSP, tmp_path / "sourcekit-lsp"))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SOURCEKIT_LSP_PATH", str(binary))
    monkeypatch.setenv("FAKE_LSP_MODE", "normal")
    async with RunningPool(LspPoolConfig(initialize_timeout=5.0)) as pool:
        await pool.wait_ready(workspace)
        assert any(
            line.startswith(f"started pid {status_of(pool, workspace).pid}: {binary}")
            for line in pool.recent_log(workspace, 10)
        )


async def test_cancelling_the_pool_kills_every_child_and_its_helpers(tmp_path: Path) -> None:
    roots = []
    for name in ("one", "two"):
        root = (tmp_path / name).resolve()
        root.mkdir()
        roots.append(root)
    pool = LspPool(fake_config("normal", "--spawn-helper"))
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        for root in roots:
            await pool.wait_ready(root)
        pids = [pid for root in roots for pid in (*started_pids(pool, root), *helper_pids(pool, root))]
        assert len(pids) == 4
        assert all(process_alive(pid) for pid in pids)
        for root in roots:
            [child] = started_pids(pool, root)
            [helper] = helper_pids(pool, root)
            # Like swiftc under sourcekit-lsp: another process group, the same session.
            assert (os.getsid(child), os.getpgid(child)) == (child, child)
            assert (os.getsid(helper), os.getpgid(helper)) == (child, helper)
        tg.cancel_scope.cancel()  # what a server does on stdin EOF, SIGINT or SIGTERM
    children = [pid for root in roots for pid in started_pids(pool, root)]
    assert not any(process_alive(pid) for pid in children), "children are reaped before the pool returns"
    await wait_gone(pids)
    assert {status.state for status in pool.status()} == {ChildState.STOPPED}


async def test_a_child_actor_changes_its_state_in_its_own_task_only(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries answered, one timed out, a child that exited mid-request and its restart,
    stderr lines: every change of a child actor's fields is made by the task running it."""
    source = workspace / DEMO
    with record_writes(monkeypatch, LspActor) as writes:
        async with RunningPool(fake_config("hang-references", request_timeout=0.5)) as pool:
            await pool.wait_ready(workspace)
            await fails_with(
                WarningCode.SOURCEKIT_LSP_TIMEOUT,
                lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
            )
            assert len(await pool.definition(workspace, source, 3, 5)) == 1
        async with RunningPool(fake_config("exit-mid-request")) as pool:
            await fails_with(
                WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED,
                lambda: pool.references(workspace, source, FETCH_LINE, FETCH_UTF8),
            )
            assert len(await pool.definition(workspace, source, FETCH_LINE, FETCH_UTF8)) == 1
    assert writes.counted > 20, f"only {writes.counted} writes were recorded"
    assert not writes.strangers, sorted(set(writes.strangers))
