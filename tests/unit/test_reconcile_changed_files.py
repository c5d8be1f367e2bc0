"""Reconciliation on files changed since the build: sourcekit-lsp may answer from the build's
index store, which describes them as they were, so its word from the store is not taken on
them; their ranges are asked about at the site instead (tools/rename/reconcile.py)."""

from __future__ import annotations

from pathlib import Path

from xcindex.tools.rename.plan import RenamePlan, RenameRange
from xcindex.tools.rename.reconcile import LspRange, disputed_sites, not_in_changed, reconcile, settle
from xcindex.vocabulary import RangeReason, Tier

USR = "s:1A"


def plan_of(*ranges: RenameRange) -> RenamePlan:
    return RenamePlan(
        usr=USR,
        old_name="fetchUser(id:)",
        new_name="loadUser",
        generated_at="2026-11-23T00:00:00Z",
        last_built=None,
        files_edited_this_session=0,
        ranges=ranges,
    )


def index_range(path: str, line: int, column: int, tier: Tier = Tier.GREEN_INDEXSTORE) -> RenameRange:
    return RenameRange(
        path, line, column, column + 9, tier, (RangeReason.DIRECT_REFERENCE,), "M", "indexstore"
    )


def lsp_at(path: str, line: int, column: int) -> LspRange:
    return LspRange(path, line, column, column + 9, column, column + 9)


def test_sourcekit_lsp_is_not_taken_at_its_word_on_a_changed_file(tmp_path: Path) -> None:
    fresh, changed = str(tmp_path / "Fresh.swift"), str(tmp_path / "Changed.swift")
    (tmp_path / "Fresh.swift").touch()
    (tmp_path / "Changed.swift").touch()
    plan = plan_of(
        index_range(fresh, 1, 6),
        index_range(changed, 9, 5),  # re-indexed by the overlay: the reference moved there
        index_range(changed, 12, 5, Tier.RED_STALE),
    )
    # From the build's store: the fresh site, and where the changed file's reference was.
    answered = [lsp_at(fresh, 1, 6), lsp_at(changed, 7, 5), lsp_at(changed, 12, 5)]
    trusted = not_in_changed(answered, frozenset({changed}))
    assert trusted == [lsp_at(fresh, 1, 6)]

    reconciled = reconcile(plan, trusted, frozenset({changed}))
    tiers = {(r.path, r.line): r.tier for r in reconciled.ranges}
    assert tiers == {
        (fresh, 1): Tier.GREEN_VERIFIED,
        (changed, 9): Tier.GREEN_INDEXSTORE,  # not "lsp_did_not_echo": the store is older
        (changed, 12): Tier.RED_STALE,
    }
    # The re-indexed range is what gets asked about at the site; the red one never is.
    assert [(r.path, r.line) for r in disputed_sites(reconciled, frozenset({changed}))] == [(changed, 9)]
    assert disputed_sites(reconciled) == []


def test_a_changed_files_range_is_tiered_by_what_is_at_its_site() -> None:
    site = index_range("/p/Changed.swift", 9, 5)
    plan = plan_of(site)

    confirmed, dropped = settle(plan, {site.key: ["s:other", USR]})
    assert dropped == 0
    assert [(r.tier, r.reasons[-1]) for r in confirmed.ranges] == [
        (Tier.GREEN_VERIFIED, RangeReason.SETTLED_AT_SITE)
    ]

    contradicted, _ = settle(plan, {site.key: ["s:other"]})
    assert [(r.tier, r.reasons[-1]) for r in contradicted.ranges] == [
        (Tier.YELLOW_DISAGREEMENT, RangeReason.LSP_DID_NOT_ECHO)
    ]

    unanswered, _ = settle(plan, {site.key: []})
    assert unanswered.ranges == (site,)
    assert settle(plan, {})[0].ranges == (site,)
