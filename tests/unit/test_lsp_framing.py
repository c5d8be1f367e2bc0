"""JSON-RPC over Content-Length frames: routing, server requests, bounded logs, every failure."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

from xcindex.lsp.jsonrpc import (
    MAX_CONTENT_LENGTH,
    MAX_HEADER_BYTES,
    ConnectionClosed,
    ErrorCode,
    FramingError,
    JsonRpcConnection,
    JsonRpcError,
    JsonValue,
    RequestTimeout,
    decode_message,
    encode_frame,
    parse_content_length,
)

pytestmark = pytest.mark.anyio


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d" % len(body)) + b"\r\n\r\n" + body


class Peer:
    """The far end of a JsonRpcConnection: writes raw frames, reads parsed messages."""

    def __init__(self, **options: Any) -> None:
        self.outgoing, to_connection = anyio.create_memory_object_stream[bytes](100)
        from_connection, self._incoming = anyio.create_memory_object_stream[bytes](100)
        self.connection = JsonRpcConnection(to_connection, from_connection, name="test", **options)
        self._reader = BufferedByteReceiveStream(self._incoming)

    async def start(self, tg: TaskGroup) -> JsonRpcConnection:
        await tg.start(self.connection.run)
        return self.connection

    async def send_raw(self, data: bytes) -> None:
        await self.outgoing.send(data)

    async def send(self, message: dict[str, JsonValue]) -> None:
        await self.send_raw(encode_frame(message))

    async def receive(self) -> dict[str, JsonValue]:
        header = await self._reader.receive_until(b"\r\n\r\n", MAX_HEADER_BYTES)
        return decode_message(await self._reader.receive_exactly(parse_content_length(header)))

    async def close(self) -> None:
        """Close our output (the connection sees end of input) and our input."""
        self.outgoing.close()
        await self.connection.aclose()
        await self._reader.aclose()


def test_frame_helpers() -> None:
    encoded = encode_frame({"jsonrpc": "2.0", "method": "x", "params": {"text": "é👋"}})
    header, _, body = encoded.partition(b"\r\n\r\n")
    assert parse_content_length(header) == len(body), "Content-Length counts bytes, not characters"
    assert len(body) > len(body.decode("utf-8"))
    assert decode_message(body)["params"] == {"text": "é👋"}
    assert (
        parse_content_length(b"content-length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8")
        == 7
    )


async def test_a_request_gets_its_answer() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        results: list[JsonValue] = []

        async def ask() -> None:
            results.append(await connection.request("textDocument/references", {"a": 1}))

        tg.start_soon(ask)
        request = await peer.receive()
        assert request == {"jsonrpc": "2.0", "id": 1, "method": "textDocument/references", "params": {"a": 1}}
        await peer.send({"jsonrpc": "2.0", "id": 1, "result": [{"uri": "file:///é"}]})
        await connection.notify("exit")
        assert await peer.receive() == {"jsonrpc": "2.0", "method": "exit"}
        await peer.close()
    assert results == [[{"uri": "file:///é"}]]
    assert connection.statistics().requests_sent == 1


async def test_answers_are_matched_by_id_whatever_their_order() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        results: dict[int, JsonValue] = {}

        async def ask(n: int) -> None:
            results[n] = await connection.request("echo", {"n": n})

        for n in range(20):
            tg.start_soon(ask, n)
        requests = [await peer.receive() for _ in range(20)]
        for request in reversed(requests):
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": request["params"]["n"] * 10})
        await anyio.wait_all_tasks_blocked()
        await peer.close()
    assert results == {n: n * 10 for n in range(20)}


async def test_frames_split_across_chunks_or_sharing_one_chunk_are_read() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        results: dict[int, JsonValue] = {}

        async def ask(n: int) -> None:
            results[n] = await connection.request("m", {"n": n})

        for n in range(3):
            tg.start_soon(ask, n)
        ids = {request["params"]["n"]: request["id"] for request in [await peer.receive() for _ in range(3)]}
        first = encode_frame({"jsonrpc": "2.0", "id": ids[0], "result": "👋 one"})
        body = b'{"jsonrpc":"2.0","id":%d,"result":"deux"}' % ids[1]
        second = frame(body, b"content-length: %d\r\nContent-Type: x" % len(body))
        third = encode_frame({"jsonrpc": "2.0", "id": ids[2], "result": "三"})
        for byte in first:
            await peer.send_raw(bytes([byte]))
        await peer.send_raw(second + third)
        await anyio.wait_all_tasks_blocked()
        await peer.close()
    assert results == {0: "👋 one", 1: "deux", 2: "三"}


async def test_an_error_answer_raises_json_rpc_error() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)

        async def answer() -> None:
            request = await peer.receive()
            error = {"code": -32001, "message": "nope", "data": {"why": 1}}
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

        tg.start_soon(answer)
        with pytest.raises(JsonRpcError) as caught:
            await connection.request("textDocument/definition")
        await peer.close()
    assert (caught.value.code, caught.value.message, caught.value.data) == (-32001, "nope", {"why": 1})
    assert caught.value.method == "textDocument/definition"


async def test_a_timeout_sends_cancel_request_and_the_connection_stays_usable() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        with pytest.raises(RequestTimeout) as caught:
            await connection.request("slow", timeout=0.01)
        assert isinstance(caught.value, TimeoutError)
        assert (await peer.receive())["method"] == "slow"
        assert await peer.receive() == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}
        # The late answer is dropped; the next request is answered normally.
        await peer.send(
            {"jsonrpc": "2.0", "id": 1, "error": {"code": ErrorCode.REQUEST_CANCELLED, "message": "x"}}
        )

        async def answer() -> None:
            request = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": "ok"})

        tg.start_soon(answer)
        assert await connection.request("fast", timeout=5) == "ok"
        assert connection.statistics().pending_requests == 0
        await peer.close()


async def test_a_cancelled_caller_also_sends_cancel_request() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        with anyio.move_on_after(0.01):
            await connection.request("slow")
        assert (await peer.receive())["method"] == "slow"
        assert (await peer.receive())["method"] == "$/cancelRequest"
        await peer.close()


async def test_every_request_from_the_server_is_answered() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        await peer.start(tg)
        asks: dict[str, tuple[str, JsonValue]] = {
            "a": ("client/registerCapability", {"registrations": []}),
            "b": ("window/workDoneProgress/create", {"token": "t"}),
            "c": ("workspace/configuration", {"items": [{}, {}, {}]}),
            "d": ("workspace/applyEdit", {"edit": {}}),
            "e": ("client/unregisterCapability", {"unregisterations": []}),
        }
        for request_id, (method, params) in asks.items():
            await peer.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        answers = {message["id"]: message for message in [await peer.receive() for _ in asks]}
        await peer.close()
    assert answers["a"]["result"] is None
    assert answers["b"]["result"] is None
    assert answers["c"]["result"] == [None, None, None]
    assert answers["d"]["error"]["code"] == ErrorCode.METHOD_NOT_FOUND
    assert "result" in answers["e"]
    assert answers["e"]["result"] is None


async def test_a_failing_request_handler_answers_internal_error() -> None:
    async def broken(method: str, params: JsonValue) -> JsonValue:
        raise RuntimeError("handler bug")

    peer = Peer(request_handler=broken)
    async with anyio.create_task_group() as tg:
        await peer.start(tg)
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "anything"})
        answer = await peer.receive()
        await peer.close()
    assert answer["error"] == {"code": ErrorCode.INTERNAL_ERROR, "message": "handler bug"}


async def test_log_messages_progress_and_diagnostics_are_kept_in_bounded_deques() -> None:
    peer = Peer(log_capacity=3, event_capacity=2)
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        for n in range(5):
            await peer.send(
                {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": f"m{n}"}}
            )
        await peer.send(
            {"jsonrpc": "2.0", "method": "window/showMessage", "params": {"type": 1, "message": "shown"}}
        )
        begin = {"kind": "begin", "title": "Indexing", "percentage": 0, "message": "0 / 4"}
        await peer.send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "i", "value": begin}})
        await peer.send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "j", "value": begin}})
        report = {"kind": "report", "percentage": 50, "message": "2 / 4"}
        await peer.send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "i", "value": report}})
        await peer.send(
            {"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "j", "value": {"kind": "end"}}}
        )
        diagnostics = {"uri": "file:///a.swift", "diagnostics": [{"message": "x"}]}
        await peer.send(
            {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": diagnostics}
        )
        await peer.send({"jsonrpc": "2.0", "method": "telemetry/event", "params": {}})
        await anyio.wait_all_tasks_blocked()
        logs = [(entry.method, entry.type, entry.message) for entry in connection.log_messages]
        [work] = connection.work_in_progress()
        progress_count = len(connection.progress_events)
        [published] = connection.diagnostics
        await peer.close()
    assert logs == [
        ("window/logMessage", 3, "m3"),
        ("window/logMessage", 3, "m4"),
        ("window/showMessage", 1, "shown"),
    ]
    assert (work.token, work.title, work.message, work.percentage) == ("i", "Indexing", "2 / 4", 50)
    assert progress_count == 2
    assert (published.uri, published.diagnostics) == ("file:///a.swift", ({"message": "x"},))


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(frame(b"{}", b"Content-Length: twelve"), id="non-numeric-length"),
        pytest.param(frame(b"{}", b"Content-Type: application/json"), id="no-length"),
        pytest.param(frame(b"{}", b"Content-Length 2"), id="header-without-colon"),
        pytest.param(frame(b"{not json"), id="body-not-json"),
        pytest.param(frame(b"\xff\xfe"), id="body-not-utf8"),
        pytest.param(frame(b"[1, 2]"), id="body-not-an-object"),
        pytest.param(frame(b'{"jsonrpc": "2.0"}'), id="neither-method-nor-id"),
        pytest.param(b"Content-Length: %d\r\n\r\n" % (MAX_CONTENT_LENGTH + 1), id="too-long"),
        pytest.param(b"X" * (MAX_HEADER_BYTES + 10), id="endless-header"),
    ],
)
async def test_a_malformed_frame_fails_every_waiter_and_closes_the_connection(garbage: bytes) -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        errors: list[Exception] = []

        async def ask() -> None:
            with pytest.raises(FramingError) as caught:
                await connection.request("m")
            errors.append(caught.value)

        tg.start_soon(ask)
        tg.start_soon(ask)
        await peer.receive()
        await peer.receive()
        await peer.send_raw(garbage)
        await connection.wait_closed()
        await anyio.wait_all_tasks_blocked()
        assert len(errors) == 2
        assert errors[0] is not errors[1], "each waiter gets its own exception"
        assert isinstance(connection.close_reason, FramingError)
        with pytest.raises(FramingError):
            await connection.request("after")
        await peer.close()


@pytest.mark.parametrize(
    ("tail", "detail"),
    [
        pytest.param(b"", "(has it exited?)", id="between-frames"),
        pytest.param(b"Content-Len", "middle of a frame header", id="inside-header"),
        pytest.param(b"Content-Length: 10\r\n\r\n{}", "middle of a frame body", id="inside-body"),
    ],
)
async def test_end_of_input_wakes_every_waiter_with_connection_closed(tail: bytes, detail: str) -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        errors: list[ConnectionClosed] = []

        async def ask() -> None:
            with pytest.raises(ConnectionClosed) as caught:
                await connection.request("m")
            errors.append(caught.value)

        tg.start_soon(ask)
        await peer.receive()
        await peer.send_raw(tail)
        peer.outgoing.close()
        await connection.wait_closed()
        await anyio.wait_all_tasks_blocked()
        await peer.close()
    [error] = errors
    assert error.peer_gone
    assert detail in str(error)
    with pytest.raises(ConnectionClosed):
        await connection.notify("late")


async def test_closing_our_side_wakes_waiters_with_the_given_reason() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        errors: list[ConnectionClosed] = []

        async def ask() -> None:
            with pytest.raises(ConnectionClosed) as caught:
                await connection.request("m")
            errors.append(caught.value)

        tg.start_soon(ask)
        await peer.receive()
        await connection.aclose(ConnectionClosed("the process exited with status 3", peer_gone=True))
        await anyio.wait_all_tasks_blocked()
        await peer.close()
    [error] = errors
    assert (error.reason, error.peer_gone) == ("the process exited with status 3", True)
    assert connection.statistics().closed


async def test_closing_without_a_reason_means_closed_by_this_side() -> None:
    peer = Peer()
    async with anyio.create_task_group() as tg:
        connection = await peer.start(tg)
        await connection.aclose()
        with pytest.raises(ConnectionClosed) as caught:
            await connection.request("m")
        await peer.close()
    assert not caught.value.peer_gone
