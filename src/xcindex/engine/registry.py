"""The tools, each declared once.

A declaration names the tool, its title and description, its argument model (from which the
MCP input schema, the Engine's validation and the CLI's options come), its answer's JSON
shape (the MCP `outputSchema`), how it runs, how the answer renders for an agent and for a
terminal, and its CLI command. The MCP server's table, the CLI's subcommands, the Engine's
dispatch and the tests' tool lists all read `TOOLS`; docs/architecture.md ("Where things go")
says how to add a tool.

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

from xcindex.engine import reads, runs
from xcindex.presentation import agent, terminal, terminal_graph
from xcindex.tools import shapes
from xcindex.tools.arguments import LocationArgs
from xcindex.tools.conformances import ConformancesAnswer, FindConformancesArgs, query_find_conformances
from xcindex.tools.find_symbol import FindSymbolAnswer, FindSymbolArgs, query_find_symbol
from xcindex.tools.graph.blast_radius import BlastRadiusAnswer, BlastRadiusArgs, query_blast_radius
from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer, CallHierarchyArgs, query_call_hierarchy
from xcindex.tools.graph.change_impact import ChangeImpactAnswer, ChangeImpactArgs, query_change_impact
from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer, TypeHierarchyArgs, query_type_hierarchy
from xcindex.tools.references import (
    DefinitionAnswer,
    FindDefinitionArgs,
    FindOverridesArgs,
    FindReferencesArgs,
    SitesAnswer,
    query_find_definition,
    query_find_overrides,
    query_find_references,
)
from xcindex.tools.rename.plan import PlanRenameArgs, RenamePlan
from xcindex.tools.status import StatusAnswer, StatusArgs
from xcindex.tools.wait_for_fresh import MAX_TIMEOUT_S, FreshWaitAnswer, WaitForFreshArgs

if TYPE_CHECKING:
    from xcindex.engine.core import EngineCore
    from xcindex.indexstore.database import Database
    from xcindex.project.locate import Location
    from xcindex.tools.common import Freshness

LOCATION_HELP = "Needs projectPath or indexStorePath."

A = TypeVar("A", bound=LocationArgs)
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
class ToolDecl(Generic[A, R]):
    name: str
    title: str
    description: str
    args: type[A]
    shape: type[Any]
    """The answer's JSON shape (a TypedDict in tools/shapes.py): the MCP outputSchema."""
    run: IndexQuery[A, Any] | IndexQueryWith[A, Any, Any] | EngineRun[A, R]
    text: Callable[[R, int | None], str]
    """The agent's text rendering, within a response budget (None: everything)."""
    show: Callable[[R, terminal.Output, terminal.Context], int]
    """The terminal rendering; returns the exit code."""
    cli: CliSpec
    read_only: bool = True
    idempotent: bool = True

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


SYMBOL_HELP = "a USR (s:… or c:…), or a name that find_symbol resolves to exactly one symbol"

FIND_SYMBOL: ToolDecl[FindSymbolArgs, FindSymbolAnswer] = ToolDecl(
    name="find_symbol",
    title="Find a symbol by name",
    description="Start here: candidates for a name, each with its usr (the input of the other tools), "
    "kind and definition site. " + LOCATION_HELP,
    args=FindSymbolArgs,
    shape=shapes.FindSymbolJson,
    run=IndexQuery(query_find_symbol),
    text=agent.find_symbol,
    show=terminal.find_symbol,
    cli=CliSpec(
        "symbol",
        "find symbols by name, with their USRs",
        "Candidates for a name: fetchUser(id:), a bare fetchUser, or UserService.fetchUser(id:).",
        positionals=("symbol_name",),
    ),
)


