"""sourcekit-lsp children: one `LspActor` per workspace root, supervised by an `LspPool`.

An actor owns one sourcekit-lsp process (in its own session), its JSON-RPC connection
and the documents opened in it. It serves queries concurrently from its inbox, speaking the
index's convention (1-based lines, 1-based UTF-8 byte columns) to callers and LSP's (UTF-16)
to the child, converting through each file's real text. It stops itself when idle, and
always stops its child on the way out: `shutdown`, `exit`, a bounded wait, SIGTERM to the
group, a bounded wait, SIGKILL, all shielded from cancellation.

The pool keeps at most `max_children` actors (least recently used evicted first), starts a
child on first use, and restarts a crashed one on next use after an exponential backoff
(1 s, 2 s, … up to 30 s; reset once a child has stayed up for `stable_after`). After a
burst of crashes it refuses with `sourcekit_lsp_not_running` until the longest backoff has
passed. Every public method raises only `CodedError`, with a documented warning code.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import math
import os
import shutil
import signal
import sys
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Protocol, TypeAlias, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import AnyByteReceiveStream, AnyByteSendStream, Process, TaskGroup

from xcindex._log import get_logger
from xcindex.actors.mailbox import ActorGone, ActorHandle, Envelope, Mailbox
from xcindex.lsp.client import (
    DEFAULT_INITIALIZATION_OPTIONS,
    LspClient,
    LspRange,
    initialize_params,
    language_id,
    path_to_uri,
    uri_to_path,
)
from xcindex.lsp.faults import LspStage, classify_fault
from xcindex.lsp.jsonrpc import ConnectionClosed, JsonRpcConnection, JsonValue, WorkDone
from xcindex.lsp.positions import LspLocation, SourceText, make_location
from xcindex.toolchain import find_sourcekit_lsp
from xcindex.warnings import CodedError, WarningCode

log = get_logger(__name__)

Clock: TypeAlias = Callable[[], float]
T = TypeVar("T")

KILL_WAIT = 5.0
"""How long to wait for a SIGKILLed process to be reaped before giving up on it."""
ASK_GRACE = 5.0
"""Extra time a caller allows the actor beyond the request's own deadline."""
TEXT_CACHE_SIZE = 256
"""Files whose text is kept to convert answer columns, per child."""

_CRASH_CODES = frozenset(
    {
        WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED,
        WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED,
        WarningCode.SOURCEKIT_LSP_PROTOCOL_ERROR,
        WarningCode.SOURCEKIT_LSP_ERROR,
    }
)


# -- configuration, messages, status -------------------------------------------------------


@dataclass(frozen=True)
class LspPoolConfig:
    """How the pool runs sourcekit-lsp. Durations are in seconds.

    Args:
        binary: the sourcekit-lsp to run; None discovers it (SOURCEKIT_LSP_PATH, the
            toolchain, PATH).
        arguments: extra command-line arguments (for example `--scratch-path`).
        initialize_timeout: launch + `initialize` deadline (→ sourcekit_lsp_launch_failed).
        request_timeout: deadline of a references/definition/symbolInfo query, including
            opening the file (→ sourcekit_lsp_timeout; the child is kept).
        ready_timeout: deadline of `wait_ready` (background indexing can take minutes).
        max_children: live children at most; the least recently used is stopped first.
        idle_timeout: a child unused this long is shut down (restarted on next use).
        backoff_initial, backoff_max: restart delays after crashes, doubling in between.
        stable_after: a child that stayed up this long resets the backoff when it crashes.
        crash_burst, crash_window: this many crashes within the window → give up for
            `backoff_max` (sourcekit_lsp_not_running).
        shutdown_timeout, exit_timeout, terminate_timeout: the stop sequence's waits (for
            the `shutdown` answer, for the exit after `exit`, for the exit after SIGTERM).
        log_capacity: log lines kept per child (its log messages, stderr, lifecycle).
        scratch_root: where a SwiftPM workspace's sourcekit-lsp builds and indexes
            (`swiftPM.scratchPath`, one folder per root); None leaves sourcekit-lsp's default,
            `.build/index-build` inside the project. xcindex sets it so that asking a
            question never writes into the user's tree.
    """

    binary: Path | None = None
    arguments: tuple[str, ...] = ()
    initialize_timeout: float = 10.0
    request_timeout: float = 10.0
    ready_timeout: float = 300.0
    max_children: int = 4
    idle_timeout: float = 900.0
    backoff_initial: float = 1.0
    backoff_max: float = 30.0
    stable_after: float = 60.0
    crash_burst: int = 5
    crash_window: float = 60.0
    shutdown_timeout: float = 0.5
    exit_timeout: float = 2.0
    terminate_timeout: float = 0.5
    log_capacity: int = 500
    scratch_root: Path | None = None


