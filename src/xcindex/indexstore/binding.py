"""cffi (ABI mode) binding to libIndexStore, and the walk of units and records.

Only the worker process imports this module: libIndexStore calls abort() on some corrupt
files, which must cost a worker, never the server. The declarations are those of the
toolchain's installed `indexstore.h` (API 0.16), restricted to the `_f` function-pointer
variants. Each callback is defined once at module level and receives its per-call state
through `ffi.new_handle`; string refs are copied out before the reader is disposed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cffi

from xcindex.errors import XcindexError
from xcindex.indexstore.model import (
    Occurrence,
    RecordData,
    SymbolInfo,
    UnitDependency,
    UnitInfo,
)
from xcindex.project.store_layout import FORMAT_DIR, FORMAT_VERSION, format_dir
from xcindex.project.toolchain import LIBRARY_ENV, find_library

_CDEF = """
typedef void *indexstore_error_t;
typedef struct { const char *data; size_t length; } indexstore_string_ref_t;
typedef void *indexstore_t;
typedef void *indexstore_symbol_t;
typedef void *indexstore_symbol_relation_t;
typedef void *indexstore_occurrence_t;
typedef void *indexstore_record_reader_t;
typedef void *indexstore_unit_reader_t;
typedef void *indexstore_unit_dependency_t;
typedef uint64_t indexstore_symbol_role_t;
typedef uint64_t indexstore_symbol_property_t;
typedef int indexstore_symbol_kind_t;
typedef int indexstore_symbol_subkind_t;
typedef int indexstore_symbol_language_t;
typedef int indexstore_unit_dependency_kind_t;

const char *indexstore_error_get_description(indexstore_error_t);
void indexstore_error_dispose(indexstore_error_t);
unsigned indexstore_format_version(void);
unsigned indexstore_version(void);

indexstore_t indexstore_store_create(const char *store_path, indexstore_error_t *error);
void indexstore_store_dispose(indexstore_t);
bool indexstore_store_units_apply_f(indexstore_t, unsigned sorted, void *context,
    bool(*applier)(void *context, indexstore_string_ref_t unit_name));
bool indexstore_store_get_unit_modification_time(indexstore_t store, const char *unit_name,
    int64_t *seconds, int64_t *nanoseconds, indexstore_error_t *error);

indexstore_symbol_language_t indexstore_symbol_get_language(indexstore_symbol_t);
indexstore_symbol_kind_t indexstore_symbol_get_kind(indexstore_symbol_t);
indexstore_symbol_subkind_t indexstore_symbol_get_subkind(indexstore_symbol_t);
indexstore_symbol_property_t indexstore_symbol_get_properties(indexstore_symbol_t);
indexstore_string_ref_t indexstore_symbol_get_name(indexstore_symbol_t);
indexstore_string_ref_t indexstore_symbol_get_usr(indexstore_symbol_t);

indexstore_symbol_role_t indexstore_symbol_relation_get_roles(indexstore_symbol_relation_t);
indexstore_symbol_t indexstore_symbol_relation_get_symbol(indexstore_symbol_relation_t);

indexstore_symbol_t indexstore_occurrence_get_symbol(indexstore_occurrence_t);
bool indexstore_occurrence_relations_apply_f(indexstore_occurrence_t, void *context,
    bool(*applier)(void *context, indexstore_symbol_relation_t symbol_rel));
indexstore_symbol_role_t indexstore_occurrence_get_roles(indexstore_occurrence_t);
void indexstore_occurrence_get_line_col(indexstore_occurrence_t, unsigned *line, unsigned *column);

indexstore_record_reader_t indexstore_record_reader_create(indexstore_t store,
    const char *record_name, indexstore_error_t *error);
void indexstore_record_reader_dispose(indexstore_record_reader_t);
bool indexstore_record_reader_symbols_apply_f(indexstore_record_reader_t, bool nocache,
    void *context, bool(*applier)(void *context, indexstore_symbol_t symbol));
bool indexstore_record_reader_occurrences_apply_f(indexstore_record_reader_t, void *context,
    bool(*applier)(void *context, indexstore_occurrence_t occur));

