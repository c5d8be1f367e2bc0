"""What the plugin tests share: the plugin as an install leaves it, a new user's environment,
a raw MCP client over the launcher's stdio, and the process table.

The repository is copied the way a plugin cache holds it (the files git knows, nothing
built), HOME is empty and PATH has a Python and the Swift toolchain but no xcindex, as a new
user's machine has. pip downloads into a cache shared by the tests of one session
(`PIP_CACHE_DIR`), so only the first install pays for the network; the real Claude Code test
keeps a cache of its own, as a new user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.conftest import CANARY, REPO, swift_executable
from tests.line_client import LineClient

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
# Passed through to the clean environment so pip can reach its index behind a proxy.
NETWORK_ENV = (
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
)
SHARED_PIP_CACHE = Path(tempfile.gettempdir()) / f"xcindex-test-pip-cache-{os.getuid()}"
"""pip's cache for the plugin tests (not the developer's own, not the repository)."""
INSTALL_WITHIN_S = 600.0
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}


def plugin_cache_copy(destination: Path) -> Path:
    """The repository as `/plugin install` leaves it: the files git tracks (and, in a working
    checkout, the new ones it would), no build products, no virtual environment."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if not source.is_file():
            continue  # deleted in the working tree
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def python_311() -> Path:
    """A real Python >= 3.11 (the one running the tests, outside any virtual environment)."""
    return Path(getattr(sys, "_base_executable", sys.executable)).resolve()


def clean_env(
    tmp_path: Path, plugin_root: Path, *, pip_cache: Path | None = SHARED_PIP_CACHE
) -> dict[str, str]:
    """A fresh user's environment: an empty HOME; PATH with a Python >= 3.11 and the Swift
    toolchain, and no xcindex; the variables Claude Code gives a plugin's processes."""
    tools = tmp_path / "path-bin"
    tools.mkdir(exist_ok=True)
    if not (tools / "python3").exists():
        (tools / "python3").symlink_to(python_311())
    path = os.pathsep.join([str(tools), str(Path(swift_executable()).parent), "/usr/bin", "/bin"])
    assert shutil.which("xcindex", path=path) is None, "PATH must not offer an xcindex"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {key: os.environ[key] for key in NETWORK_ENV if key in os.environ}
    env.update(
        {
            "HOME": str(home),
            "PATH": path,
            "TMPDIR": f"{tmp_path}/",
            "LANG": "C.UTF-8",
            "CLAUDE_PROJECT_DIR": str(CANARY),
            "CLAUDE_PLUGIN_ROOT": str(plugin_root),
            "CLAUDE_PLUGIN_DATA": str(home / ".claude" / "plugins" / "data" / "xcindex-xcindex"),
            "XCINDEX_CACHE_DIR": str(tmp_path / "db-cache"),
        }
    )
    if pip_cache is not None:
        env["PIP_CACHE_DIR"] = str(pip_cache)
    return env


def launcher(plugin_root: Path) -> str:
    return str(plugin_root / "bin" / "xcindex")


def call_until_answered(
    client: LineClient, arguments: Mapping[str, Any], name: str, within_s: float
) -> tuple[dict[str, Any], list[str]]:
    """Call `name` until the answer is not the set-up's "still setting itself up"; that answer
    and the texts of the waiting answers before it."""
    waits: list[str] = []
    deadline = time.monotonic() + within_s
    number = 100
    while time.monotonic() < deadline:
        number += 1
        answer = client.request(
            number, "tools/call", {"name": name, "arguments": dict(arguments)}, within_s=120
        )
        text = answer["result"]["content"][0]["text"]
        if not text.startswith("Error: xcindex is still setting itself up"):
            return answer, waits
        waits.append(text)
    raise AssertionError(f"{name} still waited for the set-up after {within_s} s: {waits[-1:]}")


def wait_for_stamp(data: Path, within_s: float = INSTALL_WITHIN_S) -> None:
    stamp = data / f"venv-{VERSION}" / ".xcindex-ready"
    deadline = time.monotonic() + within_s
    while not stamp.is_file():
        if time.monotonic() > deadline:
            log = (data / "install.log").read_text() if (data / "install.log").exists() else ""
            raise AssertionError(f"no install within {within_s} s; install.log ends:\n{log[-3000:]}")
        time.sleep(0.2)


# --- the process table ---------------------------------------------------------------------


def processes_naming(text: str) -> list[str]:
    """Command lines of running processes (zombies aside) that mention `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            status = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if status.rsplit(")", 1)[-1].split()[0] == "Z":
            continue
        if text in command:
            found.append(f"{entry.name}: {command.strip()}")
    return found


def leftovers(data: Path) -> list[str]:
    """What a finished (or stopped) set-up must not leave: a lock, the source copy, pip's
    scratch folder, a process working in the data folder."""
    left = [
        str(path)
        for path in (data / "install.lock", data / f"source-{VERSION}", data / f"tmp-{VERSION}")
        if path.exists()
    ]
    return left + processes_naming(str(data))


# --- a user who is not root ----------------------------------------------------------------

NOBODY = 65534


def as_user(command: Sequence[str]) -> list[str]:
    """`command` as an unprivileged user: root ignores file modes, and the tests of read-only
    and unwritable folders are about what a user meets."""
    if os.geteuid() != 0:
        return list(command)
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *command]


def give_to_user(path: Path) -> Path:
    """Hand `path` and everything below it to the user `as_user` runs as."""
    if os.geteuid() == 0:
        for folder, dirs, files in os.walk(path):
            os.chown(folder, NOBODY, NOBODY)
            for name in [*dirs, *files]:
                os.chown(os.path.join(folder, name), NOBODY, NOBODY, follow_symlinks=False)
    return path


def python_for_user() -> Path:
    """A Python >= 3.11 with venv that the unprivileged user can run (root's pyenv is not)."""
    check = "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"
    for candidate in (
        python_311(),
        Path("/usr/bin/python3.13"),
        Path("/usr/bin/python3.12"),
        Path("/usr/bin/python3.11"),
        Path("/usr/bin/python3"),
    ):
        if (
            candidate.is_file()
            and subprocess.run(
                as_user([str(candidate), "-c", check]), capture_output=True, check=False
            ).returncode
            == 0
        ):
            return candidate
    raise AssertionError("no Python >= 3.11 with venv that an unprivileged user can run")
