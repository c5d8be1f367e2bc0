"""The ingestion worker process: `python -m xcindex.indexstore.worker`.

libIndexStore aborts the process on some corrupt files, so everything that touches it
happens here, in batches to amortise the round trip. A failure that libIndexStore reports
politely comes back as a ReadFailure value; an abort kills the worker, and the parent
bisects the batch to find the culprit.

Records are written into the database by the worker itself (`ingest_records`): by the
compiled ingester (`native.py`) when it could be built, else by the cffi walk and Python's
sqlite3. Either way a batch is one transaction, so a worker that dies leaves none of it.

Protocol (stdin/stdout, pickles): the parent writes `(function name, store, names,
options)`; the worker answers `b"OK <n>\n"` or `b"ERR <n>\n"` followed by n bytes of
pickle. The worker imports nothing of the parent's program, unlike a multiprocessing-style
pool that re-runs the host's `__main__`.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from collections.abc import Callable
from typing import Any

from xcindex.indexstore.binding import IndexStore, IndexStoreError, ffi
from xcindex.indexstore.model import ReadFailure, RecordData, UnitInfo

SLOW_INGEST_ENV = "XCINDEX_TEST_SLOW_INGEST_S"
"""A fake for tests only: the worker sleeps this many seconds before each batch of records
it ingests, so that a test can hold a first ingestion open long enough to ask during it
(a real store big enough for that takes minutes to build on a small machine)."""

_open_stores: dict[str, IndexStore] = {}
_MESSAGE_SIZE = 512
_native: tuple[Any, str] | None = None
_writer: Any = None


def _store(path: str) -> IndexStore:
    store = _open_stores.get(path)
    if store is None:
        store = IndexStore(path)
        _open_stores[path] = store
    return store


def native_ingester() -> tuple[Any, str]:
    """The compiled ingester, or (None, why not): tried once per worker."""
    global _native
    if _native is None:
        from xcindex.indexstore import native

        _native = native.load(ffi)
    return _native


def read_units(store_path: str, names: list[str], options: dict[str, Any]) -> list[UnitInfo | ReadFailure]:
    store = _store(store_path)
    results: list[UnitInfo | ReadFailure] = []
    for name in names:
        try:
            results.append(store.read_unit(name))
        except IndexStoreError as error:
            results.append(ReadFailure(name, str(error)))
    return results


def read_records(
    store_path: str, names: list[str], options: dict[str, Any]
) -> list[RecordData | ReadFailure]:
    store = _store(store_path)
    results: list[RecordData | ReadFailure] = []
    for name in names:
        try:
            results.append(store.read_record(name))
        except IndexStoreError as error:
            results.append(ReadFailure(name, str(error)))
    return results


def ingest_records(store_path: str, names: list[str], options: dict[str, Any]) -> list[bool | ReadFailure]:
    """Read the records and write them into `options["database"]` (one transaction):
    per name, True (written), False (already there) or its ReadFailure."""
    database, token = str(options["database"]), int(options["token"])
    if slow := os.environ.get(SLOW_INGEST_ENV):
        time.sleep(float(slow))
    lib, _ = native_ingester()
    if lib is None:
        return _ingest_in_python(store_path, names, database, token)
    store = _store(store_path)
    encoded = [ffi.new("char[]", name.encode()) for name in names]
    statuses = ffi.new("int[]", len(names))
    messages = ffi.new("char[]", _MESSAGE_SIZE * len(names))
    totals = ffi.new("long long[2]")
    error = ffi.new("char[]", 1024)
    if lib.xci_ingest_records(
        store._handle,
        database.encode(),
        token,
        len(names),
        ffi.new("const char *[]", encoded),
        statuses,
        messages,
        _MESSAGE_SIZE,
        totals,
        error,
        1024,
    ):
        raise RuntimeError(ffi.string(error).decode("utf-8", "replace"))
    results: list[bool | ReadFailure] = []
    for index, name in enumerate(names):
        status = int(statuses[index])
        if status == 2:
            message = ffi.string(messages + index * _MESSAGE_SIZE).decode("utf-8", "replace")
            results.append(ReadFailure(name, message))
        else:
            results.append(status == 0)
    return results


def _ingest_in_python(
    store_path: str, names: list[str], database: str, token: int
) -> list[bool | ReadFailure]:
    global _writer
    from xcindex.indexstore.writer import RecordWriter

    if _writer is None or not _writer.serves(database, token):
        if _writer is not None:
            _writer.close()
        _writer = RecordWriter(database, token)
    read = read_records(store_path, names, {})
    written = _writer.add_records([r for r in read if isinstance(r, RecordData)])
    return [r if isinstance(r, ReadFailure) else r.name in written for r in read]


_FUNCTIONS: dict[str, Callable[[str, list[str], dict[str, Any]], list[Any]]] = {
    "read_units": read_units,
    "read_records": read_records,
    "ingest_records": ingest_records,
}


def serve(stdin: Any, stdout: Any) -> None:
    while True:
        try:
            function, store_path, names, options = pickle.load(stdin)
        except EOFError:
            return
        try:
            payload = pickle.dumps(_FUNCTIONS[function](store_path, names, options), pickle.HIGHEST_PROTOCOL)
            status = b"OK"
        except Exception as error:
            payload = pickle.dumps(f"{type(error).__name__}: {error}", pickle.HIGHEST_PROTOCOL)
            status = b"ERR"
        stdout.write(b"%s %d\n" % (status, len(payload)))
        stdout.write(payload)
        stdout.flush()


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Nothing else may write to the protocol stream.
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    serve(stdin, stdout)


if __name__ == "__main__":
    main()
