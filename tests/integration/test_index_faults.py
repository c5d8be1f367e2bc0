"""Index-side faults of a whole call carry a documented code: a query the index does not
answer in time, and a wait asked while the first ingestion still runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from xcindex.engine import Engine, EngineConfig
from xcindex.errors import CodedError
from xcindex.vocabulary import WarningCode

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


async def test_an_index_that_does_not_answer_in_time_is_index_query_timeout(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold"))
    # A cold ingestion takes far longer than a microsecond.
    async with Engine(EngineConfig(reconcile=False, query_timeout_s=1e-6)) as engine:
        with pytest.raises(CodedError) as raised:
            await engine.find_symbol("UserService", index_store_path=str(canary_store))
    assert raised.value.code is WarningCode.INDEX_QUERY_TIMEOUT
    assert "did not answer within" in raised.value.message


async def test_waiting_on_a_first_ingestion_is_index_first_ingestion_running(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold"))
    source = str(Path(canary_store).parents[4] / "Sources" / "CanaryCore" / "Greeter.swift")
    async with Engine(EngineConfig(reconcile=False, watch_poll_s=0.0)) as engine:
        with pytest.raises(CodedError) as raised:
            await engine.wait_for_fresh([source], timeout_s=0, index_store_path=str(canary_store))
    assert raised.value.code is WarningCode.INDEX_FIRST_INGESTION_RUNNING
