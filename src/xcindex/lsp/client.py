"""Typed helpers for the requests xcindex sends to sourcekit-lsp.

Standard LSP messages are built and read with lsprotocol's types and its cattrs converter;
sourcekit-lsp's extensions (`textDocument/symbolInfo`, `workspace/synchronize`) have no
lsprotocol types and are handled as plain dicts behind the same kind of typed method. Answers
leave this module as plain frozen dataclasses (`LspRange`, `SymbolDetails`), so that nothing
outside the `lsp` package depends on lsprotocol.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from xcindex.lsp.jsonrpc import ErrorCode, JsonRpcConnection, JsonRpcError, JsonValue

_converter = get_converter()

SYNCHRONIZE_METHODS = ("workspace/synchronize", "sourcekit/workspace/synchronize")
"""sourcekit-lsp 6.3.1 answers the first spelling; newer releases prefer the second."""

DEFAULT_INITIALIZATION_OPTIONS: Mapping[str, JsonValue] = {
    # Forced on: 6.1 and 6.2.0 turned background indexing off when launched without options.
    "backgroundIndexing": True,
    # A didChange we send because a file changed on disk must not cancel another caller's
    # query on the same file.
    "cancelTextDocumentRequestsOnEditAndClose": False,
}

_LANGUAGE_IDS = {
    ".swift": "swift",
    ".m": "objective-c",
    ".mm": "objective-cpp",
    ".h": "objective-c",
    ".c": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".hpp": "cpp",
}


class UnexpectedResponse(Exception):
    """The peer's answer does not have the shape the protocol documents."""


@dataclass(frozen=True)
class LspRange:
    """A location as LSP speaks it: 0-based lines, UTF-16 `character` offsets."""

    uri: str
    start_line: int
    start_character: int
    end_line: int
    end_character: int


@dataclass(frozen=True)
class SymbolDetails:
    """One entry of sourcekit-lsp's `textDocument/symbolInfo` answer."""

    name: str | None
    usr: str | None
    container_name: str | None
    kind: int | None
    is_system: bool | None


def path_to_uri(path: Path) -> str:
    return path.absolute().as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The local path of a `file:` URI, None for any other scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


def language_id(path: Path) -> str:
    return _LANGUAGE_IDS.get(path.suffix.lower(), "swift")


def _structure(value: Any, response_type: type[Any], method: str) -> Any:
    """Read `value` as the `result` of lsprotocol's response type for `method`."""
    try:
        response = _converter.structure({"jsonrpc": "2.0", "id": 0, "result": value}, response_type)
    except Exception as exc:
        raise UnexpectedResponse(f"{method} answered {str(value)[:200]!r}: {exc}") from None
    return response.result


def _range_of(uri: str, value: lsp.Range) -> LspRange:
    return LspRange(uri, value.start.line, value.start.character, value.end.line, value.end.character)


def _ranges_of(result: Any) -> list[LspRange]:
    """Normalise Location | Location[] | LocationLink[] | None to ranges."""
    if result is None:
        return []
    items = [result] if isinstance(result, lsp.Location) else list(result)
    ranges: list[LspRange] = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            ranges.append(_range_of(item.target_uri, item.target_selection_range))
        else:
            ranges.append(_range_of(item.uri, item.range))
    return ranges


def _position_params(uri: str, position: tuple[int, int]) -> lsp.TextDocumentPositionParams:
    line, character = position
    return lsp.TextDocumentPositionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        position=lsp.Position(line=line, character=character),
    )


def initialize_params(
    root: Path,
    *,
    initialization_options: Mapping[str, JsonValue] = DEFAULT_INITIALIZATION_OPTIONS,
    process_id: int | None = None,
) -> lsp.InitializeParams:
    """What xcindex announces: one workspace folder and just the capabilities it uses.

    `window.workDoneProgress` is what makes sourcekit-lsp report indexing through
    `$/progress` (after asking `window/workDoneProgress/create`).
    """
    uri = path_to_uri(root)
    return lsp.InitializeParams(
        process_id=os.getpid() if process_id is None else process_id,
        root_uri=uri,
        workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=root.name or str(root))],
        initialization_options=dict(initialization_options),
        client_info=lsp.ClientInfo(name="xcindex"),
        capabilities=lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            workspace=lsp.WorkspaceClientCapabilities(workspace_folders=True, configuration=True),
            text_document=lsp.TextDocumentClientCapabilities(
                synchronization=lsp.TextDocumentSyncClientCapabilities(),
                references=lsp.ReferenceClientCapabilities(),
                definition=lsp.DefinitionClientCapabilities(link_support=False),
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(),
            ),
        ),
    )