def initialization_options(root: Path, config: LspPoolConfig) -> dict[str, JsonValue]:
    """The defaults, plus a scratch path outside the project for a SwiftPM root."""
    options: dict[str, JsonValue] = dict(DEFAULT_INITIALIZATION_OPTIONS)
    if config.scratch_root is not None and (root / "Package.swift").is_file():
        digest = hashlib.sha1(str(root).encode()).hexdigest()[:16]
        scratch = config.scratch_root / f"{root.name[:40]}-{digest}"
        options["swiftPM"] = {"scratchPath": str(scratch)}
    return options


@dataclass(frozen=True)
class ReferencesQuery:
    path: Path
    line: int
    utf8_column: int
    include_declaration: bool = True


@dataclass(frozen=True)
class DefinitionQuery:
    path: Path
    line: int
    utf8_column: int


@dataclass(frozen=True)
class SymbolInfoQuery:
    path: Path
    line: int
    utf8_column: int


@dataclass(frozen=True)
class ReadyQuery:
    """Wait until the child has finished (background) indexing."""


LspQuery: TypeAlias = ReferencesQuery | DefinitionQuery | SymbolInfoQuery | ReadyQuery
LspAnswer: TypeAlias = tuple[LspLocation, ...] | tuple[str, ...] | None


class ChildState(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    """Shut down (idle, evicted, or the pool closed); starts again on next use."""
    CRASHED = "crashed"
    """Died or failed to start; starts again on next use, after the backoff."""
    GAVE_UP = "gave_up"
    """Crashed too often; refuses until the backoff period ends."""


@dataclass(frozen=True)
class LspChildStatus:
    root: Path
    pid: int | None
    state: ChildState
    restarts: int
    """Launch attempts after the first one."""
    crashes: int
    last_error: WarningCode | None
    last_error_message: str | None
    ready: bool
    """`wait_ready` has succeeded since this child started."""
    indexing: tuple[WorkDone, ...]
    """Work-done progress the child reported (`$/progress`) and has not ended."""
    retry_after: float | None
    """Seconds until the next start is allowed, while backing off or after giving up."""


# -- the child process ---------------------------------------------------------------------


class LspChild(Protocol):
    """What an actor needs from a running sourcekit-lsp (a real process, or a test double)."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> AnyByteSendStream: ...

    @property
    def stdout(self) -> AnyByteReceiveStream: ...

    @property
    def stderr(self) -> AnyByteReceiveStream | None: ...

    async def wait(self) -> int: ...

    def signal_all(self, signum: int) -> None:
        """Send `signum` to the child and to every helper it started (builds, compilers)."""

    async def aclose(self) -> None:
        """Release the pipes (the process is gone or abandoned)."""


Launcher: TypeAlias = Callable[[Sequence[str], Path], Awaitable[LspChild]]


class _ProcessChild:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._process = process
        self._stdin: AnyByteSendStream = process.stdin
        self._stdout: AnyByteReceiveStream = process.stdout

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdin(self) -> AnyByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> AnyByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> AnyByteReceiveStream | None:
        return self._process.stderr

    async def wait(self) -> int:
        return await self._process.wait()

    def signal_all(self, signum: int) -> None:
        # The child leads a new session: its process group and its session id are its pid.
        # sourcekit-lsp puts some helpers (swiftc) in process groups of their own, but they
        # stay in its session, as they do once it has exited and they are orphans.
        pid = self._process.pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signum)
        for member in _session_members(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member, signum)

    async def aclose(self) -> None:
        if self._process.returncode is not None:
            # anyio's own aclose also releases asyncio's pipe transports; it waits for the
            # process, which has exited.
            await self._process.aclose()
            return
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(anyio.BrokenResourceError, OSError):
                    await stream.aclose()


def _session_members(session: int) -> list[int]:
    """The processes in `session`, from Linux's /proc (none where there is no /proc).

    Linux never reuses a pid while it still names a live session, so the members found are
    the ones our child started, even after the child itself has been reaped.
    """
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # pid (comm) state ppid pgrp session …; comm may contain spaces and parentheses.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == session:
            members.append(int(entry))
    return members


_DIE_WITH_PARENT = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)  # the parent died before the line above\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)
"""Run before exec'ing sourcekit-lsp on Linux: if the server is SIGKILLed (no chance to stop
its children), the kernel kills sourcekit-lsp too, instead of trusting it to notice that its
stdin closed (under load it sometimes did not within 20 s)."""


def _check_executable(program: str) -> None:
    """Refuse what exec would refuse, here in the parent, where it is a launch failure (the
    exec itself now happens in the child, after the wrapper above)."""
    path = shutil.which(program) or program
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if not os.access(path, os.X_OK) or not (magic == b"\x7fELF" or magic.startswith(b"#!")):
        raise OSError(errno.ENOEXEC, "Exec format error", path)


async def launch_process(command: Sequence[str], cwd: Path) -> LspChild:
    """Start `command` in `cwd`, in a new session (so its helpers can be found), with piped
    stdio; on Linux it dies with this process (the exec keeps its pid and name)."""
    argv = list(command)
    if sys.platform == "linux":
        await anyio.to_thread.run_sync(_check_executable, argv[0])
        argv = [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]
    process = await anyio.open_process(argv, cwd=cwd, start_new_session=True)
    return _ProcessChild(process)


# -- the actor -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _OpenDocument:
    uri: str
    version: int
    stamp: tuple[int, int]
    text: SourceText


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def _load_if_changed(path: Path, known: tuple[int, int] | None) -> tuple[tuple[int, int], str | None]:
    """The file's (mtime, size) stamp, and its text unless the stamp is `known`."""
    stamp = _stamp(path)
    if stamp == known:
        return stamp, None
    return stamp, path.read_bytes().decode("utf-8")


