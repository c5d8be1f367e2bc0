"""Terminal renderings of call_hierarchy, type_hierarchy and change_impact (same
conventions as terminal.py: paths relative to the working directory, notes on stderr)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcindex.indexstore.model import kind_name
from xcindex.presentation.terminal import (
    EXIT_NO_RESULTS,
    EXIT_OK,
    Context,
    Output,
    plural,
    print_freshness,
)
from xcindex.presentation.text import RUNS_MORE, VIA_WORDS, not_callable_note

if TYPE_CHECKING:
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer


def call_hierarchy(answer: CallHierarchyAnswer, output: Output, ctx: Context) -> int:
    if answer.root is None:
        output.line(f"No symbol {answer.query} in this index: `xcindex symbol NAME` gives its USR.")
        print_freshness(output, answer.freshness)
        return EXIT_NO_RESULTS
    incoming = answer.direction == "incoming"
    output.line(
        f"{output.style.name(answer.root.qualified_name)}: "
        f"{plural(answer.call_count, 'caller' if incoming else 'callee')} ({answer.direction}, "
        f"depth {answer.depth})"
    )
    for group in answer.groups:
        other = group.caller if incoming else group.callee
        indent = "  " * group.level
        where = (
            f"{output.path(other.definition.path)}:{other.definition.line}"
            if other.definition
            else "no definition"
        )
        cycle = output.style.warn("  (cycle)") if group.cycle else ""
        via = output.style.dim("  (via dynamic dispatch)") if group.via_dispatch else ""
        output.line(
            f"{indent}{output.style.name(other.qualified_name)}  {output.style.dim(where)}{via}{cycle}"
        )
        for site, resolves in group.sites:
            occ = site.occurrence
            how = site.dispatch + (" through a base" if resolves != group.callee.symbol.usr else "")
            output.line(
                f"{indent}  {output.style.dim(f'{output.path(occ.path)}:{occ.line}:{occ.column}')}  {how}"
            )
    if answer.external_calls:
        output.line(
            output.style.dim(f"({plural(answer.external_calls, 'call')} outside this index not listed)")
        )
    next_offset = answer.next_offset()
    if next_offset is not None:
        output.line(
            f"({'callers' if incoming else 'callees'} {answer.offset + 1} to {next_offset} of {answer.call_count}; "
            f"the next page: --offset {next_offset})"
        )
    elif answer.truncated:
        output.line(f"(stopped after {len(answer.groups)} groups)")
    if (why := not_callable_note(answer)) is not None:
        output.line(why)
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.groups else EXIT_NO_RESULTS


def type_hierarchy(answer: TypeHierarchyAnswer, output: Output, ctx: Context) -> int:
    if answer.root is None:
        output.line(f"No symbol {answer.query} in this index: `xcindex symbol NAME` gives its USR.")
        print_freshness(output, answer.freshness)
        return EXIT_NO_RESULTS
    output.line(
        f"{output.style.name(answer.root.qualified_name)} ({kind_name(answer.root.symbol.kind)}): "
        f"{plural(len(answer.links), 'link')} ({answer.direction}, depth {answer.depth})"
    )
    for link in answer.links:
        other = link.supertype if answer.direction == "supertypes" else link.subtype
        how = link.relation + (" in an extension" if link.via_extension else "")
        where = f"{output.path(link.anchor.path)}:{link.anchor.line}:{link.anchor.column}"
        output.line(
            f"{'  ' * link.level}{output.style.name(other.qualified_name)}  {kind_name(other.symbol.kind)}  "
            f"{output.style.dim(how + '  ' + where)}"
        )
    if answer.local_subtypes:
        output.line(
            output.style.dim(
                "declared in function bodies (the index does not record local types; found in the source):"
            )
        )
        for local in answer.local_subtypes:
            where = f"{output.path(local.mention.path)}:{local.mention.line}:{local.mention.column}"
            output.line(f"  {output.style.name(local.name)}  {local.kind}  {output.style.dim(where)}")
    if not answer.links and not answer.local_subtypes:
        opposite = "subtypes" if answer.direction == "supertypes" else "supertypes"
        output.line(output.style.dim(f"(none in this direction: --direction {opposite} asks the other way)"))
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.links or answer.local_subtypes else EXIT_NO_RESULTS


def change_impact(answer: ChangeImpactAnswer, output: Output, ctx: Context) -> int:
    if not answer.changed_files:
        output.line(f"No Swift file differs from {answer.base}.")
        print_freshness(output, answer.freshness)
        return EXIT_NO_RESULTS
    output.line(
        f"{plural(len(answer.changed), 'changed symbol')} in {plural(len(answer.changed_files), 'file')} "
        f"(against {answer.base})"
    )
    for c in answer.changed:
        where = f"{output.path(c.path)}:{c.line}"
        note = "" if c.usr else output.style.dim("  (not in the index)")
        output.line(f"  {output.style.name(c.name)}  {c.kind}  {c.change}  {output.style.dim(where)}{note}")
    output.line()
    output.line(f"{plural(answer.reference_count, 'reference')} elsewhere")
    for symbol, occ in answer.references:
        output.line(
            f"  {output.style.dim(f'{output.path(occ.path)}:{occ.line}:{occ.column}')}  {symbol.name}"
        )
    output.line()
    output.line(f"{plural(len(answer.tests), 'covering test')}")
    for test in answer.tests:
        where = f"{output.path(test.case.path)}:{test.case.line}"
        output.line(f"  {test.case.id}  {output.style.dim(test.via.label)}  {output.style.dim(where)}")
    if answer.swift_test_command:
        output.line()
        if answer.selection.command.runs_more:
            output.line(output.style.dim(RUNS_MORE))
        output.line(answer.swift_test_command)
    likely, via = answer.selection.likely, answer.selection.likely_via
    if likely is not None and likely.text and via is not None:
        output.line(output.style.dim(f"the likely few (reached {VIA_WORDS[via.label]}):"))
        output.line(likely.text)
    output.note("note: declaration extents are approximate (from the source text, not the compiler)")
    print_freshness(output, answer.freshness)
    return EXIT_OK
