"""The cffi binding and the worker process against the fixture's real index store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CANARY, load_expected
from xcindex.indexstore import native
from xcindex.indexstore.binding import MIN_API_VERSION, IndexStore
from xcindex.indexstore.database import Database
from xcindex.indexstore.ingest import refresh
from xcindex.indexstore.model import DependencyKind, RecordData, Role, UnitInfo, kind_name, usr_hash
from xcindex.indexstore.pool import WorkerPool

pytestmark = pytest.mark.toolchain


def user_units(store: IndexStore) -> dict[str, UnitInfo]:
    units = [store.read_unit(name) for name in store.unit_names()]
    root = str(CANARY.resolve())
    return {
        u.main_file: u
        for u in units
        if not u.is_system and u.main_file.startswith(root) and "/.build/" not in u.main_file
    }


def test_library_version_and_units_for_every_fixture_source(canary_store: Path) -> None:
    with IndexStore(canary_store) as store:
        assert store.library.api_version >= MIN_API_VERSION
        assert store.library.format_version == 5
        units = user_units(store)
    sources = {str(p.resolve()) for p in CANARY.glob("*/*/*.swift")}
    assert sources <= set(units), sorted(sources - set(units))
    modules = {Path(path).parent.name: unit.module_name for path, unit in units.items()}
    assert modules == {
        "CanaryCore": "CanaryCore",
        "CanaryFeatures": "CanaryFeatures",
        "CanaryCoreTests": "CanaryCoreTests",
        "canary-tool": "canary_tool",
        "canary-calc": "canary_calc",
        "CanaryC": "",  # a C target's unit names no module
    }
    test_unit = units[str((CANARY / "Tests/CanaryCoreTests/UserServiceTests.swift").resolve())]
    imported = {d.module_name for d in test_unit.dependencies if d.kind == DependencyKind.UNIT}
    assert "XCTest" in imported
    assert {Path(path).suffix: u.provider for path, u in units.items()} == {".swift": "swift", ".c": "clang"}
    c_unit = units[str((CANARY / "Sources/CanaryC/canary_c.c").resolve())]
    headers = [d for d in c_unit.dependencies if d.kind == DependencyKind.RECORD and d.is_system]
    # The C library's headers are the unit's system dependencies; the target's own is not.
    assert any(d.file_path.endswith("/stdio.h") for d in headers)
    assert [d.file_path for d in c_unit.record_dependencies() if d.file_path.endswith(".h")] == [
        str((CANARY / "Sources/CanaryC/include/canary_c.h").resolve())
    ]


def test_records_hold_the_expected_definitions_with_utf8_columns(canary_store: Path) -> None:
    expected = {e["key"]: e for e in load_expected("symbols.json")}
    with IndexStore(canary_store) as store:
        units = user_units(store)
        records: dict[str, RecordData] = {}
        for path, unit in units.items():
            for dep in unit.dependencies:
                if dep.kind == DependencyKind.RECORD:
                    records[path] = store.read_record(dep.name)
    for key in ("UserService", "UserService.fetchUser(id:)", "AuthManager", "Greeter.greet()"):
        entry = expected[key]
        record = records[str((CANARY / entry["definitionPath"]).resolve())]
        hits = [
            occ
            for occ in record.occurrences
            if record.symbols[occ.symbol].name == entry["name"]
            and occ.roles & (Role.DEFINITION | Role.DECLARATION)
            and (occ.line, occ.column) == (entry["definitionLine"], entry["definitionColumn"])
        ]
        assert hits, key
        assert kind_name(record.symbols[hits[0].symbol].kind) == entry["kind"]
        assert record.symbols[hits[0].symbol].usr.startswith("s:")

    # The line with an emoji before the call: the column counts UTF-8 bytes.
    app = records[str((CANARY / "Sources/CanaryCore/AppDelegate.swift").resolve())]
    line = (CANARY / "Sources/CanaryCore/AppDelegate.swift").read_text(encoding="utf-8").splitlines()
    calls = [
        o
        for o in app.occurrences
        if app.symbols[o.symbol].name == "fetchUser(id:)" and "👋" in line[o.line - 1]
    ]
    assert len(calls) == 1
    text = line[calls[0].line - 1]
    assert calls[0].column == len(text[: text.index("fetchUser")].encode("utf-8")) + 1
    assert calls[0].column != text.index("fetchUser") + 1
    relations = {(roles & Role.REL_CALLEDBY, app.symbols[sym].name) for roles, sym in calls[0].relations}
    assert (Role.REL_CALLEDBY, "setUp()") in relations


@pytest.mark.anyio
async def test_the_worker_process_reads_what_the_binding_reads(canary_store: Path) -> None:
    with IndexStore(canary_store) as store:
        names = sorted(store.unit_names())
        direct = [store.read_unit(name) for name in names]
    pool = WorkerPool(2)
    try:
        via_worker = await pool.run("read_units", str(canary_store), names)
        assert len(pool.pids) == 1
    finally:
        await pool.aclose()
    assert via_worker == direct
    assert pool.pids == []


def _content(
    db: Database,
) -> tuple[set[tuple[str, str, int, int, int]], set[tuple[str, str, int, int]], set[tuple[str, int]]]:
    """Every occurrence (usr, file, line, column, roles), relation (usr, related usr, line,
    roles) and symbol (usr, its hash) of the live units, by value: ids differ between two
    ingestions. Each record's occurrences must be exactly its id range."""
    conn = db._conn
    outside, miscounted = conn.execute(
        "SELECT (SELECT count(*) FROM occurrences o JOIN records r ON r.id = o.record_id"
        "        WHERE o.id NOT BETWEEN r.first_occurrence AND r.last_occurrence),"
        "       (SELECT count(*) FROM records r WHERE r.last_occurrence - r.first_occurrence + 1 !="
        "        (SELECT count(*) FROM occurrences o WHERE o.record_id = r.id))"
    ).fetchone()
    assert (outside, miscounted) == (0, 0)
    occurrences = {
        (str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]))
        for r in conn.execute(
            "SELECT s.usr, f.path, o.line, o.col, o.roles FROM occurrences o JOIN symbols s ON s.id = o.symbol_id"
            " JOIN unit_records ur ON ur.record_id = o.record_id JOIN files f ON f.id = ur.file_id"
        )
    }
    relations = {
        (str(r[0]), str(r[1]), int(r[2]), int(r[3]))
        for r in conn.execute(
            "SELECT s.usr, t.usr, o.line, rel.roles FROM relations rel JOIN occurrences o ON o.id = rel.occurrence_id"
            " JOIN symbols s ON s.id = o.symbol_id JOIN symbols t ON t.id = rel.symbol_id"
        )
    }
    symbols = {(str(r[0]), int(r[1])) for r in conn.execute("SELECT usr, usr_hash FROM symbols")}
    assert all(hashed == usr_hash(usr) for usr, hashed in symbols)
    return occurrences, relations, symbols


@pytest.mark.anyio
async def test_the_compiled_ingester_and_the_cffi_fallback_write_the_same_database(
    canary_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no C compiler is found the workers walk with cffi and write with Python's
    sqlite3: same rows, so a plain `pip install` without a compiler answers the same."""
    built, why = native.build()
    assert built is not None, f"the compiled ingester should build on this machine: {why}"
    results = {}
    for mode in ("native", "fallback"):
        if mode == "fallback":
            monkeypatch.setenv(native.DISABLE_ENV, "1")
        db = Database(tmp_path / f"{mode}.sqlite")
        pool = WorkerPool(2)
        try:
            report = await refresh(db, canary_store, workers=pool)
            assert report.failures == []
            results[mode] = (db.counts(), _content(db))
        finally:
            await pool.aclose()
            db.close()
    native_counts, native_content = results["native"]
    assert native_counts.occurrences > 1000
    assert results["fallback"] == (native_counts, native_content)