FIND_REFERENCES: ToolDecl[FindReferencesArgs, SitesAnswer] = ToolDecl(
    name="find_references",
    title="Every reference to a symbol",
    description="Every place a symbol is written (definitions, calls, reads, writes, type uses) with "
    "roles, grouped by file. Prefer usr over symbolName; totalCount and truncated say if there is "
    "more. " + LOCATION_HELP,
    args=FindReferencesArgs,
    shape=shapes.SitesJson,
    run=IndexQuery(query_find_references),
    text=agent.references,
    show=terminal.references,
    cli=CliSpec(
        "refs",
        "every place a symbol is written",
        "Every source occurrence of a symbol, grouped by file, with its roles.",
        positionals=("symbol_name",),
        optional_positionals=("symbol_name",),
        paged=True,
    ),
)


FIND_DEFINITION: ToolDecl[FindDefinitionArgs, DefinitionAnswer] = ToolDecl(
    name="find_definition",
    title="Where a symbol is defined",
    description="Where a usr is defined (else declared); null if the index has none. " + LOCATION_HELP,
    args=FindDefinitionArgs,
    shape=shapes.DefinitionJson,
    run=IndexQuery(query_find_definition),
    text=agent.definition,
    show=terminal.definition,
    cli=CliSpec(
        "def",
        "where a symbol is defined",
        "The canonical definition site of a symbol.",
        symbol_field="usr",
    ),
)


FIND_OVERRIDES: ToolDecl[FindOverridesArgs, SitesAnswer] = ToolDecl(
    name="find_overrides",
    title="Overrides and protocol witnesses",
    description="Overrides of a method in subclasses (transitively) and witnesses of a protocol "
    "requirement, default implementations included. Use before changing a signature. " + LOCATION_HELP,
    args=FindOverridesArgs,
    shape=shapes.SitesJson,
    run=IndexQuery(query_find_overrides),
    text=agent.overrides,
    show=terminal.overrides,
    cli=CliSpec(
        "overrides",
        "overrides and protocol witnesses of a method",
        "Overrides in subclasses (transitively), protocol witnesses and default implementations.",
        symbol_field="usr",
        paged=True,
    ),
)


FIND_CONFORMANCES: ToolDecl[FindConformancesArgs, ConformancesAnswer] = ToolDecl(
    name="find_conformances",
    title="Types conforming to a protocol",
    description="Types conforming to a protocol (usr): marker protocols, conformers relying on default "
    "implementations, conformances in extensions (anchored there) and through refining protocols. "
    + LOCATION_HELP,
    args=FindConformancesArgs,
    shape=shapes.ConformancesJson,
    run=IndexQuery(query_find_conformances),
    text=agent.conformances,
    show=terminal.conformances,
    cli=CliSpec(
        "conformances",
        "the types conforming to a protocol",
        "Every type that conforms to a protocol, including conformances declared in extensions.",
        symbol_field="usr",
        protocols_only=True,
    ),
)


BLAST_RADIUS: ToolDecl[BlastRadiusArgs, BlastRadiusAnswer] = ToolDecl(
    name="blast_radius",
    title="What a change to one file reaches",
    description="Files depending on a source file, directly and transitively, the test files covering "
    "it and a ready `swift test --filter` command. Use before editing a shared file. " + LOCATION_HELP,
    args=BlastRadiusArgs,
    shape=shapes.BlastRadiusJson,
    run=IndexQueryWith(reads.package_description, query_blast_radius),
    text=agent.blast_radius,
    show=terminal.blast_radius,
    cli=CliSpec(
        "blast",
        "the files and tests a change to one file reaches",
        "Direct and transitive dependents of a source file, its covering tests, and the "
        "`swift test --filter` command that runs them.",
        positionals=("file_path",),
        path_fields=("file_path",),
    ),
)


