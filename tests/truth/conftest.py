"""The fixture's live index as the independent reader sees it (elsewhere, call
`tests.truth.store_dump.live(store)`: it is cached per process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.truth.store_dump import LiveIndex, live


@pytest.fixture(scope="session")
def canary_truth(canary_store: Path) -> LiveIndex:
    return live(canary_store)
