"""The overlay's schedule (owned by a store's index actor): when edited files are due, who
waits for them, and what a question is answered; and the project tree's pending changes.
Plain state, driven with explicit times."""

from __future__ import annotations

from xcindex.overlay.changes import Changes, WatchedTree
from xcindex.overlay.runner import Failed, Landed, OverlaySchedule, Skipped
from xcindex.vocabulary import WarningCode

A, B = "/p/A.swift", "/p/B.swift"


def test_the_sessions_edits_wait_for_a_quiet_period_and_each_new_edit_pushes_it_back() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.edited([A], now=10.0)
    assert schedule.start_batch(now=10.5) is None
    schedule.edited([A], now=10.8)  # edited again: quiet again from here
    assert schedule.next_due() == 11.8
    assert schedule.start_batch(now=11.5) is None
    batch = schedule.start_batch(now=11.8)
    assert batch is not None
    assert batch[1] == (A,)


def test_a_question_does_not_wait_for_the_quiet_period_and_is_answered_with_what_landed() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=5.0)
    schedule.edited([A, B], now=0.0)
    assert schedule.asked([A, B], "question", now=0.1) is None
    number, paths, _tried = schedule.start_batch(now=0.1) or (0, (), {})
    assert sorted(paths) == [A, B]
    assert schedule.reported(number, Landed(A, 0.2), now=0.3) == []
    assert schedule.reported(number, Skipped(B), now=0.3) == [("question", [A])]
    assert schedule.snapshot().version == 1
    assert schedule.batch_over(number) == []
    assert not schedule.busy


def test_a_question_is_not_answered_by_a_run_that_started_before_it() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A], "first", now=0.0)
    first = schedule.start_batch(now=0.0)
    assert first is not None
    schedule.asked([A], "second", now=0.1)  # A may have changed after the run read it
    assert schedule.reported(first[0], Landed(A, 0.1), now=0.2) == [("first", [A])]
    assert schedule.batch_over(first[0]) == []
    second = schedule.start_batch(now=0.2)
    assert second is not None
    assert schedule.reported(second[0], Skipped(A), now=0.3) == [("second", [])]


def test_a_failure_is_remembered_with_the_files_mtime_and_a_file_changed_meanwhile_is_retried() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A, B], "question", now=0.0)
    number, _paths, _tried = schedule.start_batch(now=0.0) or (0, (), {})
    schedule.reported(number, Failed(A, WarningCode.OVERLAY_FAILED, "A: error: expected '}'", 42), now=0.1)
    # B changed while it was indexed: tried again at once, and the question keeps waiting.
    assert (
        schedule.reported(number, Failed(B, WarningCode.OVERLAY_FAILED, "changed", 7, retry=True), now=0.2)
        == []
    )
    assert schedule.batch_over(number) == []
    retry = schedule.start_batch(now=0.2)
    assert retry is not None
    assert retry[1] == (B,)
    assert retry[2] == {A: 42}  # A is not tried again while it is as it was
    assert schedule.reported(retry[0], Landed(B, 0.1), now=0.3) == [("question", [B])]
    assert [(p, c) for p, c, _m, _t in schedule.snapshot().failures] == [(A, WarningCode.OVERLAY_FAILED)]


def test_files_a_batch_never_reported_answer_their_question_as_not_landed() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A, B], "question", now=0.0)
    number, _paths, _tried = schedule.start_batch(now=0.0) or (0, (), {})
    schedule.reported(number, Landed(A, 0.1), now=0.1)
    assert schedule.batch_over(number) == [("question", [A])]


def test_a_stopping_actor_hands_back_every_waiting_question() -> None:
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A], "one", now=0.0)
    schedule.asked([B], "two", now=0.0)
    assert sorted(schedule.close()) == ["one", "two"]


def test_a_failed_file_is_tried_again_once_another_file_of_the_project_changed() -> None:
    """A.swift failed because B removed what it used; B put back (a new change generation)
    must let A compile again, though A itself did not change."""
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A], "question", now=0.0)
    number, _paths, _tried = schedule.start_batch(now=0.0, generation=3) or (0, (), {})
    schedule.reported(number, Failed(A, WarningCode.OVERLAY_FAILED, "cannot find 'b' in scope", 42), 0.1)
    schedule.batch_over(number)
    assert [p for p, *_ in schedule.snapshot(3).failures] == [A]
    # Once the project changed, answers no longer give A's old error as the reason: it is
    # pending (tried again), not failed.
    assert schedule.snapshot(4).failures == ()
    assert schedule.snapshot(4).pending == (A,)
    schedule.asked([A], "same generation", now=0.2)
    same = schedule.start_batch(now=0.2, generation=3)
    assert same is not None
    assert same[2] == {A: 42}  # A unchanged: its failure stands
    schedule.batch_over(same[0])
    schedule.asked([A], "after B changed", now=0.3)
    later = schedule.start_batch(now=0.3, generation=4)
    assert later is not None
    assert later[2] == {}  # compiled again


def test_a_suspect_the_compiler_checked_is_not_pending_in_what_a_quiet_watch_answers() -> None:
    """With a watch and nothing touched, questions reuse the last changes found: a suspect
    checked since must leave them, or answers stay stale with no reason until a build."""
    tree = WatchedTree()
    tree.changes = Changes(suspects=(A, B), watching=True)
    tree.tracker.suspect([A, B])
    tree.cleared(A)
    assert tree.changes.pending == (B,)
    assert tree.tracker.suspects == {B}


def test_a_build_makes_every_failure_old_news_and_a_refresh_without_one_does_not() -> None:
    # A failure is the compiler's word on the project before a build; after one, the file is
    # looked at again (a top-level file taken into a module, a declaration put back elsewhere).
    schedule: OverlaySchedule[str] = OverlaySchedule(debounce_s=1.0)
    schedule.asked([A], "question", now=0.0)
    number, _paths, _tried = schedule.start_batch(now=0.0) or (0, (), {})
    schedule.reported(number, Failed(A, WarningCode.OVERLAY_FAILED, "A: error: top level", 42), now=0.1)
    schedule.batch_over(number)
    schedule.refreshed([], built=False)
    assert [f[0] for f in schedule.snapshot().failures] == [A]
    schedule.refreshed([], built=True)
    assert schedule.snapshot().failures == ()
    assert A not in schedule.snapshot().pending
