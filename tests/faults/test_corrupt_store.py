"""Corrupt index files cost a worker process, never the server, and are reported.

The corruption here is real (bytes written over copies of the fixture's own unit and
record files); libIndexStore either refuses them or aborts the worker that reads them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CANARY
from xcindex.engine import Engine
from xcindex.indexstore.binding import IndexStore

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def unit_for(store: Path, source: str) -> str:
    with IndexStore(store) as reader:
        for name in reader.unit_names():
            unit = reader.read_unit(name)
            if unit.main_file == str((CANARY / source).resolve()):
                return name
    raise AssertionError(source)


async def test_garbage_truncated_and_zeroed_units_are_skipped_and_reported(
    canary_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    units = store / "v5" / "units"
    garbage = unit_for(store, "Sources/CanaryCore/Box.swift")
    truncated = unit_for(store, "Sources/CanaryCore/Operators.swift")
    zeroed = unit_for(store, "Sources/CanaryCore/UserStatus.swift")
    (units / garbage).write_bytes(b"\xde\xad\xbe\xef" * 64)
    data = (units / truncated).read_bytes()
    (units / truncated).write_bytes(data[: len(data) // 3])
    (units / zeroed).write_bytes(b"\x00" * len((units / zeroed).read_bytes()))

    async with Engine() as engine:
        answer = await engine.find_symbol("UserService", index_store_path=str(store))
        assert [m.symbol.name for m in answer.matches] == ["UserService"]
        assert answer.freshness.completeness == "partial"
        assert "index_unit_unreadable" in {w.code for w in answer.freshness.warnings}
        status = (await engine.status(index_store_path=str(store))).to_json()
        assert {u["name"] for u in status["unreadable"]} == {garbage, truncated, zeroed}
        assert status["completeness"] == "partial"
        # The server (this process) is alive and the next query still works.
        again = await engine.find_references("fetchUser(id:)", index_store_path=str(store))
        assert again.total > 0


def record_for(store: Path, source: str) -> Path:
    with IndexStore(store) as reader:
        unit = reader.read_unit(unit_for(store, source))
    [name] = [d.name for d in unit.dependencies if d.kind == 2]
    return store / "v5" / "records" / name[-2:] / name


async def test_truncated_and_missing_records_are_reported_and_the_rest_answers(
    canary_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    truncated = record_for(store, "Sources/CanaryCore/Greeter.swift")
    truncated.write_bytes(truncated.read_bytes()[:40])
    record_for(store, "Sources/CanaryCore/Box.swift").unlink()

    async with Engine() as engine:
        refs = await engine.find_references("fetchUser(id:)", index_store_path=str(store))
        assert refs.total > 0
        status = (await engine.status(index_store_path=str(store))).to_json()
        kinds = {u["kind"] for u in status["unreadable"]}
        assert kinds == {"record"}
        assert len(status["unreadable"]) == 2
        assert "index_record_unreadable" in {w["code"] for w in status["warnings"]}
        greeter = await engine.find_symbol("Greeter", index_store_path=str(store))
        assert greeter.matches == ()
