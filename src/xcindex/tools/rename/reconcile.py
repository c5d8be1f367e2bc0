"""Reconciling a rename plan with sourcekit-lsp: agreement, verification, settlement per site.

sourcekit-lsp's `references` answer is taken as a second opinion, never on trust: each of its
locations must have the old name's bytes at it (a reference inside a macro is reported at
the macro, often a line above the written name), else it is moved to the written name on
that line when that is unambiguous, else dropped and counted (`lsp_range_off_name`). Sites
where the two sources disagree are settled one by one: sourcekit-lsp is asked what symbol
is at the site itself (`symbolInfo`), and the site is tiered by whether that is one of the
renamed USRs. The LSP calls go through a small protocol, so this stays tool logic.

sourcekit-lsp may answer references from the build's own index store (`lsp/build_view.py`),
which describes each file as it was built. On the files that changed since (`changed`: the
plan's red-stale files before the freshness overlay re-indexed them), its word from the store
is not taken: its locations there are dropped, the index's ranges there are not judged by
agreement (red stays red), and each range the overlay re-indexed there is settled at the site
like a disputed one (type checking reads the file as it is now).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import anyio
import anyio.to_thread

from xcindex.errors import CodedError
from xcindex.lsp.positions import LspLocation, utf8_to_utf16_offset
from xcindex.project.workspace import WorkspaceRoot
from xcindex.tools.rename.plan import RenamePlan, RenameRange, base_name, with_warnings
from xcindex.tools.rename.scan import classify
from xcindex.vocabulary import RangeReason, Tier, WarningCode

MAX_SETTLED_SITES = 200
"""Disputed sites asked about one by one, at most (each is one round trip)."""


class RenameLsp(Protocol):
    """The sourcekit-lsp requests reconciliation needs (the pool implements them)."""

    async def wait_ready(self, root: Path) -> None: ...

    async def references(
        self, root: Path, path: Path, line: int, utf8_column: int, *, include_declaration: bool = True
    ) -> list[LspLocation]: ...

    async def symbol_info(self, root: Path, path: Path, line: int, utf8_column: int) -> list[str]: ...


@dataclass(frozen=True)
class LspRange:
    """A location sourcekit-lsp returned, in both column conventions (1-based)."""

    path: str
    line: int
    utf8_column: int
    utf8_end_column: int
    utf16_column: int
    utf16_end_column: int
    macro: bool = False
    """It sat on a macro (`#expect`, `@Test`) rather than on the name."""
    moved: bool = False
    """It was moved from where sourcekit-lsp put it to the written name on its line."""


def lsp_ranges(locations: Iterable[LspLocation], old_name: str, index_paths: Iterable[str]) -> list[LspRange]:
    """sourcekit-lsp's locations as plan ranges: paths spelled as the index spells them
    (matched by real path), and the name's length added to sourcekit-lsp's zero-width
    ranges (in bytes for the UTF-8 columns, in code units for the UTF-16 ones)."""
    spelled = {os.path.realpath(path): path for path in index_paths}
    base = base_name(old_name)
    utf8_length = len(base.encode("utf-8"))
    utf16_length = len(base.encode("utf-16-le")) // 2
    found: list[LspRange] = []
    for location in locations:
        path = spelled.get(os.path.realpath(location.path), str(location.path))
        utf16_end = location.utf16_end_column
        if utf16_end <= location.utf16_start_column:
            utf16_end = location.utf16_start_column + utf16_length
        utf8_start = location.utf8_start_column
        if utf8_start is None:
            utf8_start = location.utf16_start_column
        utf8_end = location.utf8_end_column
        if utf8_end is None or utf8_end <= utf8_start:
            utf8_end = utf8_start + utf8_length
        found.append(
            LspRange(
                path=path,
                line=location.line,
                utf8_column=utf8_start,
                utf8_end_column=utf8_end,
                utf16_column=location.utf16_start_column,
                utf16_end_column=utf16_end,
            )
        )
    return found


def _read_lines(path: str, cache: dict[str, list[bytes] | None]) -> list[bytes] | None:
    if path not in cache:
        try:
            cache[path] = Path(path).read_bytes().split(b"\n")
        except OSError:
            cache[path] = None
    return cache[path]


def verify_lsp_ranges(
    found: Sequence[LspRange], old_name: str, covered: set[tuple[str, int, int]]
) -> tuple[list[LspRange], int]:
    """Keep the locations that have the old name's bytes; move the others to the only
    uncovered written name on their line; drop the rest. Returns (kept, dropped count)."""
    name = base_name(old_name).encode("utf-8")
    cache: dict[str, list[bytes] | None] = {}
    kept: list[LspRange] = []
    dropped = 0
    for item in found:
        lines = _read_lines(item.path, cache)
        if lines is None or not 1 <= item.line <= len(lines):
            dropped += 1
            continue
        text = lines[item.line - 1]
        at = item.utf8_column - 1
        if text[at : at + len(name)] == name and (at == 0 or not _word(text[at - 1])):
            kept.append(item)
            continue
        macro = text[at : at + 1] in (b"#", b"@")
        candidates = [
            offset
            for offset, kind in classify(text, name)
            if kind == "code" and (item.path, item.line, offset + 1) not in covered
        ]
        if len(candidates) != 1:
            dropped += 1
            continue
        offset = candidates[0]
        decoded = text.decode("utf-8", "replace")
        utf16 = utf8_to_utf16_offset(decoded, offset) + 1
        kept.append(
            LspRange(
                path=item.path,
                line=item.line,
                utf8_column=offset + 1,
                utf8_end_column=offset + 1 + len(name),
                utf16_column=utf16,
                utf16_end_column=utf16 + len(base_name(old_name).encode("utf-16-le")) // 2,
                macro=macro,
                moved=True,
            )
        )
    return kept, dropped


def _word(byte: int) -> bool:
    return byte >= 0x80 or byte == 0x5F or chr(byte).isalnum()


def reconcile(
    plan: RenamePlan, lsp_ranges: Iterable[LspRange], changed: frozenset[str] = frozenset()
) -> RenamePlan:
    """Agreement → green-verified; index-only → yellow-disagreement (`lsp_did_not_echo`);
    LSP-only → yellow-lsp-only with UTF-16 columns (the contract's convention for
    `source: "sourcekit-lsp"`; every one was verified to be on the name). Red stays red, and
    so does every range in a `changed` file (sourcekit-lsp's store does not describe it). An
    empty LSP answer downgrades nothing (the caller warns `reconciliation_empty`)."""
    lsp = {(r.path, r.line, r.utf8_column): r for r in lsp_ranges}
    if not lsp:
        return plan
    ranges: list[RenameRange] = []
    for rename_range in plan.ranges:
        echoed = lsp.pop(rename_range.key, None)
        if rename_range.tier is Tier.RED_STALE or rename_range.path in changed:
            ranges.append(rename_range)
        elif echoed is not None:
            tier = Tier.GREEN_VERIFIED if rename_range.tier is Tier.GREEN_INDEXSTORE else rename_range.tier
            ranges.append(replace(rename_range, tier=tier))
        else:
            ranges.append(
                replace(
                    rename_range,
                    tier=Tier.YELLOW_DISAGREEMENT,
                    reasons=(*rename_range.reasons, RangeReason.LSP_DID_NOT_ECHO),
                )
            )
    for only in lsp.values():
        reasons = [RangeReason.SOURCEKIT_LSP_ONLY]
        if only.moved:
            reasons.append(RangeReason.LSP_MAPPED_TO_NAME)
        if only.macro:
            reasons.append(RangeReason.MACRO_ADJACENT)
        ranges.append(
            RenameRange(
                path=only.path,
                line=only.line,
                column=only.utf16_column,
                end_column=only.utf16_end_column,
                tier=Tier.YELLOW_LSP_ONLY,
                reasons=tuple(reasons),
                module=None,
                source="sourcekit-lsp",
            )
        )
    ranges.sort(key=lambda r: (r.path, r.line, r.column))
    return replace(plan, ranges=tuple(ranges))


_SETTLED_TIERS = (Tier.YELLOW_DISAGREEMENT, Tier.YELLOW_LSP_ONLY, Tier.GREEN_INDEXSTORE)
"""The tiers a site's own answer can change (an unconfirmed green is asked about only in a
changed file)."""


def settle(plan: RenamePlan, answers: dict[tuple[str, int, int], list[str]]) -> tuple[RenamePlan, int]:
    """Tier each site asked about by what sourcekit-lsp resolves at the site itself: one of
    the renamed USRs → green-verified (`settled_at_site`); another symbol → an LSP-only site
    is dropped, an index-only one stays yellow, an unconfirmed green one becomes yellow
    (`lsp_did_not_echo`); no answer → unchanged. Returns the plan and how many sites were
    dropped."""
    renamed = {usr for usr, *_ in plan.definitions} | {plan.usr}
    ranges: list[RenameRange] = []
    dropped = 0
    for rename_range in plan.ranges:
        usrs = answers.get(rename_range.key)
        if usrs is None or rename_range.tier not in _SETTLED_TIERS:
            ranges.append(rename_range)
            continue
        if renamed.intersection(usrs):
            if RangeReason.RANGE_END_COMPUTED_UNVERIFIED in rename_range.reasons:
                ranges.append(rename_range)  # the symbol is right; the range's end is still a guess
                continue
            ranges.append(
                replace(
                    rename_range,
                    tier=Tier.GREEN_VERIFIED,
                    reasons=(*rename_range.reasons, RangeReason.SETTLED_AT_SITE),
                )
            )
        elif usrs and rename_range.tier is Tier.YELLOW_LSP_ONLY:
            dropped += 1
        elif usrs and rename_range.tier is Tier.GREEN_INDEXSTORE:
            ranges.append(
                replace(
                    rename_range,
                    tier=Tier.YELLOW_DISAGREEMENT,
                    reasons=(*rename_range.reasons, RangeReason.LSP_DID_NOT_ECHO),
                )
            )
        else:
            ranges.append(rename_range)
    return replace(plan, ranges=tuple(ranges)), dropped


def disputed_sites(plan: RenamePlan, changed: frozenset[str] = frozenset()) -> list[RenameRange]:
    """The sites to ask about one by one: where the two sources disagree, then the ranges
    the overlay re-indexed in changed files (no store describes them as they are)."""
    disputed = [r for r in plan.ranges if r.tier in (Tier.YELLOW_DISAGREEMENT, Tier.YELLOW_LSP_ONLY)]
    unconfirmed = [r for r in plan.ranges if r.tier is Tier.GREEN_INDEXSTORE and r.path in changed]
    return disputed + unconfirmed


def not_in_changed(found: Sequence[LspRange], changed: frozenset[str]) -> list[LspRange]:
    """The locations not in a changed file (compared by real path: sourcekit-lsp may spell a
    file the plan no longer names its own way)."""
    if not changed:
        return list(found)
    real = {os.path.realpath(path) for path in changed}
    return [r for r in found if os.path.realpath(r.path) not in real]


async def reconcile_plan(
    plan: RenamePlan, lsp: RenameLsp, root: WorkspaceRoot, changed: frozenset[str] = frozenset()
) -> RenamePlan:
    """Ask sourcekit-lsp for the references at each renamed definition (after its index is
    ready), verify its locations, tier the plan by agreement, then settle each disputed site
    at the site. `changed`: the files whose build index is older than their content (see
    the module's docstring). Any fault is a warning (`reconciliation_unavailable` and its
    own code)."""
    unavailable = WarningCode.RECONCILIATION_UNAVAILABLE
    try:
        await lsp.wait_ready(root.path)
        locations: list[LspLocation] = []
        for _usr, path, line, column in plan.definitions:
            locations += await lsp.references(root.path, Path(path), line, column, include_declaration=True)
    except CodedError as error:
        return with_warnings(
            plan,
            [(unavailable, f"sourcekit-lsp was not consulted: {error.message}"), (error.code, error.message)],
        )
    old_name = plan.old_name or ""
    index_paths = {r.path for r in plan.ranges}
    covered = {r.key for r in plan.ranges}
    found = lsp_ranges(locations, old_name, index_paths)
    trusted = await anyio.to_thread.run_sync(not_in_changed, found, changed)
    verified, off_name = await anyio.to_thread.run_sync(verify_lsp_ranges, trusted, old_name, covered)
    warnings = [
        (code, f"{code}: sourcekit-lsp may lack build settings for {root.path}.")
        for code in root.warnings_for_answer(empty=not found)
    ]
    if not found:
        warnings.append(
            (
                WarningCode.RECONCILIATION_EMPTY,
                "sourcekit-lsp answered with no locations; the index's tiers stand.",
            )
        )
        return with_warnings(plan, warnings)
    reconciled = reconcile(plan, verified, changed)
    answers: dict[tuple[str, int, int], list[str]] = {}
    utf8_of = {(r.path, r.line, r.utf16_column): r.utf8_column for r in verified}
    try:
        for site in disputed_sites(reconciled, changed)[:MAX_SETTLED_SITES]:
            column = utf8_of.get(site.key, site.column) if site.source == "sourcekit-lsp" else site.column
            answers[site.key] = await lsp.symbol_info(root.path, Path(site.path), site.line, column)
    except CodedError as error:
        warnings.append((error.code, f"settling disputed sites stopped: {error.message}"))
    settled, wrong_symbol = settle(reconciled, answers)
    dropped = off_name + wrong_symbol
    if dropped:
        warnings.append(
            (
                WarningCode.LSP_RANGE_OFF_NAME,
                f"{dropped} location(s) sourcekit-lsp returned were not on the name {base_name(old_name)} "
                "(or resolved to another symbol there) and could not be moved to it unambiguously: "
                "dropped from the plan.",
            )
        )
    return with_warnings(settled, warnings)
