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
    from xcindex.tools.graph.blast_radius import TestTarget as TestTarget
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer as CallHierarchyAnswer
    from xcindex.tools.graph.call_hierarchy import CallHierarchyArgs as CallHierarchyArgs
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer as ChangeImpactAnswer
    from xcindex.tools.graph.change_impact import ChangeImpactArgs as ChangeImpactArgs
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
    from xcindex.vocabulary import CodedError as CodedError
    from xcindex.vocabulary import Completeness as Completeness
    from xcindex.vocabulary import RangeReason as RangeReason
    from xcindex.vocabulary import RefusalReason as RefusalReason
    from xcindex.vocabulary import Tier as Tier
    from xcindex.vocabulary import WarningCode as WarningCode
    from xcindex.vocabulary import XcindexError as XcindexError

# Public name → (module, name there). Loaded on first use, so that `xcindex hook …` (run on
# every edit an agent makes) stays import-light: it must not pull in anyio, mcp or cffi.
_EXPORTS: dict[str, tuple[str, str]] = {
    "Engine": ("xcindex.engine", "Engine"),
    "EngineConfig": ("xcindex.engine", "EngineConfig"),
    "StatusVersion": ("xcindex.engine", "StatusVersion"),
    "IndexState": ("xcindex.indexstore.state", "IndexState"),
    "LspPoolConfig": ("xcindex.lsp.config", "LspPoolConfig"),
    "SymbolRow": ("xcindex.indexstore.database", "SymbolRow"),
    "OccurrenceRow": ("xcindex.indexstore.database", "OccurrenceRow"),
    "Freshness": ("xcindex.tools.common", "Freshness"),
    "AnswerWarning": ("xcindex.tools.common", "AnswerWarning"),
    "FindSymbolAnswer": ("xcindex.tools.find_symbol", "FindSymbolAnswer"),
    "SymbolMatch": ("xcindex.tools.find_symbol", "SymbolMatch"),
    "SitesAnswer": ("xcindex.tools.references", "SitesAnswer"),
    "Site": ("xcindex.tools.references", "Site"),
    "DefinitionAnswer": ("xcindex.tools.references", "DefinitionAnswer"),
    "ConformancesAnswer": ("xcindex.tools.conformances", "ConformancesAnswer"),
    "Conformance": ("xcindex.tools.conformances", "Conformance"),
    "BlastRadiusAnswer": ("xcindex.tools.graph.blast_radius", "BlastRadiusAnswer"),
    "TestTarget": ("xcindex.tools.graph.blast_radius", "TestTarget"),
    "StatusAnswer": ("xcindex.tools.status", "StatusAnswer"),
    "FreshWaitAnswer": ("xcindex.tools.wait_for_fresh", "FreshWaitAnswer"),
    "FileFreshness": ("xcindex.tools.wait_for_fresh", "FileFreshness"),
    "FileState": ("xcindex.tools.wait_for_fresh", "FileState"),
    "RenamePlan": ("xcindex.tools.rename.plan", "RenamePlan"),
    "FindSymbolArgs": ("xcindex.tools.find_symbol", "FindSymbolArgs"),
    "FindReferencesArgs": ("xcindex.tools.references", "FindReferencesArgs"),
    "FindDefinitionArgs": ("xcindex.tools.references", "FindDefinitionArgs"),
    "FindOverridesArgs": ("xcindex.tools.references", "FindOverridesArgs"),
    "FindConformancesArgs": ("xcindex.tools.conformances", "FindConformancesArgs"),
    "BlastRadiusArgs": ("xcindex.tools.graph.blast_radius", "BlastRadiusArgs"),
    "StatusArgs": ("xcindex.tools.status", "StatusArgs"),
    "WaitForFreshArgs": ("xcindex.tools.wait_for_fresh", "WaitForFreshArgs"),
    "PlanRenameArgs": ("xcindex.tools.rename.plan", "PlanRenameArgs"),
    "CallHierarchyAnswer": ("xcindex.tools.graph.call_hierarchy", "CallHierarchyAnswer"),
    "CallHierarchyArgs": ("xcindex.tools.graph.call_hierarchy", "CallHierarchyArgs"),
    "TypeHierarchyAnswer": ("xcindex.tools.graph.type_hierarchy", "TypeHierarchyAnswer"),
    "TypeHierarchyArgs": ("xcindex.tools.graph.type_hierarchy", "TypeHierarchyArgs"),
    "ChangeImpactAnswer": ("xcindex.tools.graph.change_impact", "ChangeImpactAnswer"),
    "ChangeImpactArgs": ("xcindex.tools.graph.change_impact", "ChangeImpactArgs"),
    "LocationArgs": ("xcindex.tools.arguments", "LocationArgs"),
    "ArgumentsError": ("xcindex.tools.arguments", "ArgumentsError"),
    "RenameRange": ("xcindex.tools.rename.plan", "RenameRange"),
    "Refusal": ("xcindex.tools.rename.plan", "Refusal"),
    "Tier": ("xcindex.vocabulary", "Tier"),
    "RangeReason": ("xcindex.vocabulary", "RangeReason"),
    "RefusalReason": ("xcindex.vocabulary", "RefusalReason"),
    "Completeness": ("xcindex.vocabulary", "Completeness"),
    "WarningCode": ("xcindex.vocabulary", "WarningCode"),
    "XcindexError": ("xcindex.vocabulary", "XcindexError"),
    "CodedError": ("xcindex.vocabulary", "CodedError"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'xcindex' has no attribute {name!r}") from None
    from importlib import import_module

    value = getattr(import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
