"""The text an agent reads beside each tool's structured content, within a response budget
(None: everything). One renderer per tool; `agent.py` maps the registry's tools to them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xcindex.indexstore.model import kind_name
from xcindex.tools.budget import RESPONSE_BUDGET_TOKENS
from xcindex.vocabulary import MatchedBy, RangeReason

if TYPE_CHECKING:
    # Types only: each renderer runs on its own tool's answer, so rendering a first answer
    # must not import every other tool (a tool's limits are imported where they are said).
    from xcindex.tools.conformances import ConformancesAnswer
    from xcindex.tools.find_symbol import FindSymbolAnswer
    from xcindex.tools.graph.blast_radius import BlastRadiusAnswer
    from xcindex.tools.graph.call_hierarchy import CallHierarchyAnswer
    from xcindex.tools.graph.change_impact import ChangeImpactAnswer
    from xcindex.tools.graph.selection import SelectedTest, TestSelection
    from xcindex.tools.graph.type_hierarchy import TypeHierarchyAnswer
    from xcindex.tools.references import DefinitionAnswer, SitesAnswer
    from xcindex.tools.rename.plan import RenamePlan
    from xcindex.tools.resolve import Candidate
    from xcindex.tools.status import StatusAnswer
    from xcindex.tools.wait_for_fresh import FileState, FreshWaitAnswer


def describe(match: Candidate) -> str:
    """One line for a person or a model: name, kind, where it is declared, and how it matched."""
    where = (
        f"at {match.definition.path}:{match.definition.line}"
        if match.definition is not None
        else f"in {match.module or 'the SDK'} (no source here)"
    )
    inside = f" in {match.container_name}" if match.container else ""
    how = ""
    if match.inherited:
        how += f" (inherited from {match.container_name})"
    if match.matched_by is MatchedBy.PARTIAL_LABELS:
        how += " (labels matched in part)"
    line = f"{match.symbol.name} [{kind_name(match.symbol.kind)}]{inside} usr={match.symbol.usr} {where}{how}"
    if match.signature:
        line += f"\n    {match.signature}"
    if match.hint:
        line += f"\n    hint: {match.hint}"
    return line


def render_find_symbol(answer: FindSymbolAnswer, budget: int | None = None) -> str:
    if not answer.matches:
        lines = [
            f"No symbol named '{answer.query}' is defined or used in this index "
            f"({answer.freshness.completeness})."
        ]
        if "(" not in answer.query:
            lines.append("Swift methods are named with their labels, e.g. fetchUser(id:).")
    else:
        shown = answer.shown(budget)
        how = {
            MatchedBy.BASE_NAME: " (matched by base name)",
            MatchedBy.PARTIAL_LABELS: " (labels matched in part)",
        }.get(answer.matched_by, "")
        lines = [f"{len(answer.matches)} symbol(s) named '{answer.query}'{how}, best first:"]
        lines.extend(f"- {describe(match)}" for match in shown)
        if answer.resolved_note:
            lines.append(f"Note: {answer.resolved_note}.")
        next_offset = answer.next_offset(budget)
        if next_offset is not None:
            lines.append(
                f"(showing {answer.offset + 1}-{next_offset} of {len(answer.matches)}; ask again with offset {next_offset} for the next ones, narrow the "
                "name with labels or Type.member(label:), or list them all in a shell: "
                f"xcindex symbol '{answer.query}' --project <projectPath> --json)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_sites(answer: SitesAnswer, what: str, budget: int | None = None) -> str:
    """Counts first, then one line per site grouped by file."""
    from xcindex.tools.references import MAX_RESULTS

    if not answer.sites:
        head = f"No {what} for '{answer.query}' ({answer.freshness.completeness})."
        if not answer.symbols:
            head += " No such symbol in this index: check the name (methods need labels) or use find_symbol."
        lines = [head]
    else:
        shown = answer.shown(budget)
        files = sorted({s.occurrence.path for s in shown})
        subject = ", ".join(sorted({s.name for s in answer.symbols})) or answer.query
        lines = [f"{answer.total} {what} of '{subject}' in {len(files)} file(s):"]
        current = ""
        for site in shown:
            if site.occurrence.path != current:
                current = site.occurrence.path
                lines.append(current)
            occ = site.occurrence
            lines.append(f"  {occ.line}:{occ.column} {answer.label(site)} [{site.role_text()}]")
        overrides = what.startswith("override")
        next_offset = answer.next_offset(budget)
        first, last = answer.offset + 1, answer.offset + len(shown)
        if len(shown) < len(answer.sites):
            command = (
                "xcindex overrides <usr> --project <projectPath> --all --json"
                if overrides
                else "xcindex refs --usr <usr> --project <projectPath> --all --json"
            )
            lines.append(
                f"(showing {len(shown)} of {answer.total}: that is what fits the response budget of "
                f"~{RESPONSE_BUDGET_TOKENS // 1000}k tokens. Ask again with offset {next_offset} for the "
                "next page, narrow the question (one usr rather than a name; blast_radius for files), "
                f"or list them all in a shell: {command} (under the Claude Code plugin the command is "
                '"${CLAUDE_PLUGIN_ROOT}/bin/xcindex")'
                ")"
            )
        elif next_offset is not None and overrides:
            lines.append(
                f"(showing {first}-{last} of {answer.total}, by path; ask again with offset {next_offset})"
            )
        elif next_offset is not None:
            lines.append(
                f"(showing {first}-{last} of {answer.total}; ask again with offset {next_offset} for the "
                f"next page, or with a larger maxResults (at most {MAX_RESULTS}))"
            )
    if answer.note:
        lines.append(f"Note: {answer.note}.")
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_definition(answer: DefinitionAnswer, budget: int | None = None) -> str:
    if answer.site is None:
        lines = [f"No definition of {answer.usr} in this index ({answer.freshness.completeness})."]
    else:
        occ = answer.site.occurrence
        lines = [f"{answer.site.symbol.name} is defined at {occ.path}:{occ.line}:{occ.column}"]
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_conformances(answer: ConformancesAnswer, budget: int | None = None) -> str:
    name = answer.protocol.name if answer.protocol else answer.usr
    if answer.protocol is None:
        lines = [f"No protocol with USR {answer.usr} in this index: use find_symbol to get its usr."]
    elif not answer.conformances:
        lines = [f"No type conforms to {name} in this index ({answer.freshness.completeness})."]
    else:
        shown = answer.shown(budget)
        lines = [f"{len(answer.conformances)} type(s) conform to {name}:"]
        for c in shown:
            lines.append(
                f"- {c.type_symbol.name} ({c.how()}) at {c.anchor.path}:{c.anchor.line}:{c.anchor.column}"
            )
        next_offset = answer.next_offset(budget)
        if next_offset is not None:
            lines.append(
                f"(showing {answer.offset + 1}-{next_offset} of {len(answer.conformances)}, by path, to stay "
                f"within the response budget; ask again with offset {next_offset} for the next page, or "
                f"list them all in a shell: xcindex conformances {answer.usr} --project <projectPath> --json)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_status(answer: StatusAnswer, budget: int | None = None) -> str:
    from xcindex.tools.status import MAX_LISTED, TEXT_LISTED

    lines = [answer.summary()]
    counts = answer.state.counts
    if counts is not None:
        lines.append(
            f"{counts.live_units} live units, {counts.records} records, {counts.symbols} symbols, "
            f"{counts.occurrences} occurrences."
        )
    if answer.stale_files:
        limit = None if budget is None else TEXT_LISTED
        line = "Stale: " + ", ".join(answer.stale_files[:limit])
        if limit is not None and len(answer.stale_files) > limit:
            line += (
                f" … and {len(answer.stale_files) - limit} more (staleFiles names {MAX_LISTED}; a rebuild "
                "refreshes them all; every one in a shell: xcindex status --project <projectPath>)"
            )
        lines.append(line)
    for child in answer.lsp:
        line = f"sourcekit-lsp for {child['root']}: {child['state']}"
        if child["ready"]:
            line += ", index ready"
        if child["lastError"]:
            line += f", last error {child['lastError']}"
        lines.append(line + ".")
    lines.extend(f"Warning [{w.code}]: {w.message}" for w in answer.warnings)
    return "\n".join(lines)


def render_wait_for_fresh(answer: FreshWaitAnswer, budget: int | None = None) -> str:
    waited = f"{answer.waited_s:.1f} s"
    counts: dict[FileState, int] = {}
    for f in answer.files:
        counts[f.state] = counts.get(f.state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    if answer.fresh:
        lines = [f"All {len(answer.files)} file(s) are fresh in the index (waited {waited})."]
    elif answer.timed_out:
        lines = [
            f"Timed out after {waited}: {summary}. Is a build running? Rebuild "
            "(swift build --build-tests, or build in Xcode) and wait again."
        ]
    else:
        lines = [f"Settled after {waited}: {summary}."]
    shown = answer.shown(budget)
    lines.extend(
        f"  {f.state}: {f.path}" + (" (edited this session)" if f.session_edited else "") for f in shown
    )
    if len(shown) < len(answer.files):
        lines.append(f"(showing {len(shown)} of {len(answer.files)}, unsettled first; ask about fewer files)")
    lines.extend(f"Warning [{w.code}]: {w.message}" for w in answer.warnings)
    return "\n".join(lines)


_CALLABLE_KINDS = frozenset({12, 16, 17, 18, 22, 23})  # functions, methods, initialisers
_SUBSCRIPT_SUBKIND = 1011


def not_callable_note(answer: CallHierarchyAnswer) -> str | None:
    """Why an empty call hierarchy is empty when its symbol is not something one calls."""
    root = answer.root
    if root is None or answer.groups:
        return None
    symbol = root.symbol
    if symbol.kind in _CALLABLE_KINDS or symbol.subkind == _SUBSCRIPT_SUBKIND:
        return None
    return (
        f"{root.qualified_name} ({kind_name(symbol.kind)}) is not a function: a call hierarchy follows "
        "calls; its uses are references (find_references, `xcindex refs`)."
    )


def render_call_hierarchy(answer: CallHierarchyAnswer, budget: int | None = None) -> str:
    if answer.root is None:
        lines = [
            f"No symbol {answer.query} in this index ({answer.freshness.completeness}): "
            "use find_symbol to get its usr."
        ]
    else:
        shown = answer.shown(budget)
        incoming = answer.direction == "incoming"
        what = "caller" if incoming else "callee"
        deeper = f"; {len(answer.groups)} groups with the deeper levels" if answer.depth > 1 else ""
        lines = [
            f"{answer.call_count} direct {what} group(s) of {answer.root.qualified_name} "
            f"({answer.direction}, depth {answer.depth}{deeper}):"
        ]
        for group in shown:
            other = group.caller if incoming else group.callee
            where = (
                f"{other.definition.path}:{other.definition.line}" if other.definition else "(no definition)"
            )
            mark = "  [via dynamic dispatch]" if group.via_dispatch else ""
            mark += "  [cycle: not expanded again]" if group.cycle else ""
            lines.append(
                f"{'  ' * group.level}{other.qualified_name} [{kind_name(other.symbol.kind)}] {where}{mark}"
            )
            for site, resolves in group.sites:
                occ = site.occurrence
                how = site.dispatch
                if resolves != group.callee.symbol.usr:
                    how += f" through {resolves}"
                lines.append(f"{'  ' * group.level}  at {occ.path}:{occ.line}:{occ.column} ({how})")
        if answer.external_calls:
            lines.append(
                f"({answer.external_calls} call(s) of symbols defined outside this index, such as the "
                "standard library, are not listed)"
            )
        next_offset = answer.next_offset(budget)
        if next_offset is not None:
            first = answer.offset + 1
            lines.append(
                f"(level-1 groups {first} to {next_offset} of {answer.call_count}; the next page: the same "
                f"call with offset={next_offset})"
            )
        elif len(shown) < len(answer.groups) or answer.truncated:
            lines.append(
                f"(showing {len(shown)} of {len(answer.groups)} groups; deeper levels were cut: lower depth, "
                f"or ask about one of the callers)"
            )
        if (why := not_callable_note(answer)) is not None:
            lines.append(why)
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_type_hierarchy(answer: TypeHierarchyAnswer, budget: int | None = None) -> str:
    from xcindex.tools.graph.type_hierarchy import MAX_LOCAL_SUBTYPES

    if answer.root is None:
        lines = [
            f"No symbol {answer.query} in this index ({answer.freshness.completeness}): "
            "use find_symbol to get its usr."
        ]
    else:
        shown = answer.shown(budget)
        lines = [
            f"{len(answer.links)} {answer.direction} link(s) of {answer.root.qualified_name} "
            f"[{kind_name(answer.root.symbol.kind)}] (depth {answer.depth}):"
        ]
        for link in shown:
            other = link.supertype if answer.direction == "supertypes" else link.subtype
            how = link.relation + (" in an extension" if link.via_extension else "")
            lines.append(
                f"{'  ' * link.level}{other.qualified_name} [{kind_name(other.symbol.kind)}] "
                f"({link.subtype.symbol.name} {how} {link.supertype.symbol.name}) at "
                f"{link.anchor.path}:{link.anchor.line}:{link.anchor.column}"
            )
        for local in answer.local_subtypes[:MAX_LOCAL_SUBTYPES]:
            lines.append(
                f"  {local.name} [{local.kind}, declared in a function body: not in the index, found in the "
                f"source] at {local.mention.path}:{local.mention.line}:{local.mention.column}"
            )
        if not answer.links and not answer.local_subtypes:
            opposite = "subtypes" if answer.direction == "supertypes" else "supertypes"
            lines.append(f"(none in this direction; direction '{opposite}' asks the other way)")
        if len(shown) < len(answer.links) or answer.truncated:
            lines.append(
                f"(showing {len(shown)} of {len(answer.links)}; list them all in a shell: xcindex types "
                f"{answer.root.symbol.usr} --direction {answer.direction} --project <projectPath> --json)"
            )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_change_impact(answer: ChangeImpactAnswer, budget: int | None = None) -> str:
    from xcindex.tools.graph.change_impact import RANGE_METHOD

    if not answer.changed_files:
        lines = [f"No Swift file differs from {answer.base}."]
    else:
        lines = [
            f"{len(answer.changed_files)} changed Swift file(s) against {answer.base}; "
            f"{len(answer.changed)} changed symbol(s):"
        ]
        for c in answer.changed:
            usr = f" usr={c.usr}" if c.usr else " (not in the index: matched by name)"
            lines.append(f"- {c.name} [{c.kind}] {c.change} at {c.path}:{c.line}{usr}")
        shown = answer.shown_references(budget)
        lines.append(f"{answer.reference_count} reference(s) to them outside the changed lines:")
        lines.extend(f"  {occ.path}:{occ.line}:{occ.column} {s.name}" for s, occ in answer.references[:shown])
        if shown < answer.reference_count:
            lines.append(f"  (showing {shown}; xcindex impact --json lists them all)")
        lines.append(f"{len(answer.dependent_files)} dependent file(s) (code that reaches the changes):")
        lines.extend(f"  {p}" for p in answer.dependent_files)
        lines.extend(selection_lines(answer.selection, answer.shown_tests(budget)))
        lines.append(f"(Declaration extents are approximate: {RANGE_METHOD}.)")
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)


def render_plan(plan: RenamePlan) -> str:
    return "```json\n" + json.dumps(plan.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n```"


def render_plan_compact(plan: RenamePlan, budget: int) -> str:
    """The plan for a reader with a response budget: per file and tier, `line:column` lists
    (reasons other than a direct reference in brackets), then the page's unproven sites and
    text mentions per file and kind, each list with where its next page starts.

    The range lists show the longest run of the page, in the plan's order, that fits the
    budget (part of a file's ranges when the whole file does not fit), and a line says at
    which offset the rest starts: asking again from there shows every range once."""
    lines = [f"Rename {plan.old_name or plan.usr} → {plan.new_name} ({plan.usr})"]
    if plan.refusal is not None:
        lines.append(f"Refused ({plan.refusal.reason}): {plan.refusal.message} {plan.refusal.remediation}")
        return "\n".join(lines)
    total = len(plan.ranges)
    counts = ", ".join(f"{count} {name}" for name, count in plan.summary().items() if count)
    lines.append(
        f"{total} range(s): {counts or 'none'}. Columns are UTF-8 bytes (sourcekit-lsp ones UTF-16)."
    )
    lines.extend(f"warning {code}: {message}" for code, message in plan.warnings)
    # Room for the range lists: the budget less the other lines and the longest footer.
    longest_footer = f"Showing ranges {total} to {total} of {total}: ask again with offset={total}."
    room = budget - sum(len(line) + 1 for line in (*lines, longest_footer))
    groups: dict[tuple[str, str], list[str]] = {}
    shown = 0
    for r in plan.shown():
        extra = [str(x) for x in r.reasons if x != RangeReason.DIRECT_REFERENCE]
        site = f"{r.line}:{r.column}" + (f"[{','.join(extra)}]" if extra else "")
        key = (r.path, str(r.tier))
        # A site joins its file and tier's line, or starts one.
        cost = len(site) + 1 if key in groups else len(f"{r.path} {r.tier}: {site}") + 1
        if cost > room:
            break
        room -= cost
        groups.setdefault(key, []).append(site)
        shown += 1
    lines.extend(f"{path} {tier}: {' '.join(sites)}" for (path, tier), sites in groups.items())
    end = plan.offset + shown
    if shown == 0 and end < total:
        lines.append(
            f"Range {plan.offset} of {total} does not fit in this text's budget: the structured "
            "content lists this page's ranges (`ranges`, then `nextOffset`)."
        )
    elif end < total:
        lines.append(f"Showing ranges {plan.offset} to {end - 1} of {total}: ask again with offset={end}.")
    used = sum(len(line) + 1 for line in lines)
    for title, items, count, start, following, argument in (
        (
            "unproven site(s) in code (unprovenSites: check each code one; labels are other declarations')",
            plan.unproven_shown(),
            len(plan.unproven),
            plan.unproven_offset,
            plan.unproven_next_offset,
            "unprovenOffset",
        ),
        (
            "mention(s) in comments/strings (textMentions): optional edits",
            plan.text_mentions_shown(),
            len(plan.text_mentions),
            plan.text_mention_offset,
            plan.text_mention_next_offset,
            "textMentionOffset",
        ),
    ):
        if not count:
            continue
        lines.append(f"{count} {title}:")
        listed = 0
        for mention in items:
            text = f"  {mention.path}:{mention.line}:{mention.column} {mention.kind}: {mention.text}"
            if used + len(text) > budget:
                break
            lines.append(text)
            used += len(text) + 1
            listed += 1
        end = start + listed
        if not listed and end < count:
            lines.append(f"  (none on this page: ask again with {argument}={end})")
        elif end < count:
            lines.append(f"  (listed {start} to {end - 1} of {count}: ask again with {argument}={end})")
        elif following is not None:
            lines.append(f"  (ask again with {argument}={following} for the rest)")
    if plan.not_visible_count:
        lines.append(
            f"{plan.not_visible_count} more occurrence(s) in code of modules that cannot see the renamed symbol: not listed."
        )
    return "\n".join(lines)


RUNS_MORE = (
    "it names whole classes or modules (the list of tests is too long): it runs more than the covering tests"
)

VIA_WORDS = {
    "directCall": "by a direct call",
    "dispatch": "through dispatch (an override or witness of what they call)",
    "libraryDispatch": "through library dispatch, on a value of the changed type they hold",
    "executableByName": "running an executable the change reaches, by name",
}


def selection_lines(selection: TestSelection, shown: Sequence[SelectedTest]) -> list[str]:
    """The covering tests (those shown), how they were reached, and the commands."""
    counts = selection.counts()
    if not selection.tests:
        return ["0 covering tests."]
    how = "; ".join(f"{count} {VIA_WORDS[via]}" for via, count in counts.items())
    lines = [f"{len(selection.tests)} covering test(s): {how}."]
    lines.extend(f"  {t.case.id} [{t.via.label}] at {t.case.path}:{t.case.line}" for t in shown)
    if len(shown) < len(selection.tests):
        lines.append(f"  (listing {len(shown)} of {len(selection.tests)}; the command runs them all)")
    if selection.executables:
        lines.append(f"The change reaches the executable(s) {', '.join(selection.executables)}.")
    if selection.command.text:
        more = f" ({RUNS_MORE})" if selection.command.runs_more else ""
        lines.append(f"Run them{more}: {selection.command.text}")
    if selection.likely is not None and selection.likely.text and selection.likely_via is not None:
        lines.append(
            f"The likely few (reached {VIA_WORDS[selection.likely_via.label]}): {selection.likely.text}"
        )
    return lines


def render_blast_radius(answer: BlastRadiusAnswer, budget: int | None = None) -> str:
    view = answer.shown(budget)
    lines = [
        f"Changing {answer.file_path} reaches {len(answer.affected_files)} file(s) "
        f"({len(answer.direct_dependents)} directly, {len(answer.covering_tests)} test file(s)).",
    ]
    if view.direct_dependents:
        lines.append("Direct dependents:")
        lines.extend(f"  {p}" for p in view.direct_dependents)
    indirect = [p for p in view.affected_files if p not in answer.direct_dependents]
    if indirect:
        lines.append(f"Transitive dependents (fixed point after {answer.depth} hop(s)):")
        lines.extend(f"  {p}" for p in indirect)
    if answer.bounded:
        lines.append(f"(stopped after {answer.depth} hops: the radius may be larger)")
    if view.covering_tests:
        lines.append("Test files covering it:")
        lines.extend(f"  {p}" for p in view.covering_tests)
    if answer.whole_suite:
        lines.append("The covering tests are the whole test suite: run `swift test`.")
    lines.extend(selection_lines(answer.selection, view.selected))
    if len(view.affected_files) < len(answer.affected_files):
        lines.append(
            f"(listing {len(view.affected_files)} of {len(answer.affected_files)} files, covering tests and "
            "direct dependents first, to stay within the response budget; the command above runs every "
            f"covering test. All of them in a shell: xcindex blast {answer.file_path} "
            "--project <projectPath> --json)"
        )
    lines.extend(answer.freshness.notes(budget))
    return "\n".join(lines)
