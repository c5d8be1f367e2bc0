"""JSON-RPC 2.0 over anyio byte streams, framed with LSP's `Content-Length` headers.

One `JsonRpcConnection` per peer. Its single reader loop (`run`) routes responses to the
request that waits for them (one-shot memory streams, buffer 1), answers every request the
peer sends us, and keeps the peer's log messages, progress reports and diagnostics in
bounded deques. When the connection ends, for whatever reason, every waiter is woken with a
typed error, so no caller ever waits on a dead peer.

A request that times out sends `$/cancelRequest` to the peer as a courtesy and raises
`RequestTimeout`; the connection stays usable.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeAlias

import anyio
from anyio.abc import AnyByteReceiveStream, AnyByteSendStream, TaskGroup, TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from xcindex._log import get_logger

log = get_logger(__name__)

JsonValue: TypeAlias = Any
"""A decoded JSON value: None, bool, int, float, str, list or dict."""

RequestId: TypeAlias = int | str

MAX_HEADER_BYTES = 8 * 1024
MAX_CONTENT_LENGTH = 256 * 1024 * 1024
COURTESY_CANCEL_TIMEOUT = 1.0


class ErrorCode(IntEnum):
    """JSON-RPC and LSP error codes this package produces or inspects."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800


class JsonRpcError(Exception):
    """The peer answered a request with an error response."""

    def __init__(self, code: int, message: str, data: JsonValue = None, *, method: str = "") -> None:
        super().__init__(f"{method or 'request'} failed with JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.method = method


class ConnectionClosed(Exception):
    """The connection ended before an answer arrived.

    `peer_gone` is True when the peer closed its end (usually because its process exited) and
    False when this side closed the connection.
    """

    def __init__(self, reason: str, *, peer_gone: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.peer_gone = peer_gone


class FramingError(Exception):
    """The peer sent bytes that are not a well-formed LSP frame or JSON-RPC message.

    The byte stream cannot be resynchronised afterwards: the connection is closed.
    """


class RequestTimeout(TimeoutError):
    """The peer did not answer a request within its deadline (it was sent `$/cancelRequest`)."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method} got no answer within {timeout:g} s")
        self.method = method
        self.timeout = timeout


@dataclass(frozen=True)
class LogEntry:
    """A `window/logMessage` or `window/showMessage` from the peer."""

    at: float
    method: str
    type: int
    message: str


@dataclass(frozen=True)
class ProgressEvent:
    """A `$/progress` notification from the peer."""

    at: float
    token: RequestId
    value: JsonValue


@dataclass(frozen=True)
class DiagnosticsEvent:
    """A `textDocument/publishDiagnostics` notification from the peer."""

    at: float
    uri: str
    diagnostics: tuple[JsonValue, ...]


@dataclass(frozen=True)
class WorkDone:
    """The latest state of one work-done progress the peer has begun and not yet ended."""

    token: RequestId
    title: str
    message: str | None
    percentage: int | None


@dataclass(frozen=True)
class ConnectionStatistics:
    pending_requests: int
    requests_sent: int
    notifications_sent: int
    messages_received: int
    closed: bool


@dataclass(frozen=True)
class _Answer:
    result: JsonValue = None
    error: Exception | None = None


ServerRequestHandler: TypeAlias = Callable[[str, JsonValue], Awaitable[JsonValue]]
"""Answers a request from the peer; raise JsonRpcError to answer with an error."""

_NULL_ANSWERED_REQUESTS = frozenset(
    {
        "client/registerCapability",
        "client/unregisterCapability",
        "window/workDoneProgress/create",
        "window/showMessageRequest",
        "workspace/codeLens/refresh",
        "workspace/diagnostic/refresh",
        "workspace/inlayHint/refresh",
        "workspace/semanticTokens/refresh",
    }
)


async def answer_as_lsp_client(method: str, params: JsonValue) -> JsonValue:
    """The default answers to server→client requests: nothing is refused, nothing is done.

    Capability registrations and progress tokens are acknowledged, configuration requests
    get one null per item (use the defaults), anything else is "method not found".
    """
    if method in _NULL_ANSWERED_REQUESTS:
        return None
    if method == "workspace/configuration":
        items = params.get("items") if isinstance(params, dict) else None
        return [None] * (len(items) if isinstance(items, list) else 0)
    raise JsonRpcError(ErrorCode.METHOD_NOT_FOUND, f"method not found: {method}", method=method)


def encode_frame(message: Mapping[str, JsonValue]) -> bytes:
    """One message with its `Content-Length` header."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse_content_length(header_block: bytes) -> int:
    """The body length declared by a frame's header block (without the blank line)."""
    length: int | None = None
    for raw_line in header_block.split(b"\r\n"):
        name, separator, value = raw_line.partition(b":")
        if not separator:
            raise FramingError(f"malformed header line {raw_line[:80]!r}")
        if name.strip().lower() == b"content-length":
            text = value.strip()
            if not text.isdigit():
                raise FramingError(f"malformed Content-Length {text[:40]!r}")
            length = int(text)
    if length is None:
        raise FramingError("frame without a Content-Length header")
    if length > MAX_CONTENT_LENGTH:
        raise FramingError(f"Content-Length {length} exceeds {MAX_CONTENT_LENGTH}")
    return length


def decode_message(body: bytes) -> dict[str, JsonValue]:
    """A frame's body as a JSON-RPC message object."""
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FramingError(f"frame body is not JSON: {exc}") from None
    if not isinstance(message, dict) or not ("method" in message or "id" in message):
        raise FramingError(f"not a JSON-RPC message: {body[:120]!r}")
    return message


class JsonRpcConnection:
    """A JSON-RPC connection to one peer over a pair of byte streams.

    Start `run` in a task group (`await tg.start(connection.run)`) before sending requests.

    Args:
        receive: the peer's output (for a child process, its stdout).
        send: the peer's input (its stdin).
        name: used in log events.
        request_handler: answers requests from the peer; defaults to `answer_as_lsp_client`.
        log_capacity: how many log messages to keep.
        event_capacity: how many progress and diagnostics notifications to keep.
        on_change: called after a log message arrived, the work-done progress changed or
            the connection closed, so that an owner can publish a new snapshot.
    """

    def __init__(
        self,
        receive: AnyByteReceiveStream,
        send: AnyByteSendStream,
        *,
        name: str = "jsonrpc",
        request_handler: ServerRequestHandler = answer_as_lsp_client,
        log_capacity: int = 500,
        event_capacity: int = 200,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._receive = BufferedByteReceiveStream(receive)
        self._send = send
        self._name = name
        self._request_handler = request_handler
        self._write_lock = anyio.Lock()
        self._next_id = 1
        self._pending: dict[RequestId, MemoryObjectSendStream[_Answer]] = {}
        self._close_reason: Exception | None = None
        self._closed_event = anyio.Event()
        self._requests_sent = 0
        self._notifications_sent = 0
        self._messages_received = 0
        self.log_messages: deque[LogEntry] = deque(maxlen=log_capacity)
        self.progress_events: deque[ProgressEvent] = deque(maxlen=event_capacity)
        self.diagnostics: deque[DiagnosticsEvent] = deque(maxlen=event_capacity)
        self._work_done: dict[RequestId, WorkDone] = {}
        self._on_change = on_change

    # -- state ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._close_reason is not None

    @property
    def close_reason(self) -> Exception | None:
        """Why the connection ended (ConnectionClosed or FramingError), None while open."""
        return self._close_reason

    async def wait_closed(self) -> Exception:
        """Wait until the connection ends; returns why."""
        await self._closed_event.wait()
        assert self._close_reason is not None
        return self._close_reason

    def work_in_progress(self) -> tuple[WorkDone, ...]:
        """Work-done progress the peer has begun and not ended (for example indexing)."""
        return tuple(self._work_done.values())

    def statistics(self) -> ConnectionStatistics:
        return ConnectionStatistics(
            pending_requests=len(self._pending),
            requests_sent=self._requests_sent,
            notifications_sent=self._notifications_sent,
            messages_received=self._messages_received,
            closed=self.closed,
        )

    # -- reader loop ---------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Read and dispatch messages until the peer closes, the stream breaks or we close.

        Never raises for connection faults: they become `close_reason` and wake the waiters.
        """
        reason: Exception = ConnectionClosed("the connection reader stopped", peer_gone=False)
        try:
            async with anyio.create_task_group() as answers:
                task_status.started()
                try:
                    while True:
                        message = await self._read_message()
                        self._messages_received += 1
                        self._dispatch(message, answers)
                except (ConnectionClosed, FramingError) as exc:
                    reason = exc
                except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                    reason = ConnectionClosed(f"the input stream failed: {exc!r}", peer_gone=True)
                except OSError as exc:
                    reason = ConnectionClosed(f"reading failed: {exc}", peer_gone=True)
                if isinstance(reason, FramingError):
                    log.warning("jsonrpc_malformed_frame", peer=self._name, error=str(reason))
                answers.cancel_scope.cancel()
        finally:
            self._close(reason)
            # The reader owns the input: nothing else will read it after this loop.
            with anyio.CancelScope(shield=True), contextlib.suppress(anyio.BrokenResourceError, OSError):
                await self._receive.aclose()

    async def _read_message(self) -> dict[str, JsonValue]:
        try:
            header_block = await self._receive.receive_until(b"\r\n\r\n", MAX_HEADER_BYTES)
        except anyio.IncompleteRead:
            detail = " in the middle of a frame header" if self._receive.buffer else ""
            raise ConnectionClosed(
                f"the peer closed its output{detail} (has it exited?)", peer_gone=True
            ) from None
        except anyio.DelimiterNotFound:
            raise FramingError(f"no end of frame header within {MAX_HEADER_BYTES} bytes") from None
        length = parse_content_length(header_block)
        try:
            body = await self._receive.receive_exactly(length)
        except anyio.IncompleteRead:
            raise ConnectionClosed(
                "the peer closed its output in the middle of a frame body (has it exited?)", peer_gone=True
            ) from None
        return decode_message(body)

    def _dispatch(self, message: dict[str, JsonValue], answers: TaskGroup) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                answers.start_soon(self._answer_peer_request, message["id"], method, message.get("params"))
            else:
                self._record_notification(method, message.get("params"))
            return
        self._deliver_response(message)

    def _deliver_response(self, message: dict[str, JsonValue]) -> None:
        request_id = message.get("id")
        reply_to = self._pending.pop(request_id, None) if isinstance(request_id, int | str) else None
        if reply_to is None:
            # A late answer to a request that timed out (or was never ours): drop it.
            log.debug("jsonrpc_unmatched_response", peer=self._name, id=request_id)
            return
        error = message.get("error")
        if error is not None:
            answer = _Answer(error=_error_from_wire(error))
        else:
            answer = _Answer(result=message.get("result"))
        with reply_to:
            reply_to.send_nowait(answer)

    def _record_notification(self, method: str, params: JsonValue) -> None:
        now = anyio.current_time()
        payload = params if isinstance(params, dict) else {}
        if method in ("window/logMessage", "window/showMessage"):
            kind = payload.get("type")
            entry = LogEntry(
                now, method, kind if isinstance(kind, int) else 0, str(payload.get("message", ""))
            )
            self.log_messages.append(entry)
            self._changed()
            log.debug("jsonrpc_peer_log", peer=self._name, method=method, message=entry.message[:500])
        elif method == "$/progress":
            token = payload.get("token")
            if isinstance(token, int | str):
                self.progress_events.append(ProgressEvent(now, token, payload.get("value")))
                self._track_work_done(token, payload.get("value"))
                self._changed()
        elif method == "textDocument/publishDiagnostics":
            diagnostics = payload.get("diagnostics")
            self.diagnostics.append(
                DiagnosticsEvent(
                    now,
                    str(payload.get("uri", "")),
                    tuple(diagnostics) if isinstance(diagnostics, list) else (),
                )
            )
        else:
            log.debug("jsonrpc_notification_ignored", peer=self._name, method=method)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def _track_work_done(self, token: RequestId, value: JsonValue) -> None:
        if not isinstance(value, dict):
            return
        kind = value.get("kind")
        previous = self._work_done.get(token)
        if kind == "end":
            self._work_done.pop(token, None)
            return
        if kind not in ("begin", "report"):
            return
        percentage = value.get("percentage")
        message = value.get("message")
        self._work_done[token] = WorkDone(
            token=token,
            title=str(value.get("title", previous.title if previous else "")),
            message=message if isinstance(message, str) else (previous.message if previous else None),
            percentage=percentage if isinstance(percentage, int) else None,
        )

    async def _answer_peer_request(self, request_id: JsonValue, method: str, params: JsonValue) -> None:
        response: dict[str, JsonValue] = {"jsonrpc": "2.0", "id": request_id}
        try:
            response["result"] = await self._request_handler(method, params)
        except JsonRpcError as exc:
            response["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:
            log.warning("jsonrpc_request_handler_failed", peer=self._name, method=method, error=repr(exc))
            response["error"] = {"code": ErrorCode.INTERNAL_ERROR, "message": str(exc)}
        with contextlib.suppress(ConnectionClosed):
            await self._write(response)

    # -- sending -------------------------------------------------------------------------

    async def request(self, method: str, params: JsonValue = None, *, timeout: float = math.inf) -> JsonValue:
        """Send a request and wait for its result.

        Raises:
            JsonRpcError: the peer answered with an error.
            RequestTimeout: no answer within `timeout` seconds (the peer was sent
                `$/cancelRequest`; the connection stays usable).
            ConnectionClosed: the connection ended before the answer.
            FramingError: the peer broke the framing while we waited.
        """
        if self._close_reason is not None:
            raise _fresh(self._close_reason)
        request_id = self._next_id
        self._next_id += 1
        reply_send, reply_receive = anyio.create_memory_object_stream[_Answer](1)
        self._pending[request_id] = reply_send
        message: dict[str, JsonValue] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        answered = False
        try:
            with reply_receive:
                with anyio.fail_after(timeout):
                    await self._write(message)
                    self._requests_sent += 1
                    try:
                        answer = await reply_receive.receive()
                    except anyio.EndOfStream:
                        raise _fresh(
                            self._close_reason or ConnectionClosed("the connection closed", peer_gone=False)
                        ) from None
                answered = True
        except TimeoutError:
            raise RequestTimeout(method, timeout) from None
        finally:
            if not answered:
                stale = self._pending.pop(request_id, None)
                if stale is not None:
                    stale.close()
                    await self._cancel_politely(request_id)
        if isinstance(answer.error, JsonRpcError):
            error = answer.error
            raise JsonRpcError(error.code, error.message, error.data, method=method)
        if answer.error is not None:
            raise _fresh(answer.error)
        return answer.result

    async def _cancel_politely(self, request_id: RequestId) -> None:
        """Tell the peer we stopped waiting (shielded: also runs while we are being cancelled)."""
        if self._close_reason is not None:
            return
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(COURTESY_CANCEL_TIMEOUT),
            contextlib.suppress(ConnectionClosed),
        ):
            await self.notify("$/cancelRequest", {"id": request_id})

    async def notify(self, method: str, params: JsonValue = None) -> None:
        """Send a notification. Raises ConnectionClosed if the connection has ended."""
        if self._close_reason is not None:
            raise _fresh(self._close_reason)
        message: dict[str, JsonValue] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)
        self._notifications_sent += 1

    async def _write(self, message: Mapping[str, JsonValue]) -> None:
        frame = encode_frame(message)
        async with self._write_lock:
            try:
                await self._send.send(frame)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed(f"could not write to the peer: {exc!r}", peer_gone=True) from None

    # -- closing -------------------------------------------------------------------------

    async def aclose(self, reason: Exception | None = None) -> None:
        """Close our side: waiters get `reason` (default ConnectionClosed), the peer sees end of input.

        Args:
            reason: why, when the owner knows better than "closed by this side" (for
                example, that the peer's process has exited).
        """
        self._close(reason or ConnectionClosed("the connection was closed by this side", peer_gone=False))
        # Not under the write lock: a writer stuck on a peer that stopped reading would hold
        # it for ever; closing the stream is what unblocks that writer.
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await self._send.aclose()

    def _close(self, reason: Exception) -> None:
        if self._close_reason is not None:
            return
        self._close_reason = reason
        self._changed()  # before anyone waiting hears of it: an owner's snapshot says closed
        pending, self._pending = self._pending, {}
        for reply_to in pending.values():
            with reply_to:
                reply_to.send_nowait(_Answer(error=reason))
        self._closed_event.set()
        log.debug("jsonrpc_closed", peer=self._name, reason=str(reason), woken=len(pending))


def _fresh(reason: Exception) -> Exception:
    """A new instance of a close reason, so that concurrent waiters never share a traceback."""
    if isinstance(reason, ConnectionClosed):
        return ConnectionClosed(reason.reason, peer_gone=reason.peer_gone)
    if isinstance(reason, FramingError):
        return FramingError(str(reason))
    return reason


def _error_from_wire(error: JsonValue) -> JsonRpcError:
    if isinstance(error, dict):
        code = error.get("code")
        return JsonRpcError(
            code if isinstance(code, int) else ErrorCode.INTERNAL_ERROR,
            str(error.get("message", "")),
            error.get("data"),
        )
    return JsonRpcError(ErrorCode.INTERNAL_ERROR, f"malformed error object {error!r}")
