"""Compare call_hierarchy and type_hierarchy with sourcekit-lsp's own `callHierarchy` and
`typeHierarchy` requests (prepare, then incomingCalls/outgoingCalls, supertypes/subtypes).

Talks to a sourcekit-lsp child directly (lsp/client.py's connection), on a package that
sourcekit-lsp may build into (`.build/index-build`): use a copy. Each question is asked at
a symbol's definition and compared at depth 1 by the set of related symbols (name and
definition line) and, for calls, the set of (caller or callee, call site) pairs (line,
UTF-8 column). Every difference is put under the kind that explains it (`differences`,
DIFFERENCE_KINDS) or under "unexplained"; a call only xcindex lists is dispatch only when
sourcekit-lsp itself (`definition` at the site, then `implementation`) reaches the method. `python -m bench.lsp_hierarchy PACKAGE` prints the comparison for a
built copy of a benchmark package (its subjects, both directions each, and one family's
override chain); tests/integration/test_hierarchy_vs_lsp.py checks the fixture.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from xcindex.lsp.client import (
    DEFAULT_INITIALIZATION_OPTIONS,
    LspClient,
    initialize_params,
    path_to_uri,
    uri_to_path,
)
from xcindex.lsp.jsonrpc import JsonRpcConnection
from xcindex.project.toolchain import find_sourcekit_lsp
from xcindex.tools.graph.call_hierarchy import CallGroup

Symbol = tuple[str, str, int]
"""(base name, path, 1-based line of its definition)"""
Site = tuple[str, int, int]
"""(path, 1-based line, 1-based UTF-8 column)"""
Call = tuple[Symbol, Site]
"""A related symbol (caller incoming, callee outgoing) and one call site."""


@dataclass(frozen=True)
class Comparison:
    question: str
    xcindex: frozenset[Symbol]
    lsp: frozenset[Symbol]
    xcindex_calls: frozenset[Call] = frozenset()
    lsp_calls: frozenset[Call] = frozenset()
    dispatch_by_lsp: frozenset[Call] = frozenset()
    """Of xcindex's calls sourcekit-lsp does not list, those it confirms as dynamic dispatch:
    its own definition of the symbol called at the site reaches the called method (the one
    asked about incoming, the callee outgoing) through its implementation relation
    (overrides and witnesses, transitively). Nothing here comes from xcindex's answer."""

    @property
    def agrees(self) -> bool:
        return self.xcindex == self.lsp and self.xcindex_calls == self.lsp_calls

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "agrees": self.agrees,
            "onlyXcindex": sorted(map(str, self.xcindex - self.lsp)),
            "onlyLsp": sorted(map(str, self.lsp - self.xcindex)),
            "callsOnlyXcindex": sorted(map(str, self.xcindex_calls - self.lsp_calls)),
            "callsOnlyLsp": sorted(map(str, self.lsp_calls - self.xcindex_calls)),
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
    "macro_argument": "for a call inside a freestanding macro's arguments (`#expect(factorial(n) == "
    "expected)`) sourcekit-lsp gives the macro's `#`; xcindex the call as written",
    "extension_item": "sourcekit-lsp anchors a conformance declared in an extension at the "
    "extension and lists a protocol's own extensions as its subtypes",
}


def differences(result: Comparison, root: Path) -> dict[str, list[str]]:
    """Each difference between the two answers, as text naming the symbol and the site,
    under the kind that explains it (the keys of DIFFERENCE_KINDS), or under "unexplained".
    A kind is granted on evidence outside xcindex's answer: the source text at the site
    (super calls, non-ASCII text, extensions), where sourcekit-lsp's callee is defined or
    how it is named (external callees, implicit accessors), and sourcekit-lsp's own
    implementation relation (dispatch, `dispatch_by_lsp`)."""
    found: dict[str, list[str]] = {}

    def note(kind: str, item: str) -> None:
        found.setdefault(kind, []).append(item)

    kind, direction, name = result.question.split()[:3]
    if kind == "types":
        _type_differences(result, root, name, note)
        return {k: sorted(v) for k, v in found.items()}
    role = "caller" if direction == "incoming" else "callee"
    only_lsp = set(result.lsp_calls - result.xcindex_calls)
    only_mine = set(result.xcindex_calls - result.lsp_calls)
    for symbol, site in sorted(only_lsp):
        where = f"{role} {_symbol(root, symbol)} at {_rel(root, site)}"
        shifted = [(s, t) for s, t in only_mine if s == symbol and _utf8_read_as_utf16(t) == site]
        if len(shifted) == 1:
            only_mine.discard(shifted[0])
            note("utf16_column", f"{where} (xcindex column {shifted[0][1][2]})")
        elif direction == "incoming" and _is_super_call(site):
            note("super_call", where)
        elif direction == "incoming" and _at_a_macro(site):
            inside = [(s, t) for s, t in only_mine if s == symbol and t[:2] == site[:2] and t[2] > site[2]]
            only_mine.difference_update(inside)
            note("macro_argument", where)
        elif direction == "outgoing" and not symbol[1].startswith(str(root)):
            note("external_callee", where)
        elif direction == "outgoing" and symbol[0].startswith(("getter:", "setter:")):
            note("implicit_accessor", where)
        else:
            note("unexplained", f"only sourcekit-lsp: {where}")
    for call in sorted(only_mine):
        where = f"{role} {_symbol(root, call[0])} at {_rel(root, call[1])}"
        note("dispatch" if call in result.dispatch_by_lsp else "unexplained", where)
    listed = {s for s, _ in result.xcindex_calls | result.lsp_calls}
    for symbol in sorted((result.xcindex ^ result.lsp) - listed):
        note("unexplained", f"{role} {_symbol(root, symbol)} with no call site")
    return {k: sorted(v) for k, v in found.items()}


