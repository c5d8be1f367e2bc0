"""plan_rename: a tiered rename plan, reconciled with sourcekit-lsp. Never writes a file.

The plan is computed in two pure steps: `index_plan` (from the database: the USR set,
every range with its reasons, checked against the file's real bytes) and `reconcile`
(against the locations sourcekit-lsp returned, when it could be asked). The engine does
the I/O in between. The rooms beside this one: `answer` (the plan and its pages), `names`
(the new name's validity), `checks` (refusals, witnesses and warnings the index does not
relate), `scan` (the whole-tree safety net) and `reconcile`. The names other rooms import
are re-exported here, the tool's one face.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import Field, StrictInt, StrictStr

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.graph_queries import overridden
from xcindex.indexstore.model import Role
from xcindex.tools.arguments import MAX_TEXT, LocationArgs, Text
from xcindex.tools.common import canonical_occurrence, file_is_stale
from xcindex.tools.references import source_occurrences
from xcindex.tools.rename.answer import DEFAULT_MAX_RANGES as DEFAULT_MAX_RANGES
from xcindex.tools.rename.answer import MAX_RANGES, now_iso
from xcindex.tools.rename.answer import Refusal as Refusal
from xcindex.tools.rename.answer import RenamePlan as RenamePlan
from xcindex.tools.rename.answer import RenameRange as RenameRange
from xcindex.tools.rename.answer import refused as refused
from xcindex.tools.rename.answer import with_warnings as with_warnings
from xcindex.tools.rename.checks import refusal_reason
from xcindex.tools.rename.collisions import clashes, collision_report
from xcindex.tools.rename.meaning import ATTRIBUTE_LINES_ABOVE, attributes_only, semantic_warnings
from xcindex.tools.rename.names import base_name as base_name
from xcindex.tools.rename.names import early_refusal as early_refusal
from xcindex.tools.rename.names import is_identifier
from xcindex.tools.rename.names import validate_new_name as validate_new_name
from xcindex.tools.rename.net import with_safety_net as with_safety_net
from xcindex.tools.rename.reach import rename_reach
from xcindex.vocabulary import RangeReason, RefusalReason, Tier

PROTOCOL_KIND = 8

# --- where a symbol lives ------------------------------------------------------------

_SDK_MARKERS = ("/Applications/Xcode", "/Library/Developer/CommandLineTools", ".sdk/", "/usr/lib/swift/")


_TOOLCHAIN_SDK_DIRS = ("usr/lib", "usr/include", "usr/share", "Developer")


def is_sdk_path(path: str, toolchain_roots: Sequence[str | os.PathLike[str]]) -> bool:
    """Inside Xcode, an SDK or the Swift runtime, or in the library folders of one of this
    machine's toolchains (compared by real path, so a symlinked /usr/bin/swift still counts).
    Only a toolchain's library folders count, not its whole root: a distribution's swift in
    /usr/bin has the root `/`, and a project is never SDK code for living under it."""
    real = os.path.realpath(path) if path else path
    if any(marker in real for marker in _SDK_MARKERS):
        return True
    for root in toolchain_roots:
        top = os.path.realpath(os.fspath(root)).rstrip("/")
        for sub in _TOOLCHAIN_SDK_DIRS:
            folder = f"{top}/{sub}"
            if real == folder or real.startswith(folder + "/"):
                return True
    return False


def _swift_usr_module(usr: str) -> str | None:
    """The module of a Swift USR (`s:10CanaryCore…` → CanaryCore; `s:S…` → Swift)."""
    if not usr.startswith("s:"):
        return None
    body = usr[2:]
    if body.startswith("S"):
        return "Swift"  # the standard library's substitutions: s:SS (String), s:Si (Int), …
    match = re.match(r"(\d+)", body)
    if match is None:
        return None
    length = int(match.group(1))
    start = len(match.group(1))
    return body[start : start + length]


# --- the plan from the index ---------------------------------------------------------


def _roots_of(
    db: Database, symbol: SymbolRow, max_depth: int = 32
) -> tuple[list[SymbolRow], list[SymbolRow]]:
    """Walk `overrideOf` up: the user-defined roots of the override chain, and any
    overridden symbols that have no definition here (SDK methods). A witness is related to
    its requirement also where only a conformance declared elsewhere says so (an implicit
    occurrence there: docs/tools.md, "Implicit occurrences")."""
    roots: dict[int, SymbolRow] = {}
    external: dict[int, SymbolRow] = {}
    frontier = [symbol]
    seen = {symbol.id}
    for _ in range(max_depth):
        next_frontier: list[SymbolRow] = []
        bases = overridden(db, [current.id for current in frontier])
        for current in frontier:
            parents = sorted(bases.get(current.id, ()))
            if not parents:
                roots[current.id] = current
            for sid in parents:
                if sid in seen:
                    continue
                seen.add(sid)
                parent = db.symbols_by_ids([sid])[sid]
                if canonical_occurrence(source_occurrences(db, parent)) is None:
                    external[sid] = parent
                    roots[current.id] = current
                else:
                    next_frontier.append(parent)
        if not next_frontier:
            break
        frontier = next_frontier
    return list(roots.values()), list(external.values())


def _reasons(db: Database, occ: OccurrenceRow, symbols: Mapping[int, SymbolRow]) -> list[RangeReason]:
    reasons: list[RangeReason] = []
    for roles, sid in db.relations_of([occ.id]).get(occ.id, []):
        if roles & Role.REL_OVERRIDEOF:
            overridden = symbols.get(sid) or db.symbols_by_ids([sid]).get(sid)
            parent_is_protocol = False
            if overridden is not None:
                definition = canonical_occurrence(db.occurrences_of(overridden.id))
                if definition is not None:
                    for r, parent_id in db.relations_of([definition.id]).get(definition.id, []):
                        if r & Role.REL_CHILDOF:
                            parent = db.symbols_by_ids([parent_id]).get(parent_id)
                            parent_is_protocol = parent is not None and parent.kind == PROTOCOL_KIND
            reason = RangeReason.CONFORMANCE_WITNESS if parent_is_protocol else RangeReason.OVERRIDE
            if reason not in reasons:
                reasons.append(reason)
        if roles & Role.REL_EXTENDEDBY and RangeReason.EXTENSION_MEMBER not in reasons:
            reasons.append(RangeReason.EXTENSION_MEMBER)
    return reasons or [RangeReason.DIRECT_REFERENCE]


class _FileBytes:
    """Lines of source files as UTF-8 bytes, read once per plan."""

    def __init__(self) -> None:
        self._lines: dict[str, list[bytes] | None] = {}

    def line(self, path: str, line: int) -> bytes | None:
        if path not in self._lines:
            try:
                self._lines[path] = Path(path).read_bytes().split(b"\n")
            except OSError:
                self._lines[path] = None
        lines = self._lines[path]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]

    def definition_text(self, occ: OccurrenceRow) -> str:
        """The definition's line with the attribute lines right above it: lines holding only
        attributes, an attribute's arguments spread over several lines included; never the
        previous declaration (`@Flag var verbose = false` on the line above is not one)."""
        found: list[bytes] = []
        current = self.line(occ.path, occ.line)
        if current is not None:
            found.append(current)
        pending: list[bytes] = []
        depth = 0
        for above in range(occ.line - 1, max(occ.line - ATTRIBUTE_LINES_ABOVE, 0) - 1, -1):
            text = self.line(occ.path, above)
            if text is None:
                break
            pending.insert(0, text)
            depth += text.count(b")") - text.count(b"(")
            if depth > 0:
                continue  # inside an attribute's arguments, opened on a line further up
            if not attributes_only(b"\n".join(pending).decode("utf-8", "replace")):
                break
            found[0:0] = pending
            pending = []
        return b"\n".join(found).decode("utf-8", "replace")


def index_plan(
    db: Database,
    usr: str,
    new_name: str,
    *,
    toolchain_roots: Sequence[str | os.PathLike[str]],
    edited_files: frozenset[str] = frozenset(),
    overlay_files: frozenset[str] = frozenset(),
    last_built: str | None = None,
    max_ranges: int = DEFAULT_MAX_RANGES,
) -> RenamePlan:
    """The index's plan. `edited_files` (real paths) were edited this session: their ranges
    are red-stale (`session_edited`), unless they are in `overlay_files` (real paths), the
    files the freshness overlay re-indexed as they are now, whose ranges are tiered like
    any other."""
    plan = RenamePlan(
        usr=usr,
        old_name=None,
        new_name=new_name,
        generated_at=now_iso(),
        last_built=last_built,
        files_edited_this_session=len(edited_files),
        max_ranges=max_ranges,
    )
    refusal = early_refusal(new_name)
    if refusal is not None:
        return replace(plan, refusal=refusal)

    symbol = db.symbol_by_usr(usr)
    if symbol is None:
        module = _swift_usr_module(usr)
        project_modules = {m for _path, _mtime, m, _target, _test in db.live_files()}
        if usr.startswith("c:") or (module is not None and module not in project_modules):
            return replace(
                plan,
                refusal=_sdk_refusal(
                    usr, f"its USR belongs to {module or 'a C module'}, not to this project"
                ),
            )
        return replace(
            plan,
            refusal=Refusal(
                RefusalReason.USR_NOT_FOUND,
                f"No symbol with USR {usr} in this index.",
                "Rebuild the index, or resolve the symbol again with find_symbol.",
            ),
        )
    plan = replace(plan, old_name=symbol.name)
    all_occurrences = db.occurrences_of(symbol.id)
    definition = canonical_occurrence(all_occurrences)
    written = canonical_occurrence(o for o in all_occurrences if not o.roles & Role.IMPLICIT)
    system_modules = {"Swift", *db.system_modules()}
    if definition is None:
        module = _swift_usr_module(usr)
        project_modules = {m for _path, _mtime, m, _target, _test in db.live_files()}
        if module in system_modules or symbol.usr.startswith("c:") or module not in project_modules:
            return replace(plan, refusal=_sdk_refusal(symbol.name, "its declaration is in an SDK module"))
        return replace(
            plan,
            refusal=Refusal(
                RefusalReason.USR_NOT_FOUND,
                f"{symbol.name} ({usr}) has no definition in this index.",
                "Rebuild the index, or resolve the symbol again with find_symbol.",
            ),
        )
    if is_sdk_path(definition.path, toolchain_roots):
        return replace(plan, refusal=_sdk_refusal(symbol.name, f"it is declared in {definition.path}"))
    if written is None or not definition.path or definition.line == 0:
        return replace(
            plan,
            refusal=Refusal(
                RefusalReason.SYNTHESIZED_SYMBOL_NOT_RENAMEABLE,
                f"{symbol.name} is synthesized by the compiler and has no source range to rename.",
                "Rename the declaration it is synthesized from instead.",
            ),
        )

    why_not = refusal_reason(symbol)
    if why_not is not None:
        return replace(plan, refusal=Refusal(*why_not))
    roots, external = _roots_of(db, symbol)
    if external:
        names = ", ".join(sorted(s.name for s in external))
        return replace(
            plan, refusal=_sdk_refusal(symbol.name, f"it overrides or witnesses {names} from an SDK")
        )

    reach = rename_reach(db, roots)
    if reach.unwritten:
        return replace(
            plan,
            refusal=_sdk_refusal(
                symbol.name,
                f"it is witnessed by {reach.unwritten_text()}, declared in an SDK or synthesised by the "
                "compiler: renaming the requirement breaks that conformance",
            ),
        )
    renamed, completion = reach.renamed, reach.completion
    collision, overloads = collision_report(clashes(db, renamed.values(), new_name), new_name)
    if collision is not None:
        return replace(plan, refusal=Refusal(*collision))
    files = _FileBytes()
    warnings = [*reach.warnings, *overloads]
    warnings += semantic_warnings(db, renamed.values(), files.definition_text)

    old_base = base_name(symbol.name)
    old_bytes = old_base.encode("utf-8")
    identifier = is_identifier(old_base)
    edited = {os.path.realpath(p) for p in edited_files} - overlay_files
    ranges: dict[tuple[str, int, int], RenameRange] = {}
    definitions: list[tuple[str, str, int, int]] = []
    for renamed_symbol in renamed.values():
        occurrences = source_occurrences(db, renamed_symbol)
        own_definition = canonical_occurrence(occurrences)
        if own_definition is not None:
            definitions.append(
                (renamed_symbol.usr, own_definition.path, own_definition.line, own_definition.column)
            )
        for occ in occurrences:
            key = (occ.path, occ.line, occ.column)
            if key in ranges:
                continue
            reasons = _reasons(db, occ, renamed)
            if renamed_symbol.id in reach.implied and occ.roles & (Role.DEFINITION | Role.DECLARATION):
                reasons = [RangeReason.CONFORMANCE_WITNESS]
            if renamed_symbol.id in completion.added and occ.roles & (Role.DEFINITION | Role.DECLARATION):
                reasons = [
                    RangeReason.WITNESS_IN_OTHER_PROTOCOL_EXTENSION
                    if renamed_symbol.id in completion.in_other_protocols
                    else RangeReason.WITNESS_BY_SIGNATURE
                ]
            tier = Tier.GREEN_INDEXSTORE
            text = files.line(occ.path, occ.line)
            at = occ.column - 1
            verified = identifier and text is not None and text[at : at + len(old_bytes)] == old_bytes
            if not verified:
                tier = Tier.YELLOW_DISAGREEMENT
                reasons.append(RangeReason.RANGE_END_COMPUTED_UNVERIFIED)
            if file_is_stale(db, occ.path, occ.unit_mtime_ns):
                tier = Tier.RED_STALE
                reasons.append(RangeReason.FILE_NEWER_THAN_UNIT)
            if os.path.realpath(occ.path) in edited:
                tier = Tier.RED_STALE
                reasons.append(RangeReason.SESSION_EDITED)
            ranges[key] = RenameRange(
                path=occ.path,
                line=occ.line,
                column=occ.column,
                end_column=occ.column + len(old_bytes),
                tier=tier,
                reasons=tuple(reasons),
                module=occ.module or None,
                source="indexstore",
            )
    ordered = tuple(ranges[key] for key in sorted(ranges))
    return with_warnings(replace(plan, ranges=ordered, definitions=tuple(sorted(definitions))), warnings)


def _sdk_refusal(name: str, why: str) -> Refusal:
    return Refusal(
        RefusalReason.SDK_SYMBOL_RENAME,
        f"{name} cannot be renamed: {why}.",
        "Only symbols declared in this project can be renamed; wrap or shadow the SDK symbol instead.",
    )


class PlanRenameArgs(LocationArgs):
    tool = "plan_rename"

    usr: Text = Field(description="The symbol's usr, from find_symbol.")
    new_name: StrictStr = Field(
        max_length=MAX_TEXT, description="The new base name (labels stay as they are)."
    )
    """May be empty: that is refused as invalid_identifier, in the plan, like any bad name."""
    max_ranges: StrictInt = Field(
        DEFAULT_MAX_RANGES, ge=1, le=MAX_RANGES, description="How many ranges to list at most."
    )
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset (ranges).")
    unproven_offset: StrictInt = Field(0, ge=0, description="The previous answer's unprovenNextOffset.")
    text_mention_offset: StrictInt = Field(
        0, ge=0, description="The previous answer's textMentionNextOffset."
    )