class LspClient:
    """The requests and notifications xcindex sends, over one JsonRpcConnection.

    Every request takes its own timeout; on expiry the connection raises RequestTimeout after
    sending `$/cancelRequest`.
    """

    def __init__(self, connection: JsonRpcConnection) -> None:
        self.connection = connection
        self._synchronize_methods = list(SYNCHRONIZE_METHODS)

    async def initialize(self, params: lsp.InitializeParams, *, timeout: float) -> lsp.InitializeResult:
        raw = await self.connection.request(
            lsp.INITIALIZE, _converter.unstructure(params, lsp.InitializeParams), timeout=timeout
        )
        result: lsp.InitializeResult = _structure(raw, lsp.InitializeResponse, lsp.INITIALIZE)
        return result

    async def initialized(self) -> None:
        await self.connection.notify(lsp.INITIALIZED, {})

    async def did_open(self, uri: str, text: str, *, version: int, language: str = "swift") -> None:
        params = lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
        await self.connection.notify(lsp.TEXT_DOCUMENT_DID_OPEN, _converter.unstructure(params))

    async def did_change(self, uri: str, text: str, *, version: int) -> None:
        """Replace the whole text of an open document."""
        params = lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
        await self.connection.notify(lsp.TEXT_DOCUMENT_DID_CHANGE, _converter.unstructure(params))

    async def did_close(self, uri: str) -> None:
        params = lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        await self.connection.notify(lsp.TEXT_DOCUMENT_DID_CLOSE, _converter.unstructure(params))

    async def references(
        self,
        uri: str,
        position: tuple[int, int],
        *,
        include_declaration: bool = True,
        timeout: float = math.inf,
    ) -> list[LspRange]:
        line, character = position
        params = lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character),
            context=lsp.ReferenceContext(include_declaration=include_declaration),
        )
        raw = await self.connection.request(
            lsp.TEXT_DOCUMENT_REFERENCES, _converter.unstructure(params), timeout=timeout
        )
        return _ranges_of(_structure(raw, lsp.ReferencesResponse, lsp.TEXT_DOCUMENT_REFERENCES))

    async def definition(
        self, uri: str, position: tuple[int, int], *, timeout: float = math.inf
    ) -> list[LspRange]:
        params = _converter.unstructure(_position_params(uri, position))
        raw = await self.connection.request(lsp.TEXT_DOCUMENT_DEFINITION, params, timeout=timeout)
        return _ranges_of(_structure(raw, lsp.DefinitionResponse, lsp.TEXT_DOCUMENT_DEFINITION))

    async def symbol_info(
        self, uri: str, position: tuple[int, int], *, timeout: float = math.inf
    ) -> list[SymbolDetails]:
        """sourcekit-lsp's `textDocument/symbolInfo`: what symbol (USR) is at a position."""
        method = "textDocument/symbolInfo"
        params = _converter.unstructure(_position_params(uri, position))
        raw = await self.connection.request(method, params, timeout=timeout)
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise UnexpectedResponse(f"{method} answered {str(raw)[:200]!r}, expected a list")
        return [_symbol_details(item, method) for item in raw]

    async def synchronize(self, *, timeout: float = math.inf) -> None:
        """Wait until sourcekit-lsp has handled every request and finished indexing.

        Tries each known spelling of the request, falling back on "method not found", and
        remembers the one that worked.
        """
        last_error: JsonRpcError | None = None
        for method in list(self._synchronize_methods):
            try:
                await self.connection.request(method, {"index": True}, timeout=timeout)
            except JsonRpcError as exc:
                if exc.code != ErrorCode.METHOD_NOT_FOUND:
                    raise
                last_error = exc
                continue
            self._synchronize_methods = [method]
            return
        assert last_error is not None
        raise last_error

    async def shutdown(self, *, timeout: float = math.inf) -> None:
        await self.connection.request(lsp.SHUTDOWN, None, timeout=timeout)

    async def exit(self) -> None:
        await self.connection.notify(lsp.EXIT)


def _symbol_details(item: JsonValue, method: str) -> SymbolDetails:
    if not isinstance(item, dict):
        raise UnexpectedResponse(f"{method} answered an entry {str(item)[:200]!r}")

    def text(key: str) -> str | None:
        value = item.get(key)
        return value if isinstance(value, str) else None

    kind = item.get("kind")
    is_system = item.get("isSystem")
    return SymbolDetails(
        name=text("name"),
        usr=text("usr"),
        container_name=text("containerName"),
        kind=kind if isinstance(kind, int) else None,
        is_system=is_system if isinstance(is_system, bool) else None,
    )