def _type_differences(result: Comparison, root: Path, name: str, note: Callable[[str, str], None]) -> None:
    mine = {n: (p, line) for n, p, line in result.xcindex}
    theirs = {n: (p, line) for n, p, line in result.lsp}
    for type_name, (path, line) in sorted(theirs.items()):
        at = _at(root, path, line)
        if type_name not in mine:
            own_extension = type_name == name and _extends(path, line, type_name)
            note(
                "extension_item" if own_extension else "unexplained",
                f"only sourcekit-lsp: {type_name} at {at}",
            )
        elif mine[type_name] != (path, line):
            item = f"{type_name} at {at} (xcindex: {_at(root, *mine[type_name])})"
            note("extension_item" if _extends(path, line, type_name) else "unexplained", item)
    for type_name in sorted(mine.keys() - theirs.keys()):
        note("unexplained", f"only xcindex: {type_name}")


def _extends(path: str, line: int, type_name: str) -> bool:
    """The line declares an extension of the type (where sourcekit-lsp anchors it)."""
    return re.match(rf"\s*(?:\w+\s+)*extension\s+{re.escape(type_name)}\b", _line(path, line)) is not None


def _symbol(root: Path, symbol: Symbol) -> str:
    """`name (path:line)` for the project's symbols, the bare name for the SDK's."""
    name, path, line = symbol
    if not path.startswith(str(root)):
        return name
    return f"{name} ({_at(root, path, line)})"


def _at(root: Path, path: str, line: int) -> str:
    return f"{os.path.relpath(path, root) if path.startswith(str(root)) else path}:{line}"


def _rel(root: Path, site: Site) -> str:
    return f"{_at(root, site[0], site[1])}:{site[2]}"


def _line(path: str, line: int) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, IndexError):
        return ""


def _utf8_read_as_utf16(site: Site) -> Site:
    """Where a site lands when its UTF-8 offset is read as a UTF-16 one (the same site on
    an ASCII line)."""
    path, line, column = site
    return (path, line, _utf16_to_utf8_column(Path(path), line - 1, column - 1))


