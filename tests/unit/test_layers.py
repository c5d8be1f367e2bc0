"""The rooms only look down: checked on the source, so an upward or sideways import fails
here rather than in a reviewer's head.

The rooms, bottom up (docs/architecture.md, "The map"): a module may import its own room and
the rooms of the layers below it, never a room beside it or above it. `TYPE_CHECKING`
imports count (a type is a dependency too), and so do `from xcindex import Name` (the
module that defines the name) and `importlib.import_module("xcindex.…")`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "xcindex"
MAX_LINES = 700

LAYERS: tuple[tuple[str, ...], ...] = (
    ("xcindex.vocabulary", "xcindex._log", "xcindex._record", "xcindex.plugin"),
    ("xcindex.errors",),
    ("xcindex.swift", "xcindex.project"),
    ("xcindex.indexstore", "xcindex.lsp"),
    ("xcindex.overlay",),
    ("xcindex.tools",),
    ("xcindex.tools.graph", "xcindex.tools.rename"),
    ("xcindex.presentation", "xcindex.actors"),
    ("xcindex.engine",),
    ("xcindex.server", "xcindex.hooks", "xcindex.doctor"),
    ("xcindex.cli",),
    ("xcindex.__main__",),
)
PUBLIC_FACE = "xcindex"
"""The package itself: its `__init__` re-exports names from every room, lazily."""
SDK_OWNER = "xcindex.server.sdk"
FIRST_START = "xcindex.plugin"
"""Run by the plugin's launcher before anything is installed: the standard library only."""
SDK_PACKAGES = ("mcp", "mcp_types")


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        found.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return found


def public_names() -> dict[str, str]:
    """`xcindex`'s re-exported names → the module that defines each (its TYPE_CHECKING block)."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def imported(path: Path, name: str) -> Iterator[tuple[str, int]]:
    """Every module `path` imports (absolute, with its line), xcindex's or not."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    exports = public_names()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target == PUBLIC_FACE:
                for alias in node.names:
                    if alias.name != "__version__":
                        yield exports.get(alias.name, f"{PUBLIC_FACE}.{alias.name}"), node.lineno
            else:
                yield target, node.lineno
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


def room_of(module: str) -> tuple[str, int] | None:
    """The most specific room holding `module`, with its layer; None outside every room."""
    best: tuple[str, int] | None = None
    for layer, rooms in enumerate(LAYERS):
        for room in rooms:
            if (module == room or module.startswith(room + ".")) and (
                best is None or len(room) > len(best[0])
            ):
                best = (room, layer)
    return best


def test_every_module_is_in_a_room() -> None:
    homeless = [name for name, _ in modules() if name != PUBLIC_FACE and room_of(name) is None]
    assert not homeless, f"modules in no room of LAYERS (add them to one): {homeless}"


def test_rooms_import_only_their_own_room_and_the_layers_below() -> None:
    wrong: list[str] = []
    for name, path in modules():
        if name == PUBLIC_FACE:
            continue
        here = room_of(name)
        assert here is not None
        for target, line in imported(path, name):
            if target == PUBLIC_FACE or not target.startswith(PUBLIC_FACE + "."):
                continue
            there = room_of(target)
            if there is None or there[0] == here[0]:
                continue
            if there[1] >= here[1]:
                side = "beside" if there[1] == here[1] else "above"
                wrong.append(f"{name}:{line} imports {target} ({there[0]}, {side} {here[0]})")
    assert not wrong, "imports that do not look down:\n" + "\n".join(wrong)


def test_no_module_reaches_700_lines() -> None:
    long = {
        name: lines
        for name, path in modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert not long, f"modules of {MAX_LINES} lines or more (split them by job): {long}"


def test_only_the_sdk_server_module_imports_the_mcp_sdk() -> None:
    """`xcindex serve` answers a session's first messages without the SDK (`server.front`);
    that start-up saving is lost the day another module imports it."""
    importers = sorted(
        f"{name}:{line}"
        for name, path in modules()
        if name != SDK_OWNER
        for target, line in imported(path, name)
        if target.split(".")[0] in SDK_PACKAGES
    )
    assert not importers, f"modules importing the MCP SDK besides {SDK_OWNER}: {importers}"


def test_the_plugin_first_start_imports_only_the_standard_library() -> None:
    """`bin/xcindex` runs `xcindex.plugin` with a bare Python before xcindex (or anything)
    is installed: one third-party import and a plugin's first start fails."""
    foreign = sorted(
        f"{name}:{line} imports {target}"
        for name, path in modules()
        if name == FIRST_START or name.startswith(FIRST_START + ".")
        for target, line in imported(path, name)
        if target.split(".")[0] not in sys.stdlib_module_names
        and not (target == FIRST_START or target.startswith(FIRST_START + "."))
    )
    assert not foreign, f"the first start must run on the standard library alone: {foreign}"
