"""The real-code proofs compare test runs by the names that passed: a name misread from the
console would call a sound rename plan broken (CI met it once), so Swift Testing's results
are read from its XUnit report when one was written."""

from __future__ import annotations

from tests.corpus.harness import parse_results

REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="TestResults" errors="0" tests="5" failures="2" skipped="1" time="0.003">
    <testcase classname="LTests.S" name="off()" ><skipped>no</skipped></testcase>
    <testcase classname="LTests.S" name="param(x:)" time="0.001" >
      <failure message="Expectation failed: (x &#8594; 2) != 2 (error)" />
    </testcase>
    <testcase classname="LTests.S" name="ok()" time="0.001" />
    <testcase classname="LTests.S" name="named()" time="0.001" />
  </testsuite>
</testsuites>
"""

# As `swift test` printed it for that run, with a test's log line written into the middle
# of one marker line (tests run in parallel and print to the same output).
CONSOLE = """Test Case 'XT.testA' passed (0.001 seconds)
Test Case 'XT.testB' failed (0.0 seconds)
✘ Test param(x:) recorded an issue with 1 argument x → 2 at T.swift:8:52: Expectation failed
✔ Test o2026-11-26T19:10:49+0000 info metadata(): one-off=42 [LTests] test
k() passed after 0.001 seconds.
✘ Test param(x:) with 3 test cases failed after 0.001 seconds with 1 issue.
✔ Test "Shown name" passed after 0.001 seconds.
"""


def test_the_report_names_every_swift_testing_result_by_its_suite_where_the_console_garbled_or_showed_a_title() -> (
    None
):
    passed, failed = parse_results(CONSOLE, REPORT)
    assert passed == {"XT.testA", "LTests.S/ok()", "LTests.S/named()"}
    assert failed == {"XT.testB", "LTests.S/param(x:)"}


def test_without_a_report_the_console_is_read() -> None:
    passed, failed = parse_results(
        CONSOLE.replace("o2026-11-26T19:10:49+0000 info metadata(): one-off=42 [LTests] test\nk", "ok")
    )
    assert passed == {"XT.testA", "ok()"}
    assert failed == {"XT.testB", "param(x:)"}


def test_a_report_cut_short_by_a_crash_falls_back_to_the_console() -> None:
    passed, failed = parse_results(
        "✔ Test ok() passed after 0.001 seconds.\n", '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n'
    )
    assert passed == {"ok()"}
    assert failed == set()
