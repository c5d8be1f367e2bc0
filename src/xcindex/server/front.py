"""`xcindex serve`: the stdio wire, and the front end that answers a session's first messages
without importing the MCP SDK.

Importing the SDK (its two protocol-version model sets, pydantic models built at import, the
HTTP stack its package pulls in) took 0.45 s of the 0.75 s `xcindex serve` needed to answer
`initialize` with a warm cache (seconds on a busy machine); the rest of the first answer
is xcindex's own imports. So this module owns stdin and stdout and answers, itself, what a
client's first answer is made of: the handshake (`initialize`, `notifications/initialized`,
`ping`), `server/discover` of the 2026-07-28 protocol, `tools/list`, and `tools/call` with
progress notifications and cancellation, byte for byte as the SDK server answers them
(`server_front_protocol` reads each message the way the SDK does and builds the SDK's
answer; tests compare the two).

The first message it is not sure of (resources, subscriptions, logging, anything unknown or
malformed) makes it *hand the connection over*: it imports the SDK, starts the SDK server
(`server.serve_handed_over`), replays what set the connection's state (the client's
`initialize` and `notifications/initialized`, or a `server/discover` with the client's
2026-07-28 envelope, which fixes the era) with the replayed answer dropped, and from then on
feeds it every line. Both write through the one writer task here, so lines never
interleave; calls the front end started finish on their own, and a cancellation for one of
them still reaches it (the SDK side reports every `notifications/cancelled` it reads).

A plugin's first start begins in `xcindex.plugin.front` (before xcindex is installed), which
answers the handshake and then execs `xcindex serve --handover FD`: `Handover` is what it
passes on (the state it set and the messages it did not answer), and the connection goes on
here as if it had started here.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
import pydantic_core
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xcindex import __version__
from xcindex._log import get_logger
from xcindex.engine import Engine, EngineConfig
from xcindex.server.calls import ProgressReporter, call_tool, called_location
from xcindex.server.protocol import (
    CONNECTION_CLOSED,
    Message,
    Notification,
    Request,
    RequestId,
    accepts_cancelled,
    accepts_handshake_request,
    accepts_initialize,
    accepts_initialized,
    accepts_modern_request,
    call_result,
    correlation_key,
    discover_result,
    error_line,
    initialize_result,
    modern_envelope,
    parse_message,
    progress_line,
    progress_token,
    response_line,
    tools_list_result,
)

if TYPE_CHECKING:
    from xcindex.server.sdk import StatusFeed

log = get_logger("xcindex.server")

FIRST_ANSWER_WAIT_S = 5.0
"""How long an index tool call waits for a store's first ingestion before answering from
what is ingested so far (`indexing`, with the progress): the call streams progress
notifications meanwhile, and an agent should get something useful within seconds, not
wait minutes on a large project (EngineConfig.first_answer_wait_s)."""

Era = Literal["handshake", "modern"]
"""The protocol era of a connection: the `initialize` handshake (2024-11-05 … 2025-11-25) or
2026-07-28's per-request envelope."""

SHUTDOWN_WRITE_S = 1.0
"""How long a call cut off by the client's EOF may take to write its "Connection closed"
error (the SDK's bound for the same write)."""


