"""The pure parts of plan_rename: names, SDK paths, reconciliation, rendering."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from xcindex.lsp.positions import LspLocation
from xcindex.presentation.text import render_plan, render_plan_compact
from xcindex.tools.rename.plan import (
    RenamePlan,
    RenameRange,
    is_sdk_path,
    validate_new_name,
)
from xcindex.tools.rename.reconcile import lsp_ranges, reconcile, verify_lsp_ranges
from xcindex.vocabulary import RangeReason, Tier

LINE = '        lastGreeting = "👋 " + (userService.fetchUser(id: 1) ?? "guest")'


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("loadUser", True),
        ("_x1", True),
        ("Größe", True),
        ("`default`", True),
        ("`self`", True),
        ("", False),
        ("default", False),
        ("init", False),
        ("Self", False),
        ("two words", False),
        ("9lives", False),
        ("a.b", False),
        ("a-b", False),
        ("``", False),
        ("`a b`", False),
        ("`open", False),
        ("👋", False),
        ("x\u0000", False),
    ],
)
def test_identifier_validation(name: str, ok: bool) -> None:
    refusal = validate_new_name(name)
    assert (refusal is None) is ok, refusal
    if refusal is not None:
        assert refusal.reason == "invalid_identifier"
        assert refusal.remediation


def test_sdk_paths_are_recognised_by_real_path(tmp_path: Path) -> None:
    toolchain = tmp_path / "toolchain"
    (toolchain / "usr" / "lib").mkdir(parents=True)
    link = tmp_path / "link-to-toolchain"
    link.symlink_to(toolchain)
    assert is_sdk_path(str(link / "usr/lib/Foo.swiftinterface"), [toolchain])
    assert is_sdk_path(str(toolchain / "usr/lib/x.swift"), [str(link)])
    assert not is_sdk_path(str(tmp_path / "toolchain-other/x.swift"), [toolchain])
    assert is_sdk_path(
        "/Applications/Xcode.app/Contents/Developer/Platforms/iPhoneOS.platform/Developer/SDKs/iPhoneOS.sdk/x.h",
        [],
    )
    assert not is_sdk_path("/home/me/project/Sources/A.swift", [])
    # A distribution's swift in /usr/bin makes `/` a toolchain root: projects are not SDK code.
    assert not is_sdk_path("/home/me/project/Sources/A.swift", ["/"])
    assert is_sdk_path("/usr/lib/swift/linux/Swift.swiftmodule/x.swiftinterface", ["/"])
    assert not is_sdk_path(str(toolchain / "Sources/A.swift"), [toolchain])


def plan_of(*ranges: RenameRange) -> RenamePlan:
    return RenamePlan(
        usr="s:1A",
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


def test_reconciliation_classifies_agreement_silence_and_lsp_only_sites(tmp_path: Path) -> None:
    source = tmp_path / "AppDelegate.swift"
    source.write_text("func fetchUser() {}\n" + LINE + "\n\n\nfetchUser\n\nfetchUser\n", encoding="utf-8")
    utf8 = LINE.encode().index(b"fetchUser") + 1
    utf16 = len(LINE[: LINE.index("fetchUser")].encode("utf-16-le")) // 2 + 1
    assert (utf8, utf16) == (47, 45)
    plan = plan_of(
        index_range(str(source), 1, 6),
        index_range(str(source), 5, 1),
        index_range(str(source), 7, 1, Tier.RED_STALE),
    )
    # sourcekit-lsp's zero-width answers: the definition, the emoji line (only it saw that
    # one), and the red site.
    answered = [
        LspLocation(source, 1, 6, 6, 6, 6, 1),
        LspLocation(Path(os.path.realpath(source)), 2, utf16, utf16, utf8, utf8, 2),
        LspLocation(source, 7, 1, 1, 1, 1, 7),
    ]
    found = lsp_ranges(answered, "fetchUser(id:)", [str(source)])
    verified, dropped = verify_lsp_ranges(found, "fetchUser(id:)", {r.key for r in plan.ranges})
    assert dropped == 0
    reconciled = reconcile(plan, verified)
    by_line = {r.line: r for r in reconciled.ranges}
    assert by_line[1].tier == Tier.GREEN_VERIFIED
    assert by_line[5].tier == Tier.YELLOW_DISAGREEMENT
    assert by_line[5].reasons[-1] == RangeReason.LSP_DID_NOT_ECHO
    assert by_line[7].tier == Tier.RED_STALE
    lsp_only = by_line[2]
    assert lsp_only.tier == Tier.YELLOW_LSP_ONLY
    assert lsp_only.source == "sourcekit-lsp"
    assert lsp_only.path == str(source)  # spelled as the index spells it
    assert (lsp_only.column, lsp_only.end_column) == (45, 54)  # UTF-16 code units
    # On the name, and no macro near it: only its provenance.
    assert set(lsp_only.reasons) == {RangeReason.SOURCEKIT_LSP_ONLY}
    assert reconciled.summary() == {
        "green_verified": 1,
        "green_indexstore": 0,
        "yellow_disagreement": 1,
        "yellow_lsp_only": 1,
        "red_stale": 1,
    }


def test_lsp_locations_off_the_name_are_moved_to_it_or_dropped(tmp_path: Path) -> None:
    source = tmp_path / "T.swift"
    lines = [
        "    #expect(",  # 1: sourcekit-lsp's location of a reference inside the macro
        "        handler.logLevel == .info",  # 2: the written name
        '    let s = "logLevel" ; f(logLevel: logLevel)',  # 3: two written names in code
        "    logLevel = 1",  # 4: on the name
        "    handler.logLevel = 2",  # 5: sourcekit-lsp answered the start of the line
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def at(line: int, column: int) -> LspLocation:
        return LspLocation(source, line, column, column, column, column, line)

    found = lsp_ranges([at(1, 5), at(3, 1), at(4, 5), at(5, 1)], "logLevel", [str(source)])
    verified, dropped = verify_lsp_ranges(found, "logLevel", set())
    # Line 1 has no written name (dropped), line 3 two (ambiguous: dropped).
    assert dropped == 2
    assert [(r.line, r.utf8_column, r.moved, r.macro) for r in verified] == [
        (4, 5, False, False),
        (5, 13, True, False),
    ]
    for r in verified:
        text = lines[r.line - 1].encode()
        assert text[r.utf8_column - 1 : r.utf8_end_column - 1] == b"logLevel"
    # The macro's own line above the name: moved when the name is on that line.
    source.write_text("    #expect(handler.logLevel == .info)\n", encoding="utf-8")
    [moved], none = verify_lsp_ranges(lsp_ranges([at(1, 5)], "logLevel", [str(source)]), "logLevel", set())
    assert none == 0
    assert (moved.utf8_column, moved.macro, moved.moved) == (21, True, True)
    plan = reconcile(plan_of(), [moved])
    assert set(plan.ranges[0].reasons) == {
        RangeReason.SOURCEKIT_LSP_ONLY,
        RangeReason.LSP_MAPPED_TO_NAME,
        RangeReason.MACRO_ADJACENT,
    }
    # A covered name on the line does not count: the other one is the only candidate.
    source.write_text("    f(logLevel: logLevel)\n", encoding="utf-8")
    [other], _ = verify_lsp_ranges(
        lsp_ranges([at(1, 1)], "logLevel", [str(source)]), "logLevel", {(str(source), 1, 7)}
    )
    assert other.utf8_column == 17


def test_an_empty_lsp_answer_changes_nothing() -> None:
    plan = plan_of(index_range("/a.swift", 1, 1))
    assert reconcile(plan, []) == plan


def test_the_text_is_the_structured_plan_as_sorted_pretty_json_in_a_fence() -> None:
    plan = plan_of(index_range("/b.swift", 2, 1), index_range("/a.swift", 1, 1))
    text = render_plan(plan)
    assert text.startswith('```json\n{\n  "generatedAt"')
    body = text.removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(body) == plan.to_json()
    assert list(json.loads(body)) == sorted(plan.to_json())


def test_a_large_plan_renders_compactly_within_a_budget_and_pages() -> None:
    many = [index_range(f"/p/F{i % 3}.swift", i, 5) for i in range(1, 301)]
    plan = plan_of(*sorted(many, key=lambda r: (r.path, r.line)))
    text = render_plan_compact(plan, 1000)
    assert len(text) <= 1200
    assert "/p/F0.swift green-indexstore: 3:5 6:5" in text
    offset = int(text.rsplit("offset=", 1)[1].rstrip("."))
    assert 0 < offset < 300
    # The structured plan pages too: nextOffset until the last page.
    first = replace(plan, max_ranges=120)
    assert first.to_json()["nextOffset"] == 120
    last = replace(plan, max_ranges=120, offset=240)
    assert last.to_json()["nextOffset"] is None
    assert len(last.to_json()["ranges"]) == 60


def compact_pages(plan: RenamePlan, budget: int) -> list[tuple[str, int, str]]:
    """Every (path, line:column, tier) the compact text lists, asking again at the offset
    each page names until one names none."""
    seen: list[tuple[str, int, str]] = []
    offset: int | None = 0
    for _ in range(len(plan.ranges) + 1):
        if offset is None:
            return seen
        text = render_plan_compact(replace(plan, offset=offset), budget)
        assert len(text) <= budget, text
        for line in text.splitlines():
            if line.startswith("/p/"):
                head, sites = line.split(": ", 1)
                path, tier = head.split(" ")
                seen += [(path, int(site.split(":")[0]), tier) for site in sites.split(" ")]
        footer = text.splitlines()[-1]
        offset = int(footer.rsplit("offset=", 1)[1].rstrip(".")) if "offset=" in footer else None
    raise AssertionError(f"paging did not end: {seen[-5:]}")


def test_a_file_with_more_ranges_than_the_budget_holds_shows_what_fits_and_where_to_go_on() -> None:
    plan = plan_of(*(index_range("/p/Big.swift", line, 5) for line in range(1, 301)))
    text = render_plan_compact(plan, 1000)
    [listed] = [line for line in text.splitlines() if line.startswith("/p/Big.swift green-indexstore: ")]
    sites = listed.removeprefix("/p/Big.swift green-indexstore: ").split(" ")
    assert sites == [f"{line}:5" for line in range(1, len(sites) + 1)]
    assert len(sites) > 50, "what fits of the file is shown"
    assert text.endswith(f"Showing ranges 0 to {len(sites) - 1} of 300: ask again with offset={len(sites)}.")
    assert compact_pages(plan, 1000) == [("/p/Big.swift", line, "green-indexstore") for line in range(1, 301)]
    # Not even one range fits: said plainly, never "ask again" at the same offset.
    tiny = render_plan_compact(plan, 200)
    assert "offset=" not in tiny
    assert tiny.endswith(
        "Range 0 of 300 does not fit in this text's budget: the structured content lists "
        "this page's ranges (`ranges`, then `nextOffset`)."
    )


def test_paging_a_compact_plan_shows_every_range_once_whatever_the_tiers() -> None:
    """A file's ranges in several tiers are listed per tier, but paged in the plan's order:
    no range skipped, none shown twice."""
    tiers = [Tier.GREEN_VERIFIED, Tier.YELLOW_LSP_ONLY, Tier.GREEN_INDEXSTORE, Tier.RED_STALE]
    ranges = [
        index_range(f"/p/F{n}.swift", line, 5, tiers[(n + line) % len(tiers) if line % 3 else 0])
        for n in range(4)
        for line in range(1, 61)
    ]
    plan = plan_of(*ranges)
    assert sorted(compact_pages(plan, 1200)) == sorted((r.path, r.line, str(r.tier)) for r in ranges)
