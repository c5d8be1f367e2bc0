"""A rebuild while the engine runs is picked up, reading only what changed; an edited,
not yet rebuilt file is reported stale; two checkouts never answer for each other."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CANARY, build_package, load_expected
from xcindex.engine import Engine, EngineConfig
from xcindex.indexstore.database import Database, IngestCounters
from xcindex.indexstore.ingest import scan_units

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

NEW_CALLER = """
public func fetchTwice(_ service: UserService) -> String? {
    service.fetchUser(id: 1) ?? service.fetchUser(id: 2)
}
"""


def counters(db: Database) -> IngestCounters:
    return db.last_counters


async def test_rebuild_is_picked_up_reading_only_changed_units(canary_copy: Path) -> None:
    store = build_package(canary_copy)
    service_file = canary_copy / "Sources/CanaryCore/UserService.swift"
    # The labels without the freshness overlay (tests/integration/test_overlay.py covers it on).
    async with Engine(EngineConfig(overlay=False)) as engine:
        project = str(canary_copy)
        found = await engine.find_symbol("UserService.fetchUser(id:)", project_path=project)
        usr = found.matches[0].symbol.usr
        before = await engine.find_references(usr=usr, project_path=project)
        assert before.freshness.completeness == "complete"

        # Edited but not rebuilt: the answer still comes from the index, and says the file is stale.
        text = service_file.read_text(encoding="utf-8")
        service_file.write_text("// edited\n" + text + NEW_CALLER, encoding="utf-8")
        stale = await engine.find_references(usr=usr, project_path=project)
        assert stale.total == before.total
        assert stale.freshness.completeness == "stale"
        assert str(service_file.resolve()) in stale.freshness.stale_files
        status = (await engine.status(project_path=project)).to_json()
        assert status["staleFiles"] == [str(service_file.resolve())]

        units_before = scan_units(store)
        bytes_before = {name: (store / "v5" / "units" / name).read_bytes() for name in units_before}
        records_before = set((store / "v5" / "records").glob("*/*"))
        build_package(canary_copy)
        # Records are named by their content: those the rebuild added are the ones to read.
        new_records = set((store / "v5" / "records").glob("*/*")) - records_before
        units_after = scan_units(store)
        changed = {name for name, mtime in units_after.items() if units_before.get(name) != mtime}
        # The compiler rewrites every unit of the module it rebuilt; most byte for byte.
        rewritten = {n for n in changed if bytes_before.get(n) != (store / "v5" / "units" / n).read_bytes()}

        after = await engine.find_references(usr=usr, project_path=project)
        assert after.total == before.total + 2
        assert after.freshness.completeness == "complete"
        definition = await engine.find_definition(usr, project_path=project)
        assert definition.site is not None
        was = found.matches[0].definition
        assert was is not None
        assert definition.site.occurrence.line == was.line + 1

        refreshed = await engine._core.run_query(counters, project_path=project)
        assert refreshed.units_read == len(rewritten)
        assert refreshed.units_unchanged == len(changed) - len(rewritten) > 0
        assert 0 < refreshed.units_read < len(units_after)
        assert refreshed.records_read == len(new_records) > 0
        assert (await engine.status(project_path=project)).to_json()["staleFileCount"] == 0


async def test_two_checkouts_of_one_package_never_answer_for_each_other(
    canary_store: Path, canary_copy: Path
) -> None:
    build_package(canary_copy)
    assert canary_copy.name == CANARY.name
    async with Engine() as engine:
        for root in (CANARY, canary_copy):
            answer = await engine.find_references("UserService", project_path=str(root))
            paths = {site.occurrence.path for site in answer.sites}
            # The files of the hand-checked references, in this checkout.
            assert paths == {
                str(root.resolve() / site["path"]) for site in load_expected("references.json")["UserService"]
            }