def _at_a_macro(site: tuple[str, int, int]) -> bool:
    """The site is a freestanding macro's `#` (`#expect(factorial(n) == expected)`)."""
    text = _line(site[0], site[1])
    return text.encode("utf-8")[max(site[2] - 1, 0) :].startswith(b"#")


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

    async def _at_position(self, method: str, path: Path, line: int, column: int) -> list[Any]:
        uri = await self._open(path)
        position = {"line": line - 1, "character": _utf8_to_utf16(path, line, column)}
        raw = await self.client.connection.request(
            method, {"textDocument": {"uri": uri}, "position": position}, timeout=120
        )
        if isinstance(raw, dict):
            return [raw]
        return list(raw) if isinstance(raw, list) else []

    def _item(self, item: Any) -> Symbol:
        path = uri_to_path(item["uri"]) or Path(item["uri"])
        return (
            lsp_base_name(str(item["name"])),
            os.path.realpath(path),
            int(item["selectionRange"]["start"]["line"]) + 1,
        )

    def _sites(self, item: Any, ranges: Sequence[Any]) -> set[Site]:
        path = uri_to_path(item["uri"]) or Path(item["uri"])
        return {
            (
                os.path.realpath(path),
                int(r["start"]["line"]) + 1,
                _utf16_to_utf8_column(path, int(r["start"]["line"]), int(r["start"]["character"])),
            )
            for r in ranges
        }

    async def calls(
        self, path: Path, line: int, column: int, direction: str
    ) -> tuple[frozenset[Symbol], frozenset[Symbol], frozenset[Call]]:
        """The symbols prepared at the position, their callers or callees, and the
        (caller or callee, site) pairs."""
        prepared: set[Symbol] = set()
        related: set[Symbol] = set()
        calls: set[Call] = set()
        for item in await self._at_position("textDocument/prepareCallHierarchy", path, line, column):
            prepared.add(self._item(item))
            method = (
                "callHierarchy/incomingCalls" if direction == "incoming" else "callHierarchy/outgoingCalls"
            )
            answer = await self.client.connection.request(method, {"item": item}, timeout=120)
            for call in answer if isinstance(answer, list) else []:
                assert isinstance(call, dict)
                other = call["from" if direction == "incoming" else "to"]
                related.add(self._item(other))
                # Incoming ranges are in the caller's file; outgoing ones in the item's.
                sites = self._sites(other if direction == "incoming" else item, call["fromRanges"])
                calls |= {(self._item(other), site) for site in sites}
        return frozenset(prepared), frozenset(related), frozenset(calls)

    async def reachable(self, site: Site) -> frozenset[tuple[str, int]]:
        """The definitions (path, line) a call at the site can run, by sourcekit-lsp alone:
        what it gives as the definition there, and everything its `implementation` request
        gives for those, transitively (overrides, witnesses, conforming types)."""
        path = Path(site[0])
        found = {
            place
            for location in await self._at_position("textDocument/definition", path, site[1], site[2])
            if (place := _location(location)) is not None
        }
        pending = list(found)
        while pending and len(found) < 500:
            place_path, place_line, place_column = pending.pop()
            for location in await self._at_position(
                "textDocument/implementation", Path(place_path), place_line, place_column
            ):
                place = _location(location)
                if place is not None and place not in found:
                    found.add(place)
                    pending.append(place)
        return frozenset((p, line) for p, line, _ in found)

    async def types(self, path: Path, line: int, column: int, direction: str) -> frozenset[Symbol]:
        related: set[Symbol] = set()
        for item in await self._at_position("textDocument/prepareTypeHierarchy", path, line, column):
            answer = await self.client.connection.request(
                f"typeHierarchy/{direction}", {"item": item}, timeout=120
            )
            for other in answer if isinstance(answer, list) else []:
                related.add(self._item(other))
        return frozenset(related)


def _location(location: Any) -> Site | None:
    """A Location or LocationLink in a Swift source file, as (path, line, UTF-8 column)."""
    uri = location.get("targetUri") or location.get("uri")
    place = location.get("targetSelectionRange") or location.get("range")
    path = uri_to_path(str(uri)) if uri else None
    if path is None or place is None or path.suffix != ".swift" or not path.is_file():
        return None
    line = int(place["start"]["line"])
    return (
        os.path.realpath(path),
        line + 1,
        _utf16_to_utf8_column(path, line, int(place["start"]["character"])),
    )


@asynccontextmanager
async def lsp_hierarchy(root: Path) -> AsyncIterator[LspHierarchy]:
    """A sourcekit-lsp child for `root`, initialised and done indexing. It builds and indexes
    in a scratch folder of its own, not in the package's `.build/index-build`: a store written
    there while xcindex answers would be the one xcindex reads (the newer store), half done."""
    binary = find_sourcekit_lsp()
    scratch = tempfile.TemporaryDirectory(prefix="xcindex-lsp-hierarchy-")
    options = {**DEFAULT_INITIALIZATION_OPTIONS, "swiftPM": {"scratchPath": scratch.name}}
    process: Process = await anyio.open_process([str(binary)], cwd=str(root), stderr=subprocess.DEVNULL)
    async with process:
        assert process.stdout is not None
        assert process.stdin is not None
        connection = JsonRpcConnection(process.stdout, process.stdin, name="sourcekit-lsp[compare]")
        client = LspClient(connection)
        async with anyio.create_task_group() as tg:
            await tg.start(connection.run)
            try:
                await client.initialize(initialize_params(root, initialization_options=options), timeout=120)
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
                    scratch.cleanup()
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
                my_calls = {
                    (_named(g.caller if incoming else g.callee), _place(s))
                    for g in groups
                    for s, _ in g.sites
                }
                asked, theirs, their_calls = await lsp.calls(path, line, column, direction)
                # A call only xcindex lists is dispatch when sourcekit-lsp's own definition at
                # the site reaches the method called: the asked one (incoming), the callee (outgoing).
                confirmed: set[Call] = set()
                for call in my_calls - their_calls:
                    targets = asked if incoming else {call[0]}
                    reachable = await lsp.reachable(call[1])
                    if any((p, line_) in reachable for _, p, line_ in targets):
                        confirmed.add(call)
                results.append(
                    Comparison(
                        f"calls {direction} {name}",
                        frozenset(mine),
                        theirs,
                        frozenset(my_calls),
                        their_calls,
                        frozenset(confirmed),
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
                results.append(Comparison(f"types {direction} {name}", frozenset(mine), theirs))
    return results


def _real(path: str) -> str:
    return os.path.realpath(path)


def _place(site: Any) -> Site:
    return (_real(site.occurrence.path), site.occurrence.line, site.occurrence.column)


def _named(site: Any) -> Symbol:
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
