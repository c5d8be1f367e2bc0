"""Recall and precision of an answer against hand-checked truth, printed for the record."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    label: str
    recall: float
    precision: float
    missing: frozenset[Hashable]
    unexpected: frozenset[Hashable]

    def __str__(self) -> str:
        return (
            f"{self.label}: recall {self.recall:.3f} precision {self.precision:.3f}"
            f" missing={sorted(map(str, self.missing))} unexpected={sorted(map(str, self.unexpected))}"
        )


def score(label: str, expected: Iterable[Hashable], actual: Iterable[Hashable]) -> Score:
    want, got = frozenset(expected), frozenset(actual)
    hits = len(want & got)
    recall = hits / len(want) if want else (1.0 if not got else 0.0)
    precision = hits / len(got) if got else (1.0 if not want else 0.0)
    result = Score(label, recall, precision, want - got, got - want)
    RECORDED.append(result)
    return result


RECORDED: list[Score] = []
"""Every comparison made in this session; conftest prints them in the terminal summary."""


MEASURED: list[str] = []
"""Behaviour figures measured in this session (loop gaps, catalogue size), printed likewise."""


def measured(label: str, value: str) -> None:
    MEASURED.append(f"{label}: {value}")
