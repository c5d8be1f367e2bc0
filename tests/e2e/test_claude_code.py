"""The plugin with the real Claude Code CLI, as a new user meets it.

Claude Code ships inside PyPI's `claude-agent-sdk` (`claude_agent_sdk/_bundled/claude`);
the test installs it into a virtual environment of its own (the binary needs none of the
package's dependencies: `--no-deps`). HOME is empty, PATH has a Python and the toolchain but
no xcindex, the network is only PyPI's. Then, as the user would:

1. `claude plugin validate --strict` on the marketplace and on the plugin: no error and no
   warning, the plugin directory's one finding the missing icon;
2. `claude plugin marketplace add <a copy of the repository>`, `claude plugin install
   xcindex@xcindex`;
3. `claude mcp list` (which starts every MCP server and checks its handshake, without a
   model or an API key) says `✔ Connected` on the first try, within 10 s, while the set-up
   runs in the background; once the set-up is done, again;
4. afterwards no pip or installer is running and the set-up left no lock or scratch folder.

The times are printed: the first start's `mcp list`, the set-up (from its log), a later
start's `mcp list`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.plugin_harness import (
    NETWORK_ENV,
    VERSION,
    leftovers,
    plugin_cache_copy,
    python_311,
    wait_for_stamp,
)
from tests.scoring import MEASURED

pytestmark = [pytest.mark.toolchain]

CLAUDE_CODE_PACKAGE = "claude-agent-sdk==0.2.189"
"""Claude Code 2.1.332, the version these tests and docs/plugin.md's figures were made with."""
CONNECTED_WITHIN_S = 10.0
QUIET = {
    # No telemetry, update checks or other calls home (the test machine reaches PyPI only).
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Claude Code CLI, installed from PyPI into a virtual environment of the test's own."""
    venv = tmp_path_factory.mktemp("claude-code") / "venv"
    subprocess.run([str(python_311()), "-m", "venv", str(venv)], check=True, timeout=300)
    installed = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            "--no-deps",
            CLAUDE_CODE_PACKAGE,
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert installed.returncode == 0, (
        f"pip could not install {CLAUDE_CODE_PACKAGE}:\n{installed.stderr[-3000:]}"
    )
    (binary,) = venv.glob("lib/python*/site-packages/claude_agent_sdk/_bundled/claude")
    return binary


def user_env(tmp_path: Path) -> dict[str, str]:
    """A new user: empty HOME, a Python >= 3.11 and the toolchain on PATH, no xcindex."""
    tools = tmp_path / "path-bin"
    tools.mkdir()
    (tools / "python3").symlink_to(python_311())
    home = tmp_path / "home"
    home.mkdir()
    path = os.pathsep.join([str(tools), "/opt/swift/usr/bin", "/usr/bin", "/bin"])
    env = {key: os.environ[key] for key in NETWORK_ENV if key in os.environ}
    return {**env, **QUIET, "HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "TMPDIR": f"{tmp_path}/"}


def run(
    claude: Path, *args: str, env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(claude), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def mcp_list(claude: Path, env: dict[str, str], project: Path) -> tuple[float, str]:
    """`claude mcp list`: its wall time and the line about xcindex."""
    started = time.monotonic()
    listed = run(claude, "mcp", "list", env=env, cwd=project)
    took = time.monotonic() - started
    assert listed.returncode == 0, listed
    (line,) = [line for line in listed.stdout.splitlines() if line.startswith("plugin:xcindex:xcindex:")]
    return took, line


def test_claude_code_installs_the_plugin_and_connects_on_the_first_try(claude: Path, tmp_path: Path) -> None:
    version = subprocess.run(
        [str(claude), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    repository = plugin_cache_copy(tmp_path / "checkout")
    env = user_env(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    assert run(claude, "mcp", "list", env=env, cwd=project).returncode == 0  # Claude Code's own first run

    # 1. Strict validation: nothing but the icon the plugin directory would like.
    for target in (repository, repository / ".claude-plugin" / "plugin.json"):
        checked = run(claude, "plugin", "validate", "--strict", "--json", str(target), env=env, cwd=project)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        report = json.loads(checked.stdout)
        assert report["success"] is True
        assert (report["manifest"]["errors"], report["manifest"]["warnings"]) == ([], [])
        assert [finding["code"] for finding in report["directory"]["findings"]] == ["ICON_MISSING"]

    # 2. The local marketplace, and the plugin from it.
    added = run(claude, "plugin", "marketplace", "add", str(repository), env=env, cwd=project)
    assert added.returncode == 0, added
    installed = run(claude, "plugin", "install", "xcindex@xcindex", env=env, cwd=project)
    assert installed.returncode == 0, installed
    plugins = json.loads((Path(env["HOME"]) / ".claude" / "plugins" / "installed_plugins.json").read_text())
    assert [entry["version"] for entry in plugins["plugins"]["xcindex@xcindex"]] == [VERSION]

    # 3. The first start: connected at once, whatever the set-up takes.
    first_s, first = mcp_list(claude, env, project)
    assert re.fullmatch(r"plugin:xcindex:xcindex: \S+/bin/xcindex serve - ✔ Connected", first), first
    assert first_s < CONNECTED_WITHIN_S, f"claude mcp list took {first_s:.1f} s"
    data = Path(env["HOME"]) / ".claude" / "plugins" / "data" / "xcindex-xcindex"
    wait_for_stamp(data)
    log = (data / "install.log").read_text()
    (setup_s,) = [int(seconds) for seconds in re.findall(r"is installed \((\d+) s\)", log)]
    later_s, later = mcp_list(claude, env, project)
    assert later.endswith(" - ✔ Connected"), later

    # 4. Nothing left running or lying around.
    assert leftovers(data) == []
    MEASURED.append(
        f"Claude Code {version.stdout.split()[0]} (claude mcp list, wall time): first start {first_s:.1f} s "
        f"(Connected; set-up in the background {setup_s} s), later start {later_s:.1f} s"
    )