CALL_HIERARCHY: ToolDecl[CallHierarchyArgs, CallHierarchyAnswer] = ToolDecl(
    name="call_hierarchy",
    title="Who calls a function, or what it calls",
    description="Callers (incoming) or callees (outgoing) of a function, grouped by calling function "
    "with call sites. Incoming counts calls through a base method or protocol requirement (dispatch: "
    "dynamic) and super calls; recursion is marked cycle. Use before changing what a function does. "
    + LOCATION_HELP,
    args=CallHierarchyArgs,
    shape=shapes.CallHierarchyJson,
    run=IndexQuery(query_call_hierarchy),
    text=agent.call_hierarchy,
    show=terminal_graph.call_hierarchy,
    cli=CliSpec(
        "calls",
        "who calls a function (or what it calls), a few levels deep",
        "Callers grouped by calling function with their call sites, dynamic dispatch through base "
        "methods and protocol requirements included (--direction outgoing: the calls in its body).",
        symbol_field="usr",
    ),
)


TYPE_HIERARCHY: ToolDecl[TypeHierarchyArgs, TypeHierarchyAnswer] = ToolDecl(
    name="type_hierarchy",
    title="Supertypes or subtypes of a type",
    description="Supertypes (superclasses, adopted and refined protocols) or subtypes (subclasses, "
    "conformers, refining protocols) of a type, each at its inheritance clause, extensions marked. "
    + LOCATION_HELP,
    args=TypeHierarchyArgs,
    shape=shapes.TypeHierarchyJson,
    run=IndexQuery(query_type_hierarchy),
    text=agent.type_hierarchy,
    show=terminal_graph.type_hierarchy,
    cli=CliSpec(
        "types",
        "supertypes or subtypes of a type",
        "Inheritance, conformances (in extensions too) and protocol refinement, from the index's "
        "baseOf relations, with the clause where each is declared.",
        symbol_field="usr",
    ),
)


CHANGE_IMPACT: ToolDecl[ChangeImpactArgs, ChangeImpactAnswer] = ToolDecl(
    name="change_impact",
    title="What my change reaches",
    description="After editing, before testing: the symbols the working tree's diff against a git "
    "revision changes (body, signature, added, removed, moved), their references elsewhere, the files "
    "reaching them, the covering tests and a `swift test --filter` command. " + LOCATION_HELP,
    args=ChangeImpactArgs,
    shape=shapes.ChangeImpactJson,
    run=IndexQueryWith(reads.change_inputs, query_change_impact),
    text=agent.change_impact,
    show=terminal_graph.change_impact,
    cli=CliSpec(
        "impact",
        "the symbols, references and tests a git diff reaches",
        "Maps each changed hunk (against --base, default HEAD) to the declarations it changes, "
        "and lists the references to them and the tests that reach them.",
        path_fields=("files",),
    ),
)


STATUS: ToolDecl[StatusArgs, StatusAnswer] = ToolDecl(
    name="status",
    title="Index health and freshness",
    description="Index health: store path, last write, stale files, counts, unreadable units, ingestion "
    "progress. Call first in a session, or when answers look stale. " + LOCATION_HELP,
    args=StatusArgs,
    run=EngineRun(runs.status),
    shape=shapes.StatusJson,
    text=agent.status,
    show=terminal.status,
    cli=CliSpec(
        "status",
        "index health and freshness",
        "Where the index store is, when it was last written, which files changed since, and "
        "what the database holds. Waits for a first ingestion (with progress on stderr).",
        settle_first=True,
    ),
)


WAIT_FOR_FRESH: ToolDecl[WaitForFreshArgs, FreshWaitAnswer] = ToolDecl(
    name="wait_for_fresh",
    title="Wait until the index covers edited files",
    description="After editing files and starting a build: waits until the index covers the named "
    "files' current content instead of sleeping or polling status; says per file fresh, stale, "
    f"not_indexed or missing (at most {MAX_TIMEOUT_S:g} s). " + LOCATION_HELP,
    args=WaitForFreshArgs,
    run=EngineRun(runs.wait_for_fresh),
    shape=shapes.FreshWaitJson,
    text=agent.wait_for_fresh,
    show=terminal.wait_for_fresh,
    cli=CliSpec(
        "wait",
        "wait until the index covers the current content of files",
        "Waits (up to --timeout-seconds) until every named file's unit is newer than its content: "
        "run it after starting a build.",
        positionals=("files",),
        path_fields=("files",),
    ),
)


