"""The plugin's metadata: one version everywhere, a marketplace that lists it, the licence
shipped, and the toolchain search in one module."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import tomllib
from pathlib import Path

import xcindex

REPO = Path(__file__).resolve().parents[2]
PLUGIN = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
MARKETPLACE = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_one_version_plugin_package_and_installed_metadata() -> None:
    # pyproject's version is dynamic, read from xcindex.__version__: one source of truth.
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "xcindex.__version__"}
    assert PLUGIN["version"] == xcindex.__version__ == importlib.metadata.version("xcindex")


def test_plugin_json_has_what_a_marketplace_shows() -> None:
    assert PLUGIN["name"] == "xcindex"
    assert 0 < len(PLUGIN["description"]) < 200
    assert PLUGIN["license"] == "MIT"


def test_no_address_is_named_that_does_not_exist() -> None:
    """There is no public repository yet: the plugin is installed from a checkout (the local
    marketplace), and no file names the made-up address the manifests carried."""
    assert "homepage" not in PLUGIN
    assert "repository" not in PLUGIN
    assert all("homepage" not in entry for entry in MARKETPLACE["plugins"])
    assert "urls" not in PYPROJECT["project"]
    tracked = subprocess.run(
        [
            "git",
            "-C",
            str(REPO),
            "grep",
            "--untracked",
            "-lE",
            r"(github\.com/|marketplace add )" + "xcindex/",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert tracked.stdout == ""


def front_matter(path: Path) -> dict[str, str]:
    head = path.read_text().split("---")[1]
    return dict(line.split(": ", 1) for line in head.strip().splitlines())


def test_the_refactor_agent_may_use_every_tool_the_server_lists() -> None:
    listed = json.loads((REPO / "src" / "xcindex" / "plugin" / "catalogue.json").read_text())
    offered = {f"mcp__plugin_xcindex_xcindex__{tool['name']}" for tool in listed["toolsHandshake"]["tools"]}
    allowed = set(front_matter(REPO / "agents" / "swift-refactor-specialist.md")["tools"].split(", "))
    assert len(offered) == 12
    assert offered <= allowed, sorted(offered - allowed)


def test_every_command_says_which_tools_it_may_use_without_asking() -> None:
    commands = {path.stem: front_matter(path) for path in REPO.glob("commands/*.md")}
    assert commands["xcindex-setup"]["allowed-tools"] == "Bash"
    assert commands["xcindex-status"]["allowed-tools"] == (
        "mcp__plugin_xcindex_xcindex__status, Bash(xcindex build-commands:*)"
    )


def test_the_marketplace_lists_this_repository_as_the_plugin() -> None:
    (entry,) = MARKETPLACE["plugins"]
    assert entry["name"] == PLUGIN["name"]
    assert entry["source"] == "./"
    assert entry["description"] == PLUGIN["description"]
    assert MARKETPLACE["owner"]["name"]


def test_the_mit_licence_is_in_the_repository_and_the_package_metadata() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    distribution = importlib.metadata.distribution("xcindex")
    assert distribution.metadata.get_all("License-File") == ["LICENSE"]


def test_sourcekit_lsp_path_is_read_in_one_place_and_toolchain_is_a_leaf() -> None:
    source = REPO / "src" / "xcindex"
    readers = sorted(
        str(path.relative_to(source))
        for path in source.rglob("*.py")
        if '"SOURCEKIT_LSP_PATH"' in path.read_text() or "'SOURCEKIT_LSP_PATH'" in path.read_text()
    )
    assert readers == ["project/toolchain.py"]
    imports = re.findall(
        r"^\s*(?:from|import) (xcindex\S*)", (source / "project" / "toolchain.py").read_text(), re.M
    )
    assert set(imports) <= {"xcindex.vocabulary", "xcindex.errors"}


def test_every_plugin_file_names_tools_as_the_plugin_exposes_them() -> None:
    """Skills, commands and the agent run under the plugin: `mcp__xcindex__*` names a tool
    that does not exist there."""
    files = [*REPO.glob("skills/*/SKILL.md"), *REPO.glob("commands/*.md"), *REPO.glob("agents/*.md")]
    assert len(files) >= 7
    for path in files:
        text = path.read_text()
        assert "mcp__xcindex__" not in text, path
        assert "mcp__plugin_xcindex_xcindex__" in text, path
    for skill in REPO.glob("skills/*/SKILL.md"):
        front = skill.read_text().split("---")[1]
        assert re.search(r"^when_to_use: \S", front, re.M), skill
