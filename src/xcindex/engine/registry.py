"""The tools, each declared once.

A declaration names the tool, its title and description, its argument model (from which the
MCP input schema, the Engine's validation and the CLI's options come), its answer's JSON
shape (the MCP `outputSchema`), how it runs, how the answer renders for an agent and for a
terminal, and its CLI command. The MCP server's table, the CLI's subcommands, the Engine's
dispatch and the tests' tool lists all read `TOOLS`; docs/architecture.md ("Where things go")
says how to add a tool.

The words are here; each tool's implementation is imported by its loader below when the tool
is first used (`declaration.ToolDecl`), so this module imports no tool, no pydantic and no
actor: `xcindex --help` reads it, and a server's first answer loads only the tool it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from xcindex.engine.declaration import (
    CliFlag,
    CliSpec,
    EngineRun,
    IndexQuery,
    IndexQueryWith,
    ToolDecl,
    ToolImpl,
)
from xcindex.tools.limits import MAX_TIMEOUT_S

if TYPE_CHECKING:
    from xcindex.indexstore.database import Database
    from xcindex.tools.conformances import ConformancesAnswer, FindConformancesArgs
    from xcindex.tools.find_symbol import FindSymbolAnswer, FindSymbolArgs
    from xcindex.tools.graph.blast_radius import BlastRadiusAnswer, BlastRadiusArgs
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer, CallHierarchyArgs
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer, ChangeImpactArgs
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer, TypeHierarchyArgs
    from xcindex.tools.references import (
        DefinitionAnswer,
        FindDefinitionArgs,
        FindOverridesArgs,
        FindReferencesArgs,
        SitesAnswer,
    )
    from xcindex.tools.rename.plan import PlanRenameArgs, RenamePlan
    from xcindex.tools.status import StatusAnswer, StatusArgs
    from xcindex.tools.wait_for_fresh import FreshWaitAnswer, WaitForFreshArgs

LOCATION_HELP = "Needs projectPath or indexStorePath."

# --- each tool's implementation, imported when it is first used ----------------------


def _find_symbol() -> ToolImpl[FindSymbolArgs, FindSymbolAnswer]:
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.find_symbol import FindSymbolArgs, query_find_symbol

    return ToolImpl(
        args=FindSymbolArgs,
        shape=shapes.FindSymbolJson,
        run=IndexQuery(query_find_symbol),
        text=agent.find_symbol,
        show=terminal.find_symbol,
    )


def _find_references() -> ToolImpl[FindReferencesArgs, SitesAnswer]:
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.references import FindReferencesArgs, query_find_references

    return ToolImpl(
        args=FindReferencesArgs,
        shape=shapes.SitesJson,
        run=IndexQuery(query_find_references),
        text=agent.references,
        show=terminal.references,
    )


def _find_definition() -> ToolImpl[FindDefinitionArgs, DefinitionAnswer]:
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.references import FindDefinitionArgs, query_find_definition

    return ToolImpl(
        args=FindDefinitionArgs,
        shape=shapes.DefinitionJson,
        run=IndexQuery(query_find_definition),
        text=agent.definition,
        show=terminal.definition,
    )


def _find_overrides() -> ToolImpl[FindOverridesArgs, SitesAnswer]:
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.references import FindOverridesArgs, query_find_overrides

    return ToolImpl(
        args=FindOverridesArgs,
        shape=shapes.SitesJson,
        run=IndexQuery(query_find_overrides),
        text=agent.overrides,
        show=terminal.overrides,
    )


def _find_conformances() -> ToolImpl[FindConformancesArgs, ConformancesAnswer]:
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.conformances import FindConformancesArgs, query_find_conformances

    return ToolImpl(
        args=FindConformancesArgs,
        shape=shapes.ConformancesJson,
        run=IndexQuery(query_find_conformances),
        text=agent.conformances,
        show=terminal.conformances,
    )


def _blast_radius() -> ToolImpl[BlastRadiusArgs, BlastRadiusAnswer]:
    from xcindex.engine import reads
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.graph.blast_radius import BlastRadiusArgs, query_blast_radius

    return ToolImpl(
        args=BlastRadiusArgs,
        shape=shapes.BlastRadiusJson,
        run=IndexQueryWith(reads.package_description, query_blast_radius),
        text=agent.blast_radius,
        show=terminal.blast_radius,
    )


def _call_hierarchy() -> ToolImpl[CallHierarchyArgs, CallHierarchyAnswer]:
    from xcindex.presentation import agent, terminal_graph
    from xcindex.tools import shapes
    from xcindex.tools.graph.call_hierarchy import CallHierarchyArgs, query_call_hierarchy

    return ToolImpl(
        args=CallHierarchyArgs,
        shape=shapes.CallHierarchyJson,
        run=IndexQuery(query_call_hierarchy),
        text=agent.call_hierarchy,
        show=terminal_graph.call_hierarchy,
    )


def _type_hierarchy() -> ToolImpl[TypeHierarchyArgs, TypeHierarchyAnswer]:
    from xcindex.presentation import agent, terminal_graph
    from xcindex.tools import shapes
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyArgs, query_type_hierarchy

    return ToolImpl(
        args=TypeHierarchyArgs,
        shape=shapes.TypeHierarchyJson,
        run=IndexQuery(query_type_hierarchy),
        text=agent.type_hierarchy,
        show=terminal_graph.type_hierarchy,
    )


def _change_impact() -> ToolImpl[ChangeImpactArgs, ChangeImpactAnswer]:
    from xcindex.engine import reads
    from xcindex.presentation import agent, terminal_graph
    from xcindex.tools import shapes
    from xcindex.tools.graph.change_impact import ChangeImpactArgs, query_change_impact

    return ToolImpl(
        args=ChangeImpactArgs,
        shape=shapes.ChangeImpactJson,
        run=IndexQueryWith(reads.change_inputs, query_change_impact),
        text=agent.change_impact,
        show=terminal_graph.change_impact,
    )


def _status() -> ToolImpl[StatusArgs, StatusAnswer]:
    from xcindex.engine import runs
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.status import StatusArgs

    return ToolImpl(
        args=StatusArgs,
        shape=shapes.StatusJson,
        run=EngineRun(runs.status),
        text=agent.status,
        show=terminal.status,
    )


def _wait_for_fresh() -> ToolImpl[WaitForFreshArgs, FreshWaitAnswer]:
    from xcindex.engine import runs
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.wait_for_fresh import WaitForFreshArgs

    return ToolImpl(
        args=WaitForFreshArgs,
        shape=shapes.FreshWaitJson,
        run=EngineRun(runs.wait_for_fresh),
        text=agent.wait_for_fresh,
        show=terminal.wait_for_fresh,
    )


def _plan_rename() -> ToolImpl[PlanRenameArgs, RenamePlan]:
    from xcindex.engine import runs
    from xcindex.presentation import agent, terminal
    from xcindex.tools import shapes
    from xcindex.tools.rename.plan import PlanRenameArgs

    return ToolImpl(
        args=PlanRenameArgs,
        shape=shapes.RenamePlanJson,
        run=EngineRun(runs.plan_rename),
        text=agent.plan_rename,
        show=terminal.plan_rename,
    )


# --- the tools ----------------------------------------------------------------------------


SYMBOL_HELP = "a USR (s:… or c:…), or a name that find_symbol resolves to exactly one symbol"

FIND_SYMBOL: ToolDecl[FindSymbolArgs, FindSymbolAnswer] = ToolDecl(
    name="find_symbol",
    title="Find a symbol by name",
    description="Start here: candidates for a name, each with its usr (the input of the other tools), "
    "kind and definition site. " + LOCATION_HELP,
    load=_find_symbol,
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
    load=_find_references,
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
    load=_find_definition,
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
    load=_find_overrides,
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
    load=_find_conformances,
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
    load=_blast_radius,
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
    load=_call_hierarchy,
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
    load=_type_hierarchy,
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
    load=_change_impact,
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
    load=_status,
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
    load=_wait_for_fresh,
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
    load=_plan_rename,
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


class _IndexQueries(Mapping[str, Callable[["Database", Any, Any], Any]]):
    """The index tools' `answer`s by name, each tool loaded when first asked for."""

    def __getitem__(self, name: str) -> Callable[[Database, Any, Any], Any]:
        tool = BY_NAME.get(name)
        if tool is None or not isinstance(tool.run, IndexQuery | IndexQueryWith):
            raise KeyError(name)
        return tool.run.answer

    def __iter__(self) -> Iterator[str]:
        return (tool.name for tool in TOOLS if isinstance(tool.run, IndexQuery | IndexQueryWith))

    def __len__(self) -> int:
        return sum(1 for _ in self)


INDEX_QUERIES: Mapping[str, Callable[[Database, Any, Any], Any]] = _IndexQueries()
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
