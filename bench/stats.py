"""Small statistics helpers: the benchmark reports medians and tail latencies, never means."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p99 of 100 samples is the 99th smallest), NaN when empty."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summary_ms(samples_s: Sequence[float]) -> dict[str, Any]:
    """p50/p99/max in milliseconds, and how many samples they come from."""
    return {
        "n": len(samples_s),
        "p50_ms": round(percentile(samples_s, 0.50) * 1000, 3),
        "p99_ms": round(percentile(samples_s, 0.99) * 1000, 3),
        "max_ms": round(max(samples_s) * 1000, 3) if samples_s else math.nan,
    }


def median(values: Sequence[float]) -> float:
    return percentile(values, 0.5)


def ratio(ours: float | None, theirs: float | None) -> float | None:
    """ours / theirs, None when either is missing or theirs is zero."""
    if ours is None or theirs is None or theirs == 0 or math.isnan(ours) or math.isnan(theirs):
        return None
    return ours / theirs


class Stopwatch:
    """`with Stopwatch() as sw: ...` then `sw.seconds`; perf_counter based."""

    def __init__(self) -> None:
        self.started = 0.0
        self.seconds = 0.0

    def __enter__(self) -> Stopwatch:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self.started


def precision_recall(found: set[str], truth: set[str]) -> tuple[float, float]:
    """File-level precision and recall of `found` against `truth` (1.0 for empty sets)."""
    hits = len(found & truth)
    precision = hits / len(found) if found else 1.0
    recall = hits / len(truth) if truth else 1.0
    return precision, recall