def _describe(query: LspQuery) -> str:
    match query:
        case ReadyQuery():
            return "workspace/synchronize"
        case ReferencesQuery(path=path, line=line, utf8_column=column):
            return f"references at {path}:{line}:{column}"
        case DefinitionQuery(path=path, line=line, utf8_column=column):
            return f"definition at {path}:{line}:{column}"
        case SymbolInfoQuery(path=path, line=line, utf8_column=column):
            return f"symbolInfo at {path}:{line}:{column}"


class LspActor:
    """Owns one sourcekit-lsp child for one workspace root. Restart means a new instance."""

    def __init__(
        self,
        root: Path,
        command: Sequence[str],
        config: LspPoolConfig,
        *,
        launcher: Launcher = launch_process,
        clock: Clock = anyio.current_time,
    ) -> None:
        self.root = root
        self._command = tuple(command)
        self._config = config
        self._launcher = launcher
        self._clock = clock
        self._mailbox: Mailbox[LspQuery, LspAnswer] = Mailbox(64)
        self.pid: int | None = None
        self.started = False
        """The handshake completed (task_status.started() was called)."""
        self._accepting = False
        self.retired_idle = False
        self.ready = False
        self.failure: CodedError | None = None
        """Why a started child stopped on its own (crash, broken protocol); None otherwise."""
        self.exit_status: int | None = None
        self._stopping = False
        self._connection: JsonRpcConnection | None = None
        self._client: LspClient | None = None
        self._documents: dict[Path, _OpenDocument] = {}
        self._document_locks: dict[Path, anyio.Lock] = {}
        self._texts: OrderedDict[Path, tuple[tuple[int, int], SourceText]] = OrderedDict()
        self._journal: deque[tuple[float, str]] = deque(maxlen=config.log_capacity)
        self._in_flight = 0
        self._last_activity = clock()

    def handle(self) -> ActorHandle[LspQuery, LspAnswer]:
        return self._mailbox.handle()

    @property
    def accepting(self) -> bool:
        """New queries are welcome: started, not stopping, and the connection is alive."""
        connection = self._connection
        return self._accepting and connection is not None and not connection.closed

    def indexing(self) -> tuple[WorkDone, ...]:
        connection = self._connection
        return connection.work_in_progress() if connection is not None and not connection.closed else ()

    def recent_log(self, n: int) -> list[str]:
        """The child's last `n` log lines: its log messages, its stderr and lifecycle events."""
        lines = list(self._journal)
        if self._connection is not None:
            lines.extend(
                (entry.at, f"[{entry.method} {entry.type}] {entry.message}")
                for entry in self._connection.log_messages
            )
        lines.sort(key=lambda item: item[0])
        return [text for _, text in lines[-n:]] if n > 0 else []

    def _note(self, text: str) -> None:
        self._journal.append((self._clock(), text))

    # -- life cycle ------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Launch, handshake, serve until idle, child death or cancellation; stop the child.

        Raises:
            CodedError: the child could not be launched or did not complete the handshake
                (raised before `task_status.started()`; the child is already stopped).
        """
        context = f"sourcekit-lsp for {self.root}"
        try:
            try:
                child = await self._launcher(self._command, self.root)
            except Exception as exc:
                raise classify_fault(
                    exc, LspStage.LAUNCH, context=f"{context}: could not launch {self._command[0]}"
                ) from exc
            self.pid = child.pid
            self._note(f"started pid {child.pid}: {' '.join(self._command)}")
            log.info("lsp_child_started", root=str(self.root), pid=child.pid)
            connection = JsonRpcConnection(
                child.stdout,
                child.stdin,
                name=f"sourcekit-lsp[{child.pid}]",
                log_capacity=self._config.log_capacity,
            )
            client = LspClient(connection)
            self._connection, self._client = connection, client
            handshake_failure: CodedError | None = None
            try:
                async with anyio.create_task_group() as tg:
                    # The reader and the stderr drain outlive a cancellation of this actor:
                    # the stop sequence below still needs the answer to `shutdown`.
                    reader = anyio.CancelScope(shield=True)
                    drain = anyio.CancelScope(shield=True)
                    tg.start_soon(self._within, reader, connection.run)
                    if child.stderr is not None:
                        tg.start_soon(self._within, drain, partial(self._drain_stderr, child.stderr))
                    try:
                        try:
                            await self._handshake(client, context)
                        except CodedError as err:
                            handshake_failure = err
                        else:
                            self.started = self._accepting = True
                            task_status.started()
                            await self._serve(tg, child, connection)
                    finally:
                        self._accepting = False
                        with anyio.CancelScope(shield=True):
                            await self._stop_child(child, client, connection)
                            reader.cancel()
                            drain.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    await child.aclose()
            if handshake_failure is not None:
                status = "" if self.exit_status is None else f" (exit status {self.exit_status})"
                raise CodedError(
                    handshake_failure.code, f"{handshake_failure.message}{status}"
                ) from handshake_failure
        finally:
            self._accepting = False
            # Queries still queued are answered ActorGone (→ sourcekit_lsp_not_running).
            with anyio.CancelScope(shield=True):
                await self._mailbox.aclose()
            if self.started:
                log.info(
                    "lsp_child_stopped",
                    root=str(self.root),
                    pid=self.pid,
                    exit_status=self.exit_status,
                    code=None if self.failure is None else self.failure.code,
                )

    @staticmethod
    async def _within(scope: anyio.CancelScope, target: Callable[[], Awaitable[None]]) -> None:
        with scope:
            await target()

    async def _drain_stderr(self, stream: AnyByteReceiveStream) -> None:
        pending = b""
        try:
            async for chunk in stream:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._note(f"[stderr] {line.decode('utf-8', errors='replace').rstrip()}")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        if pending:
            self._note(f"[stderr] {pending.decode('utf-8', errors='replace').rstrip()}")

    async def _handshake(self, client: LspClient, context: str) -> None:
        try:
            with anyio.fail_after(self._config.initialize_timeout):
                params = initialize_params(
                    self.root, initialization_options=initialization_options(self.root, self._config)
                )
                await client.initialize(params, timeout=math.inf)
                await client.initialized()
        except Exception as exc:
            if isinstance(exc, TimeoutError):
                detail = f"no answer to initialize within {self._config.initialize_timeout:g} s"
                raise CodedError(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, f"{context}: {detail}") from exc
            raise classify_fault(exc, LspStage.HANDSHAKE, context=f"{context}: initialize") from exc

    async def _serve(self, tg: TaskGroup, child: LspChild, connection: JsonRpcConnection) -> None:
        with anyio.CancelScope() as accepting:
            tg.start_soon(self._watch_child, child, connection, accepting)
            while True:
                envelope = await self._next_envelope()
                if envelope is None:
                    self._accepting = False
                    self.retired_idle = True
                    self._note(f"idle for {self._config.idle_timeout:g} s: stopping")
                    log.info("lsp_child_idle", root=str(self.root), pid=self.pid)
                    return
                tg.start_soon(self._serve_one, envelope)

    async def _next_envelope(self) -> Envelope[LspQuery, LspAnswer] | None:
        """The next query, or None once the child has been idle for `idle_timeout`."""
        idle = self._config.idle_timeout
        while True:
            if self._in_flight:
                wait = idle
            else:
                wait = self._last_activity + idle - self._clock()
                if wait <= 0:
                    return None
            with anyio.move_on_after(wait):
                try:
                    return await self._mailbox.inbox.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return None

    async def _watch_child(
        self, child: LspChild, connection: JsonRpcConnection, accepting: anyio.CancelScope
    ) -> None:
        """Stop accepting as soon as the child exits or its connection breaks."""
        reason: Exception | None = None
        async with anyio.create_task_group() as tg:

            async def on_close() -> None:
                nonlocal reason
                reason = reason or await connection.wait_closed()
                tg.cancel_scope.cancel()

            async def on_exit() -> None:
                nonlocal reason
                status = await child.wait()
                self.exit_status = status
                reason = reason or ConnectionClosed(
                    f"the process exited with status {status}", peer_gone=True
                )
                tg.cancel_scope.cancel()

            tg.start_soon(on_close)
            tg.start_soon(on_exit)
        if self._stopping or reason is None:
            return
        self._accepting = False
        self.failure = classify_fault(reason, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}")
        self._note(f"failed: {self.failure.code}: {self.failure.message}")
        log.warning(
            "lsp_child_failed",
            root=str(self.root),
            pid=self.pid,
            code=self.failure.code,
            error=self.failure.message,
        )
        # Requests still waiting get the same reason, even if the output pipe is still open.
        await connection.aclose(reason)
        accepting.cancel()

    async def _stop_child(self, child: LspChild, client: LspClient, connection: JsonRpcConnection) -> None:
        """shutdown (bounded), exit, wait, SIGTERM to it and its helpers, wait, SIGKILL. Call shielded."""
        self._stopping = True
        if self.started and self.failure is None and connection.close_reason is not None:
            # Only this method closes the connection on purpose: it broke before we got here.
            self.failure = classify_fault(
                connection.close_reason, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}"
            )
        config = self._config
        if self.started and not connection.closed:
            with anyio.move_on_after(config.shutdown_timeout):
                try:
                    await client.shutdown()
                except Exception as exc:
                    self._note(f"shutdown request failed: {exc!r}")
            with anyio.move_on_after(config.shutdown_timeout):
                try:
                    await client.exit()
                except Exception as exc:
                    self._note(f"exit notification failed: {exc!r}")
        await connection.aclose()
        status = await self._wait_exit(child, config.exit_timeout)
        if status is None:
            self._note(f"no exit within {config.exit_timeout:g} s: SIGTERM to it and its helpers")
            child.signal_all(signal.SIGTERM)
            status = await self._wait_exit(child, config.terminate_timeout)
        if status is None:
            self._note(f"no exit within {config.terminate_timeout:g} s: SIGKILL to it and its helpers")
            child.signal_all(signal.SIGKILL)
            status = await self._wait_exit(child, KILL_WAIT)
        # Helpers it started (builds, compilers) may outlive it: none may.
        child.signal_all(signal.SIGKILL)
        self.exit_status = status
        if status is None:
            log.error("lsp_child_unkillable", root=str(self.root), pid=self.pid)

    @staticmethod
    async def _wait_exit(child: LspChild, timeout: float) -> int | None:
        with anyio.move_on_after(timeout):
            return await child.wait()
        return None

    # -- queries ---------------------------------------------------------------------------

    async def _serve_one(self, envelope: Envelope[LspQuery, LspAnswer]) -> None:
        query = envelope.request
        self._in_flight += 1
        try:
            answer = await self._answer(query)
        except Exception as exc:
            error = classify_fault(
                exc, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}: {_describe(query)}"
            )
            if error.code is WarningCode.SOURCEKIT_LSP_TIMEOUT:
                self._note(f"timed out: {_describe(query)}")
            log.info(
                "lsp_query_failed",
                **{
                    **envelope.log_context,
                    "root": str(self.root),
                    "query": _describe(query),
                    "code": error.code,
                },
            )
            await envelope.fail(error)
        else:
            await envelope.reply(answer)
        finally:
            envelope.close()
            self._in_flight -= 1
            self._last_activity = self._clock()

    async def _answer(self, query: LspQuery) -> LspAnswer:
        client = self._client
        assert client is not None
        if isinstance(query, ReadyQuery):
            try:
                with anyio.fail_after(self._config.ready_timeout):
                    await client.synchronize()
            except TimeoutError:
                raise TimeoutError(
                    f"indexing did not finish within {self._config.ready_timeout:g} s"
                ) from None
            self.ready = True
            return None
        try:
            with anyio.fail_after(self._config.request_timeout):
                document = await self._document(query.path)
                position = document.text.lsp_position(query.line, query.utf8_column)
                if isinstance(query, SymbolInfoQuery):
                    details = await client.symbol_info(document.uri, position)
                    return tuple(detail.usr for detail in details if detail.usr)
                if isinstance(query, ReferencesQuery):
                    ranges = await client.references(
                        document.uri, position, include_declaration=query.include_declaration
                    )
                else:
                    ranges = await client.definition(document.uri, position)
                name = document.text.identifier_at(query.line, query.utf8_column)
                return await self._locations(ranges, name)
        except TimeoutError:
            raise TimeoutError(f"no answer within {self._config.request_timeout:g} s") from None

    async def _document(self, path: Path) -> _OpenDocument:
        """The file opened in the child with its current on-disk text (didOpen, or didChange
        when its mtime or size changed since)."""
        real = Path(await anyio.to_thread.run_sync(os.path.realpath, path))
        lock = self._document_locks.setdefault(real, anyio.Lock())
        async with lock:
            known = self._documents.get(real)
            try:
                stamp, text = await anyio.to_thread.run_sync(
                    _load_if_changed, real, None if known is None else known.stamp
                )
            except (OSError, UnicodeDecodeError) as exc:
                raise classify_fault(
                    exc, LspStage.FILE_READ, context=f"could not read {path} to open it in sourcekit-lsp"
                ) from exc
            if known is not None and text is None:
                return known
            assert text is not None
            client = self._client
            assert client is not None
            if known is None:
                document = _OpenDocument(path_to_uri(real), 1, stamp, SourceText.from_text(text))
                await client.did_open(document.uri, text, version=1, language=language_id(real))
            else:
                document = _OpenDocument(known.uri, known.version + 1, stamp, SourceText.from_text(text))
                await client.did_change(document.uri, text, version=document.version)
            self._documents[real] = document
            self._remember_text(real, stamp, document.text)
            return document

    def _remember_text(self, path: Path, stamp: tuple[int, int], text: SourceText) -> None:
        self._texts[path] = (stamp, text)
        self._texts.move_to_end(path)
        while len(self._texts) > TEXT_CACHE_SIZE:
            self._texts.popitem(last=False)

    async def _text_of(self, path: Path) -> SourceText | None:
        """The current text of a file named in an answer, None when it cannot be read."""
        cached = self._texts.get(path)
        try:
            stamp, text = await anyio.to_thread.run_sync(
                _load_if_changed, path, None if cached is None else cached[0]
            )
        except (OSError, UnicodeDecodeError) as exc:
            self._note(f"cannot read {path} to convert columns: {exc}")
            return None
        if text is None:
            assert cached is not None
            self._texts.move_to_end(path)
            return cached[1]
        source = SourceText.from_text(text)
        self._remember_text(path, stamp, source)
        return source

    async def _locations(self, ranges: Sequence[LspRange], name: str) -> tuple[LspLocation, ...]:
        """Answers with both column conventions, from each named file's current text.

        `name` is the identifier asked about: it tells sourcekit-lsp's UTF-8 `character`
        (its index answers) from a UTF-16 one where they differ (see xcindex.lsp.positions).
        """
        texts: dict[Path, SourceText | None] = {}
        locations: list[LspLocation] = []
        for item in ranges:
            path = uri_to_path(item.uri)
            if path is None:
                self._note(f"dropped a location outside the file system: {item.uri}")
                continue
            if path not in texts:
                texts[path] = await self._text_of(path)
            locations.append(
                make_location(
                    path,
                    (item.start_line, item.start_character),
                    (item.end_line, item.end_character),
                    texts[path],
                    name=name,
                )
            )
        return tuple(locations)


# -- the pool ------------------------------------------------------------------------------


@dataclass(eq=False)
class _Slot:
    """The pool's book-keeping for one workspace root, across its children's lifetimes."""

    root: Path
    backoff: float
    crash_times: deque[float]
    state: ChildState = ChildState.STOPPED
    actor: LspActor | None = None
    handle: ActorHandle[LspQuery, LspAnswer] | None = None
    scope: anyio.CancelScope | None = None
    starting: anyio.Event | None = None
    stopped: anyio.Event | None = None
    start_error: CodedError | None = None
    last_error: CodedError | None = None
    attempts: int = 0
    crashes: int = 0
    started_at: float | None = None
    next_start_at: float = -math.inf
    gave_up_until: float | None = None
    gave_up_after: int = 0
    last_used: float = 0.0
    in_flight: int = 0


class _StartSignal:
    """The task status handed to an actor's run: records the start in its slot."""

    def __init__(self, pool: LspPool, slot: _Slot, actor: LspActor) -> None:
        self._pool = pool
        self._slot = slot
        self._actor = actor

    def started(self, value: object = None) -> None:
        self._pool._on_started(self._slot, self._actor)


