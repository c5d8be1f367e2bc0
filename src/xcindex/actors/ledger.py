"""The ledger actor: owns the set of files edited this session.

Two sources feed it: the ledger file that the Claude Code hooks append to (re-read only
when its identity, size or modification time changed), and edits an embedding agent
records through the handle (agents that are not Claude Code have no hooks, so they call
`record_edit` instead of writing the file). Answers are real paths (symlinks resolved),
the form the Engine compares against the files an answer names.

File access runs in a worker thread; the actor serves one request at a time, so its
state needs no lock.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from xcindex._log import get_logger
from xcindex.actors.mailbox import ActorHandle, Envelope, Mailbox
from xcindex.project import ledger

log = get_logger(__name__)

DEFAULT_TIMEOUT_S = 10.0

_RACY_WINDOW_NS = 2_000_000_000
"""A file modified this close to our read may change again within one timestamp tick
(coarse kernel clocks, 2 s on FAT) without its signature changing: such a read is not
trusted for caching, the way git treats "racily clean" index entries."""


@dataclass(frozen=True)
class EditedFiles:
    """Reply the session-edited files (real paths)."""


@dataclass(frozen=True)
class RecordEdit:
    """Remember an edit of `path` (absolute, or relative to the project folder)."""

    path: str


@dataclass(frozen=True)
class ClearEdits:
    """Forget every edit: the recorded ones and the ledger file's (truncated)."""


LedgerRequest = EditedFiles | RecordEdit | ClearEdits
LedgerReply = frozenset[str] | None

_Signature = tuple[int, int, int, int]
"""(device, inode, size, mtime_ns) of the ledger file."""


@dataclass(frozen=True)
class _FileSnapshot:
    signature: _Signature | None
    """None when there is no ledger file."""
    real_paths: frozenset[str]
    trusted: bool
    """Whether a later read with the same signature may reuse `real_paths`."""


def _signature(path: Path) -> _Signature | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _load(path: Path, cached: _FileSnapshot | None) -> _FileSnapshot:
    """Re-read the ledger file unless `cached` is known to still describe it."""
    read_at_ns = time.time_ns()
    signature = _signature(path)
    if cached is not None and cached.trusted and signature == cached.signature:
        return cached
    if signature is None:
        return _FileSnapshot(None, frozenset(), trusted=True)
    # Stat before reading: if the file changes in between, the next stat differs from
    # the signature kept here and the file is read again.
    paths = ledger.real_paths(ledger.read(path))
    trusted = signature[3] < read_at_ns - _RACY_WINDOW_NS
    return _FileSnapshot(signature, paths, trusted)


def _resolve(project_dir: str, path: str) -> str:
    return ledger.real_path(os.path.join(project_dir, path))


def _clear_file(path: Path) -> None:
    if os.path.lexists(path):
        ledger.clear(path)


class LedgerActor:
    """Run with `await task_group.start(actor.run)`; talk to it through `actor.handle()`.

    Args:
        project_dir: the project whose ledger file to follow (default:
            `CLAUDE_PROJECT_DIR`, else the working directory). Relative paths given to
            `record_edit` are resolved against it.
        ledger_file: override the ledger file's location (default: the contract's path
            for `project_dir`).
    """

    def __init__(
        self,
        project_dir: str | None = None,
        *,
        ledger_file: Path | None = None,
        capacity: int = 64,
    ) -> None:
        self.project_dir = ledger.project_directory() if project_dir is None else project_dir
        self.ledger_file = Path(ledger.ledger_path(self.project_dir)) if ledger_file is None else ledger_file
        self.mailbox: Mailbox[LedgerRequest, LedgerReply] = Mailbox(capacity)
        self._recorded: set[str] = set()
        self._file: _FileSnapshot | None = None
        self._last_error: str | None = None

    def handle(self) -> LedgerHandle:
        return LedgerHandle(self.mailbox.handle())

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        log.info("ledger_actor_started", project=self.project_dir, ledger=str(self.ledger_file))
        try:
            task_status.started()
            async with self.mailbox.inbox:
                async for envelope in self.mailbox.inbox:
                    await self._serve(envelope)
        finally:
            with anyio.CancelScope(shield=True):
                await self.mailbox.aclose()
            log.info("ledger_actor_stopped", project=self.project_dir)

    async def _serve(self, envelope: Envelope[LedgerRequest, LedgerReply]) -> None:
        request = envelope.request
        try:
            if isinstance(request, EditedFiles):
                await envelope.reply(await self._edited_files(envelope))
            elif isinstance(request, RecordEdit):
                await self._record(request.path)
                await envelope.reply(None)
            else:
                self._recorded.clear()
                self._file = None
                await anyio.to_thread.run_sync(_clear_file, self.ledger_file)
                await envelope.reply(None)
        except Exception as error:
            await envelope.fail(error)
        finally:
            envelope.close()

    async def _edited_files(self, envelope: Envelope[LedgerRequest, LedgerReply]) -> frozenset[str]:
        try:
            self._file = await anyio.to_thread.run_sync(_load, self.ledger_file, self._file)
        except (OSError, ValueError) as error:
            # Keep answering from what we knew: an unreadable ledger must not fail a query.
            message = f"{type(error).__name__}: {error}"
            if message != self._last_error:
                log.warning(
                    "ledger_unreadable", ledger=str(self.ledger_file), error=message, **envelope.log_context
                )
                self._last_error = message
        else:
            self._last_error = None
        from_file = self._file.real_paths if self._file is not None else frozenset()
        return from_file | self._recorded

    async def _record(self, path: str) -> None:
        if not path or "\x00" in path:
            raise ValueError(f"record_edit needs a file path; got {path!r}")
        self._recorded.add(await anyio.to_thread.run_sync(_resolve, self.project_dir, path))


class LedgerHandle:
    """What the Engine and embedding agents hold."""

    def __init__(self, handle: ActorHandle[LedgerRequest, LedgerReply]) -> None:
        self._handle = handle

    async def edited_files(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> frozenset[str]:
        """The files edited this session, as real paths (symlinks resolved)."""
        reply = await self._handle.ask(EditedFiles(), timeout=timeout)
        return reply if reply is not None else frozenset()

    async def record_edit(self, path: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Remember that `path` (absolute, or relative to the project folder) was edited."""
        await self._handle.ask(RecordEdit(path), timeout=timeout)

    async def clear(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Forget every edit, and truncate the ledger file as a new session does."""
        await self._handle.ask(ClearEdits(), timeout=timeout)
