"""Compare call_hierarchy and type_hierarchy with sourcekit-lsp's own `callHierarchy` and
`typeHierarchy` requests (prepare, then incomingCalls/outgoingCalls, supertypes/subtypes).

Talks to a sourcekit-lsp child directly (lsp/client.py's connection), on a package that
sourcekit-lsp may build into (`.build/index-build`): use a copy. Each question is asked at
a symbol's definition and compared at depth 1 by the set of related symbols (name and
definition line) and, for calls, the set of call sites (line, UTF-8 column).
`python -m bench.lsp_hierarchy PACKAGE` prints the comparison for the benchmark package;
tests/integration/test_hierarchy_vs_lsp.py checks it on the fixture.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from xcindex.lsp.client import LspClient, initialize_params, path_to_uri, uri_to_path
from xcindex.lsp.jsonrpc import JsonRpcConnection
from xcindex.toolchain import find_sourcekit_lsp

Related = frozenset[tuple[str, str, int]]
"""(base name, path, 1-based line of its definition)"""
Sites = frozenset[tuple[str, int, int]]
"""(path, 1-based line, 1-based UTF-8 column)"""


@dataclass(frozen=True)
class Comparison:
    question: str
    xcindex: Related
    lsp: Related
    xcindex_sites: Sites
    lsp_sites: Sites

    @property
    def agrees(self) -> bool:
        return self.xcindex == self.lsp and self.xcindex_sites == self.lsp_sites

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "agrees": self.agrees,
            "onlyXcindex": sorted(map(str, self.xcindex - self.lsp)),
            "onlyLsp": sorted(map(str, self.lsp - self.xcindex)),
            "sitesOnlyXcindex": sorted(map(str, self.xcindex_sites - self.lsp_sites)),
            "sitesOnlyLsp": sorted(map(str, self.lsp_sites - self.xcindex_sites)),
        }


def lsp_base_name(name: str) -> str:
    """`Type.method(x:)` → `method`; an extension item `Circle: Measurable` → `Circle`."""
    if ": " in name:
        return name.split(": ")[0]
    return name.split("(")[0].rsplit(".", 1)[-1]


def _utf16_to_utf8_column(path: Path, line: int, character: int) -> int:
    try:
        text = path.read_text(encoding="utf-8").splitlines()[line]
    except (OSError, IndexError):
        return character + 1
    units = 0
    for index, char in enumerate(text):
        if units >= character:
            return len(text[:index].encode("utf-8")) + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(text.encode("utf-8")) + 1


def _utf8_to_utf16(path: Path, line: int, column: int) -> int:
    text = path.read_text(encoding="utf-8").splitlines()[line - 1]
    prefix = text.encode("utf-8")[: column - 1].decode("utf-8", "replace")
    return sum(2 if ord(c) > 0xFFFF else 1 for c in prefix)


class LspHierarchy:
    def __init__(self, client: LspClient, root: Path) -> None:
        self.client = client
        self.root = root
        self._opened: set[str] = set()

    async def _open(self, path: Path) -> str:
        uri = path_to_uri(path)
        if uri not in self._opened:
            text = await anyio.Path(path).read_text(encoding="utf-8")
            await self.client.did_open(uri, text, version=1)
            self._opened.add(uri)
        return uri

    async def _prepare(self, method: str, path: Path, line: int, column: int) -> list[Any]:
        uri = await self._open(path)
        position = {"line": line - 1, "character": _utf8_to_utf16(path, line, column)}
        raw = await self.client.connection.request(
            method, {"textDocument": {"uri": uri}, "position": position}, timeout=120
        )
        return list(raw) if isinstance(raw, list) else []

    def _item(self, item: Any) -> tuple[str, str, int]:
        path = uri_to_path(item["uri"]) or Path(item["uri"])
        return (
            lsp_base_name(str(item["name"])),
            os.path.realpath(path),
            int(item["selectionRange"]["start"]["line"]) + 1,
        )

    def _sites(self, item: Any, ranges: Sequence[Any]) -> set[tuple[str, int, int]]:
        path = uri_to_path(item["uri"]) or Path(item["uri"])
        return {
            (
                os.path.realpath(path),
                int(r["start"]["line"]) + 1,
                _utf16_to_utf8_column(path, int(r["start"]["line"]), int(r["start"]["character"])),
            )
            for r in ranges
        }

    async def calls(self, path: Path, line: int, column: int, direction: str) -> tuple[Related, Sites]:
        related: set[tuple[str, str, int]] = set()
        sites: set[tuple[str, int, int]] = set()
        for item in await self._prepare("textDocument/prepareCallHierarchy", path, line, column):
            method = (
                "callHierarchy/incomingCalls" if direction == "incoming" else "callHierarchy/outgoingCalls"
            )
            answer = await self.client.connection.request(method, {"item": item}, timeout=120)
            for call in answer if isinstance(answer, list) else []:
                assert isinstance(call, dict)
                other = call["from" if direction == "incoming" else "to"]
                related.add(self._item(other))
                # Incoming ranges are in the caller's file; outgoing ones in the item's.
                sites |= self._sites(other if direction == "incoming" else item, call["fromRanges"])
        return frozenset(related), frozenset(sites)

    async def types(self, path: Path, line: int, column: int, direction: str) -> Related:
        related: set[tuple[str, str, int]] = set()
        for item in await self._prepare("textDocument/prepareTypeHierarchy", path, line, column):
            answer = await self.client.connection.request(
                f"typeHierarchy/{direction}", {"item": item}, timeout=120
            )
            for other in answer if isinstance(answer, list) else []:
                related.add(self._item(other))
        return frozenset(related)


@asynccontextmanager
async def lsp_hierarchy(root: Path) -> AsyncIterator[LspHierarchy]:
    """A sourcekit-lsp child for `root`, initialised and done indexing."""
    binary = find_sourcekit_lsp()
    process: Process = await anyio.open_process([str(binary)], cwd=str(root), stderr=subprocess.DEVNULL)
    async with process:
        assert process.stdout is not None
        assert process.stdin is not None
        connection = JsonRpcConnection(process.stdout, process.stdin, name="sourcekit-lsp[compare]")
        client = LspClient(connection)
        async with anyio.create_task_group() as tg:
            await tg.start(connection.run)
            try:
                await client.initialize(initialize_params(root), timeout=120)
                await client.initialized()
                await client.synchronize(timeout=1800)
                yield LspHierarchy(client, root)
            finally:
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(10):
                        await client.shutdown(timeout=10)
                        await client.exit()
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                        await process.wait()
                    await connection.aclose()
                    tg.cancel_scope.cancel()


async def compare(root: Path, questions: Sequence[tuple[str, str, str]]) -> list[Comparison]:
    """questions: (kind "calls"|"types", symbol name as find_symbol takes it, direction)."""
    from xcindex.engine import Engine

    results: list[Comparison] = []
    async with Engine() as engine, lsp_hierarchy(root) as lsp:
        project = str(root)
        for kind, name, direction in questions:
            found = (await engine.find_symbol(name, project_path=project)).matches
            assert len(found) == 1, (name, [m.symbol.usr for m in found])
            definition = found[0].definition
            assert definition is not None, name
            path, line, column = Path(definition.path), definition.line, definition.column
            if kind == "calls":
                answer = await engine.call_hierarchy(
                    found[0].symbol.usr, direction=direction, project_path=project
                )
                mine = {_named(g.caller if direction == "incoming" else g.callee) for g in answer.groups}
                my_sites = {
                    (_real(s.occurrence.path), s.occurrence.line, s.occurrence.column)
                    for g in answer.groups
                    for s, _ in g.sites
                }
                theirs, their_sites = await lsp.calls(path, line, column, direction)
                results.append(
                    Comparison(
                        f"calls {direction} {name}", frozenset(mine), theirs, frozenset(my_sites), their_sites
                    )
                )
            else:
                answer_t = await engine.type_hierarchy(
                    found[0].symbol.usr, direction=direction, project_path=project
                )
                mine = {
                    _named(link.supertype if direction == "supertypes" else link.subtype)
                    for link in answer_t.links
                }
                theirs = await lsp.types(path, line, column, direction)
                results.append(
                    Comparison(f"types {direction} {name}", frozenset(mine), theirs, frozenset(), frozenset())
                )
    return results


def _real(path: str) -> str:
    return os.path.realpath(path)


def _named(site: Any) -> tuple[str, str, int]:
    definition = site.definition
    return (
        str(site.symbol.name).split("(")[0],
        _real(definition.path) if definition else "",
        definition.line if definition else 0,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.lsp_hierarchy", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "package", type=Path, help="a built copy of the package (sourcekit-lsp builds into it)"
    )
    parser.add_argument("--family", type=int, default=3)
    args = parser.parse_args(argv)
    k = args.family
    questions = [
        ("calls", f"Base{k}.compute(x:)", "incoming"),
        ("calls", f"Derived{k}.compute(x:)", "incoming"),
        ("calls", f"Base{k}.run(times:)", "outgoing"),
        ("calls", f"Service{k}.handle(value:)", "incoming"),
        ("calls", f"Base{k}.step3(input:)", "incoming"),
        ("types", f"Base{k}", "subtypes"),
        ("types", f"Leaf{k}", "supertypes"),
        ("types", f"Service{k}", "subtypes"),
        ("types", f"Impl{k}B", "supertypes"),
    ]
    results = anyio.run(compare, Path(os.path.realpath(args.package)), questions)
    print(json.dumps([r.to_json() for r in results], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
