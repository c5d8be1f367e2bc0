"""Generate and build the benchmark packages, and compile the C walker, outside git.

Everything lands in the bench folder (`$XCINDEX_BENCH_DIR`, default
`~/.cache/xcindex-bench`) and is reused across runs: regeneration rewrites only changed
files, so an unchanged package rebuilds in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.generate import generate, write_package

BENCH_DIR_ENV = "XCINDEX_BENCH_DIR"
WALKER_SOURCE = Path(__file__).resolve().parent / "walker.c"
TRIPLE_GLOB = "*/debug/index/store"


def bench_dir() -> Path:
    configured = os.environ.get(BENCH_DIR_ENV)
    base = Path(configured) if configured else Path.home() / ".cache" / "xcindex-bench"
    return Path(os.path.realpath(base))


def toolchain_root() -> Path:
    """The toolchain whose libIndexStore and sourcekit-lsp are measured (the one `swift` runs)."""
    swift = shutil.which("swift")
    if swift is not None:
        return Path(os.path.realpath(swift)).parent.parent.parent
    return Path("/opt/swift")


def swift_version() -> str:
    result = subprocess.run(["swift", "--version"], capture_output=True, text=True, check=False)
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "unknown"


@dataclass(frozen=True)
class BuiltPackage:
    scale: str
    root: Path
    store: Path
    swift_files: int
    swift_lines: int
    files_written: int
    build_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "root": str(self.root),
            "store": str(self.store),
            "swift_files": self.swift_files,
            "swift_lines": self.swift_lines,
            "files_written": self.files_written,
            "build_s": round(self.build_s, 2),
        }


def swift_build(root: Path) -> float:
    """`swift build --build-tests` (debug: it writes the index store); returns seconds."""
    started = time.perf_counter()
    result = subprocess.run(
        ["swift", "build", "--build-tests", "--package-path", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
        raise RuntimeError(f"swift build failed in {root}:\n{tail}")
    return time.perf_counter() - started


def store_of(root: Path) -> Path:
    stores = sorted(path for path in (root / ".build").glob(TRIPLE_GLOB) if (path / "v5").is_dir())
    if not stores:
        raise RuntimeError(f"no index store under {root}/.build after the build")
    return Path(os.path.realpath(stores[0]))


def prepare_package(scale: str, base: Path) -> BuiltPackage:
    """Generate (only changed files are written) and build one scale's package."""
    package = generate(scale)
    root = base / scale
    written = write_package(package, root)
    build_s = swift_build(root)
    return BuiltPackage(
        scale, root, store_of(root), len(package.swift_files), package.swift_lines, written, build_s
    )


def compile_walker(base: Path, library: Path) -> Path:
    """gcc the walker against the toolchain's libIndexStore (no header needed: it declares
    what it uses). Rebuilt when its source is newer than the binary."""
    binary = base / "bin" / "indexstore-walker"
    if binary.is_file() and binary.stat().st_mtime >= WALKER_SOURCE.stat().st_mtime:
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    command = [
        "gcc",
        "-O2",
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        "-Wall",
        "-Wextra",
        "-o",
        str(binary),
        str(WALKER_SOURCE),
        f"-L{library.parent}",
        f"-l:{library.name}",
        f"-Wl,-rpath,{library.parent}",
        "-lpthread",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"gcc failed:\n{result.stderr}")
    return binary


def run_walker(binary: Path, store: Path, *, scope: str = "user", threads: int = 1) -> dict[str, Any]:
    result = subprocess.run(
        [str(binary), str(store), "--scope", scope, "--threads", str(threads)],
        capture_output=True,
        text=True,
        check=True,
    )
    walked: dict[str, Any] = json.loads(result.stdout)
    return walked
