"""Paging a large rename plan within the response budget (docs/tools.md, "Token economy"):
ranges fill each page first, then unproven sites, then text mentions, each list on its own
cursor; walking the cursors lists every item exactly once, and every page (its text and
structured content together) stays within the budget. Plans are built directly, at sizes
the fixture cannot reach (a 106-range plan once came as one 76k-character answer; a
77-range plan with 100 unproven sites and 100 mentions came one range per page)."""

from __future__ import annotations

import json
from dataclasses import replace

from xcindex.presentation import agent
from xcindex.tools.budget import RESPONSE_BUDGET_CHARS
from xcindex.tools.rename.answer import RenamePlan, RenameRange
from xcindex.tools.rename.scan import Mention
from xcindex.vocabulary import RangeReason, Tier

ROOT = "/Users/someone/Developer/a-company/a-very-large-application-monorepo/Packages/FeatureModules"


def path(index: int) -> str:
    return f"{ROOT}/Feature{index % 13:02d}/Sources/Feature{index % 13:02d}/SomeLongTypeName{index}.swift"


def plan(ranges: int, unproven: int, mentions: int) -> RenamePlan:
    return RenamePlan(
        usr="s:14FeatureModule22SomeQuiteLongTypeNameC8someMethod4with3andySS_SiSbtF",
        old_name="someMethod(with:and:)",
        new_name="anotherMethod",
        generated_at="2026-01-01T00:00:00Z",
        last_built="2026-01-01T00:00:00Z",
        files_edited_this_session=0,
        ranges=tuple(
            RenameRange(
                path(i),
                100 + i,
                17,
                27,
                Tier.GREEN_VERIFIED,
                (RangeReason.DIRECT_REFERENCE,),
                "Module",
                "indexstore",
            )
            for i in range(ranges)
        ),
        unproven=tuple(
            Mention(
                path(i),
                200 + i,
                9,
                19,
                "code" if i % 3 else "label",
                "let someMethod = compute(someMethod: 1) + other",
            )
            for i in range(unproven)
        ),
        text_mentions=tuple(
            Mention(
                path(i),
                300 + i,
                5,
                15,
                "comment",
                "/// Calls someMethod(with:and:) on every item of the list",
            )
            for i in range(mentions)
        ),
    )


def walk(whole: RenamePlan, max_ranges: int = 500) -> list[RenamePlan]:
    """Every page of a plan, following each list's next offset, as the MCP server cuts them."""
    pages: list[RenamePlan] = []
    offsets: tuple[int | None, int | None, int | None] = (0, 0, 0)
    while any(offset is not None for offset in offsets) and len(pages) < 500:
        ranges, sites, mentions = offsets
        page = whole.page(
            ranges if ranges is not None else len(whole.ranges),
            max_ranges,
            sites if sites is not None else len(whole.unproven),
            mentions if mentions is not None else len(whole.text_mentions),
        )
        shown = page.fitted(RESPONSE_BUDGET_CHARS)
        text = agent.plan_rename(page, RESPONSE_BUDGET_CHARS)
        assert len(text) + len(json.dumps(shown.to_json(), ensure_ascii=False)) <= RESPONSE_BUDGET_CHARS
        structured = page.to_json(RESPONSE_BUDGET_CHARS)
        pages.append(shown)
        offsets = (
            structured["nextOffset"],
            structured["unprovenNextOffset"],
            structured["textMentionNextOffset"],
        )
    return pages


def test_ranges_fill_the_pages_then_each_list_follows_on_its_own_cursor() -> None:
    whole = plan(ranges=300, unproven=400, mentions=400)
    pages = walk(whole)
    shown_ranges = [r.key for p in pages for r in p.shown()]
    shown_sites = [m.key for p in pages for m in p.unproven_shown()]
    shown_mentions = [m.key for p in pages for m in p.text_mentions_shown()]
    # Everything, once, in order.
    assert shown_ranges == [r.key for r in whole.ranges]
    assert shown_sites == [m.key for m in whole.unproven]
    assert shown_mentions == [m.key for m in whole.text_mentions]
    # Ranges fill the pages: every page but the last one holding ranges holds many, and no
    # list is shown beside ranges that still wait.
    with_ranges = [p for p in pages if p.shown()]
    assert all(len(p.shown()) >= 50 for p in with_ranges[:-1])
    assert all(not p.unproven_shown() and not p.text_mentions_shown() for p in with_ranges[:-1])
    assert len(pages) < 20


def test_the_issue_26_plan_is_no_longer_one_range_per_page() -> None:
    whole = plan(ranges=77, unproven=100, mentions=100)
    first = whole.page(0, 500, 0, 0).to_json(RESPONSE_BUDGET_CHARS)
    assert len(first["ranges"]) == 77
    assert first["nextOffset"] is None
    assert first["unprovenSiteCount"] == 100
    assert len(walk(whole)) <= 3


def test_without_a_budget_every_list_is_whole_from_its_offset() -> None:
    whole = plan(ranges=120, unproven=700, mentions=650)
    answer = whole.page(100, 500, 650, 600).to_json()
    assert len(answer["ranges"]) == 20
    assert len(answer["unprovenSites"]) == 50
    assert len(answer["textMentions"]) == 50
    assert (answer["nextOffset"], answer["unprovenNextOffset"], answer["textMentionNextOffset"]) == (
        None,
        None,
        None,
    )
    # Ranges capped by maxRanges page on, the lists keep their cursors.
    capped = replace(whole, max_ranges=30).to_json()
    assert (capped["nextOffset"], len(capped["unprovenSites"])) == (30, 700)
