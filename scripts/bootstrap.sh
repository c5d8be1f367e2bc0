#!/usr/bin/env bash
# Shared set-up for the README's commands: the virtual environment, the package, and the
# fixture's index store. Idempotent: a second run only checks and rebuilds what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [ -d /opt/swift/usr/bin ] && ! command -v swift >/dev/null 2>&1; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi
if ! command -v swift >/dev/null 2>&1; then
  echo "xcindex: the Swift toolchain is missing (no 'swift' on PATH and none at /opt/swift)." >&2
  exit 3
fi

say() { echo "xcindex: $*" >&2; }

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  say "making the virtual environment .venv with $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.xcindex-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing xcindex (editable) and its development tools into .venv with pip: about a minute, once"
  started=$(date +%s)
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$stamp"
  say "installed in $(($(date +%s) - started)) s: .venv/bin/xcindex"
fi

if ! .venv/bin/python -c "from xcindex.project.toolchain import find_library; print(find_library())" >/dev/null; then
  echo "xcindex: libIndexStore was not found next to the Swift toolchain." >&2
  exit 3
fi

# The compiled record ingester (optional: without a C compiler the cffi walk is used).
.venv/bin/python -m xcindex.indexstore.native >&2

say "building the fixture's index: swift build --build-tests --package-path fixtures/SwiftCanary"
swift build --build-tests --package-path fixtures/SwiftCanary >&2