indexstore_unit_reader_t indexstore_unit_reader_create(indexstore_t store, const char *unit_name,
    indexstore_error_t *error);
void indexstore_unit_reader_dispose(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_provider_identifier(indexstore_unit_reader_t);
void indexstore_unit_reader_get_modification_time(indexstore_unit_reader_t, int64_t *seconds,
    int64_t *nanoseconds);
bool indexstore_unit_reader_is_system_unit(indexstore_unit_reader_t);
bool indexstore_unit_reader_is_module_unit(indexstore_unit_reader_t);
bool indexstore_unit_reader_has_main_file(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_main_file(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_module_name(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_working_dir(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_output_file(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_target(indexstore_unit_reader_t);
indexstore_unit_dependency_kind_t indexstore_unit_dependency_get_kind(indexstore_unit_dependency_t);
bool indexstore_unit_dependency_is_system(indexstore_unit_dependency_t);
indexstore_string_ref_t indexstore_unit_dependency_get_filepath(indexstore_unit_dependency_t);
indexstore_string_ref_t indexstore_unit_dependency_get_modulename(indexstore_unit_dependency_t);
indexstore_string_ref_t indexstore_unit_dependency_get_name(indexstore_unit_dependency_t);
bool indexstore_unit_reader_dependencies_apply_f(indexstore_unit_reader_t, void *context,
    bool(*applier)(void *context, indexstore_unit_dependency_t));
"""

# The oldest API with everything used here (the _f variants and indexstore_version()).
MIN_API_VERSION = 15
SUPPORTED_FORMAT_VERSION = FORMAT_VERSION

ffi = cffi.FFI()
ffi.cdef(_CDEF)


class IndexStoreError(XcindexError):
    pass


@dataclass(frozen=True)
class LibraryInfo:
    path: str
    api_version: int
    format_version: int


_lib: Any = None
_info: LibraryInfo | None = None


def load_library() -> tuple[Any, LibraryInfo]:
    """dlopen libIndexStore once per process and check that we can read its format."""
    global _lib, _info
    if _lib is None or _info is None:
        path = find_library()
        try:
            lib = ffi.dlopen(str(path))
        except OSError as error:
            chosen = (
                f"unset {LIBRARY_ENV} (it names this file) to use the toolchain's, or point it at one"
                if os.environ.get(LIBRARY_ENV)
                else f"reinstall the toolchain, or set {LIBRARY_ENV} to a working libIndexStore"
            )
            raise IndexStoreError(
                f"libIndexStore at {path} could not be loaded ({error}): {chosen} "
                "(usr/lib/libIndexStore.so in a Swift toolchain)."
            ) from None
        api = int(lib.indexstore_version())
        fmt = int(lib.indexstore_format_version())
        if api < MIN_API_VERSION:
            raise IndexStoreError(
                f"libIndexStore at {path} has API version 0.{api}; xcindex needs 0.{MIN_API_VERSION} or later."
            )
        if fmt != SUPPORTED_FORMAT_VERSION:
            raise IndexStoreError(
                f"libIndexStore at {path} writes format v{fmt}; xcindex reads v{SUPPORTED_FORMAT_VERSION}."
            )
        _lib, _info = lib, LibraryInfo(str(path), api, fmt)
    return _lib, _info


def _text(ref: Any) -> str:
    if ref.length == 0:
        return ""
    return ffi.unpack(ref.data, ref.length).decode("utf-8", "surrogateescape")  # type: ignore[no-any-return]


def _raise_error(error: Any, what: str) -> None:
    lib, _ = load_library()
    message = "unknown error"
    if error[0] != ffi.NULL:
        message = ffi.string(lib.indexstore_error_get_description(error[0])).decode("utf-8", "replace")
        lib.indexstore_error_dispose(error[0])
    raise IndexStoreError(f"{what}: {message}")


# --- callbacks: one per signature, state passed through ffi.new_handle -------------------


@ffi.callback("bool(void *, indexstore_string_ref_t)")
def _on_unit_name(context: Any, name: Any) -> bool:
    names: list[str] = ffi.from_handle(context)
    names.append(_text(name))
    return True


@ffi.callback("bool(void *, indexstore_unit_dependency_t)")
def _on_dependency(context: Any, dep: Any) -> bool:
    deps: list[UnitDependency] = ffi.from_handle(context)
    lib = _lib
    deps.append(
        UnitDependency(
            kind=int(lib.indexstore_unit_dependency_get_kind(dep)),
            name=_text(lib.indexstore_unit_dependency_get_name(dep)),
            file_path=_text(lib.indexstore_unit_dependency_get_filepath(dep)),
            module_name=_text(lib.indexstore_unit_dependency_get_modulename(dep)),
            is_system=bool(lib.indexstore_unit_dependency_is_system(dep)),
        )
    )
    return True


@dataclass
class _RecordWalk:
    """Per-record state: symbols interned by handle address (stable while the reader
    caches its declarations) with a USR fallback, and the occurrences read so far."""

    symbols: list[SymbolInfo] = field(default_factory=list)
    by_address: dict[int, int] = field(default_factory=dict)
    by_usr: dict[str, int] = field(default_factory=dict)
    occurrences: list[Occurrence] = field(default_factory=list)
    relations: list[tuple[int, int]] = field(default_factory=list)

    def intern(self, symbol: Any) -> int:
        address = int(ffi.cast("uintptr_t", symbol))
        index = self.by_address.get(address)
        if index is not None:
            return index
        lib = _lib
        usr = _text(lib.indexstore_symbol_get_usr(symbol))
        index = self.by_usr.get(usr)
        if index is None:
            index = len(self.symbols)
            self.symbols.append(
                SymbolInfo(
                    usr=usr,
                    name=_text(lib.indexstore_symbol_get_name(symbol)),
                    kind=int(lib.indexstore_symbol_get_kind(symbol)),
                    subkind=int(lib.indexstore_symbol_get_subkind(symbol)),
                    language=int(lib.indexstore_symbol_get_language(symbol)),
                    properties=int(lib.indexstore_symbol_get_properties(symbol)),
                )
            )
            self.by_usr[usr] = index
        self.by_address[address] = index
        return index


_line_col = ffi.new("unsigned[2]")


@ffi.callback("bool(void *, indexstore_symbol_t)")
def _on_symbol(context: Any, symbol: Any) -> bool:
    walk: _RecordWalk = ffi.from_handle(context)
    walk.intern(symbol)
    return True


@ffi.callback("bool(void *, indexstore_symbol_relation_t)")
def _on_relation(context: Any, relation: Any) -> bool:
    walk: _RecordWalk = ffi.from_handle(context)
    lib = _lib
    walk.relations.append(
        (
            int(lib.indexstore_symbol_relation_get_roles(relation)),
            walk.intern(lib.indexstore_symbol_relation_get_symbol(relation)),
        )
    )
    return True


@ffi.callback("bool(void *, indexstore_occurrence_t)")
def _on_occurrence(context: Any, occurrence: Any) -> bool:
    walk: _RecordWalk = ffi.from_handle(context)
    lib = _lib
    symbol = walk.intern(lib.indexstore_occurrence_get_symbol(occurrence))
    lib.indexstore_occurrence_get_line_col(occurrence, _line_col, _line_col + 1)
    walk.relations = []
    lib.indexstore_occurrence_relations_apply_f(occurrence, context, _on_relation)
    walk.occurrences.append(
        Occurrence(
            symbol,
            int(lib.indexstore_occurrence_get_roles(occurrence)),
            int(_line_col[0]),
            int(_line_col[1]),
            tuple(walk.relations),
        )
    )
    return True


class IndexStore:
    """An open store (the folder that contains `v5/`). Reads only; never discards."""

    def __init__(self, path: str | Path) -> None:
        self._lib, self.library = load_library()
        self.path = str(path)
        if not os.path.isdir(format_dir(self.path)):
            raise IndexStoreError(f"'{self.path}' is not an index store (no {FORMAT_DIR}/ folder).")
        error = ffi.new("indexstore_error_t *")
        handle = self._lib.indexstore_store_create(self.path.encode(), error)
        if handle == ffi.NULL:
            _raise_error(error, f"cannot open index store '{self.path}'")
        self._handle = handle

    def close(self) -> None:
        if self._handle is not None:
            self._lib.indexstore_store_dispose(self._handle)
            self._handle = None

    def __enter__(self) -> IndexStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def unit_names(self) -> list[str]:
        names: list[str] = []
        handle = ffi.new_handle(names)
        self._lib.indexstore_store_units_apply_f(self._handle, 1, handle, _on_unit_name)
        return names

    def unit_mtime_ns(self, unit_name: str) -> int:
        seconds = ffi.new("int64_t *")
        nanos = ffi.new("int64_t *")
        error = ffi.new("indexstore_error_t *")
        if self._lib.indexstore_store_get_unit_modification_time(
            self._handle, unit_name.encode(), seconds, nanos, error
        ):
            _raise_error(error, f"cannot stat unit '{unit_name}'")
        return int(seconds[0]) * 1_000_000_000 + int(nanos[0])

    def read_unit(self, unit_name: str) -> UnitInfo:
        lib = self._lib
        error = ffi.new("indexstore_error_t *")
        reader = lib.indexstore_unit_reader_create(self._handle, unit_name.encode(), error)
        if reader == ffi.NULL:
            _raise_error(error, f"cannot read unit '{unit_name}'")
        try:
            seconds = ffi.new("int64_t *")
            nanos = ffi.new("int64_t *")
            lib.indexstore_unit_reader_get_modification_time(reader, seconds, nanos)
            deps: list[UnitDependency] = []
            lib.indexstore_unit_reader_dependencies_apply_f(reader, ffi.new_handle(deps), _on_dependency)
            main_file = _text(lib.indexstore_unit_reader_get_main_file(reader))
            output_file = _text(lib.indexstore_unit_reader_get_output_file(reader))
            if not (output_file or main_file or deps):
                # A unit cut short can still open and read as nothing at all; taken as written
                # it would silently drop its file's records from every answer.
                raise IndexStoreError(
                    f"cannot read unit '{unit_name}': it names no output file, main file or "
                    "dependency (truncated or damaged)"
                )
            return UnitInfo(
                name=unit_name,
                mtime_ns=int(seconds[0]) * 1_000_000_000 + int(nanos[0]),
                main_file=main_file,
                module_name=_text(lib.indexstore_unit_reader_get_module_name(reader)),
                working_dir=_text(lib.indexstore_unit_reader_get_working_dir(reader)),
                output_file=output_file,
                target=_text(lib.indexstore_unit_reader_get_target(reader)),
                provider=_text(lib.indexstore_unit_reader_get_provider_identifier(reader)),
                is_system=bool(lib.indexstore_unit_reader_is_system_unit(reader)),
                is_module_unit=bool(lib.indexstore_unit_reader_is_module_unit(reader)),
                has_main_file=bool(lib.indexstore_unit_reader_has_main_file(reader)),
                dependencies=tuple(deps),
            )
        except ValueError as error:
            # cffi refuses a `bool` that is neither 0 nor 1: the reader read past a cut.
            raise IndexStoreError(f"cannot read unit '{unit_name}': it is damaged ({error})") from None
        finally:
            lib.indexstore_unit_reader_dispose(reader)

    def read_record(self, record_name: str) -> RecordData:
        lib = self._lib
        error = ffi.new("indexstore_error_t *")
        reader = lib.indexstore_record_reader_create(self._handle, record_name.encode(), error)
        if reader == ffi.NULL:
            _raise_error(error, f"cannot read record '{record_name}'")
        try:
            walk = _RecordWalk()
            handle = ffi.new_handle(walk)
            # Caching the declarations (nocache = false) keeps symbol handles stable, so the
            # occurrence walk can intern by address instead of copying every USR again.
            lib.indexstore_record_reader_symbols_apply_f(reader, False, handle, _on_symbol)
            lib.indexstore_record_reader_occurrences_apply_f(reader, handle, _on_occurrence)
            return RecordData(record_name, tuple(walk.symbols), tuple(walk.occurrences))
        finally:
            lib.indexstore_record_reader_dispose(reader)
