"""xcindex: compiler-accurate answers about Swift code, from the index store.

The embedding API::

    async with Engine() as engine:
        found = await engine.find_symbol("fetchUser(id:)", project_path="/path/to/Package")

It runs under asyncio and trio alike and never configures the host's logging. Every
answer is a frozen dataclass with a `to_json()` that gives the MCP tool's structured
content; docs/embedding.md describes each one.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import …`: the hooks import this package on every edit

__version__ = "0.1.0"

if TYPE_CHECKING:
    from xcindex.engine import Engine as Engine
    from xcindex.engine import EngineConfig as EngineConfig
    from xcindex.engine import StatusVersion as StatusVersion
    from xcindex.errors import CodedError as CodedError
    from xcindex.errors import XcindexError as XcindexError
    from xcindex.indexstore.database import OccurrenceRow as OccurrenceRow
    from xcindex.indexstore.database import SymbolRow as SymbolRow
    from xcindex.indexstore.state import IndexState as IndexState
    from xcindex.lsp.config import LspPoolConfig as LspPoolConfig
    from xcindex.tools.arguments import ArgumentsError as ArgumentsError
    from xcindex.tools.arguments import LocationArgs as LocationArgs
    from xcindex.tools.common import AnswerWarning as AnswerWarning
    from xcindex.tools.common import Freshness as Freshness
    from xcindex.tools.conformances import Conformance as Conformance
    from xcindex.tools.conformances import ConformancesAnswer as ConformancesAnswer
    from xcindex.tools.conformances import FindConformancesArgs as FindConformancesArgs
    from xcindex.tools.find_symbol import FindSymbolAnswer as FindSymbolAnswer
    from xcindex.tools.find_symbol import FindSymbolArgs as FindSymbolArgs
    from xcindex.tools.find_symbol import SymbolMatch as SymbolMatch
    from xcindex.tools.graph.blast_radius import BlastRadiusAnswer as BlastRadiusAnswer
    from xcindex.tools.graph.blast_radius import BlastRadiusArgs as BlastRadiusArgs
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer as CallHierarchyAnswer
    from xcindex.tools.graph.call_hierarchy import CallHierarchyArgs as CallHierarchyArgs
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer as ChangeImpactAnswer
    from xcindex.tools.graph.change_impact import ChangeImpactArgs as ChangeImpactArgs
    from xcindex.tools.graph.selection import TestTarget as TestTarget
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer as TypeHierarchyAnswer
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyArgs as TypeHierarchyArgs
    from xcindex.tools.references import DefinitionAnswer as DefinitionAnswer
    from xcindex.tools.references import FindDefinitionArgs as FindDefinitionArgs
    from xcindex.tools.references import FindOverridesArgs as FindOverridesArgs
    from xcindex.tools.references import FindReferencesArgs as FindReferencesArgs
    from xcindex.tools.references import Site as Site
    from xcindex.tools.references import SitesAnswer as SitesAnswer
    from xcindex.tools.rename.plan import PlanRenameArgs as PlanRenameArgs
    from xcindex.tools.rename.plan import Refusal as Refusal
    from xcindex.tools.rename.plan import RenamePlan as RenamePlan
    from xcindex.tools.rename.plan import RenameRange as RenameRange
    from xcindex.tools.status import StatusAnswer as StatusAnswer
    from xcindex.tools.status import StatusArgs as StatusArgs
    from xcindex.tools.wait_for_fresh import FileFreshness as FileFreshness
    from xcindex.tools.wait_for_fresh import FileState as FileState
    from xcindex.tools.wait_for_fresh import FreshWaitAnswer as FreshWaitAnswer
    from xcindex.tools.wait_for_fresh import WaitForFreshArgs as WaitForFreshArgs
    from xcindex.vocabulary import Completeness as Completeness
    from xcindex.vocabulary import RangeReason as RangeReason
    from xcindex.vocabulary import RefusalReason as RefusalReason
    from xcindex.vocabulary import Tier as Tier
    from xcindex.vocabulary import WarningCode as WarningCode


def _exports() -> dict[str, tuple[str, str]]:
    """Public name → (module, name there), read from the `TYPE_CHECKING` block above: the one
    list, which type checkers read as it is. Read on first use only, so that `xcindex hook …`
    (run on every edit an agent makes) stays import-light: it never pulls in anyio or mcp."""
    import ast

    with open(__file__, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: (statement.module, alias.name)
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }


_EXPORTS: dict[str, tuple[str, str]] = {}
__all__: list[str]  # made on first use by __getattr__, from the block above


def __getattr__(name: str) -> object:
    if not _EXPORTS:
        _EXPORTS.update(_exports())
    if name == "__all__":
        return sorted(_EXPORTS)
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'xcindex' has no attribute {name!r}") from None
    from importlib import import_module

    value = getattr(import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    if not _EXPORTS:
        _EXPORTS.update(_exports())
    return sorted(set(globals()) | set(_EXPORTS))
