"""Each actor's fields are written by its own task alone (docs/architecture.md, "Actors"):
driven for real, with every write to an actor's fields (and to the containers it holds)
recorded with the task that made it."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import anyio
import pytest

from tests.conftest import CANARY, build_package
from tests.ownership import record_writes
from xcindex.actors.index import IndexActor
from xcindex.actors.ledger import LedgerActor
from xcindex.actors.lsp_child import LspActor
from xcindex.engine import Engine, EngineConfig
from xcindex.overlay.changes import ChangeTracker, WatchedTree
from xcindex.overlay.runner import OverlaySchedule

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


@pytest.fixture(scope="module")
def built_copy(canary_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ownership") / "SwiftCanary"
    shutil.copytree(CANARY, root, symlinks=True, ignore=shutil.ignore_patterns("ModuleCache", ".swiftpm"))
    build_package(root)
    return root


async def test_the_index_actor_the_ledger_and_sourcekit_lsp_change_their_state_in_their_own_task_only(
    built_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    monkeypatch.setenv("XCINDEX_CACHE_DIR", str(tmp_path / "cache"))  # a cold first ingestion
    project = str(built_copy)
    edited = built_copy / "Sources/CanaryCore/Greeter.swift"
    config = EngineConfig(
        project_dir=str(tmp_path), first_answer_wait_s=0.0, index_idle_timeout_s=1.0, overlay_debounce_s=0.1
    )
    with record_writes(
        monkeypatch, IndexActor, LedgerActor, LspActor, parts=(OverlaySchedule, WatchedTree, ChangeTracker)
    ) as writes:
        async with Engine(config) as engine:
            # Questions during the first ingestion: early answers, status, the store's version.
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(partial(engine.find_references, "UserService", project_path=project))
                tg.start_soon(partial(engine.status, project_path=project))
                tg.start_soon(partial(engine.status_version, project_path=project))
            await engine.settle(project_path=project)
            # A plan confirmed by a real sourcekit-lsp child.
            service = (await engine.find_symbol("UserService", project_path=project)).resolved
            assert service is not None
            plan = await engine.plan_rename(service.symbol.usr, "AccountService", project_path=project)
            assert plan.refusal is None
            # An edit re-indexed by the overlay, asked about by name and in the background.
            probe = f"ownershipProbe_{anyio_backend}"
            edited.write_text(edited.read_text() + f"\nfunc {probe}() {{}}\n")
            await engine.record_edit(str(edited))
            found = await engine.find_symbol(probe, project_path=project)
            assert found.matches, "the overlay answered the edit"
            await engine.wait_for_fresh([str(edited)], project_path=project, timeout_s=30)
            # A build that wrote units: the next question refreshes first.
            (built_copy / ".build").touch()
            units = next((built_copy / ".build").glob("*/debug/index/store/v5/units"))
            units.touch()
            await engine.find_references("UserService", project_path=project)
            await engine.clear_edits()
            # Idle: the actor retires; the next question starts a new one.
            await anyio.sleep(1.5)
            await engine.status(project_path=project)
    assert writes.counted > 50, f"only {writes.counted} writes were recorded: the workload proves too little"
    assert not writes.strangers, "fields written outside the actor's own task:\n" + "\n".join(
        sorted(set(writes.strangers))
    )
