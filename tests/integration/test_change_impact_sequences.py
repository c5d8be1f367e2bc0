"""change_impact on a package's own sequences, iterated the way Swift code iterates them:
`for x in seq` (the compiler calls the sequence's `next()` itself) and `for await x in seq`
(it calls the library's `AsyncIteratorProtocol.next(isolation:)`, which runs the sequence's
`next()`; the index records that use as an implicit reference, not a call). Found by a probe
package of kinds of case the fixture and the corpus do not have: a change to an
AsyncSequence's `next()` selected no test, `complete`. Each expectation is read from the
package written here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import build_package, swift_executable
from xcindex.engine import Engine

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

MANIFEST = """// swift-tools-version:5.9
import PackageDescription
let package = Package(
    name: "Seqs",
    targets: [.target(name: "Seqs"), .testTarget(name: "SeqsTests", dependencies: ["Seqs"])]
)
"""
SOURCE = """public struct Countdown: Sequence, IteratorProtocol {
    public var n: Int
    public init(n: Int) { self.n = n }
    public mutating func next() -> Int? {
        if n == 0 { return nil }
        defer { n -= 1 }
        return n
    }
}

public struct Ticker: AsyncSequence, AsyncIteratorProtocol {
    public typealias Element = Int
    var left: Int
    public init(_ n: Int) { left = n }
    public mutating func next() async -> Int? {
        if left == 0 { return nil }
        left -= 1
        return left
    }
    public func makeAsyncIterator() -> Ticker { self }
}
"""
TESTS = """import XCTest
import Seqs

final class SeqsTests: XCTestCase {
    func testForIn() {
        var seen: [Int] = []
        for x in Countdown(n: 3) { seen.append(x) }
        XCTAssertEqual(seen, [3, 2, 1])
    }
    func testForAwait() async {
        var got: [Int] = []
        for await v in Ticker(2) { got.append(v) }
        XCTAssertEqual(got, [1, 0])
    }
    func testNeither() { XCTAssertEqual(1 + 1, 2) }
}
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    swift_executable()  # the toolchain is required (in CI, a missing one fails)
    root = tmp_path_factory.mktemp("sequences") / "Seqs"
    (root / "Sources" / "Seqs").mkdir(parents=True)
    (root / "Tests" / "SeqsTests").mkdir(parents=True)
    (root / "Package.swift").write_text(MANIFEST)
    (root / "Sources" / "Seqs" / "Seqs.swift").write_text(SOURCE)
    (root / "Tests" / "SeqsTests" / "SeqsTests.swift").write_text(TESTS)
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "seqs"],
    ):
        subprocess.run(command, cwd=root, check=True, capture_output=True)
    build_package(root)
    return root


@pytest.mark.parametrize(
    ("old", "new", "selected"),
    [
        ("defer { n -= 1 }", "defer { n -= 2 }", {"SeqsTests.SeqsTests/testForIn"}),
        ("left -= 1", "left -= 2", {"SeqsTests.SeqsTests/testForAwait"}),
    ],
    ids=["for-in", "for-await"],
)
async def test_a_change_to_a_sequences_next_selects_the_tests_that_iterate_it(
    package: Path, old: str, new: str, selected: set[str]
) -> None:
    source = package / "Sources" / "Seqs" / "Seqs.swift"
    assert old in SOURCE
    source.write_text(SOURCE.replace(old, new, 1))
    try:
        async with Engine() as engine:
            answer = await engine.change_impact(project_path=str(package))
    finally:
        source.write_text(SOURCE)
    assert [s.name for s in answer.changed] == ["next()"]
    assert {t.case.id for t in answer.selection.tests} == selected
    assert str(answer.freshness.completeness) == "complete"
