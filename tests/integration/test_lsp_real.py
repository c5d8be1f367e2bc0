"""The LSP pool against the real sourcekit-lsp, on the SwiftCanary fixture.

Answers are compared with the hand-checked expected JSON (recall and precision 1.0), not
with anything derived from the code under test. sourcekit-lsp builds into
`<root>/.build/index-build`, so it runs on a private copy of the fixture, made once per
module and shared by both backends (the second run reuses the first one's index). Without
the toolchain these tests fail: a green run without Swift would prove nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import pytest

from xcindex.actors.lsp import LspPool
from xcindex.errors import CodedError
from xcindex.lsp.config import LspPoolConfig
from xcindex.lsp.positions import LspLocation
from xcindex.lsp.snapshot import ChildState
from xcindex.project.toolchain import find_sourcekit_lsp

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]

log = logging.getLogger(__name__)

CANARY = Path(__file__).resolve().parents[2] / "fixtures" / "SwiftCanary"
EXPECTED = CANARY / "expected"
KEYS = ("UserService.fetchUser(id:)", "UserService")
INIT = "UserService.init(auth:)"

Site = tuple[str, int, int]
"""(path relative to the package root, 1-based line, 1-based UTF-8 column)"""


@pytest.fixture(scope="module")
def canary_for_lsp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        find_sourcekit_lsp()
    except CodedError as error:
        pytest.fail(f"the real sourcekit-lsp is required: {error.message}")
    if not (CANARY / "Package.swift").is_file():
        pytest.fail(f"the SwiftCanary fixture is missing at {CANARY}")
    destination = tmp_path_factory.mktemp("lsp-real") / "SwiftCanary"
    shutil.copytree(CANARY, destination, ignore=shutil.ignore_patterns(".build", ".swiftpm"))
    return Path(os.path.realpath(destination))


def expected(name: str) -> Any:
    return json.loads((EXPECTED / name).read_text(encoding="utf-8"))


def definition_site(key: str) -> Site:
    [symbol] = [symbol for symbol in expected("symbols.json") if symbol["key"] == key]
    return symbol["definitionPath"], symbol["definitionLine"], symbol["definitionColumn"]


def reference_sites(key: str) -> set[Site]:
    return {(site["path"], site["line"], site["column"]) for site in expected("references.json")[key]}


def sites(root: Path, locations: list[LspLocation]) -> set[Site]:
    found: set[Site] = set()
    for location in locations:
        assert location.utf8_start_column is not None, f"{location.path} could not be read"
        found.add((location.path.relative_to(root).as_posix(), location.line, location.utf8_start_column))
    return found


class RunningPool:
    def __init__(self, config: LspPoolConfig) -> None:
        self.pool = LspPool(config)
        self._tg = anyio.create_task_group()

    async def __aenter__(self) -> LspPool:
        await self._tg.__aenter__()
        await self._tg.start(self.pool.run)
        return self.pool

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.pool.aclose()
        return await self._tg.__aexit__(kind, error, tb)


def process_alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] not in ("Z", "X")


async def test_references_definition_and_usr_match_the_hand_checked_answers(canary_for_lsp: Path) -> None:
    root = canary_for_lsp
    config = LspPoolConfig(ready_timeout=900, request_timeout=120, initialize_timeout=60)
    async with RunningPool(config) as pool:
        started = anyio.current_time()
        await pool.wait_ready(root)
        log.info("sourcekit-lsp ready after %.1f s", anyio.current_time() - started)
        [status] = pool.status()
        assert (status.root, status.state, status.ready) == (root, ChildState.RUNNING, True)
        assert status.pid is not None
        pid = status.pid

        usrs: dict[str, list[str]] = {}
        init_calls = reference_sites(INIT)
        for key in KEYS:
            path, line, column = definition_site(key)
            found = sites(root, await pool.references(root, root / path, line, column))
            wanted = reference_sites(key)
            assert found == wanted, f"{key}: missing {wanted - found}, unexpected {found - wanted}"

            usrs[key] = await pool.symbol_info(root, root / path, line, column)
            assert usrs[key], f"{key}: no USR at its definition"
            assert all(usr.startswith("s:") for usr in usrs[key])

            # From every use, definition leads back to the declaration. A use that is also a
            # constructor call (`UserService(auth:)`) leads to both the class and the initialiser.
            for use in sorted(wanted - {(path, line, column)}):
                use_path, use_line, use_column = use
                targets = {(path, line, column)}
                if use in init_calls:
                    targets.add(definition_site(INIT))
                answer = await pool.definition(root, root / use_path, use_line, use_column)
                assert sites(root, answer) == targets, f"{key} from {use_path}:{use_line}"
                if use not in init_calls:
                    assert await pool.symbol_info(root, root / use_path, use_line, use_column) == usrs[key]

        assert usrs["UserService"] != usrs["UserService.fetchUser(id:)"]
        log.info("USRs: %s", usrs)
        # The non-ASCII line: 👋 makes UTF-16 and UTF-8 columns differ by two.
        [call] = [
            location
            for location in await pool.references(root, root / "Sources/CanaryCore/UserService.swift", 8, 17)
            if location.path.name == "AppDelegate.swift" and location.line == 13
        ]
        assert (call.utf16_start_column, call.utf8_start_column) == (45, 47)
    assert not process_alive(pid)
    assert [status.state for status in pool.status()] == [ChildState.STOPPED]
    assert not re.search(r"SIGTERM|SIGKILL", "\n".join(pool.recent_log(root, 500))), "a graceful exit"
