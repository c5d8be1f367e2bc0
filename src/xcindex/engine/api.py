"""The Engine: the embedding API, one typed async method per tool (docs/embedding.md).

It is also what the MCP server and the CLI call (`Engine.call`, with a tool's declaration
from the registry). The Engine is a thin face over `EngineCore`, which holds the actors; its
public methods are exactly the documented ones. It runs under asyncio and trio alike (anyio
only); everything blocking happens in actors' worker threads or worker processes, never on
the caller's event loop.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self, TypeVar

from xcindex.engine import registry
from xcindex.engine.config import EngineConfig, StatusVersion
from xcindex.engine.core import EngineCore
from xcindex.engine.declaration import Answer, EngineRun, ToolDecl
from xcindex.tools.limits import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_RANGES,
    DEFAULT_MAX_RESULTS,
    DEFAULT_TIMEOUT_S,
)

if TYPE_CHECKING:
    # Each method imports its tool when called: an Engine that answers find_symbol does not
    # load the rename planner or the graph tools.
    from xcindex.indexstore.state import IndexState
    from xcindex.tools.arguments import LocationArgs
    from xcindex.tools.conformances import ConformancesAnswer
    from xcindex.tools.find_symbol import FindSymbolAnswer
    from xcindex.tools.graph.blast_radius import BlastRadiusAnswer
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer
    from xcindex.tools.references import DefinitionAnswer, SitesAnswer
    from xcindex.tools.rename.plan import RenamePlan
    from xcindex.tools.status import StatusAnswer
    from xcindex.tools.wait_for_fresh import FreshWaitAnswer

A = TypeVar("A", bound="LocationArgs")
R = TypeVar("R", bound=Answer)


class Engine:
    """Use as `async with Engine() as engine:`; every tool is an async method."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self._core = EngineCore(config)

    @property
    def config(self) -> EngineConfig:
        return self._core.config

    async def __aenter__(self) -> Self:
        await self._core.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._core.stop()

    async def close_children(self) -> None:
        """Stop every child process now (sourcekit-lsp, ingestion workers), shielded: for a
        host that must leave without unwinding (a server on a signal). Leaving the `async
        with` block does this anyway."""
        await self._core.close_children()

    async def call(self, tool: ToolDecl[A, R], args: A) -> R:
        """Answer one tool call: `tool` is its declaration in `xcindex.engine.registry`
        (`registry.BY_NAME[name]`), `args` its validated argument model. What the MCP server
        and the CLI call; the typed methods below are this with the model built for you."""
        run = tool.run
        if isinstance(run, EngineRun):
            return await run.run(self._core, args)
        answer: R = await self._core.answer(tool.name, args, run.read)
        return answer

    async def settle(self, *, project_path: str | None = None, index_store_path: str | None = None) -> None:
        """Wait until the index has taken in what the store holds now (a first ingestion
        included): what the CLI does before `status`, so a person sees the settled state."""
        await self._core.settle(project_path=project_path, index_store_path=index_store_path)

    # --- the tools ---------------------------------------------------------------------

    async def find_symbol(
        self,
        symbol_name: str,
        *,
        max_results: int = DEFAULT_MAX_CANDIDATES,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> FindSymbolAnswer:
        """Ranked candidates for a name as an agent types it (docs/tools.md, "Resolving
        names"); `resolved` is the one a tool that needs one symbol takes. `offset` starts
        the page there (the answer holds every candidate; `to_json` shows the page)."""
        from xcindex.tools.find_symbol import FindSymbolArgs

        return await self.call(
            registry.FIND_SYMBOL,
            FindSymbolArgs.build(
                symbol_name=symbol_name,
                max_results=max_results,
                offset=offset,
                project_path=project_path,
                index_store_path=index_store_path,
            ),
        )

    async def find_references(
        self,
        symbol_name: str | None = None,
        *,
        usr: str | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> SitesAnswer:
        """Every source occurrence of a symbol, by USR (preferred) or by name: a page of
        `max_results` from `offset` on; `next_offset()` says where the next page starts."""
        from xcindex.tools.references import FindReferencesArgs

        return await self.call(
            registry.FIND_REFERENCES,
            FindReferencesArgs.build(
                symbol_name=symbol_name,
                usr=usr,
                max_results=max_results,
                offset=offset,
                project_path=project_path,
                index_store_path=index_store_path,
            ),
        )

    async def find_definition(
        self, usr: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> DefinitionAnswer:
        from xcindex.tools.references import FindDefinitionArgs

        return await self.call(
            registry.FIND_DEFINITION,
            FindDefinitionArgs.build(usr=usr, project_path=project_path, index_store_path=index_store_path),
        )

    async def find_overrides(
        self,
        usr: str,
        *,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> SitesAnswer:
        """Overrides and witnesses of `usr`: a page of up to 500 from `offset` on."""
        from xcindex.tools.references import FindOverridesArgs

        return await self.call(
            registry.FIND_OVERRIDES,
            FindOverridesArgs.build(
                usr=usr, offset=offset, project_path=project_path, index_store_path=index_store_path
            ),
        )

    async def find_conformances(
        self,
        usr: str,
        *,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> ConformancesAnswer:
        """Conforming types (subclasses of conforming classes included), from `offset` on."""
        from xcindex.tools.conformances import FindConformancesArgs

        return await self.call(
            registry.FIND_CONFORMANCES,
            FindConformancesArgs.build(
                usr=usr, offset=offset, project_path=project_path, index_store_path=index_store_path
            ),
        )

    async def blast_radius(
        self, file_path: str, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> BlastRadiusAnswer:
        from xcindex.tools.graph.blast_radius import BlastRadiusArgs

        return await self.call(
            registry.BLAST_RADIUS,
            BlastRadiusArgs.build(
                file_path=file_path, project_path=project_path, index_store_path=index_store_path
            ),
        )

    async def call_hierarchy(
        self,
        usr: str | None = None,
        *,
        symbol_name: str | None = None,
        direction: str = "incoming",
        depth: int = 1,
        offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> CallHierarchyAnswer:
        """Callers (incoming, dynamic dispatch included) or callees (outgoing, overrides and
        witnesses a dynamic call reaches included) of a function; level-1 groups from
        `offset` on (`answer.next_offset()` says where the next page starts)."""
        from xcindex.tools.graph.call_hierarchy import CallHierarchyArgs

        return await self.call(
            registry.CALL_HIERARCHY,
            CallHierarchyArgs.build(
                usr=usr,
                symbol_name=symbol_name,
                direction=direction,
                depth=depth,
                offset=offset,
                project_path=project_path,
                index_store_path=index_store_path,
            ),
        )

    async def type_hierarchy(
        self,
        usr: str | None = None,
        *,
        symbol_name: str | None = None,
        direction: str = "supertypes",
        depth: int = 1,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> TypeHierarchyAnswer:
        """Supertypes or subtypes of a type, with the clauses that declare them."""
        from xcindex.tools.graph.type_hierarchy import TypeHierarchyArgs

        return await self.call(
            registry.TYPE_HIERARCHY,
            TypeHierarchyArgs.build(
                usr=usr,
                symbol_name=symbol_name,
                direction=direction,
                depth=depth,
                project_path=project_path,
                index_store_path=index_store_path,
            ),
        )

    async def change_impact(
        self,
        *,
        base: str | None = None,
        files: list[str] | None = None,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> ChangeImpactAnswer:
        """The symbols a git diff changes, what uses them, and the tests that reach them."""
        from xcindex.tools.graph.change_impact import ChangeImpactArgs

        return await self.call(
            registry.CHANGE_IMPACT,
            ChangeImpactArgs.build(
                base=base, files=files or [], project_path=project_path, index_store_path=index_store_path
            ),
        )

    async def status(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusAnswer:
        """Answers at once, even during a first ingestion (then with its progress)."""
        from xcindex.tools.status import StatusArgs

        return await self.call(
            registry.STATUS, StatusArgs.build(project_path=project_path, index_store_path=index_store_path)
        )

    async def plan_rename(
        self,
        usr: str,
        new_name: str,
        *,
        max_ranges: int = DEFAULT_MAX_RANGES,
        offset: int = 0,
        unproven_offset: int = 0,
        text_mention_offset: int = 0,
        project_path: str | None = None,
        index_store_path: str | None = None,
        reconcile_with_lsp: bool | None = None,
    ) -> RenamePlan:
        """A tiered rename plan for `usr`; never writes a file. Reconciled with sourcekit-lsp
        unless `reconcile_with_lsp` (default: the config's `reconcile`) is False. `offset`
        pages through a plan larger than `max_ranges` (the answer's `nextOffset`), the two
        others through its unproven sites and text mentions."""
        from xcindex.engine import runs
        from xcindex.tools.rename.plan import PlanRenameArgs

        args = PlanRenameArgs.build(
            usr=usr,
            new_name=new_name,
            max_ranges=max_ranges,
            offset=offset,
            unproven_offset=unproven_offset,
            text_mention_offset=text_mention_offset,
            project_path=project_path,
            index_store_path=index_store_path,
        )
        return await runs.plan_rename(self._core, args, reconcile=reconcile_with_lsp)

    async def wait_for_fresh(
        self,
        file_paths: list[str],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> FreshWaitAnswer:
        """Wait until the index covers the current content of `file_paths` (absolute), or
        `timeout_s` passes. New units are taken in as the compiler writes them, so this
        returns as soon as the last named file's unit lands, not when the build ends."""
        from xcindex.tools.wait_for_fresh import WaitForFreshArgs

        return await self.call(
            registry.WAIT_FOR_FRESH,
            WaitForFreshArgs.build(
                files=file_paths,
                timeout_seconds=timeout_s,
                project_path=project_path,
                index_store_path=index_store_path,
            ),
        )

    # --- the session's edits and pushed freshness --------------------------------------

    async def record_edit(self, path: str) -> None:
        """Tell the engine that the agent edited `path` (for agents without the hooks):
        answers naming it say so, and plan_rename marks its ranges red-stale."""
        await self._core.record_edit(path)

    async def edited_files(self) -> frozenset[str]:
        """Files edited this session (real paths), from the hooks' ledger and record_edit."""
        return await self._core.edited_files()

    async def clear_edits(self) -> None:
        await self._core.clear_edits()

    async def index_state(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> IndexState:
        """The store's state without waiting for anything."""
        return await self._core.index_state(project_path=project_path, index_store_path=index_store_path)

    async def status_version(
        self, *, project_path: str | None = None, index_store_path: str | None = None
    ) -> StatusVersion:
        return await self._core.status_version(project_path=project_path, index_store_path=index_store_path)

    async def wait_status_change(
        self,
        since: StatusVersion,
        *,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> StatusVersion:
        """Return the new version once the status differs from `since`: at once when the
        session-edited files change; when the store changes, once it has been quiet for
        `watch_settle_s` and the index has taken the new units in (so a status read right
        after reflects the rebuild)."""
        return await self._core.wait_status_change(
            since, project_path=project_path, index_store_path=index_store_path
        )
