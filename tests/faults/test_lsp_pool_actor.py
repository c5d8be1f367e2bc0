"""The LSP pool is an actor: one task owns its state; callers and children only send it
messages, and read the frozen snapshots it publishes.

In virtual time with in-memory children (see test_lsp_supervision.py for the stand-in).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from trio.testing import MockClock

from tests.faults.test_lsp_supervision import Children, config, state_of
from tests.ownership import record_writes
from xcindex.actors import lsp as pool_module
from xcindex.actors.lsp import LspPool
from xcindex.errors import CodedError
from xcindex.lsp.snapshot import ChildSnapshot, ChildState, LspChildStatus
from xcindex.vocabulary import WarningCode

pytestmark = pytest.mark.anyio


@pytest.fixture(
    params=[pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio-mockclock")]
)
def anyio_backend(request: pytest.FixtureRequest) -> object:
    return request.param


async def test_concurrent_callers_are_all_answered_and_only_the_owner_changes_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [(tmp_path / name).resolve() for name in ("a", "b")]
    most_live = 0

    with record_writes(monkeypatch, LspPool, parts=(pool_module._Slot,)) as writes:
        async with anyio.create_task_group() as tg:
            children = Children(tg)
            pool = LspPool(config(max_children=2), launcher=children)
            await tg.start(pool.run)

            async def caller(root: Path) -> None:
                nonlocal most_live
                for _ in range(3):
                    await pool.wait_ready(root)
                    live = [status for status in pool.status() if status.state is ChildState.RUNNING]
                    most_live = max(most_live, len(live))
                    await anyio.sleep(1)

            async with anyio.create_task_group() as group:
                for index in range(12):
                    group.start_soon(caller, roots[index % 2])
            assert most_live == 2
            assert len(children.started) == 2, "concurrent first uses of a root share one child"
            assert all(child.synchronize_calls == 18 for child in children.started)
            assert {status.root for status in pool.status()} == set(roots)
            await pool.aclose()
    assert writes.counted > 20, f"only {writes.counted} writes to the pool and its slots were recorded"
    assert not writes.strangers, f"written outside the pool's own task: {sorted(set(writes.strangers))}"
    assert all(child.status == 0 for child in children.started), "every child stopped cleanly"


async def test_snapshots_are_frozen_values_that_later_changes_do_not_touch(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(), launcher=children)
        await tg.start(pool.run)
        await pool.wait_ready(root)
        before: LspChildStatus = state_of(pool, root)
        [slot] = pool.snapshot()
        assert slot.child is not None
        published = slot.child
        child: ChildSnapshot = slot.child.value
        with pytest.raises(dataclasses.FrozenInstanceError):
            before.state = ChildState.STOPPED  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            slot.crashes = 3  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            child.ready = False  # type: ignore[misc]

        children.started[0].exit(-9)
        for _ in range(1000):
            if state_of(pool, root).state is ChildState.CRASHED:
                break
            await anyio.lowlevel.checkpoint()
        after = state_of(pool, root)
        assert (after.state, after.crashes, after.pid) == (ChildState.CRASHED, 1, None)
        assert (before.state, before.crashes, before.pid) == (ChildState.RUNNING, 0, 1000)
        assert (child.accepting, child.ready) == (True, True), "an old snapshot keeps what it said"
        assert not published.value.accepting, "the child has published a new one"
        await pool.aclose()


async def test_asking_a_pool_that_never_ran_or_has_stopped_is_a_coded_error(tmp_path: Path) -> None:
    pool = LspPool(config())
    with pytest.raises(CodedError) as caught:
        await pool.wait_ready(tmp_path)
    assert caught.value.code is WarningCode.SOURCEKIT_LSP_NOT_RUNNING
    assert pool.status() == []
    async with anyio.create_task_group() as tg:
        children = Children(tg)
        pool = LspPool(config(), launcher=children)
        await tg.start(pool.run)
        await pool.wait_ready(tmp_path)
        await pool.aclose()
    with pytest.raises(CodedError) as caught:
        await pool.wait_ready(tmp_path)
    assert caught.value.code is WarningCode.SOURCEKIT_LSP_NOT_RUNNING
    assert [status.state for status in pool.status()] == [ChildState.STOPPED]
