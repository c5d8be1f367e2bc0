"""The typed client: what it sends, and how it reads sourcekit-lsp's answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from xcindex.lsp.client import (
    LspClient,
    LspRange,
    SymbolDetails,
    UnexpectedResponse,
    initialize_params,
    language_id,
    path_to_uri,
    uri_to_path,
)
from xcindex.lsp.jsonrpc import (
    MAX_HEADER_BYTES,
    ErrorCode,
    JsonRpcConnection,
    JsonRpcError,
    JsonValue,
    decode_message,
    encode_frame,
    parse_content_length,
)

pytestmark = pytest.mark.anyio

Answer = Callable[[JsonValue], JsonValue]
LOCATION = {
    "uri": "file:///w/a.swift",
    "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}},
}
RANGE = LspRange("file:///w/a.swift", 1, 2, 1, 5)


class ScriptedServer:
    """Answers each request with answers[method](params); a missing method is -32601."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.received: list[dict[str, JsonValue]] = []
        self._to_client, client_in = anyio.create_memory_object_stream[bytes](100)
        client_out, self._from_client = anyio.create_memory_object_stream[bytes](100)
        self.connection = JsonRpcConnection(client_in, client_out)

    async def serve(self) -> None:
        reader = BufferedByteReceiveStream(self._from_client)
        async with self._to_client, reader:
            while True:
                try:
                    header = await reader.receive_until(b"\r\n\r\n", MAX_HEADER_BYTES)
                except anyio.IncompleteRead:
                    return
                message = decode_message(await reader.receive_exactly(parse_content_length(header)))
                self.received.append(message)
                if "id" not in message:
                    continue
                answer = self.answers.get(message["method"])
                if answer is None:
                    error = {"code": ErrorCode.METHOD_NOT_FOUND, "message": "method not found"}
                    reply: dict[str, JsonValue] = {"jsonrpc": "2.0", "id": message["id"], "error": error}
                else:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message.get("params"))}
                await self._to_client.send(encode_frame(reply))

    def methods(self) -> list[str]:
        return [str(message["method"]) for message in self.received]


async def with_client(answers: dict[str, Answer], body: Callable[[LspClient], object]) -> ScriptedServer:
    server = ScriptedServer(answers)
    async with anyio.create_task_group() as tg:
        await tg.start(server.connection.run)
        tg.start_soon(server.serve)
        result = body(LspClient(server.connection))
        assert hasattr(result, "__await__")
        await result
        await server.connection.aclose()
    return server


def test_initialize_announces_progress_and_forces_background_indexing() -> None:
    from lsprotocol.converters import get_converter

    params = get_converter().unstructure(initialize_params(Path("/w/My Package"), process_id=42))
    assert params["processId"] == 42
    assert params["rootUri"] == "file:///w/My%20Package"
    assert params["workspaceFolders"] == [{"uri": "file:///w/My%20Package", "name": "My Package"}]
    assert params["capabilities"]["window"]["workDoneProgress"] is True
    assert params["initializationOptions"]["backgroundIndexing"] is True
    assert params["capabilities"]["textDocument"]["definition"]["linkSupport"] is False


async def test_the_handshake_and_document_notifications() -> None:
    async def body(client: LspClient) -> None:
        result = await client.initialize(initialize_params(Path("/w")), timeout=5)
        assert result.capabilities.references_provider is True
        await client.initialized()
        await client.did_open("file:///w/a.swift", "let a = 1", version=1)
        await client.did_change("file:///w/a.swift", "let a = 2", version=2)
        await client.did_close("file:///w/a.swift")
        await client.shutdown(timeout=5)
        await client.exit()

    server = await with_client(
        {"initialize": lambda _: {"capabilities": {"referencesProvider": True}}, "shutdown": lambda _: None},
        body,
    )
    assert server.methods() == [
        "initialize",
        "initialized",
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didClose",
        "shutdown",
        "exit",
    ]
    did_change = server.received[3]["params"]
    assert did_change == {
        "textDocument": {"uri": "file:///w/a.swift", "version": 2},
        "contentChanges": [{"text": "let a = 2"}],
    }
    assert server.received[2]["params"]["textDocument"]["languageId"] == "swift"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param([LOCATION], id="locations"),
        pytest.param(LOCATION, id="one-location"),
        pytest.param(
            [
                {
                    "targetUri": LOCATION["uri"],
                    "targetRange": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
                    "targetSelectionRange": LOCATION["range"],
                }
            ],
            id="location-links",
        ),
    ],
)
async def test_definition_answers_of_every_shape_read_as_ranges(answer: JsonValue) -> None:
    found: list[list[LspRange]] = []

    async def body(client: LspClient) -> None:
        found.append(await client.definition("file:///w/a.swift", (1, 2), timeout=5))

    await with_client({"textDocument/definition": lambda _: answer}, body)
    assert found == [[RANGE]]


