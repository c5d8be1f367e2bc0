"""Supervision of sourcekit-lsp children, in virtual time.

Children here are in-memory stand-ins (a JSON-RPC peer on memory streams), so that trio's
MockClock with autojump can prove the backoff, the give-up and the idle timeout to the
second without a real sleep. Real processes are exercised in test_lsp_faults.py.
"""

from __future__ import annotations

import itertools
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskGroup
from trio.testing import MockClock

from xcindex.actors.lsp import LspPool
from xcindex.errors import CodedError
from xcindex.lsp.config import LspPoolConfig
from xcindex.lsp.jsonrpc import ErrorCode, JsonRpcConnection, JsonRpcError, JsonValue
from xcindex.lsp.process import LspChild
from xcindex.lsp.snapshot import ChildState, LspChildStatus
from xcindex.vocabulary import WarningCode

pytestmark = pytest.mark.anyio


@pytest.fixture(
    params=[pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio-mockclock")]
)
def anyio_backend(request: pytest.FixtureRequest) -> object:
    return request.param


class MemoryChild:
    """An in-memory stand-in for a sourcekit-lsp process.

    behaviour: "healthy", "crash-on-start" (exits before answering anything) or
    "hang-first-sync" (the first workspace/synchronize never gets an answer).
    """

    def __init__(self, pid: int, behaviour: str) -> None:
        to_child, self._server_in = anyio.create_memory_object_stream[bytes](100)
        self._server_out, from_child = anyio.create_memory_object_stream[bytes](100)
        self.pid = pid
        self.stdin = to_child
        self.stdout = from_child
        self.stderr = None
        self.behaviour = behaviour
        self.status: int | None = None
        self.signals: list[int] = []
        self.synchronize_calls = 0
        self._exited = anyio.Event()
        self._scope = anyio.CancelScope()

    async def serve(self) -> None:
        if self.behaviour == "crash-on-start":
            self.exit(1)
            return
        server = JsonRpcConnection(self._server_in, self._server_out, request_handler=self._answer)
        with self._scope:
            await server.run()
        self.exit(0)

    async def _answer(self, method: str, params: JsonValue) -> JsonValue:
        if method == "initialize":
            return {"capabilities": {}}
        if method == "shutdown":
            return None
        if method == "workspace/synchronize":
            self.synchronize_calls += 1
            if self.behaviour == "hang-first-sync" and self.synchronize_calls == 1:
                await anyio.sleep_forever()
            return {}
        raise JsonRpcError(ErrorCode.METHOD_NOT_FOUND, f"method not found: {method}")

    def exit(self, status: int) -> None:
        """The process ends: its pipes close."""
        if self.status is not None:
            return
        self.status = status
        self._scope.cancel()
        self._server_in.close()
        self._server_out.close()
        self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.status is not None
        return self.status

    def signal_all(self, signum: int) -> None:
        self.signals.append(signum)
        if signum in (signal.SIGTERM, signal.SIGKILL):
            self.exit(-signum)

    async def aclose(self) -> None:
        self.stdin.close()
        self.stdout.close()


class Children:
    """The launcher handed to the pool: starts MemoryChild instances in the test's task group."""

    def __init__(self, tg: TaskGroup, behaviour: str = "healthy") -> None:
        self.tg = tg
        self.behaviour = behaviour
        self.started: list[MemoryChild] = []
        self.launch_times: list[float] = []

    async def __call__(self, command: Sequence[str], cwd: Path) -> LspChild:
        child = MemoryChild(1000 + len(self.started), self.behaviour)
        self.started.append(child)
        self.launch_times.append(anyio.current_time())
        self.tg.start_soon(child.serve)
        return child


def config(**overrides: object) -> LspPoolConfig:
    return LspPoolConfig(binary=Path(sys.executable), **overrides)  # type: ignore[arg-type]


def state_of(pool: LspPool, root: Path) -> LspChildStatus:
    [status] = [status for status in pool.status() if status.root == root]
    return status


async def settle(predicate: Callable[[], bool]) -> None:
    """Let other tasks run (no time passes) until `predicate` holds."""
    for _ in range(10_000):
        if predicate():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("the condition never held")


async def expect_code(code: WarningCode, pool: LspPool, root: Path) -> CodedError:
    with pytest.raises(CodedError) as caught:
        await pool.wait_ready(root)
    assert caught.value.code is code, caught.value.message
    return caught.value


async def test_backoff_doubles_from_one_second_then_gives_up_until_the_backoff_ends(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg, "crash-on-start")
        pool = LspPool(config(), launcher=children)
        await tg.start(pool.run)

        for _ in range(5):
            await expect_code(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, pool, root)
        times = children.launch_times
        assert [round(later - earlier, 6) for earlier, later in itertools.pairwise(times)] == [
            1,
            2,
            4,
            8,
        ]

        before = anyio.current_time()
        error = await expect_code(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, pool, root)
        assert "gave up after 5 crashes, retrying after 30 s" in error.message
        assert anyio.current_time() == before, "giving up must answer at once"
        assert len(children.started) == 5
        status = state_of(pool, root)
        assert status.state is ChildState.GAVE_UP
        assert status.crashes == 5
        assert status.last_error is WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED
        assert status.retry_after == pytest.approx(30)

        await anyio.sleep(29)
        await expect_code(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, pool, root)
        await anyio.sleep(1)
        # The backoff period is over: one more try, which crashes again within the window.
        await expect_code(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, pool, root)
        assert len(children.started) == 6
        await expect_code(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, pool, root)
        await pool.aclose()
    assert all(child.status is not None for child in children.started)


async def test_a_child_that_stayed_up_resets_the_backoff(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(), launcher=children)
        await tg.start(pool.run)

        async def crash_and_measure_restart() -> float:
            children.started[-1].exit(-9)
            await settle(lambda: state_of(pool, root).state is ChildState.CRASHED)
            start = anyio.current_time()
            await pool.wait_ready(root)
            return anyio.current_time() - start

        await pool.wait_ready(root)
        assert await crash_and_measure_restart() == pytest.approx(1)
        assert await crash_and_measure_restart() == pytest.approx(2)
        assert await crash_and_measure_restart() == pytest.approx(4)
        await anyio.sleep(61)
        assert await crash_and_measure_restart() == pytest.approx(1)
        status = state_of(pool, root)
        assert (status.state, status.crashes, status.restarts) == (ChildState.RUNNING, 4, 4)
        assert status.last_error is WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED
        await pool.aclose()


async def test_concurrent_first_uses_share_one_child(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(), launcher=children)
        await tg.start(pool.run)
        async with anyio.create_task_group() as callers:
            for _ in range(5):
                callers.start_soon(pool.wait_ready, root)
        assert len(children.started) == 1
        assert children.started[0].synchronize_calls == 5
        await pool.aclose()
    assert children.started[0].status == 0, "a clean shutdown, not a signal"
    assert children.started[0].signals == [signal.SIGKILL], "only the sweep for leftover helpers"


async def test_an_idle_child_is_shut_down_and_restarted_on_next_use(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(idle_timeout=30), launcher=children)
        await tg.start(pool.run)
        await pool.wait_ready(root)
        await anyio.sleep(29)
        assert state_of(pool, root).state is ChildState.RUNNING
        await anyio.sleep(2)
        await settle(lambda: state_of(pool, root).state is ChildState.STOPPED)
        assert children.started[0].status == 0
        before = anyio.current_time()
        await pool.wait_ready(root)
        assert anyio.current_time() == before, "an idle stop is not a crash: no backoff"
        status = state_of(pool, root)
        assert (status.state, status.crashes, status.pid) == (ChildState.RUNNING, 0, 1001)
        await pool.aclose()


async def test_a_timeout_cancels_the_request_and_keeps_the_child(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg, "hang-first-sync")
        pool = LspPool(config(ready_timeout=5), launcher=children)
        await tg.start(pool.run)
        before = anyio.current_time()
        await expect_code(WarningCode.SOURCEKIT_LSP_TIMEOUT, pool, root)
        assert anyio.current_time() - before == pytest.approx(5)
        await pool.wait_ready(root)
        assert len(children.started) == 1
        status = state_of(pool, root)
        assert (status.state, status.ready, status.crashes) == (ChildState.RUNNING, True, 0)
        await pool.aclose()


async def test_the_least_recently_used_child_is_evicted(tmp_path: Path) -> None:
    roots = [(tmp_path / name).resolve() for name in ("a", "b", "c")]
    a, b, c = roots
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(max_children=2), launcher=children)
        await tg.start(pool.run)
        await pool.wait_ready(a)
        await anyio.sleep(1)
        await pool.wait_ready(b)
        await anyio.sleep(1)
        await pool.wait_ready(a)  # a is now more recently used than b
        await pool.wait_ready(c)
        assert [state_of(pool, root).state for root in roots] == [
            ChildState.RUNNING,
            ChildState.STOPPED,
            ChildState.RUNNING,
        ]
        assert children.started[1].status == 0, "the evicted child was shut down cleanly"
        await pool.aclose()


async def test_cancelling_the_pool_task_group_stops_every_child(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        async with anyio.create_task_group() as pool_group:
            pool = LspPool(config(), launcher=children)
            await pool_group.start(pool.run)
            await pool.wait_ready(tmp_path / "x")
            await pool.wait_ready(tmp_path / "y")
            pool_group.cancel_scope.cancel()
        assert [child.status for child in children.started] == [0, 0]
        with pytest.raises(CodedError) as caught:
            await pool.wait_ready(tmp_path / "x")
        assert caught.value.code is WarningCode.SOURCEKIT_LSP_NOT_RUNNING
