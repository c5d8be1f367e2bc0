"""Corrupt index files, through the real server: a worker dies, the server does not.

tests/faults/test_corrupt_store.py covers garbage, truncated and zeroed units and
truncated and missing records against the in-process Engine. This module adds what the
server must also survive: single bytes that make libIndexStore itself crash (SIGSEGV, found
by trying in a throwaway child), zeroed and garbage records, all at once in one store, asked
over stdio. Every answer must equal the hand-checked truth minus the files whose index
data was destroyed, carry `completeness: partial` and the documented warning codes, and
come from the same server process; once the files are repaired and their units rewritten
(as a rebuild does) the answers are complete again and nothing is reported unreadable.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import CANARY, load_expected
from tests.faults.test_corrupt_store import record_for, unit_for
from tests.reliability.harness import (
    corrupt_until_libindexstore_crashes,
    new_tag,
    server_pid,
    stdio_parameters,
)

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

CRASHED = "libIndexStore crashed while reading it"
UNIT_CORRUPTIONS = {
    "Sources/CanaryCore/Greeter.swift": "crash",
    "Sources/CanaryCore/Box.swift": "garbage",
    "Sources/CanaryCore/Operators.swift": "truncated",
}
RECORD_CORRUPTIONS = {
    "Sources/CanaryCore/UserRepository.swift": "crash",
    "Sources/CanaryCore/SubDelegate.swift": "zeroed",
    "Sources/CanaryFeatures/FeatureAppDelegate.swift": "garbage",
    "Sources/CanaryCore/UserProfile.swift": "truncated",
    "Sources/CanaryCore/DefaultAuthManager+Session.swift": "missing",
}
DESTROYED = set(UNIT_CORRUPTIONS) | set(RECORD_CORRUPTIONS)

Site = tuple[str, int, int]


def corrupt(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif how == "zeroed":
        path.write_bytes(b"\x00" * len(data))
    elif how == "missing":
        path.unlink()
    else:
        raise AssertionError(how)


def rel(path: str) -> str:
    return str(Path(path).relative_to(CANARY.resolve()))


def sites(results: Iterable[dict[str, Any]]) -> set[Site]:
    return {(rel(r["path"]), r["line"], r["column"]) for r in results}


def surviving(expected: Iterable[dict[str, Any]]) -> set[Site]:
    """The hand-checked sites that are not in a file whose index data was destroyed."""
    return {(e["path"], e["line"], e["column"]) for e in expected if e["path"] not in DESTROYED}


async def call(client: Client, tool: str, store: Path, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, {"indexStorePath": str(store), **arguments})
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert not result.is_error, f"{tool}({arguments}): {text}"
    structured = result.structured_content
    assert isinstance(structured, dict)
    return structured


async def usr_of(client: Client, store: Path, key: str) -> str:
    [entry] = [e for e in load_expected("symbols.json") if e["key"] == key]
    found = await call(client, "find_symbol", store, symbolName=entry["name"])
    [usr] = [
        r["usr"]
        for r in found["results"]
        # SDK symbols the project uses are candidates too, with no source here.
        if r["definitionPath"] is not None
        and (rel(r["definitionPath"]), r["definitionLine"])
        == (entry["definitionPath"], entry["definitionLine"])
    ]
    return str(usr)


async def test_crashing_and_unreadable_index_files_cost_workers_never_the_server(
    canary_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(canary_store, store)
    units = {source: store / "v5" / "units" / unit_for(store, source) for source in UNIT_CORRUPTIONS}
    records = {source: record_for(store, source) for source in RECORD_CORRUPTIONS}
    originals = {path: path.read_bytes() for path in [*units.values(), *records.values()]}
    for source, how in UNIT_CORRUPTIONS.items():
        if how == "crash":
            corrupt_until_libindexstore_crashes(store, "unit", units[source].name, units[source])
        else:
            corrupt(units[source], how)
    for source, how in RECORD_CORRUPTIONS.items():
        if how == "crash":
            corrupt_until_libindexstore_crashes(store, "record", records[source].name, records[source])
        else:
            corrupt(records[source], how)

    tag = new_tag()
    params = stdio_parameters(tmp_path / "cache", tag, tmp_path, log_file=tmp_path / "server.log")
    async with Client(params, read_timeout_seconds=300) as client:
        # USRs come from the intact store: a symbol defined in a destroyed file still has
        # references elsewhere.
        usrs: dict[str, str] = {}
        pid = server_pid(tag)

        # A tool call waits for the first ingestion (status would answer with its progress).
        await call(client, "find_symbol", store, symbolName="UserService")
        status = await call(client, "status", store)
        unreadable = {(u["kind"], u["name"]): u["message"] for u in status["unreadable"]}
        assert set(unreadable) == {("unit", p.name) for p in units.values()} | {
            ("record", p.name) for p in records.values()
        }
        crashed = {name for (_, name), message in unreadable.items() if CRASHED in message}
        assert crashed == {
            units["Sources/CanaryCore/Greeter.swift"].name,
            records["Sources/CanaryCore/UserRepository.swift"].name,
        }
        assert status["completeness"] == "partial"
        assert {w["code"] for w in status["warnings"]} >= {"index_unit_unreadable", "index_record_unreadable"}

        for key, expected in load_expected("references.json").items():
            usrs[key] = await usr_of(client, canary_store, key)
            answer = await call(client, "find_references", store, usr=usrs[key], maxResults=500)
            assert sites(answer["results"]) == surviving(expected), key
            assert answer["completeness"] == "partial", key
            assert {w["code"] for w in answer["warnings"]} == {
                "index_unit_unreadable",
                "index_record_unreadable",
            }
        for key, expected in load_expected("overrides.json").items():
            answer = await call(client, "find_overrides", store, usr=await usr_of(client, canary_store, key))
            assert sites(answer["results"]) == surviving(expected), key
        for key, expected in load_expected("conformances.json").items():
            answer = await call(
                client, "find_conformances", store, usr=await usr_of(client, canary_store, key)
            )
            assert sites(answer["results"]) == surviving(expected), key
        assert server_pid(tag) == pid, "the server survived every crashed worker"

        # Repaired, and the units rewritten as a rebuild would: complete again.
        for path, data in originals.items():
            path.write_bytes(data)
        for path in units.values():
            os.utime(path)
        for source in RECORD_CORRUPTIONS:
            unit = store / "v5" / "units" / unit_for(store, source)
            unit.write_bytes(unit.read_bytes())
        os.utime(store / "v5" / "units")
        for key, expected in load_expected("references.json").items():
            answer = await call(client, "find_references", store, usr=usrs[key], maxResults=500)
            assert sites(answer["results"]) == {(e["path"], e["line"], e["column"]) for e in expected}, key
            assert answer["completeness"] == "complete", key
            assert answer["warnings"] == []
        status = await call(client, "status", store)
        assert status["unreadable"] == []
        assert server_pid(tag) == pid
