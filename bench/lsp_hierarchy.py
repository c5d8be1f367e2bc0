"""Compare call_hierarchy and type_hierarchy with sourcekit-lsp's own `callHierarchy` and
`typeHierarchy` requests (prepare, then incomingCalls/outgoingCalls, supertypes/subtypes).

Talks to a sourcekit-lsp child directly (lsp/client.py's connection), on a package that
sourcekit-lsp may build into (`.build/index-build`): use a copy. Each question is asked at
a symbol's definition and compared at depth 1 by the set of related symbols (name and
definition line) and, for calls, the set of call sites (line, UTF-8 column).
Every difference is put under the kind that explains it (`differences`, DIFFERENCE_KINDS)
or under "unexplained". `python -m bench.lsp_hierarchy PACKAGE` prints the comparison for a
built copy of a benchmark package (its subjects, both directions each, and one family's
override chain); tests/integration/test_hierarchy_vs_lsp.py checks the fixture.
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
from xcindex.project.toolchain import find_sourcekit_lsp
from xcindex.tools.graph.call_hierarchy import CallGroup

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
    xcindex_via: Related = frozenset()
    """Symbols xcindex relates only through dynamic dispatch (viaDispatch groups)."""
    xcindex_via_sites: Sites = frozenset()
    """Sites xcindex lists as dynamic calls through a base or requirement (resolvesTo ≠ callee)."""

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


DIFFERENCE_KINDS = {
    "dispatch": "xcindex lists what dynamic dispatch reaches beyond the symbol the call names "
    "(incoming: calls through every base and requirement, transitively; outgoing: every override "
    "and witness); sourcekit-lsp follows one level of overrides (incoming) or none (outgoing)",
    "super_call": "sourcekit-lsp lists `super.m()` as a call of the overriding method, which it "
    "cannot run; xcindex lists it under the method it names",
    "external_callee": "sourcekit-lsp lists standard-library and SDK callees; xcindex counts them "
    "(externalCallCount)",
    "implicit_accessor": "sourcekit-lsp lists implicit getter/setter calls (a property read); "
    "xcindex leaves them to find_references",
    "utf16_column": "after non-ASCII text sourcekit-lsp returns the index's UTF-8 column as a UTF-16 offset",
    "extension_item": "sourcekit-lsp anchors a conformance declared in an extension at the "
    "extension and lists a protocol's own extensions as its subtypes; types are compared by name",
}


def differences(result: Comparison, root: Path) -> dict[str, list[str]]:
    """Each difference between the two answers under the kind that explains it (the keys
    of DIFFERENCE_KINDS), or under "unexplained"."""
    found: dict[str, list[str]] = {}

    def note(kind: str, item: object) -> None:
        found.setdefault(kind, []).append(str(item))

    kind, direction, name = result.question.split()[:3]
    if kind == "types":
        mine, theirs = {n for n, _, _ in result.xcindex}, {n for n, _, _ in result.lsp}
        for type_name in theirs - mine:
            kind_of = "extension_item" if type_name == name else "unexplained"
            note(kind_of, f"sourcekit-lsp only: {type_name}")
        for type_name in mine - theirs:
            note("unexplained", f"xcindex only: {type_name}")
        if mine == theirs and result.xcindex != result.lsp:
            note("extension_item", "same types, other anchors")
        return found
    only_lsp = set(result.lsp_sites - result.xcindex_sites)
    only_mine = set(result.xcindex_sites - result.lsp_sites)
    for site in sorted(only_lsp):
        shifted = [s for s in only_mine if s[:2] == site[:2]] if _non_ascii_before(site) else []
        if len(shifted) == 1:
            only_mine.discard(shifted[0])
            note("utf16_column", f"{_rel(root, site)} (xcindex column {shifted[0][2]})")
        elif _is_super_call(site):
            note("super_call", _rel(root, site))
        elif direction == "outgoing":
            pass  # judged with the callees below
        else:
            note("unexplained", f"sourcekit-lsp-only site {_rel(root, site)}")
    for site in sorted(only_mine):
        note(
            "dispatch" if site in result.xcindex_via_sites else "unexplained",
            f"xcindex-only site {_rel(root, site)}",
        )
    for other in sorted(result.xcindex - result.lsp):
        note(
            "dispatch" if other in result.xcindex_via else "unexplained",
            f"xcindex only: {other[0]}:{other[2]}",
        )
    for other in sorted(result.lsp - result.xcindex):
        other_name, path, line = other
        if direction == "outgoing" and not path.startswith(str(root)):
            note("external_callee", other_name)
        elif direction == "outgoing" and other_name.startswith(("getter:", "setter:")):
            note("implicit_accessor", other_name)
        elif (
            direction == "incoming"
            and (other_name == name.split(".")[-1].split("(")[0])
            and any(_is_super_call(s) for s in only_lsp)
        ):
            note("super_call", f"sourcekit-lsp only: {other_name}:{line}")
        else:
            note("unexplained", f"sourcekit-lsp only: {other_name}:{line}")
    return found


def _rel(root: Path, site: tuple[str, int, int]) -> str:
    path = os.path.relpath(site[0], root) if site[0].startswith(str(root)) else site[0]
    return f"{path}:{site[1]}:{site[2]}"


def _line(path: str, line: int) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, IndexError):
        return ""


def _non_ascii_before(site: tuple[str, int, int]) -> bool:
    return not _line(site[0], site[1]).isascii()


def _is_super_call(site: tuple[str, int, int]) -> bool:
    text = _line(site[0], site[1])
    before = text.encode("utf-8")[: max(site[2] - 1, 0)].decode("utf-8", "replace").rstrip()
    return before.endswith(("super.", "super"))


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
                groups: list[CallGroup] = []
                offset: int | None = 0
                while offset is not None:  # every page: a hub has thousands of callers
                    answer = await engine.call_hierarchy(
                        found[0].symbol.usr, direction=direction, offset=offset, project_path=project
                    )
                    groups += answer.groups
                    offset = answer.next_offset()
                incoming = direction == "incoming"
                mine = {_named(g.caller if incoming else g.callee) for g in groups}
                my_sites = {_place(s) for g in groups for s, _ in g.sites}
                via = {_named(g.caller if incoming else g.callee) for g in groups if g.via_dispatch}
                via_sites = {_place(s) for g in groups for s, usr in g.sites if usr != g.callee.symbol.usr}
                theirs, their_sites = await lsp.calls(path, line, column, direction)
                results.append(
                    Comparison(
                        f"calls {direction} {name}",
                        frozenset(mine),
                        theirs,
                        frozenset(my_sites),
                        their_sites,
                        frozenset(via),
                        frozenset(via_sites),
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


def _place(site: Any) -> tuple[str, int, int]:
    return (_real(site.occurrence.path), site.occurrence.line, site.occurrence.column)


def _named(site: Any) -> tuple[str, str, int]:
    definition = site.definition
    return (
        str(site.symbol.name).split("(")[0],
        _real(definition.path) if definition else "",
        definition.line if definition else 0,
    )


def questions_for(manifest: dict[str, Any], family: int) -> list[tuple[str, str, str]]:
    """The benchmark's own subjects (both directions each), and a family's override chain."""
    questions: list[tuple[str, str, str]] = []
    for query in manifest["queries"]:
        kind, name = query["kind"], query["name"]
        if any(word in kind for word in ("method", "requirement", "function")):
            questions += [("calls", name, "incoming"), ("calls", name, "outgoing")]
        elif kind in ("class", "protocol", "marker protocol", "generic struct"):
            questions += [("types", name, "supertypes"), ("types", name, "subtypes")]
    k = family
    questions += [
        ("calls", f"Derived{k}.compute(x:)", "incoming"),
        ("calls", f"Leaf{k}.compute(x:)", "incoming"),
        ("calls", f"Base{k}.run(times:)", "outgoing"),
        ("calls", f"Base{k}.step3(input:)", "incoming"),
        ("calls", f"Base{k}.step3(input:)", "outgoing"),
        ("types", f"Leaf{k}", "supertypes"),
        ("types", f"Impl{k}B", "supertypes"),
    ]
    return questions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.lsp_hierarchy", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "package", type=Path, help="a built copy of a benchmark package (sourcekit-lsp builds into it)"
    )
    parser.add_argument(
        "--family", type=int, help="the family whose chain to ask about (default: the manifest's)"
    )
    args = parser.parse_args(argv)
    root = Path(os.path.realpath(args.package))
    manifest = json.loads((root / "bench-manifest.json").read_text())
    family = args.family
    if family is None:
        family = int(manifest["queries"][0]["name"].removeprefix("Base"))
    results = anyio.run(compare, root, questions_for(manifest, family))
    report = []
    for result in results:
        explained = differences(result, root)
        report.append({**result.to_json(), "differences": explained})
    agreeing = sum(1 for r in report if r["agrees"])
    kinds: dict[str, int] = {}
    for entry in report:
        for kind in entry["differences"]:
            kinds[kind] = kinds.get(kind, 0) + 1
    print(json.dumps({"questions": report, "agree": agreeing, "of": len(report), "kinds": kinds}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
