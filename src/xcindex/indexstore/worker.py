"""The ingestion worker process: `python -m xcindex.indexstore.worker`.

libIndexStore aborts the process on some corrupt files, so everything that touches it
happens here, in batches to amortise the round trip. A failure that libIndexStore reports
politely comes back as a ReadFailure value; an abort kills the worker, and the parent
bisects the batch to find the culprit.

Protocol (stdin/stdout, pickles): the parent writes `(function name, store, names)`; the
worker answers `b"OK <n>\n"` or `b"ERR <n>\n"` followed by n bytes of pickle. The
worker imports nothing of the parent's program, unlike a multiprocessing-style pool that
re-runs the host's `__main__`.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

from xcindex.indexstore.binding import IndexStore, IndexStoreError, LibraryInfo
from xcindex.indexstore.model import ReadFailure, RecordData, UnitInfo

_open_stores: dict[str, IndexStore] = {}


def _store(path: str) -> IndexStore:
    store = _open_stores.get(path)
    if store is None:
        store = IndexStore(path)
        _open_stores[path] = store
    return store


def library_info() -> LibraryInfo:
    from xcindex.indexstore.binding import load_library

    return load_library()[1]


def read_units(store_path: str, names: list[str]) -> list[UnitInfo | ReadFailure]:
    store = _store(store_path)
    results: list[UnitInfo | ReadFailure] = []
    for name in names:
        try:
            results.append(store.read_unit(name))
        except IndexStoreError as error:
            results.append(ReadFailure(name, str(error)))
    return results


def read_records(store_path: str, names: list[str]) -> list[RecordData | ReadFailure]:
    store = _store(store_path)
    results: list[RecordData | ReadFailure] = []
    for name in names:
        try:
            results.append(store.read_record(name))
        except IndexStoreError as error:
            results.append(ReadFailure(name, str(error)))
    return results


_FUNCTIONS: dict[str, Callable[[str, list[str]], list[Any]]] = {
    "read_units": read_units,
    "read_records": read_records,
}


def serve(stdin: Any, stdout: Any) -> None:
    while True:
        try:
            function, store_path, names = pickle.load(stdin)
        except EOFError:
            return
        try:
            payload = pickle.dumps(_FUNCTIONS[function](store_path, names), pickle.HIGHEST_PROTOCOL)
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
