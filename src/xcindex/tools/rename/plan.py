"""plan_rename: a tiered rename plan, reconciled with sourcekit-lsp. Never writes a file.

The plan is computed in two pure steps: `index_plan` (from the database: the USR set,
every range with its reasons, checked against the file's real bytes) and `reconcile`
(against the locations sourcekit-lsp returned, when it could be asked). The engine does
the I/O in between.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from pydantic import Field, StrictInt, StrictStr

from xcindex.indexstore.database import Database, OccurrenceRow, SymbolRow
from xcindex.indexstore.model import Role
from xcindex.tools.arguments import MAX_TEXT, LocationArgs, Text
from xcindex.tools.budget import fitting, json_size
from xcindex.tools.common import canonical_occurrence, file_is_stale
from xcindex.tools.limits import DEFAULT_MAX_RANGES
from xcindex.tools.references import overriding_sites, source_occurrences
from xcindex.tools.rename.checks import (
    ATTRIBUTE_LINES_ABOVE,
    attributes_only,
    complete_witnesses,
    refusal_reason,
    requirement_protocols,
    semantic_warnings,
)
from xcindex.tools.rename.scan import (
    Mention,
    local_conformances,
    mentions_json,
    scan_tree,
    unproven_warnings,
)
from xcindex.tools.shapes import RefusalJson, RenamePlanJson, RenameRangeJson, RenameSummaryJson
from xcindex.vocabulary import RangeReason, RefusalReason, Tier, WarningCode

MAX_MENTIONS = 100
"""Safety-net sites listed per list in a plan's JSON (the counts are always whole)."""
MAX_RANGES = 5000
DISABLE_ENV = "XCINDEX_DISABLE_PLAN_RENAME"
PROTOCOL_KIND = 8

SWIFT_KEYWORDS = frozenset(
    [
        "associatedtype",
        "class",
        "deinit",
        "enum",
        "extension",
        "fileprivate",
        "func",
        "import",
        "init",
        "inout",
        "internal",
        "let",
        "open",
        "operator",
        "private",
        "precedencegroup",
        "protocol",
        "public",
        "rethrows",
        "static",
        "struct",
        "subscript",
        "typealias",
        "var",
        "break",
        "case",
        "catch",
        "continue",
        "default",
        "defer",
        "do",
        "else",
        "fallthrough",
        "for",
        "guard",
        "if",
        "in",
        "repeat",
        "return",
        "switch",
        "throw",
        "throws",
        "try",
        "while",
        "Any",
        "as",
        "await",
        "false",
        "is",
        "nil",
        "self",
        "Self",
        "super",
        "true",
    ]
)

_SUMMARY_KEYS = {
    Tier.GREEN_VERIFIED: "green_verified",
    Tier.GREEN_INDEXSTORE: "green_indexstore",
    Tier.YELLOW_DISAGREEMENT: "yellow_disagreement",
    Tier.YELLOW_LSP_ONLY: "yellow_lsp_only",
    Tier.RED_STALE: "red_stale",
}


@dataclass(frozen=True)
class Refusal:
    reason: RefusalReason
    message: str
    remediation: str

    def to_json(self) -> RefusalJson:
        return {"reason": str(self.reason), "message": self.message, "remediation": self.remediation}


@dataclass(frozen=True)
class RenameRange:
    path: str
    line: int
    column: int
    end_column: int
    tier: Tier
    reasons: tuple[RangeReason, ...]
    module: str | None
    source: str  # "indexstore" | "sourcekit-lsp"

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)

    def to_json(self) -> RenameRangeJson:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "endColumn": self.end_column,
            "tier": str(self.tier),
            "reasons": [str(r) for r in self.reasons],
            "module": self.module,
            "source": self.source,
        }


COMPACT_HEADROOM_CHARS = 6_000
"""What a compact plan's text needs besides its `line:column` lists (headers, warnings, counts)."""


