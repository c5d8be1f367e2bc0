"""The embedding API as a host program sees it: typed names from `xcindex`, a loop that
stays responsive during a cold ingestion, and the host's logging left alone."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import xcindex
from tests.scoring import measured
from xcindex import Engine, EngineConfig, FindSymbolAnswer, SitesAnswer, StatusAnswer
from xcindex.indexstore.worker import SLOW_INGEST_ENV

pytestmark = pytest.mark.toolchain

HEAVY = ("anyio", "trio", "mcp", "cffi", "structlog", "lsprotocol", "pydantic")
TICK_S = 0.010
MAX_GAP_S = 0.250
"""A behaviour bound, not a benchmark: a host's 10 ms timer must never wait a quarter second."""
SLOW_BATCH_S = 1.5
"""The fixture's cold ingestion takes a fifth of a second, which a loop blocked throughout
would survive: the test-only slow worker (SLOW_INGEST_ENV) holds it open far longer."""


def test_importing_xcindex_loads_nothing_heavy_until_a_name_is_used() -> None:
    program = (
        "import sys, xcindex\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
        "xcindex.Engine\n"
        "print('anyio' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.splitlines() == ["[]", "True"]


def test_every_public_name_resolves_to_a_documented_type() -> None:
    for name in xcindex.__all__:
        value = getattr(xcindex, name)
        assert value is not None, name
        assert name in dir(xcindex)
    answers = [n for n in xcindex.__all__ if n.endswith("Answer")] + ["RenamePlan"]
    for name in answers:
        answer_type: Any = getattr(xcindex, name)
        assert callable(answer_type.to_json), name
        assert answer_type.__dataclass_params__.frozen, name
        assert dataclasses.is_dataclass(answer_type), name
    with pytest.raises(AttributeError, match="no attribute 'engine_factory'"):
        _ = xcindex.engine_factory
    docs = (Path(__file__).resolve().parents[2] / "docs" / "embedding.md").read_text(encoding="utf-8")
    for name in xcindex.__all__:
        assert f"`{name}`" in docs, f"{name} is exported but docs/embedding.md does not mention it"


@pytest.mark.anyio
async def test_the_loop_stays_responsive_during_a_cold_ingestion(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setenv(SLOW_INGEST_ENV, str(SLOW_BATCH_S))
    gaps: list[float] = []

    async def ticker() -> None:
        last = anyio.current_time()
        while True:
            await anyio.sleep(TICK_S)
            now = anyio.current_time()
            gaps.append(now - last - TICK_S)
            last = now

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        async with Engine(EngineConfig(reconcile=False)) as engine:
            answer = await engine.find_references("UserService", index_store_path=str(canary_store))
            status = await engine.status(index_store_path=str(canary_store))
        tg.cancel_scope.cancel()

    assert isinstance(answer, SitesAnswer)
    assert answer.total == 12
    assert isinstance(status, StatusAnswer)
    report = status.to_json()["lastRefresh"]
    assert report is not None
    assert report["recordsRead"] > 0, "the ingestion was not cold"
    assert report["durationMs"] / 1000 >= SLOW_BATCH_S > 4 * MAX_GAP_S, (
        "the ingestion was over too soon to tell"
    )
    assert len(gaps) > 10
    worst = max(gaps)
    measured(f"event loop's worst gap during a cold ingestion ({anyio_backend})", f"{worst * 1000:.1f} ms")
    assert worst < MAX_GAP_S, f"the event loop was blocked for {worst * 1000:.0f} ms"


@pytest.mark.anyio
async def test_the_engine_leaves_the_hosts_logging_alone(
    canary_store: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import structlog

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    configured = structlog.is_configured()
    async with Engine(EngineConfig(reconcile=False)) as engine:
        found = await engine.find_symbol("UserService", index_store_path=str(canary_store))
        await engine.status(index_store_path=str(canary_store))
        with pytest.raises(xcindex.XcindexError):
            await engine.blast_radius("/no/such/file.swift", index_store_path=str(canary_store))
    assert isinstance(found, FindSymbolAnswer)
    assert root.handlers == handlers
    assert root.level == level
    assert structlog.is_configured() == configured
    for name in logging.root.manager.loggerDict:
        if name.startswith("xcindex"):
            assert not logging.getLogger(name).handlers, name
    assert capfd.readouterr().out == ""
