"""The compiled record ingester (`native_ingest.c`): built on first use, loaded by workers.

The C walk writes records straight into SQLite, with no Python object per occurrence:
about twenty times the rate of the cffi callback walk. It is compiled with the machine's C
compiler (`$CC`, cc, gcc, clang, or the Swift toolchain's own clang) against the
toolchain's libIndexStore and the libsqlite3 that Python's `sqlite3` uses, into a folder
keyed by everything the binary depends on, once per machine. Where no compiler works the
worker falls back to the cffi walk (`binding.py`), with the same results, only slower.

Only worker processes load it (libIndexStore may abort on corrupt files).
`python -m xcindex.indexstore.native` builds it ahead of time (the bootstrap does).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from xcindex.indexstore.cache import cache_dir
from xcindex.project.toolchain import find_library, toolchain_roots

SOURCE = Path(__file__).with_name("native_ingest.c")
NATIVE_DIR_ENV = "XCINDEX_NATIVE_DIR"
DISABLE_ENV = "XCINDEX_NO_NATIVE"
"""Set to 1 to use the cffi walk even where a compiler is available (tests compare both)."""
ABI_VERSION = 3

CDEF = """
int xci_abi_version(void);
int xci_ingest_records(void *store, const char *database, long long token, int count,
    const char *const *names, int *statuses, char *messages, size_t message_size,
    long long *totals, char *error, size_t error_size);
void xci_close(void);
"""


def native_dir() -> Path:
    """Where built binaries live: `XCINDEX_NATIVE_DIR`, else the cache folder's `native/`
    (so that xcindex writes nothing outside the cache folder it was given)."""
    if configured := os.environ.get(NATIVE_DIR_ENV):
        return Path(configured)
    return cache_dir() / "native"


def sqlite_library() -> str | None:
    """The libsqlite3 this Python's `sqlite3` module is linked against (so the worker and
    the server speak to the database through the same SQLite), from /proc/self/maps."""
    import sqlite3  # noqa: F401  (maps it into the process)

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1]
                if "/libsqlite3" in path and os.path.isfile(path):
                    return path
    except OSError:
        pass
    return None


def compilers() -> list[str]:
    found: list[str] = []
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and (path := shutil.which(name)) and path not in found:
            found.append(path)
    for root in toolchain_roots():
        clang = root / "usr" / "bin" / "clang"
        if clang.is_file() and str(clang) not in found:
            found.append(str(clang))
    return found


def _binary_path(library: Path, sqlite: str | None) -> Path:
    key = hashlib.sha256()
    key.update(SOURCE.read_bytes())
    for part in (str(library.resolve()), sqlite or "-lsqlite3", sys.platform, os.uname().machine):
        key.update(b"\0" + part.encode())
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return native_dir() / f"xcindex-ingest-{key.hexdigest()[:16]}{suffix}"


def build(library: Path | None = None) -> tuple[Path | None, str]:
    """The built ingester (compiling it if needed) and, when there is none, why."""
    library = library or find_library()
    sqlite = sqlite_library()
    target = _binary_path(library, sqlite)
    if target.is_file():
        return target, ""
    target.parent.mkdir(parents=True, exist_ok=True)
    links = [str(library), f"-Wl,-rpath,{library.parent}"]
    links += [sqlite] if sqlite else ["-lsqlite3"]
    shared = ["-dynamiclib"] if sys.platform == "darwin" else ["-shared", "-fPIC"]
    reasons: list[str] = []
    for compiler in compilers():
        fd, scratch = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
        os.close(fd)
        command = [compiler, "-O2", "-std=c11", *shared, "-o", scratch, str(SOURCE), *links]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            reasons.append(f"{compiler}: {error}")
            Path(scratch).unlink(missing_ok=True)
            continue
        if result.returncode == 0:
            os.replace(scratch, target)  # atomic: two workers building at once both succeed
            return target, ""
        Path(scratch).unlink(missing_ok=True)
        reasons.append(f"{compiler}: {result.stderr.strip().splitlines()[-1:] or result.returncode}")
    return None, "; ".join(reasons) or "no C compiler found (cc, gcc, clang)"


def load(ffi: Any) -> tuple[Any, str]:
    """dlopen the built ingester through the binding's `ffi` (after libIndexStore is
    loaded); (None, why) when it is disabled or cannot be built."""
    if os.environ.get(DISABLE_ENV) == "1":
        return None, f"{DISABLE_ENV}=1"
    try:
        path, why = build()
        if path is None:
            return None, why
        ffi.cdef(CDEF, override=True)
        lib = ffi.dlopen(str(path))
        if int(lib.xci_abi_version()) != ABI_VERSION:
            return None, f"{path} has another ABI version"
        return lib, ""
    except Exception as error:  # any failure here means the slower walk, never no walk
        return None, f"{type(error).__name__}: {error}"


def main() -> int:
    path, why = build()
    if path is None:
        sys.stdout.write(
            f"xcindex: the compiled ingester was not built ({why}); the cffi walk will be used.\n"
        )
        return 0
    sys.stdout.write(f"xcindex: compiled ingester at {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