@dataclass(frozen=True)
class RenamePlan:
    usr: str
    old_name: str | None
    new_name: str
    generated_at: str
    last_built: str | None
    files_edited_this_session: int
    ranges: tuple[RenameRange, ...] = ()
    refusal: Refusal | None = None
    warnings: tuple[tuple[WarningCode, str], ...] = ()
    max_ranges: int = DEFAULT_MAX_RANGES
    definitions: tuple[tuple[str, str, int, int], ...] = field(default=())
    """(usr, path, line, utf-8 column) of each renamed symbol's definition: where to ask LSP."""
    unproven: tuple[Mention, ...] = ()
    """Code occurrences of the old name that no range covers and the index does not explain."""
    text_mentions: tuple[Mention, ...] = ()
    """Occurrences in comments, strings, DocC links and `@available(renamed:)`: optional edits."""
    offset: int = 0
    """The first range shown (paging through a plan larger than maxRanges)."""

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(_SUMMARY_KEYS.values(), 0)
        for rename_range in self.ranges:
            counts[_SUMMARY_KEYS[rename_range.tier]] += 1
        return counts

    def shown(self) -> tuple[RenameRange, ...]:
        return self.ranges[self.offset : self.offset + self.max_ranges]

    @property
    def next_offset(self) -> int | None:
        end = self.offset + self.max_ranges
        return end if end < len(self.ranges) else None

    def fitted(self, budget: int | None) -> RenamePlan:
        """The page of the plan that fits a response budget together with its text: fewer
        ranges (`nextOffset` says where the rest starts) when the whole page would not."""
        if budget is None:
            return self
        page = self.shown()
        without_ranges = json_size(replace(self, ranges=())._json())
        if 2 * (without_ranges + sum(json_size(r.to_json()) + 1 for r in page)) <= budget:
            return self
        # The structured ranges, and one short `line:column` each in the compact text.
        allowed = budget - 2 * without_ranges - COMPACT_HEADROOM_CHARS
        count = fitting(page, lambda r: json_size(r.to_json()) + 16, max(allowed, 0))
        return replace(self, max_ranges=max(count, 1))

    def to_json(self, budget: int | None = None) -> RenamePlanJson:
        return self.fitted(budget)._json()

    def _json(self) -> RenamePlanJson:
        shown = self.shown()
        return {
            "usr": self.usr,
            "oldName": self.old_name,
            "newName": self.new_name,
            "generatedAt": self.generated_at,
            "indexFreshness": {
                "lastBuilt": self.last_built,
                "filesEditedThisSession": self.files_edited_this_session,
            },
            "ranges": [r.to_json() for r in shown],
            "summary": cast(RenameSummaryJson, self.summary()),
            "refusal": self.refusal.to_json() if self.refusal else None,
            "warnings": [{"code": str(code), "message": message} for code, message in self.warnings],
            "truncated": len(self.ranges) > len(shown),
            "nextOffset": self.next_offset,
            "unprovenSites": mentions_json(self.unproven, MAX_MENTIONS),
            "unprovenSiteCount": len(self.unproven),
            "textMentions": mentions_json(self.text_mentions, MAX_MENTIONS),
            "textMentionCount": len(self.text_mentions),
        }


def now_iso() -> str:
    return datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- validation ----------------------------------------------------------------------


def _is_identifier(text: str) -> bool:
    if not text:
        return False
    first = text[0]
    if not (first == "_" or unicodedata.category(first).startswith("L")):
        return False
    return all(
        c == "_" or unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Mn" for c in text[1:]
    )


def validate_new_name(new_name: str) -> Refusal | None:
    """A plain identifier that is not a keyword, or a backquoted identifier (which may be a
    keyword: `` `default` `` is how Swift spells that name)."""
    remediation = (
        "Pass a Swift identifier: a letter or _ followed by letters, digits or _ (backquote a keyword)."
    )
    if not new_name:
        return Refusal(RefusalReason.INVALID_IDENTIFIER, "newName is empty.", remediation)
    if new_name.startswith("`") or new_name.endswith("`"):
        inner = new_name[1:-1] if len(new_name) >= 2 and new_name[0] == new_name[-1] == "`" else ""
        if _is_identifier(inner):
            return None
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' is not a well-formed backquoted identifier.",
            remediation,
        )
    if new_name in SWIFT_KEYWORDS:
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' is a Swift keyword.",
            f"Choose another name, or backquote it (`{new_name}`) if you really mean the keyword.",
        )
    if not _is_identifier(new_name):
        return Refusal(
            RefusalReason.INVALID_IDENTIFIER,
            f"'{new_name}' contains characters that are not allowed in an identifier.",
            remediation,
        )
    return None


def early_refusal(new_name: str) -> Refusal | None:
    """What refuses a plan before the index is opened: the kill switch, then the name."""
    if os.environ.get(DISABLE_ENV) == "1":
        return Refusal(
            RefusalReason.DISABLED_BY_ENV,
            f"plan_rename is disabled by {DISABLE_ENV}=1.",
            f"Unset {DISABLE_ENV} to allow rename plans.",
        )
    return validate_new_name(new_name)


