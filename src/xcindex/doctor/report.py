"""The doctor's output: one `[ OK ]`, `[FAIL]` or `[INFO]` line per finding, each failure
followed by a `->` line that says what fixes it."""

from __future__ import annotations

import sys


class Report:
    """Counts failures; `xcindex doctor` exits 1 if there were any."""

    def __init__(self) -> None:
        self.failures = 0

    def _write(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def section(self, title: str) -> None:
        self._write(f"\n== {title} ==")

    def ok(self, message: str) -> None:
        self._write(f"  [ OK ] {message}")

    def info(self, message: str) -> None:
        self._write(f"  [INFO] {message}")

    def fail(self, message: str, fix: str | None = None) -> None:
        self.failures += 1
        self._write(f"  [FAIL] {message}")
        if fix:
            self._write(f"         -> {fix}")

    def detail(self, text: str) -> None:
        for line in text.rstrip().splitlines():
            self._write(f"         | {line}")
