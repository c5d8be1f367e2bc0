"""Layers only look down, and no module does several jobs: checked on the source, so a new
upward import or an overgrown module fails here rather than in a reviewer's head.

The layers, bottom up (docs/architecture.md, "Where things go"):
- leaves: `warnings`, `_log`, `toolchain`, `ledger`, `projects` and the hook helpers;
- `indexstore/` and `lsp/`, which import no actor, tool, presentation or entry point;
- `locate` (where a store and its workspace are);
- `tools/` (typed answers; no actors, no presentation, no entry points);
- `presentation/` (how answers read), `actors/` (who owns what);
- the entry points: `engine`, `registry`, `server`, `server_front*`, `server_tools`, `cli`,
  `cli_tools`, `hooks`, `doctor*`.

Only `server` imports the MCP SDK: `xcindex serve` answers a session's first messages
without it (`server_front`), and that start-up saving is lost the day another module
imports it at its top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "xcindex"
MAX_LINES = 700

ENTRY_POINTS = {
    "xcindex.engine",
    "xcindex.engine_core",
    "xcindex.engine_graph",
    "xcindex.registry",
    "xcindex.server",
    "xcindex.server_front",
    "xcindex.server_front_protocol",
    "xcindex.server_tools",
    "xcindex.cli",
    "xcindex.cli_tools",
    "xcindex.hooks",
    "xcindex.doctor",
    "xcindex.doctor_config",
    "xcindex.doctor_report",
    "xcindex.__main__",
}
FORBIDDEN: dict[str, tuple[str, ...]] = {
    # package prefix → the prefixes it must not import
    "xcindex.indexstore": ("xcindex.actors", "xcindex.tools", "xcindex.presentation", "xcindex.locate"),
    "xcindex.lsp": ("xcindex.actors", "xcindex.tools", "xcindex.presentation", "xcindex.locate"),
    "xcindex.overlay": ("xcindex.actors", "xcindex.tools", "xcindex.presentation", "xcindex.locate"),
    "xcindex.locate": ("xcindex.actors", "xcindex.tools", "xcindex.presentation"),
    "xcindex.tools": ("xcindex.actors", "xcindex.presentation"),
    "xcindex.presentation": ("xcindex.actors",),
    "xcindex.actors": ("xcindex.presentation",),
}


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, path))
    return found


SDK_OWNER = "xcindex.server"
SDK_PACKAGES = ("mcp", "mcp_types")


def imports_of(path: Path, name: str, *, prefix: str = "xcindex") -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {module for module in found if module.startswith(prefix)}


def forbidden_for(name: str) -> tuple[str, ...]:
    rules = [
        prefixes
        for package, prefixes in FORBIDDEN.items()
        if name == package or name.startswith(package + ".")
    ]
    below_entry = not name.startswith(tuple(ENTRY_POINTS)) and name != "xcindex"
    return tuple(prefix for group in rules for prefix in group) + (tuple(ENTRY_POINTS) if below_entry else ())


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_layers_only_look_down(name: str, path: Path) -> None:
    bad = sorted(
        module
        for module in imports_of(path, name)
        for prefix in forbidden_for(name)
        if module == prefix or module.startswith(prefix + ".")
    )
    assert not bad, f"{name} imports upward: {bad}"


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_no_module_does_several_jobs(name: str, path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_LINES, f"{name} has {lines} lines: split it by job"


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_only_the_server_module_imports_the_mcp_sdk(name: str, path: Path) -> None:
    sdk = sorted(
        module for module in imports_of(path, name, prefix="mcp") if module.split(".")[0] in SDK_PACKAGES
    )
    assert name == SDK_OWNER or not sdk, f"{name} imports the MCP SDK: {sdk}"