def refused(usr: str, new_name: str, refusal: Refusal, max_ranges: int = DEFAULT_MAX_RANGES) -> RenamePlan:
    """A plan that is only its refusal (no index was read)."""
    return RenamePlan(
        usr=usr,
        old_name=None,
        new_name=new_name,
        generated_at=now_iso(),
        last_built=None,
        files_edited_this_session=0,
        refusal=refusal,
        max_ranges=max_ranges,
    )


def base_name(name: str) -> str:
    """`fetchUser(id:)` → `fetchUser`; `UserService` → `UserService`."""
    return name.split("(", 1)[0]


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
    overridden symbols that have no definition here (SDK methods)."""
    roots: dict[int, SymbolRow] = {}
    external: dict[int, SymbolRow] = {}
    frontier = [symbol]
    seen = {symbol.id}
    for _ in range(max_depth):
        next_frontier: list[SymbolRow] = []
        for current in frontier:
            parents: list[int] = []
            for occ in source_occurrences(db, current):
                if occ.roles & (Role.DEFINITION | Role.DECLARATION):
                    parents.extend(
                        sid
                        for roles, sid in db.relations_of([occ.id]).get(occ.id, [])
                        if roles & Role.REL_OVERRIDEOF
                    )
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

    renamed: dict[int, SymbolRow] = {}
    for root in roots:
        renamed[root.id] = root
        for site in overriding_sites(db, root):
            renamed[site.symbol.id] = site.symbol
    completion = complete_witnesses(
        db, renamed, lambda member: [site.symbol for site in overriding_sites(db, member)]
    )
    files = _FileBytes()
    warnings: list[tuple[WarningCode, str]] = []
    for default, requirements in completion.shared:
        missing = [r for r in requirements if r.id not in renamed]
        for requirement in missing:
            renamed[requirement.id] = requirement
            for site in overriding_sites(db, requirement):
                renamed.setdefault(site.symbol.id, site.symbol)
        names = ", ".join(sorted({r.name + " of " + (r.usr) for r in requirements}))
        warnings.append(
            (
                WarningCode.SHARED_DEFAULT_IMPLEMENTATION,
                f"{default.name} ({default.usr}) is the default implementation of {len(requirements)} "
                f"requirements ({names}): all of them and their witnesses are renamed together.",
            )
        )
    warnings += semantic_warnings(db, renamed.values(), files.definition_text)

    old_base = base_name(symbol.name)
    old_bytes = old_base.encode("utf-8")
    identifier = _is_identifier(old_base)
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
            if file_is_stale(occ.path, occ.unit_mtime_ns):
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


def with_safety_net(db: Database, plan: RenamePlan, root: Path | None) -> RenamePlan:
    """Add every occurrence of the old name under the project root that no range covers:
    code the index does not explain (warned `unproven_occurrences`), and text mentions."""
    if plan.refusal is not None or not plan.old_name or root is None:
        return plan
    name = base_name(plan.old_name)
    if not _is_identifier(name):
        return plan
    covered = {(os.path.realpath(r.path), r.line, r.column) for r in plan.ranges}
    by_real: dict[str, str] = {}
    for path, *_rest in db.live_files():
        by_real.setdefault(os.path.realpath(path), path)

    def indexed_positions(real: str) -> set[tuple[int, int]] | None:
        path = by_real.get(real)
        if path is None:
            return None
        return {(occ.line, occ.column) for occ in db.occurrences_in_file(path)}

    found = scan_tree(root, name, covered, indexed_positions)
    protocols = requirement_protocols(db, (usr for usr, *_where in plan.definitions))
    local = local_conformances(found.unproven, protocols, indexed_positions)
    unproven = tuple(sorted((*found.unproven, *local), key=lambda m: m.key))
    plan = replace(plan, unproven=unproven, text_mentions=found.text_mentions)
    if not unproven:
        return plan
    return with_warnings(plan, unproven_warnings(name, unproven))


def _sdk_refusal(name: str, why: str) -> Refusal:
    return Refusal(
        RefusalReason.SDK_SYMBOL_RENAME,
        f"{name} cannot be renamed: {why}.",
        "Only symbols declared in this project can be renamed; wrap or shadow the SDK symbol instead.",
    )


def with_warnings(plan: RenamePlan, warnings: Iterable[tuple[WarningCode, str]]) -> RenamePlan:
    return replace(plan, warnings=plan.warnings + tuple(warnings))


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
    offset: StrictInt = Field(0, ge=0, description="The previous answer's nextOffset.")