PLAN_RENAME: ToolDecl[PlanRenameArgs, RenamePlan] = ToolDecl(
    name="plan_rename",
    title="Plan a rename (never edits)",
    description="A rename plan for a usr: every range to edit, including overrides, protocol witnesses, "
    "default implementations and extensions, each with a tier. green-verified and green-indexstore are "
    "safe to apply; yellow-* need a look; red-stale means rebuild first. Never edits files. Index "
    "columns are UTF-8 bytes; sourcekit-lsp-only ranges are UTF-16. projectPath is preferred "
    "(sourcekit-lsp needs the workspace root). " + LOCATION_HELP,
    args=PlanRenameArgs,
    run=EngineRun(runs.plan_rename),
    shape=shapes.RenamePlanJson,
    text=agent.plan_rename,
    show=terminal.plan_rename,
    cli=CliSpec(
        "rename",
        "plan a rename (never edits a file)",
        "Every range to edit for a rename, including overrides, witnesses and extensions, each "
        "with a confidence tier; sourcekit-lsp confirms the index's ranges unless --no-lsp.",
        positionals=("new_name",),
        symbol_field="usr",
        flags=(
            CliFlag(
                "--no-lsp",
                "reconcile",
                False,
                "plan from the index alone (no sourcekit-lsp cross-check)",
            ),
        ),
        slow_note="xcindex: asking sourcekit-lsp to confirm the ranges (--no-lsp skips this)",
    ),
)


TOOLS: tuple[ToolDecl[Any, Any], ...] = (
    FIND_SYMBOL,
    FIND_REFERENCES,
    FIND_DEFINITION,
    FIND_OVERRIDES,
    FIND_CONFORMANCES,
    BLAST_RADIUS,
    CALL_HIERARCHY,
    TYPE_HIERARCHY,
    CHANGE_IMPACT,
    STATUS,
    WAIT_FOR_FRESH,
    PLAN_RENAME,
)

BY_NAME: dict[str, ToolDecl[Any, Any]] = {tool.name: tool for tool in TOOLS}
BY_COMMAND: dict[str, ToolDecl[Any, Any]] = {tool.cli.command: tool for tool in TOOLS}
INDEX_QUERIES: dict[str, Callable[[Database, Any, Any], Any]] = {
    tool.name: tool.run.answer for tool in TOOLS if isinstance(tool.run, IndexQuery | IndexQueryWith)
}
"""What the index actor runs for a named query: tool name → `answer(db, args, inputs)`."""


def parameters_markdown() -> str:
    """docs/tools.md's parameter tables, made from the argument models (a test keeps the
    docs equal to this; `python -m xcindex.engine.registry` prints it)."""
    lines: list[str] = []
    for tool in TOOLS:
        lines += [f"### `{tool.name}` — {tool.title} (CLI: `xcindex {tool.cli.command}`)", ""]
        lines += ["| parameter | type | default | limits | meaning |", "|---|---|---|---|---|"]
        schema = tool.args.model_json_schema(by_alias=True)
        required = set(schema.get("required", []))
        for name, prop in schema["properties"].items():
            kind = prop.get("type") or "/".join(
                v.get("type", "?") for v in prop.get("anyOf", []) if v.get("type") != "null"
            )
            if kind == "array":
                kind = f"array of {prop['items'].get('type', '?')}"
            limits = ", ".join(
                f"{label} {prop[key]}"
                for key, label in (
                    ("minimum", "≥"),
                    ("maximum", "≤"),
                    ("minItems", "items ≥"),
                    ("maxItems", "items ≤"),
                )
                if key in prop
            )
            default = (
                "required"
                if name in required
                else "—"
                if prop.get("default") is None
                else str(prop["default"])
            )
            lines.append(
                f"| `{name}` | {kind} | {default} | {limits or '—'} | {prop.get('description', '')} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(parameters_markdown(), end="")  # noqa: T201
