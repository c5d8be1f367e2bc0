"""Request/reply plumbing shared by every actor.

An actor owns a bounded inbox; a caller sends an envelope carrying the request, a
one-shot reply stream (buffer 1) and its log context, then waits with a deadline. The
reply is an outcome: a value or the exception the actor raised while serving it, so a
failed request never kills the actor and the caller re-raises with the original type.
Context variables do not cross memory streams, which is why log context travels in the
envelope.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xcindex.errors import ActorGone, ActorTimeout

Req = TypeVar("Req")
Rep = TypeVar("Rep")
T = TypeVar("T")


@dataclass(frozen=True)
class Outcome(Generic[Rep]):
    value: Rep | None = None
    error: BaseException | None = None

    def unwrap(self) -> Rep:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


@dataclass(frozen=True)
class Envelope(Generic[Req, Rep]):
    request: Req
    reply_to: MemoryObjectSendStream[Outcome[Rep]]
    log_context: Mapping[str, object] = field(default_factory=dict)

    async def reply(self, value: Rep) -> None:
        self.reply_nowait(value)

    async def fail(self, error: BaseException) -> None:
        self.fail_nowait(error)

    def reply_nowait(self, value: Rep) -> None:
        """Answer at once: the reply channel holds one answer, so this never waits."""
        self._deliver(Outcome(value=value))

    def fail_nowait(self, error: BaseException) -> None:
        self._deliver(Outcome(error=error))

    def close(self) -> None:
        """Drop the reply channel unanswered: the caller sees ActorGone."""
        self.reply_to.close()

    def _deliver(self, outcome: Outcome[Rep]) -> None:
        # The caller may have given up (timeout, cancellation): that is not our failure.
        try:
            with self.reply_to:
                self.reply_to.send_nowait(outcome)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
            pass


def _dropped_reply() -> MemoryObjectSendStream[Outcome[Rep]]:
    """The reply channel of a report nobody waits on: closed from the start, so an answer
    is dropped (`_deliver` ignores a closed channel) and an envelope the actor never answers
    leaves no open stream for the collector to warn about."""
    send, receive = anyio.create_memory_object_stream[Outcome[Rep]](1)
    receive.close()
    send.close()
    return send


class Mailbox(Generic[Req, Rep]):
    """The two ends of an actor's inbox: the actor receives, handles send."""

    def __init__(self, capacity: float = 256) -> None:
        send, receive = anyio.create_memory_object_stream[Envelope[Req, Rep]](capacity)
        self._send: MemoryObjectSendStream[Envelope[Req, Rep]] = send
        self.inbox: MemoryObjectReceiveStream[Envelope[Req, Rep]] = receive

    def handle(self) -> ActorHandle[Req, Rep]:
        return ActorHandle(self._send)

    async def aclose(self) -> None:
        """Close the inbox; envelopes nobody took are answered with ActorGone."""
        await self._send.aclose()
        while True:
            try:
                self.inbox.receive_nowait().close()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
        await self.inbox.aclose()


class ActorHandle(Generic[Req, Rep]):
    """What callers hold: `ask` with a deadline (and `tell`, for an actor's own helpers)."""

    def __init__(self, send: MemoryObjectSendStream[Envelope[Req, Rep]]) -> None:
        self._send = send

    def tell_nowait(self, request: Req) -> bool:
        """Post `request` without waiting for room or an answer; False when the actor has
        stopped or its inbox is full. For an actor's own tasks reporting back to it (their
        reports must not block, and must reach the one task that owns the state)."""
        try:
            self._send.send_nowait(Envelope(request, _dropped_reply()))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
            return False
        return True

    async def tell(self, request: Req) -> bool:
        """Post `request`, waiting for room in the inbox but not for an answer; False when the
        actor has stopped. For an actor's own tasks whose report must not be lost (a full
        inbox would drop `tell_nowait`'s)."""
        try:
            await self._send.send(Envelope(request, _dropped_reply()))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    async def ask(
        self,
        request: Req,
        *,
        timeout: float = math.inf,
        log_context: Mapping[str, object] | None = None,
    ) -> Rep:
        reply_send, reply_receive = anyio.create_memory_object_stream[Outcome[Rep]](1)
        envelope = Envelope(request, reply_send, dict(log_context or {}))
        try:
            with anyio.fail_after(timeout):
                try:
                    await self._send.send(envelope)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await reply_send.aclose()
                    raise ActorGone("the actor has stopped") from None
                try:
                    outcome = await reply_receive.receive()
                except anyio.EndOfStream:
                    raise ActorGone("the actor stopped before answering") from None
        except TimeoutError:
            raise ActorTimeout(f"no answer within {timeout:g} s") from None
        finally:
            # Whether or not the envelope got into the inbox, the caller is done with the
            # reply: an actor that answers later finds the channel closed (and ignores that).
            reply_send.close()
            await reply_receive.aclose()
        return outcome.unwrap()


class Published(Generic[T]):
    """The latest frozen snapshot an actor published about itself.

    Only the owning actor calls `publish`; anyone may read `value` at any time (a
    snapshot is immutable, so a reader never sees a half-made change) or wait for the next
    one. This is how actors show their state without exposing their fields.
    """

    def __init__(self, initial: T) -> None:
        self._value = initial
        self._changed: anyio.Event | None = None  # made on first wait: needs a running loop

    @property
    def value(self) -> T:
        return self._value

    def publish(self, value: T) -> None:
        if value == self._value:
            return
        self._value = value
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def wait_changed(self) -> T:
        """Wait for the next snapshot and return it."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()
        return self._value