class LspPool:
    """Supervised sourcekit-lsp children, one per workspace root (real path).

    Run it in a task group (`await tg.start(pool.run)`); cancelling that task group, or
    `aclose()`, shuts every child down. The query methods take 1-based lines and 1-based UTF-8
    byte columns and raise only `CodedError`.

    Args:
        config: see LspPoolConfig.
        launcher: starts a child process (tests substitute in-memory children).
        clock: the time source for backoff book-keeping; must advance with anyio's clock.
    """

    def __init__(
        self,
        config: LspPoolConfig | None = None,
        *,
        launcher: Launcher = launch_process,
        clock: Clock = anyio.current_time,
    ) -> None:
        self._config = config or LspPoolConfig()
        self._launcher = launcher
        self._clock = clock
        self._slots: OrderedDict[Path, _Slot] = OrderedDict()
        self._task_group: TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._finished: anyio.Event | None = None

    @property
    def config(self) -> LspPoolConfig:
        return self._config

    # -- life cycle ------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own every child until `aclose()` or cancellation; then stop them all (shielded)."""
        if self._closing is not None:
            raise RuntimeError("an LspPool runs only once")
        self._closing = anyio.Event()
        self._finished = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                task_status.started()
                await self._closing.wait()
                tg.cancel_scope.cancel()
        finally:
            self._task_group = None
            self._closing.set()
            self._finished.set()
            log.info("lsp_pool_stopped", roots=len(self._slots))

    async def aclose(self) -> None:
        """Shut every child down and wait until they are gone."""
        if self._closing is None or self._finished is None:
            return
        self._closing.set()
        with anyio.CancelScope(shield=True):
            await self._finished.wait()

    # -- queries ---------------------------------------------------------------------------

    async def references(
        self, root: Path, path: Path, line: int, utf8_column: int, *, include_declaration: bool = True
    ) -> list[LspLocation]:
        """`textDocument/references` at a 1-based line and UTF-8 byte column."""
        answer = await self._ask(root, ReferencesQuery(path, line, utf8_column, include_declaration))
        return [item for item in answer or () if isinstance(item, LspLocation)]

    async def definition(self, root: Path, path: Path, line: int, utf8_column: int) -> list[LspLocation]:
        """`textDocument/definition` at a 1-based line and UTF-8 byte column."""
        answer = await self._ask(root, DefinitionQuery(path, line, utf8_column))
        return [item for item in answer or () if isinstance(item, LspLocation)]

    async def symbol_info(self, root: Path, path: Path, line: int, utf8_column: int) -> list[str]:
        """The USRs of the symbol at a 1-based line and UTF-8 byte column (`textDocument/symbolInfo`)."""
        answer = await self._ask(root, SymbolInfoQuery(path, line, utf8_column))
        return [item for item in answer or () if isinstance(item, str)]

    async def wait_ready(self, root: Path) -> None:
        """Wait until sourcekit-lsp has finished indexing the workspace (`workspace/synchronize`)."""
        await self._ask(root, ReadyQuery())

    def status(self) -> list[LspChildStatus]:
        now = self._clock()
        return [self._status_of(slot, now) for slot in self._slots.values()]

    def recent_log(self, root: Path, n: int = 50) -> list[str]:
        slot = self._slots.get(_normalise(root))
        if slot is None or slot.actor is None:
            return []
        return slot.actor.recent_log(n)

    def _status_of(self, slot: _Slot, now: float) -> LspChildStatus:
        actor = slot.actor
        state = slot.state
        if state is ChildState.RUNNING and actor is not None and not actor.accepting:
            state = ChildState.STOPPING  # it died or went idle; the pool is still stopping it
        live = state in (ChildState.RUNNING, ChildState.STARTING, ChildState.STOPPING)
        if slot.gave_up_until is not None and slot.gave_up_until > now:
            retry_after: float | None = slot.gave_up_until - now
        elif slot.next_start_at > now:
            retry_after = slot.next_start_at - now
        else:
            retry_after = None
        return LspChildStatus(
            root=slot.root,
            pid=actor.pid if actor is not None and live else None,
            state=state,
            restarts=max(0, slot.attempts - 1),
            crashes=slot.crashes,
            last_error=None if slot.last_error is None else slot.last_error.code,
            last_error_message=None if slot.last_error is None else slot.last_error.message,
            ready=actor is not None and live and actor.ready,
            indexing=actor.indexing() if actor is not None and live else (),
            retry_after=retry_after,
        )

    # -- internals -------------------------------------------------------------------------

    async def _ask(self, root: Path, query: LspQuery) -> LspAnswer:
        budget = self._config.ready_timeout if isinstance(query, ReadyQuery) else self._config.request_timeout
        context = f"sourcekit-lsp for {root}: {_describe(query)}"
        for attempt in range(2):
            slot, actor, handle = await self._live(_normalise(root))
            slot.in_flight += 1
            slot.last_used = self._clock()
            try:
                return await handle.ask(
                    query, timeout=budget + ASK_GRACE, log_context={"root": str(slot.root)}
                )
            except CodedError:
                raise
            except ActorGone as exc:
                # The child retired for idleness just as this query arrived: start a new one.
                if attempt == 0 and actor.retired_idle:
                    continue
                raise classify_fault(exc, LspStage.REQUEST, context=context) from exc
            except Exception as exc:
                raise classify_fault(exc, LspStage.REQUEST, context=context) from exc
            finally:
                slot.in_flight -= 1
                slot.last_used = self._clock()
        raise AssertionError("unreachable")

    def _check_open(self) -> TaskGroup:
        if self._task_group is None or self._closing is None or self._closing.is_set():
            raise CodedError(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, "the sourcekit-lsp pool is not running")
        return self._task_group

    def _slot_for(self, root: Path) -> _Slot:
        slot = self._slots.get(root)
        if slot is None:
            slot = _Slot(root, self._config.backoff_initial, deque(maxlen=max(1, self._config.crash_burst)))
            self._slots[root] = slot
            self._forget_old_slots(keep=slot)
        self._slots.move_to_end(root)
        return slot

    def _forget_old_slots(self, keep: _Slot) -> None:
        limit = max(16, 4 * self._config.max_children)
        for root in list(self._slots):
            if len(self._slots) <= limit:
                break
            slot = self._slots[root]
            # Never the slot being asked for: when every older one is busy, it is the only
            # idle one left, and forgetting it would lose the caller's root.
            if slot is not keep and (
                slot.state in (ChildState.STOPPED, ChildState.CRASHED)
                and slot.starting is None
                and slot.in_flight == 0
            ):
                del self._slots[root]

    async def _live(self, root: Path) -> tuple[_Slot, LspActor, ActorHandle[LspQuery, LspAnswer]]:
        """A running child for `root`: the current one, or a new one (after any backoff)."""
        while True:
            self._check_open()
            slot = self._slot_for(root)
            actor, handle = slot.actor, slot.handle
            if actor is not None and handle is not None and actor.accepting:
                return slot, actor, handle
            if slot.starting is not None:
                await slot.starting.wait()
                if slot.handle is None and slot.start_error is not None:
                    raise CodedError(slot.start_error.code, slot.start_error.message)
                continue
            if slot.stopped is not None and not slot.stopped.is_set():
                await slot.stopped.wait()
                continue
            await self._start(slot)

    async def _start(self, slot: _Slot) -> None:
        """Start a child for `slot` in the pool's task group; waiters use `slot.starting`."""
        now = self._clock()
        if slot.gave_up_until is not None:
            if now < slot.gave_up_until:
                error = slot.last_error
                raise CodedError(
                    WarningCode.SOURCEKIT_LSP_NOT_RUNNING,
                    f"sourcekit-lsp for {slot.root} gave up after {slot.gave_up_after} crashes, retrying after "
                    f"{math.ceil(slot.gave_up_until - now)} s"
                    + ("" if error is None else f" (last error {error.code}: {error.message})"),
                )
            slot.gave_up_until = None
        starting = slot.starting = anyio.Event()
        slot.start_error = None
        try:
            delay = slot.next_start_at - now
            if delay > 0:
                await anyio.sleep(delay)
            await self._make_room(slot)
            command = [str(find_sourcekit_lsp(self._config.binary)), *self._config.arguments]
            tg = self._check_open()
            actor = LspActor(slot.root, command, self._config, launcher=self._launcher, clock=self._clock)
            slot.attempts += 1
            slot.actor = actor
            slot.state = ChildState.STARTING
            slot.started_at = None
            slot.stopped = anyio.Event()
            tg.start_soon(self._supervise, slot, actor, name=f"sourcekit-lsp {slot.root}")
        except BaseException as exc:
            # Discovery failed, the pool closed, or this caller was cancelled while backing off.
            if isinstance(exc, CodedError):
                slot.start_error = slot.last_error = exc
            starting.set()
            slot.starting = None
            raise

    async def _make_room(self, slot: _Slot) -> None:
        """Stop least recently used children until a new one fits in `max_children`."""
        while True:
            live = [
                other
                for other in self._slots.values()
                if other is not slot
                and other.state in (ChildState.RUNNING, ChildState.STARTING, ChildState.STOPPING)
            ]
            if len(live) < self._config.max_children:
                return
            stopping = [
                other.stopped for other in live if other.state is ChildState.STOPPING and other.stopped
            ]
            if stopping:
                await stopping[0].wait()
                continue
            running = [other for other in live if other.state is ChildState.RUNNING]
            if not running:
                raise CodedError(
                    WarningCode.SOURCEKIT_LSP_NOT_RUNNING,
                    f"all {self._config.max_children} sourcekit-lsp children are starting; try again",
                )
            victim = min(running, key=lambda other: (other.in_flight > 0, other.last_used))
            log.info("lsp_child_evicted", root=str(victim.root), for_root=str(slot.root))
            await self._stop_slot(victim)

    async def _stop_slot(self, slot: _Slot) -> None:
        scope, stopped = slot.scope, slot.stopped
        slot.handle = None
        slot.state = ChildState.STOPPING
        if scope is not None:
            scope.cancel()
        if stopped is not None:
            await stopped.wait()

    async def _supervise(self, slot: _Slot, actor: LspActor) -> None:
        start_failure: CodedError | None = None
        try:
            with anyio.CancelScope() as scope:
                slot.scope = scope
                try:
                    await actor.run(task_status=_StartSignal(self, slot, actor))
                except CodedError as err:
                    start_failure = err
                except Exception as exc:
                    start_failure = classify_fault(
                        exc, LspStage.REQUEST, context=f"sourcekit-lsp for {slot.root}"
                    )
                    log.exception("lsp_actor_failed", root=str(slot.root))
        finally:
            self._on_stopped(slot, actor, start_failure)

    def _on_started(self, slot: _Slot, actor: LspActor) -> None:
        slot.handle = actor.handle()
        slot.state = ChildState.RUNNING
        slot.started_at = self._clock()
        slot.last_used = slot.started_at
        if slot.starting is not None:
            slot.starting.set()
            slot.starting = None

    def _on_stopped(self, slot: _Slot, actor: LspActor, error: CodedError | None) -> None:
        slot.handle = None
        slot.scope = None
        if not actor.started and error is None:
            error = CodedError(
                WarningCode.SOURCEKIT_LSP_NOT_RUNNING, f"sourcekit-lsp for {slot.root} stopped while starting"
            )
        failure = error or actor.failure
        if failure is None:
            slot.state = ChildState.STOPPED
        else:
            slot.last_error = failure
            if failure.code in _CRASH_CODES:
                self._record_crash(slot)
            else:
                slot.state = ChildState.STOPPED
        if not actor.started:
            slot.start_error = failure
        if slot.starting is not None:
            slot.starting.set()
            slot.starting = None
        if slot.stopped is not None:
            slot.stopped.set()

    def _record_crash(self, slot: _Slot) -> None:
        config = self._config
        now = self._clock()
        if slot.started_at is not None and now - slot.started_at >= config.stable_after:
            slot.backoff = config.backoff_initial
        slot.crashes += 1
        slot.crash_times.append(now)
        slot.next_start_at = now + slot.backoff
        slot.backoff = min(slot.backoff * 2, config.backoff_max)
        recent = sum(1 for at in slot.crash_times if now - at <= config.crash_window)
        if recent >= config.crash_burst:
            slot.state = ChildState.GAVE_UP
            slot.gave_up_until = now + config.backoff_max
            slot.gave_up_after = recent
            log.error(
                "lsp_child_gave_up", root=str(slot.root), crashes=recent, retry_after=config.backoff_max
            )
        else:
            slot.state = ChildState.CRASHED
            log.warning(
                "lsp_child_crashed",
                root=str(slot.root),
                crashes=slot.crashes,
                restart_after=slot.next_start_at - now,
            )


def _normalise(root: Path) -> Path:
    return Path(os.path.realpath(root))
