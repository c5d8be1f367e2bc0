"""Corrupt index files cost a worker process, never the server, and are reported.

The corruption here is real (bytes written over copies of the fixture's own unit and
record files); libIndexStore either refuses them or aborts the worker that reads them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANARY, canary_path, load_expected
from xcindex.engine import Engine
from xcindex.indexstore.binding import IndexStore, IndexStoreError
from xcindex.tools.references import SitesAnswer

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def answers_every_fetch_user_site(answer: SitesAnswer) -> None:
    """The hand-checked sites of `fetchUser(id:)`, none of them in a file the tests damage:
    the rest of the store answers in full."""
    want = {
        (canary_path(site["path"]), site["line"], site["column"])
        for site in load_expected("references.json")["UserService.fetchUser(id:)"]
    }
    got = {(site.occurrence.path, site.occurrence.line, site.occurrence.column) for site in answer.sites}
    assert (answer.total, got) == (len(want), want)


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
        answers_every_fetch_user_site(again)


# Cuts a unit at every length and opens each cut in a forked child with libIndexStore's own
# reader (not xcindex's): prints the first length at which the unit still opens but names
# no output file and no main file, its flags intact. The child may die of a cut (some lengths crash it).
_EMPTY_CUT_SCANNER = r"""
import os, sys
from xcindex.indexstore.binding import IndexStore, ffi, load_library
store, name, path = sys.argv[1:4]
lib, _ = load_library()
original = open(path, "rb").read()
for cut in range(16, len(original)):
    open(path, "wb").write(original[:cut])
    child = os.fork()
    if child == 0:
        os.close(2)
        with IndexStore(store) as opened:
            reader = lib.indexstore_unit_reader_create(opened._handle, name.encode(), ffi.new("indexstore_error_t *"))
            if reader == ffi.NULL:
                os._exit(3)
            try:
                lib.indexstore_unit_reader_is_system_unit(reader)
                lib.indexstore_unit_reader_is_module_unit(reader)
                lib.indexstore_unit_reader_has_main_file(reader)
            except ValueError:  # a flag read past the cut
                os._exit(5)
            named = lib.indexstore_unit_reader_get_output_file(reader).length or lib.indexstore_unit_reader_get_main_file(reader).length
            os._exit(0 if named else 4)
    _, status = os.waitpid(child, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 4:
        print(cut)
        sys.exit(0)
open(path, "wb").write(original)
sys.exit(1)
"""


def cut_where_unit_reads_as_nothing(store: Path, name: str) -> int:
    path = store / "v5" / "units" / name
    done = subprocess.run(
        [sys.executable, "-c", _EMPTY_CUT_SCANNER, str(store), name, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"no cut of {name} opens as an empty unit: {done.stderr[-2000:]}"
    return int(done.stdout)


async def test_a_unit_cut_short_that_still_opens_is_reported_never_read_as_empty(
    canary_store: Path, tmp_path: Path
) -> None:
    # CI met it: a unit truncated at a length where libIndexStore opens it and reads no main
    # file, output file or dependency; taken as written, Operators.swift's references were
    # silently gone from an answer that said it was complete.
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    cut = unit_for(store, "Sources/CanaryCore/Operators.swift")
    cut_where_unit_reads_as_nothing(store, cut)

    async with Engine() as engine:
        refs = await engine.find_references("fetchUser(id:)", index_store_path=str(store))
        answers_every_fetch_user_site(refs)
        assert refs.freshness.completeness == "partial"
        status = (await engine.status(index_store_path=str(store))).to_json()
        assert [(u["kind"], u["name"]) for u in status["unreadable"]] == [("unit", cut)]
        assert "names no output file" in status["unreadable"][0]["message"]
        assert "index_unit_unreadable" in {w["code"] for w in status["warnings"]}


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
        answers_every_fetch_user_site(refs)
        status = (await engine.status(index_store_path=str(store))).to_json()
        kinds = {u["kind"] for u in status["unreadable"]}
        assert kinds == {"record"}
        assert len(status["unreadable"]) == 2
        assert "index_record_unreadable" in {w["code"] for w in status["warnings"]}
        greeter = await engine.find_symbol("Greeter", index_store_path=str(store))
        assert greeter.matches == ()


class _FlagPastTheCut:
    """A fault the real store cannot make on demand: libIndexStore, reading a unit cut at
    some lengths, returns a flag read from memory past the cut (cffi: 'got a _Bool of value
    54'), which is 0 or 1 by chance on some runs. Everything else is the real library."""

    def __init__(self, lib: object) -> None:
        self._real = lib

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def indexstore_unit_reader_is_system_unit(self, reader: object) -> bool:
        raise ValueError("got a _Bool of value 54, expected 0 or 1")


def test_a_flag_read_past_a_cut_is_a_damaged_unit_not_a_crash_of_the_worker(canary_store: Path) -> None:
    with IndexStore(canary_store) as reader:
        name = unit_for(canary_store, "Sources/CanaryCore/Operators.swift")
        reader._lib = _FlagPastTheCut(reader._lib)
        with pytest.raises(IndexStoreError, match=r"it is damaged \(got a _Bool of value 54"):
            reader.read_unit(name)