@dataclass
class _InFlight:
    """A request the front end is answering: its scope, and whether the client cancelled it
    (then it is never answered, as JSON-RPC requires)."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancelled_by_peer: bool = False


@dataclass(frozen=True)
class Handover:
    """A connection the plugin's first-start front began (`xcindex.plugin.front`): the
    client's `initialize` (and `notifications/initialized`) or 2026-07-28 envelope, the
    `subscriptions/listen` streams it already acknowledged, and the lines it did not answer."""

    initialize: dict[str, Any] | None = None
    initialized: tuple[str, ...] = ()
    modern_meta: dict[str, Any] | None = None
    acknowledged: frozenset[RequestId] = frozenset()
    pending: tuple[str, ...] = ()

    @classmethod
    def read(cls, descriptor: int) -> Handover:
        """From the (unlinked temporary) file the first-start front left open for us."""
        with os.fdopen(descriptor, "rb") as source:
            raw = json.loads(source.read())
        return cls(
            initialize=raw.get("initialize"),
            initialized=tuple(raw.get("initialized") or ()),
            modern_meta=raw.get("modernMeta"),
            acknowledged=frozenset(raw.get("acknowledged") or ()),
            pending=tuple(raw.get("pending") or ()),
        )


class FrontEnd:
    """One connection's front end: answers what it can, hands the rest to the SDK server.

    `feed` takes the client's lines in order (from one reader task); `close` is the client's
    EOF. Answers, the SDK's included, go to `out`, which one writer drains.
    """

    def __init__(
        self, engine: Engine, watch_group: TaskGroup, group: TaskGroup, out: MemoryObjectSendStream[str]
    ) -> None:
        self.engine = engine
        self._watch_group = watch_group
        """Where the status resource's watches run (the server's group: they outlive a request)."""
        self._group = group
        """The connection's group: the SDK server and the calls' group run in it."""
        self._out = out
        self._era: Era | None = None
        """None until the first request, which fixes it (as it fixes the SDK's)."""
        self._initialize: dict[str, Any] | None = None
        self._initialized_lines: list[str] = []
        self._modern_meta: dict[str, Any] | None = None
        self._in_flight: dict[RequestId, _InFlight] = {}
        self._sdk_lines: MemoryObjectSendStream[str] | None = None
        self._feed: StatusFeed | None = None
        self._locations: list[tuple[str | None, str | None]] = []
        """Where successful calls pointed, in order, until the SDK's status feed exists (its
        resources/list names them)."""
        self._calls: TaskGroup | None = None
        self._closing = anyio.Event()
        self._acknowledged: frozenset[RequestId] = frozenset()
        """Listen streams the first-start front acknowledged: the SDK's own ack is dropped."""

    def adopt(self, handover: Handover) -> None:
        """Go on with a connection the first-start front began."""
        if handover.initialize is not None:
            self._era, self._initialize = "handshake", handover.initialize
            self._initialized_lines = list(handover.initialized)
        elif handover.modern_meta is not None:
            self._era, self._modern_meta = "modern", handover.modern_meta
        self._acknowledged = handover.acknowledged

    async def start(self) -> None:
        """Open the calls' group (a task of its own, so that `close` can cut the calls off
        without cutting off the reader that calls it)."""
        await self._group.start(self._hold_calls)

    async def _hold_calls(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        async with anyio.create_task_group() as calls:
            self._calls = calls
            task_status.started()
            await self._closing.wait()
            calls.cancel_scope.cancel()

    async def feed(self, line: str) -> None:
        if self._sdk_lines is not None:
            await self._sdk_lines.send(line)
            return
        message = parse_message(line)
        if message is None or not await self._answer(message, line):
            await self._hand_over(line, message)

    async def close(self) -> None:
        """The client closed its side: cut off the calls still running, as the SDK does
        (each answered "Connection closed"), and end the SDK server's input."""
        self._closing.set()
        if self._sdk_lines is not None:
            await self._sdk_lines.aclose()

    def cancel_by_peer(self, request_id: object) -> None:
        """`notifications/cancelled` for `request_id`: stop that call and never answer it."""
        key = correlation_key(request_id)
        flight = self._in_flight.get(key) if key is not None else None
        if flight is not None:
            flight.cancelled_by_peer = True
            flight.scope.cancel()

    # --- the messages answered here ----------------------------------------------------

    async def _answer(self, message: Message, line: str) -> bool:
        """Answer `message` if it is one the front end answers as the SDK would; False
        means hand over."""
        if isinstance(message, Notification):
            return self._note(message, line)
        if self._era is None:
            if message.method == "initialize" and accepts_initialize(message.params):
                assert message.params is not None
                self._era, self._initialize = "handshake", message.params
                await self._out.send(response_line(message.id, initialize_result(message.params)))
                return True
            if modern_envelope(message.params) and accepts_modern_request(message):
                self._era = "modern"
                assert message.params is not None
                self._modern_meta = {k: v for k, v in message.params["_meta"].items() if k != "progressToken"}
                return await self._answer_request(message, modern=True)
            return False
        if self._era == "handshake":
            return accepts_handshake_request(message) and await self._answer_request(message, modern=False)
        return accepts_modern_request(message) and await self._answer_request(message, modern=True)

    def _note(self, notification: Notification, line: str) -> bool:
        if self._era is None:
            return False
        if notification.method == "notifications/cancelled":
            if not accepts_cancelled(notification, modern=self._era == "modern"):
                return False
            assert notification.params is not None
            self.cancel_by_peer(notification.params.get("requestId"))
            return True
        if notification.method == "notifications/initialized" and self._era == "handshake":
            if not accepts_initialized(notification):
                return False
            self._initialized_lines.append(line)
            return True
        return False

    async def _answer_request(self, request: Request, *, modern: bool) -> bool:
        """Answer in a task of its own, as the SDK's dispatcher does: the reader goes on
        reading while an answer waits for the client to read its output (a client that
        pipelines requests before reading any answer must not deadlock us)."""
        assert self._calls is not None
        self._calls.start_soon(self._respond, request, modern)
        return True

    async def _respond(self, request: Request, modern: bool) -> None:
        """One request, answered as the SDK's dispatcher answers it: a peer's cancellation
        silences it; the client's EOF answers it "Connection closed"."""
        key = correlation_key(request.id)
        assert key is not None
        flight = _InFlight()
        self._in_flight[key] = flight
        token = progress_token(request.params)

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if token is not None and self._in_flight.get(key) is flight:
                await self._out.send(progress_line(token, progress, total, message))

        answer_started = False
        try:
            with flight.scope:
                try:
                    result = await self._result(request, modern, report)
                finally:
                    if self._in_flight.get(key) is flight:
                        del self._in_flight[key]
                if not flight.cancelled_by_peer:
                    answer_started = True
                    await self._out.send(response_line(request.id, result))
        except anyio.get_cancelled_exc_class():
            if not answer_started and not flight.cancelled_by_peer:
                with anyio.move_on_after(SHUTDOWN_WRITE_S, shield=True):
                    await self._out.send(error_line(request.id, CONNECTION_CLOSED, "Connection closed"))
            raise

    async def _result(self, request: Request, modern: bool, report: ProgressReporter) -> dict[str, Any]:
        if request.method == "ping":
            return {}
        if request.method == "server/discover":
            return discover_result()
        if request.method == "tools/list":
            return tools_list_result(modern)
        assert request.params is not None
        arguments = request.params.get("arguments")
        result = await call_tool(self.engine, request.params["name"], arguments, report)
        self._remember(called_location(arguments, result))
        return call_result(result, modern)

    def _remember(self, location: tuple[str | None, str | None] | None) -> None:
        if location is None:
            return
        if self._feed is not None:
            self._feed.remember(*location)
        else:
            self._locations.append(location)

    # --- the handover -----------------------------------------------------------------

    async def _hand_over(self, line: str, message: Message | None) -> None:
        """Start the SDK server on this connection, replay what set its state, then feed
        it `line` and everything after."""
        # Imported here, not at the top: importing the SDK is what the front end exists to avoid.
        import uuid

        from xcindex.server.sdk import StatusFeed, serve_handed_over

        replay_id = f"xcindex-handover-{uuid.uuid4().hex}"
        replay: list[str] = []
        if self._initialize is not None:
            replay.append(_request_line(replay_id, "initialize", self._initialize))
            replay += self._initialized_lines
        elif self._modern_meta is not None:
            replay.append(_request_line(replay_id, "server/discover", {"_meta": self._modern_meta}))
        log.info(
            "server_handover",
            trigger=message.method if message is not None else "unreadable line",
            era=self._era,
            calls_in_flight=len(self._in_flight),
        )
        self._feed = StatusFeed(self.engine, self._watch_group)
        for location in self._locations:
            self._feed.remember(*location)
        send, receive = anyio.create_memory_object_stream[str](0)
        self._sdk_lines = send
        self._group.start_soon(
            serve_handed_over,
            self.engine,
            self._feed,
            receive,
            self._out.send,
            replay,
            replay_id,
            self.cancel_by_peer,
            self._acknowledged,
        )
        await send.send(line)


def _request_line(request_id: str, method: str, params: dict[str, Any]) -> str:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return pydantic_core.to_json(message).decode() + "\n"


async def serve_connection(
    engine: Engine,
    watch_group: TaskGroup,
    lines: AsyncIterable[str],
    write: Callable[[str], Awaitable[None]],
    handover: Handover | None = None,
) -> None:
    """Serve one MCP connection: `lines` are the client's, `write` sends one line to it;
    status watches (after a handover) run in `watch_group`; `handover` is what the plugin's
    first-start front began. Returns after the client's EOF, once every answer is written."""
    send, receive = anyio.create_memory_object_stream[str](0)
    async with anyio.create_task_group() as writer:
        writer.start_soon(_write_all, receive, write)
        async with send, anyio.create_task_group() as connection:
            front = FrontEnd(engine, watch_group, connection, send)
            await front.start()
            if handover is not None:
                front.adopt(handover)
            async for line in _after(handover.pending if handover else (), lines):
                await front.feed(line)
            await front.close()


async def _after(first: tuple[str, ...], lines: AsyncIterable[str]) -> AsyncIterator[str]:
    for line in first:
        yield line
    async for line in lines:
        yield line


async def _write_all(lines: MemoryObjectReceiveStream[str], write: Callable[[str], Awaitable[None]]) -> None:
    async with lines:
        async for line in lines:
            await write(line)


# --- the process's stdio ------------------------------------------------------------------


@dataclass
class StdioWire:
    """stdin and stdout as the MCP channel, claimed as the SDK's `stdio_server` claims them:
    served from private duplicates while fd 0 reads /dev/null and fd 1 writes to stderr, so
    children and stray prints never touch the wire; both restored on exit."""

    reader: anyio.AsyncFile[str]
    writer: anyio.AsyncFile[str]

    async def write(self, line: str) -> None:
        await self.writer.write(line)
        await self.writer.flush()


@contextmanager
def claimed_stdio() -> Iterator[StdioWire]:
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        # closefd=False: a worker thread may still block reading the descriptor after we
        # return, so it must never be closed and reused under it. The encodings and the
        # error handling are the SDK's: non-UTF-8 input arrives as U+FFFD.
        reader = TextIOWrapper(os.fdopen(wire_in, "rb", closefd=False), encoding="utf-8", errors="replace")
        writer = TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False), encoding="utf-8")
        yield StdioWire(anyio.wrap_file(reader), anyio.wrap_file(writer))
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


