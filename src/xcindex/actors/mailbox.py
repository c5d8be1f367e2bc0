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

from xcindex.warnings import XcindexError

Req = TypeVar("Req")
Rep = TypeVar("Rep")


class ActorGone(XcindexError):
    """The actor stopped before it could answer."""


class ActorTimeout(XcindexError):
    """The actor did not answer within the caller's deadline."""


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
        await self._deliver(Outcome(value=value))

    async def fail(self, error: BaseException) -> None:
        await self._deliver(Outcome(error=error))

    def close(self) -> None:
        """Drop the reply channel unanswered: the caller sees ActorGone."""
        self.reply_to.close()

    async def _deliver(self, outcome: Outcome[Rep]) -> None:
        # The caller may have given up (timeout, cancellation): that is not our failure.
        try:
            with self.reply_to:
                self.reply_to.send_nowait(outcome)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
            pass


class Mailbox(Generic[Req, Rep]):
    """The two ends of an actor's inbox: the actor receives, handles send."""

    def __init__(self, capacity: int = 256) -> None:
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
    """What callers hold: `ask` with a deadline, and nothing else."""

    def __init__(self, send: MemoryObjectSendStream[Envelope[Req, Rep]]) -> None:
        self._send = send

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
