"""How exact change_impact's declaration extents are: swift/declarations.py's source scan next
to sourcekit-lsp's `textDocument/documentSymbol` (swift-syntax's own tree), file by file.

sourcekit-lsp is started on an empty temporary workspace and every file is opened by its
real path: documentSymbol needs only the text, so nothing is built and nothing is written
next to the sources. Compared: the member and top-level declarations (what the scan
reports; documentSymbol's declarations inside function bodies, generic parameters and
`MARK:` comments are left out), matched by their name and the line of their name, each
with its first and last line (attributes included, doc comments not, in both). Subscripts
are the scan's alone (documentSymbol does not report them).

`python -m bench.decl_extents ROOT [ROOT …]` prints the agreement per root and every
disagreement; the figures are in docs/tools.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from xcindex.lsp.client import LspClient, initialize_params, path_to_uri
from xcindex.lsp.jsonrpc import JsonRpcConnection
from xcindex.project.toolchain import find_sourcekit_lsp
from xcindex.swift.declarations import Decl, scan_declarations

_TYPE_KINDS = frozenset({3, 5, 10, 11, 23})
"""namespace (an extension), class (and actor), enum, interface (protocol), struct."""
_TYPE_PARAMETER, _NAMESPACE = 26, 3


@dataclass(frozen=True)
class Extent:
    name: str
    name_line: int
    start: int
    end: int


@dataclass(frozen=True)
class FileComparison:
    path: str
    lsp: tuple[Extent, ...]
    scan: tuple[Extent, ...]

    def agreeing(self) -> list[Extent]:
        mine = {(e.name, e.name_line): e for e in self.scan}
        return [e for e in self.lsp if mine.get((e.name, e.name_line)) == e]

    def disagreements(self) -> list[dict[str, Any]]:
        mine = {(e.name, e.name_line): e for e in self.scan}
        theirs = {(e.name, e.name_line) for e in self.lsp}
        found: list[dict[str, Any]] = []
        for extent in self.lsp:
            scanned = mine.get((extent.name, extent.name_line))
            if scanned is None:
                found.append({"where": self._where(extent), "kind": "missed", "lsp": _lines(extent)})
            elif scanned != extent:
                kind = "start" if scanned.start != extent.start else "end"
                if scanned.start != extent.start and scanned.end != extent.end:
                    kind = "start and end"
                found.append(
                    {
                        "where": self._where(extent),
                        "kind": kind,
                        "lsp": _lines(extent),
                        "scan": _lines(scanned),
                    }
                )
        for extent in self.scan:
            if (extent.name, extent.name_line) not in theirs and extent.name != "subscript":
                found.append({"where": self._where(extent), "kind": "extra", "scan": _lines(extent)})
        return found

    def _where(self, extent: Extent) -> str:
        return f"{self.path}:{extent.name_line} {extent.name}"


def _lines(extent: Extent) -> str:
    return f"{extent.start}-{extent.end}"


def lsp_extents(symbols: Iterable[Any]) -> list[Extent]:
    """The member and top-level declarations of a documentSymbol tree."""
    found: list[Extent] = []
    for symbol in symbols:
        kind = int(symbol["kind"])
        whole, name_range = symbol["range"], symbol["selectionRange"]
        if whole == name_range and kind in (_TYPE_PARAMETER, _NAMESPACE):
            continue  # a generic parameter, or a MARK: comment
        found.append(
            Extent(
                _base_name(str(symbol["name"])),
                int(name_range["start"]["line"]) + 1,
                int(whole["start"]["line"]) + 1,
                int(whole["end"]["line"]) + 1,
            )
        )
        if kind in _TYPE_KINDS:
            found += lsp_extents(symbol.get("children") or [])
    return found


def scan_extents(text: str) -> list[Extent]:
    return [_scan_extent(decl) for decl in scan_declarations(text)]


def _scan_extent(decl: Decl) -> Extent:
    return Extent(decl.name, decl.name_line, decl.start, decl.end)


def _base_name(name: str) -> str:
    """`fetch(id:)` → `fetch`, `` `default` `` → `default` (the scan's spelling of a name)."""
    base = name.split("(")[0] if not name.startswith("(") else name
    return base.strip("`")


def swift_files(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*.swift")
        if ".build" not in path.parts and ".swiftpm" not in path.parts and path.is_file()
    )


@asynccontextmanager
async def document_symbols() -> AsyncIterator[Any]:
    """A sourcekit-lsp on an empty temporary workspace; yields `ask(path, text) -> symbols`."""
    with tempfile.TemporaryDirectory(prefix="xcindex-decl-extents-") as temporary:
        root = Path(temporary)
        process = await anyio.open_process(
            [str(find_sourcekit_lsp())], cwd=temporary, stderr=subprocess.DEVNULL
        )
        async with process:
            assert process.stdout is not None
            assert process.stdin is not None
            connection = JsonRpcConnection(process.stdout, process.stdin, name="sourcekit-lsp[extents]")
            client = LspClient(connection)
            async with anyio.create_task_group() as tg:
                await tg.start(connection.run)
                try:
                    options = {"backgroundIndexing": False, "swiftPM": {"scratchPath": str(root / "scratch")}}
                    await client.initialize(
                        initialize_params(root, initialization_options=options), timeout=120
                    )
                    await client.initialized()

                    async def ask(path: Path, text: str) -> Any:
                        uri = path_to_uri(path)
                        await client.did_open(uri, text, version=1)
                        try:
                            return await connection.request(
                                "textDocument/documentSymbol", {"textDocument": {"uri": uri}}, timeout=120
                            )
                        finally:
                            await client.did_close(uri)

                    yield ask
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


async def compare(roots: Sequence[Path]) -> dict[str, list[FileComparison]]:
    results: dict[str, list[FileComparison]] = {}
    async with document_symbols() as ask:
        for root in roots:
            found: list[FileComparison] = []
            for path in await anyio.to_thread.run_sync(swift_files, root):
                text = await anyio.Path(path).read_text(encoding="utf-8")
                symbols = await ask(path, text)
                found.append(
                    FileComparison(
                        str(path.relative_to(root)),
                        tuple(lsp_extents(symbols or [])),
                        tuple(scan_extents(text)),
                    )
                )
            results[str(root)] = found
    return results


def summary(files: Sequence[FileComparison]) -> dict[str, Any]:
    declarations = sum(len(f.lsp) for f in files)
    agreeing = sum(len(f.agreeing()) for f in files)
    problems = [d for f in files for d in f.disagreements()]
    kinds: dict[str, int] = {}
    for problem in problems:
        kinds[problem["kind"]] = kinds.get(problem["kind"], 0) + 1
    return {
        "files": len(files),
        "declarations": declarations,
        "agreeing": agreeing,
        "agreement": round(agreeing / declarations, 4) if declarations else None,
        "by_kind": kinds,
        "disagreements": problems,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decl_extents", description=__doc__.splitlines()[0])
    parser.add_argument("roots", type=Path, nargs="+", help="folders whose Swift files to compare")
    args = parser.parse_args(argv)
    roots = [Path(os.path.realpath(root)) for root in args.roots]
    results = anyio.run(compare, roots)
    print(json.dumps({root: summary(files) for root, files in results.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