async def _stop_on_signals(scope: anyio.CancelScope, engine: Engine) -> None:
    """SIGTERM/SIGINT: cancel the calls in flight, stop every child, and leave.

    stdin is read in a worker thread that cannot be abandoned, so unwinding would wait for
    the client's next line or for EOF, which a client that signals may never send. Once the
    children are gone there is nothing left to clean up: the database is SQLite in WAL mode
    and the ledger is appended whole lines at a time.
    """
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("server_signal", signal=signal.Signals(signum).name)
            scope.cancel()
            await engine.close_children()
            log.info("server_stopped", reason=signal.Signals(signum).name)
            logging.shutdown()
            os._exit(0)


async def serve_stdio(handover: Handover | None = None) -> None:
    """Serve until stdin closes or SIGTERM/SIGINT arrives; the Engine's children go with us.
    `handover`: the connection the plugin's first-start front began in this process."""
    async with (
        Engine(EngineConfig(first_answer_wait_s=FIRST_ANSWER_WAIT_S)) as engine,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_stop_on_signals, tg.cancel_scope, engine)
        log.info(
            "server_started",
            version=__version__,
            **({"handed_over_lines": len(handover.pending)} if handover is not None else {}),
        )
        with claimed_stdio() as wire:
            await serve_connection(engine, tg, wire.reader, wire.write, handover)
        log.info("server_stdin_closed")
        tg.cancel_scope.cancel()