async def test_references_send_the_context_and_read_null_as_empty() -> None:
    found: list[list[LspRange]] = []

    async def body(client: LspClient) -> None:
        found.append(await client.references("file:///w/a.swift", (1, 2), include_declaration=False))

    server = await with_client({"textDocument/references": lambda _: None}, body)
    assert found == [[]]
    assert server.received[0]["params"] == {
        "textDocument": {"uri": "file:///w/a.swift"},
        "position": {"line": 1, "character": 2},
        "context": {"includeDeclaration": False},
    }


async def test_an_answer_of_the_wrong_shape_is_unexpected() -> None:
    async def body(client: LspClient) -> None:
        with pytest.raises(UnexpectedResponse):
            await client.references("file:///w/a.swift", (0, 0))
        with pytest.raises(UnexpectedResponse):
            await client.symbol_info("file:///w/a.swift", (0, 0))

    await with_client(
        {
            "textDocument/references": lambda _: [{"nope": 1}],
            "textDocument/symbolInfo": lambda _: {"usr": "s:x"},
        },
        body,
    )


async def test_symbol_info_reads_sourcekit_lsp_details() -> None:
    found: list[list[SymbolDetails]] = []
    details = [
        {
            "name": "fetchUser(id:)",
            "usr": "s:10CanaryCore11UserServiceC9fetchUser2idSSSgSi_tF",
            "kind": 6,
            "isSystem": False,
        },
        {"name": "local"},
    ]

    async def body(client: LspClient) -> None:
        found.append(await client.symbol_info("file:///w/a.swift", (7, 16)))

    await with_client({"textDocument/symbolInfo": lambda _: details}, body)
    assert found == [
        [
            SymbolDetails(
                "fetchUser(id:)", "s:10CanaryCore11UserServiceC9fetchUser2idSSSgSi_tF", None, 6, False
            ),
            SymbolDetails("local", None, None, None, None),
        ]
    ]


async def test_synchronize_falls_back_to_the_other_spelling_and_remembers_it() -> None:
    async def body(client: LspClient) -> None:
        await client.synchronize(timeout=5)
        await client.synchronize(timeout=5)

    server = await with_client({"sourcekit/workspace/synchronize": lambda _: {}}, body)
    assert server.methods() == [
        "workspace/synchronize",
        "sourcekit/workspace/synchronize",
        "sourcekit/workspace/synchronize",
    ]
    assert server.received[0]["params"] == {"index": True}


async def test_synchronize_with_neither_spelling_is_method_not_found() -> None:
    async def body(client: LspClient) -> None:
        with pytest.raises(JsonRpcError) as caught:
            await client.synchronize(timeout=5)
        assert caught.value.code == ErrorCode.METHOD_NOT_FOUND

    server = await with_client({}, body)
    assert server.methods() == ["workspace/synchronize", "sourcekit/workspace/synchronize"]


def test_file_uris_and_paths() -> None:
    path = Path("/w/Sources/Ünïcode Dir/a b.swift")
    uri = path_to_uri(path)
    assert uri == "file:///w/Sources/%C3%9Cn%C3%AFcode%20Dir/a%20b.swift"
    assert uri_to_path(uri) == path
    assert uri_to_path("file://localhost/w/a.swift") == Path("/w/a.swift")
    assert uri_to_path("sourcekit-lsp://generated/Swift.swiftinterface") is None
    assert uri_to_path("file://elsewhere/w/a.swift") is None
    assert (language_id(Path("a.swift")), language_id(Path("a.m")), language_id(Path("a.mm"))) == (
        "swift",
        "objective-c",
        "objective-cpp",
    )
