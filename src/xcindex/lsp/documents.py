"""The files one sourcekit-lsp child has open, and the texts that convert its answers.

A file is opened (`didOpen`) with its on-disk text on first use and updated (`didChange`)
when its mtime or size changed since; answers' columns are converted through the current
text of each file they name (both conventions, see xcindex.lsp.positions). Owned by one LSP
actor: its tasks are the only callers.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from xcindex.lsp.client import LspClient, LspRange, language_id, path_to_uri, uri_to_path
from xcindex.lsp.faults import LspStage, classify_fault
from xcindex.lsp.positions import LspLocation, SourceText, make_location

TEXT_CACHE_SIZE = 256
"""Files whose text is kept to convert answer columns, per child."""


@dataclass(frozen=True)
class OpenDocument:
    uri: str
    version: int
    stamp: tuple[int, int]
    text: SourceText


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def _load_if_changed(path: Path, known: tuple[int, int] | None) -> tuple[tuple[int, int], str | None]:
    """The file's (mtime, size) stamp, and its text unless the stamp is `known`."""
    stamp = _stamp(path)
    if stamp == known:
        return stamp, None
    return stamp, path.read_bytes().decode("utf-8")


class OpenDocuments:
    """The documents open in one child (through `client`); `note` records in its log."""

    def __init__(self, client: LspClient, note: Callable[[str], None]) -> None:
        self._client = client
        self._note = note
        self._documents: dict[Path, OpenDocument] = {}
        self._document_locks: dict[Path, anyio.Lock] = {}
        self._texts: OrderedDict[Path, tuple[tuple[int, int], SourceText]] = OrderedDict()

    async def open(self, path: Path) -> OpenDocument:
        """The file opened in the child with its current on-disk text (didOpen, or didChange
        when its mtime or size changed since)."""
        real = Path(await anyio.to_thread.run_sync(os.path.realpath, path))
        lock = self._document_locks.setdefault(real, anyio.Lock())
        async with lock:
            known = self._documents.get(real)
            try:
                stamp, text = await anyio.to_thread.run_sync(
                    _load_if_changed, real, None if known is None else known.stamp
                )
            except (OSError, UnicodeDecodeError) as exc:
                raise classify_fault(
                    exc, LspStage.FILE_READ, context=f"could not read {path} to open it in sourcekit-lsp"
                ) from exc
            if known is not None and text is None:
                return known
            assert text is not None
            client = self._client
            assert client is not None
            if known is None:
                document = OpenDocument(path_to_uri(real), 1, stamp, SourceText.from_text(text))
                await client.did_open(document.uri, text, version=1, language=language_id(real))
            else:
                document = OpenDocument(known.uri, known.version + 1, stamp, SourceText.from_text(text))
                await client.did_change(document.uri, text, version=document.version)
            self._documents[real] = document
            self._remember_text(real, stamp, document.text)
            return document

    def _remember_text(self, path: Path, stamp: tuple[int, int], text: SourceText) -> None:
        self._texts[path] = (stamp, text)
        self._texts.move_to_end(path)
        while len(self._texts) > TEXT_CACHE_SIZE:
            self._texts.popitem(last=False)

    async def _text_of(self, path: Path) -> SourceText | None:
        """The current text of a file named in an answer, None when it cannot be read."""
        cached = self._texts.get(path)
        try:
            stamp, text = await anyio.to_thread.run_sync(
                _load_if_changed, path, None if cached is None else cached[0]
            )
        except (OSError, UnicodeDecodeError) as exc:
            self._note(f"cannot read {path} to convert columns: {exc}")
            return None
        if text is None:
            assert cached is not None
            self._texts.move_to_end(path)
            return cached[1]
        source = SourceText.from_text(text)
        self._remember_text(path, stamp, source)
        return source

    async def locations(self, ranges: Sequence[LspRange], name: str) -> tuple[LspLocation, ...]:
        """Answers with both column conventions, from each named file's current text.

        `name` is the identifier asked about: it tells sourcekit-lsp's UTF-8 `character`
        (its index answers) from a UTF-16 one where they differ (see xcindex.lsp.positions).
        """
        texts: dict[Path, SourceText | None] = {}
        locations: list[LspLocation] = []
        for item in ranges:
            path = uri_to_path(item.uri)
            if path is None:
                self._note(f"dropped a location outside the file system: {item.uri}")
                continue
            if path not in texts:
                texts[path] = await self._text_of(path)
            locations.append(
                make_location(
                    path,
                    (item.start_line, item.start_character),
                    (item.end_line, item.end_character),
                    texts[path],
                    name=name,
                )
            )
        return tuple(locations)
