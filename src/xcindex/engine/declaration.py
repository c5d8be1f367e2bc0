"""What a tool's declaration is made of (the registry declares each tool with these).

A `ToolDecl` holds what listing the tools needs (name, title, description, command line)
and loads the rest (`ToolImpl`: argument model, answer shape, run, renderings) on first use,
so that listing the tools, the CLI's help and a server's first answer import only the tools
they use: every tool's module with its pydantic models was most of `xcindex --version`'s
0.3-0.6 s.

How a tool runs is part of its declaration, so `Engine.call` has no branch per tool:
- `IndexQuery`: answered from the index alone, `query(db, args)`, run by the store's index
  actor on a fresh database;
- `IndexQueryWith`: the same after `read(location, args)` gathered what the query needs from
  outside the index (SwiftPM's package description, git's diff), in a worker thread and never
  while the database is held: slow outside reads do not delay other questions;
- `EngineRun`: more than one query (status, wait_for_fresh, plan_rename), a function of the
  Engine's core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from xcindex.engine.core import EngineCore
    from xcindex.indexstore.database import Database
    from xcindex.presentation import terminal
    from xcindex.project.locate import Location
    from xcindex.tools.arguments import LocationArgs
    from xcindex.tools.common import Freshness

A = TypeVar("A", bound="LocationArgs")
I = TypeVar("I")  # noqa: E741


class Answer(Protocol):
    """What every tool answers: a frozen value whose JSON is the MCP structured content,
    fitted to a response budget (None: everything)."""

    def to_json(self, budget: int | None = None) -> Mapping[str, object]: ...


class IndexAnswer(Answer, Protocol):
    """An answer read from the index: it carries its freshness, which the Engine completes."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def freshness(self) -> Freshness: ...

    def named_paths(self) -> set[str]:
        """The files the answer names (their freshness is the answer's)."""
        ...


R = TypeVar("R", bound=Answer)
Q = TypeVar("Q", bound=IndexAnswer)


@dataclass(frozen=True)
class IndexQuery(Generic[A, Q]):
    """Answered from the index alone: `query(db, args)` on a fresh database."""

    query: Callable[[Database, A], Q]

    def read(self, location: Location, args: A) -> None:
        """Nothing to read before the query."""

    def answer(self, db: Database, args: A, _inputs: None) -> Q:
        return self.query(db, args)


@dataclass(frozen=True)
class IndexQueryWith(Generic[A, Q, I]):
    """Answered from the index after `read(location, args)` gathered the query's inputs from
    outside it (in a worker thread, before the index actor is asked)."""

    read: Callable[[Location, A], I]
    query: Callable[[Database, A, I], Q]

    def answer(self, db: Database, args: A, inputs: I) -> Q:
        return self.query(db, args, inputs)


@dataclass(frozen=True)
class EngineRun(Generic[A, R]):
    """More than one question to the index (or to sourcekit-lsp, or waiting): `run(core, args)`."""

    run: Callable[[EngineCore, A], Awaitable[R]]


@dataclass(frozen=True)
class CliFlag:
    """A CLI-only switch that sets an Engine option (`EngineConfig`), not an MCP argument."""

    flag: str
    config_field: str
    value: Any
    help: str


@dataclass(frozen=True)
class CliSpec:
    command: str
    help: str
    description: str
    positionals: tuple[str, ...] = ()
    """Fields given positionally, in order; the rest are `--kebab-case` options."""
    optional_positionals: tuple[str, ...] = ()
    symbol_field: str | None = None
    """A positional SYMBOL filling this field: a usr as is, or a name find_symbol resolves."""
    path_fields: tuple[str, ...] = ()
    """Paths a person types relative to the working directory (made absolute)."""
    flags: tuple[CliFlag, ...] = ()
    paged: bool = False
    """The answer is a page of `sites` (`offset`, `next_offset()`): `--all` joins every page."""
    protocols_only: bool = False
    """A SYMBOL given by name resolves among protocols only."""
    settle_first: bool = False
    """Wait for a first ingestion (with progress) before asking: a person wants the settled answer."""
    slow_note: str | None = None
    """Said on stderr when the answer takes more than a second (unless a flag turned the slow part off)."""


@dataclass(frozen=True)
class ToolImpl(Generic[A, R]):
    """What a tool is made of beyond its name and words: loaded when the tool is first used."""

    args: type[A]
    shape: type[Any]
    """The answer's JSON shape (a TypedDict in tools/shapes.py): the MCP outputSchema."""
    run: IndexQuery[A, Any] | IndexQueryWith[A, Any, Any] | EngineRun[A, R]
    text: Callable[[R, int | None], str]
    """The agent's text rendering, within a response budget (None: everything)."""
    show: Callable[[R, terminal.Output, terminal.Context], int]
    """The terminal rendering; returns the exit code."""


@dataclass(frozen=True)
class ToolDecl(Generic[A, R]):
    """A tool: its name, words and command line here; its argument model, answer shape, run
    and renderings (`ToolImpl`) from `load`, on first use. So the listing of the tools, the
    CLI's help and a server's first answer import only the tools they use (every tool's
    module with pydantic's models was most of `xcindex --version`'s 0.6 s)."""

    name: str
    title: str
    description: str
    cli: CliSpec
    load: Callable[[], ToolImpl[A, R]]
    read_only: bool = True
    idempotent: bool = True

    @cached_property
    def impl(self) -> ToolImpl[A, R]:
        return self.load()

    @property
    def args(self) -> type[A]:
        return self.impl.args

    @property
    def shape(self) -> type[Any]:
        return self.impl.shape

    @property
    def run(self) -> IndexQuery[A, Any] | IndexQueryWith[A, Any, Any] | EngineRun[A, R]:
        return self.impl.run

    @property
    def text(self) -> Callable[[R, int | None], str]:
        return self.impl.text

    @property
    def show(self) -> Callable[[R, terminal.Output, terminal.Context], int]:
        return self.impl.show

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        """Built on first use (pydantic's schema generation is a tenth of a second for all)."""
        from pydantic import TypeAdapter

        return compact_schema(TypeAdapter(self.shape).json_schema())

    def structured(self, answer: R, budget: int | None) -> dict[str, Any]:
        return dict(answer.to_json(budget))


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema without pydantic's generated titles (they repeat the keys)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: strip(value)
                for key, value in node.items()
                if not (key == "title" and isinstance(value, str))
            }
        if isinstance(node, list):
            return [strip(item) for item in node]
        return node

    stripped: dict[str, Any] = strip(schema)
    return stripped
