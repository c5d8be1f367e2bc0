from __future__ import annotations

import anyio
import pytest

from xcindex.actors.mailbox import Mailbox
from xcindex.errors import ActorGone, ActorTimeout

pytestmark = pytest.mark.anyio


async def _echo_actor(mailbox: Mailbox[str, str], *, task_status: anyio.abc.TaskStatus[None]) -> None:
    task_status.started()
    try:
        async for envelope in mailbox.inbox:
            try:
                if envelope.request == "boom":
                    await envelope.fail(ValueError("boom"))
                elif envelope.request == "slow":
                    await anyio.sleep_forever()
                else:
                    await envelope.reply(envelope.request.upper())
            finally:
                envelope.close()
    finally:
        with anyio.CancelScope(shield=True):
            await mailbox.aclose()


async def test_reply_error_and_timeout_travel_back_to_the_caller() -> None:
    mailbox: Mailbox[str, str] = Mailbox(4)
    handle = mailbox.handle()
    async with anyio.create_task_group() as tg:
        await tg.start(_echo_actor, mailbox)
        assert await handle.ask("hello", timeout=5) == "HELLO"
        with pytest.raises(ValueError, match="boom"):
            await handle.ask("boom", timeout=5)
        tg.start_soon(_ask_slow, handle)
        await anyio.wait_all_tasks_blocked()
        # The actor is stuck in "slow" now; the next ask must time out, not hang.
        with pytest.raises(ActorTimeout):
            await handle.ask("again", timeout=0.2)
        tg.cancel_scope.cancel()


async def _ask_slow(handle: object) -> None:
    from xcindex.actors.mailbox import ActorHandle

    assert isinstance(handle, ActorHandle)
    with pytest.raises(ActorTimeout):
        await handle.ask("slow", timeout=0.1)


async def test_asking_a_stopped_actor_says_so() -> None:
    mailbox: Mailbox[str, str] = Mailbox(4)
    handle = mailbox.handle()
    await mailbox.aclose()
    with pytest.raises(ActorGone):
        await handle.ask("anyone?", timeout=1)


async def test_a_report_the_actor_does_not_answer_leaves_no_channel_open() -> None:
    # The actors take their own tasks' reports (`tell`) and never answer them. The reply
    # channel such an envelope carries must not be left open for the collector, whose
    # ResourceWarning lands in whatever test runs next (it failed a CI run that way).
    import gc
    import warnings

    mailbox: Mailbox[str, str] = Mailbox(4)
    handle = mailbox.handle()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert handle.tell_nowait("report one")
        assert await handle.tell("report two")
        for _ in range(2):
            envelope = await mailbox.inbox.receive()
            assert envelope.request.startswith("report")
            del envelope  # handled, unanswered: as the actors do with reports
        await mailbox.aclose()
        gc.collect()
    unclosed = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == [], [str(w.message) for w in unclosed]
