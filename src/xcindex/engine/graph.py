"""The Engine's typed methods for call_hierarchy, type_hierarchy and change_impact.

A mixin, so engine.py stays one screenful per concern: each method only builds its
argument model and hands it to `Engine.call`, like every other tool.
"""

from __future__ import annotations

from typing import Any

from xcindex.tools.arguments import LocationArgs
from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer, CallHierarchyArgs
from xcindex.tools.graph.change_impact import ChangeImpactAnswer, ChangeImpactArgs
from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer, TypeHierarchyArgs


class GraphTools:
    """Mixed into `Engine`, whose `call` answers these."""

    async def call(self, args: LocationArgs, **options: Any) -> Any:
        raise NotImplementedError  # Engine.call

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
        answer: CallHierarchyAnswer = await self.call(
            CallHierarchyArgs.build(
                usr=usr,
                symbol_name=symbol_name,
                direction=direction,
                depth=depth,
                offset=offset,
                project_path=project_path,
                index_store_path=index_store_path,
            )
        )
        return answer

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
        answer: TypeHierarchyAnswer = await self.call(
            TypeHierarchyArgs.build(
                usr=usr,
                symbol_name=symbol_name,
                direction=direction,
                depth=depth,
                project_path=project_path,
                index_store_path=index_store_path,
            )
        )
        return answer

    async def change_impact(
        self,
        *,
        base: str | None = None,
        files: list[str] | None = None,
        project_path: str | None = None,
        index_store_path: str | None = None,
    ) -> ChangeImpactAnswer:
        """The symbols a git diff changes, what uses them, and the tests that reach them."""
        answer: ChangeImpactAnswer = await self.call(
            ChangeImpactArgs.build(
                base=base, files=files or [], project_path=project_path, index_store_path=index_store_path
            )
        )
        return answer
