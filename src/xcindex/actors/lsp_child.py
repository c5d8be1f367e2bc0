"""The LSP actor: owns one sourcekit-lsp process for one workspace root.

It owns the child (in its own session), its JSON-RPC connection and the documents opened
in it, and serves queries concurrently from its inbox, speaking the index's convention
(1-based lines, 1-based UTF-8 byte columns) to callers and LSP's (UTF-16) to the child. It
stops itself when idle, and always stops its child on the way out: `shutdown`, `exit`, a
bounded wait, SIGTERM to the group, a bounded wait, SIGKILL, all shielded from cancellation.

Its state is its own: one task, the one running `run`, changes it. The tasks that serve a
query, watch the child, drain its stderr or read its connection report back with messages
(`QueryDone`, `ChildGone`, `Noted`, `Changed`), which that task applies. What others may know
of it is the `ChildSnapshot` it publishes (`actor.published`) whenever any of it changes.
Restart means a new instance.
"""

from __future__ import annotations

import math
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeAlias, cast

import anyio
from anyio.abc import AnyByteReceiveStream, TaskGroup

from xcindex._log import get_logger
from xcindex.actors.mailbox import ActorHandle, Envelope, Mailbox, Outcome, Published
from xcindex.errors import CodedError
from xcindex.lsp.client import LspClient, initialize_params
from xcindex.lsp.config import LspPoolConfig, initialization_options
from xcindex.lsp.documents import OpenDocuments
from xcindex.lsp.faults import LspStage, classify_fault
from xcindex.lsp.jsonrpc import ConnectionClosed, JsonRpcConnection
from xcindex.lsp.process import Launcher, LspChild, launch_process
from xcindex.lsp.queries import LspAnswer, LspQuery, ReadyQuery, ReferencesQuery, SymbolInfoQuery
from xcindex.lsp.snapshot import ChildSnapshot, Fault
from xcindex.vocabulary import WarningCode

log = get_logger(__name__)

Clock: TypeAlias = Callable[[], float]

KILL_WAIT = 5.0
"""How long to wait for a SIGKILLed process to be reaped before giving up on it."""
REPORT_WAIT = 5.0
"""How long a task waits for room in the inbox to report to the owner."""


@dataclass(frozen=True)
class QueryDone:
    """A query's task has its outcome, for the owner to send; `ready` when it was a
    ReadyQuery that succeeded."""

    envelope: Envelope[LspQuery, LspAnswer]
    outcome: Outcome[LspAnswer]
    ready: bool = False

    def answer(self) -> None:
        if self.outcome.error is not None:
            self.envelope.fail_nowait(self.outcome.error)
        else:
            self.envelope.reply_nowait(self.outcome.value)
        self.envelope.close()


@dataclass(frozen=True)
class ChildGone:
    """The child exited (`status`) or its connection broke (`reason`)."""

    reason: Exception
    status: int | None


@dataclass(frozen=True)
class Noted:
    """A line for the actor's journal (stderr, opened documents)."""

    text: str


@dataclass(frozen=True)
class Changed:
    """The connection's log or work-done progress changed: publish again."""


Report: TypeAlias = QueryDone | ChildGone | Noted | Changed
"""What the actor's own tasks tell its owning task."""


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
        self._mailbox: Mailbox[LspQuery | Report, LspAnswer] = Mailbox(64)
        self._owner: int | None = None
        """The task running `run`: the only one that changes this actor's fields."""
        self.published: Published[ChildSnapshot] = Published(ChildSnapshot())
        """What this actor shows of itself; only the actor publishes."""
        self._pid: int | None = None
        self._started = False
        """The handshake completed (task_status.started() was called)."""
        self._accepting = False
        self._retired_idle = False
        self._ready = False
        self._failure: CodedError | None = None
        """Why a started child stopped on its own (crash, broken protocol); None otherwise."""
        self._exit_status: int | None = None
        self._connection: JsonRpcConnection | None = None
        self._client: LspClient | None = None
        self._documents: OpenDocuments | None = None
        self._journal: deque[tuple[float, str]] = deque(maxlen=config.log_capacity)
        self._in_flight = 0
        self._last_activity = clock()

    def handle(self) -> ActorHandle[LspQuery, LspAnswer]:
        # Callers send queries only; the reports on the same inbox come from the actor's tasks.
        return cast(ActorHandle[LspQuery, LspAnswer], self._mailbox.handle())

    def _owned(self) -> bool:
        return self._owner is not None and anyio.get_current_task().id == self._owner

    def _report(self, report: Report) -> None:
        """From one of the actor's tasks: tell the owner (a full inbox drops a log line)."""
        self._mailbox.handle().tell_nowait(report)

    async def _tell_owner(self, report: Report) -> bool:
        """A report that must not be lost: waits for room in the inbox, shielded, but only
        so long (once the owner has stopped serving, nobody makes room). False if not told."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(REPORT_WAIT):
            return await self._mailbox.handle().tell(report)
        return False

    def _changed(self) -> None:
        """The connection's callback (its reader task): publish, from the owner."""
        if self._owned():
            self._publish()
        else:
            self._report(Changed())

    def _publish(self) -> None:
        """Publish a snapshot of this actor's state; called after every change of it."""
        connection = self._connection
        alive = connection is not None and not connection.closed
        lines = list(self._journal)
        if connection is not None:
            lines.extend(
                (entry.at, f"[{entry.method} {entry.type}] {entry.message}")
                for entry in connection.log_messages
            )
            lines.sort(key=lambda item: item[0])
        self.published.publish(
            ChildSnapshot(
                pid=self._pid,
                started=self._started,
                accepting=self._accepting and alive,
                ready=self._ready,
                retired_idle=self._retired_idle,
                failure=None if self._failure is None else Fault.of(self._failure),
                exit_status=self._exit_status,
                indexing=connection.work_in_progress() if connection is not None and alive else (),
                log=tuple(lines),
            )
        )

    def _note(self, text: str) -> None:
        if not self._owned():
            self._report(Noted(text))
            return
        self._journal.append((self._clock(), text))
        self._publish()

    def _apply(self, report: Report) -> None:
        """A task's report, applied by the owner."""
        if isinstance(report, QueryDone):
            self._in_flight -= 1
            self._last_activity = self._clock()
            if report.ready:
                self._ready = True
            self._publish()
            report.answer()
            return
        elif isinstance(report, ChildGone):
            if report.status is not None:
                self._exit_status = report.status
        elif isinstance(report, Noted):
            self._journal.append((self._clock(), report.text))
        self._publish()

    def _apply_pending(self) -> None:
        """Take in the reports still in the inbox (the stop sequence's own tasks' last lines);
        queries left there are answered ActorGone when the inbox closes."""
        while True:
            try:
                envelope = self._mailbox.inbox.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return
            if isinstance(envelope.request, QueryDone | ChildGone | Noted | Changed):
                self._apply(envelope.request)
            envelope.close()

    # -- life cycle ------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Launch, handshake, serve until idle, child death or cancellation; stop the child.

        Raises:
            CodedError: the child could not be launched or did not complete the handshake
                (raised before `task_status.started()`; the child is already stopped).
        """
        context = f"sourcekit-lsp for {self.root}"
        self._owner = anyio.get_current_task().id
        try:
            try:
                child = await self._launcher(self._command, self.root)
            except Exception as exc:
                raise classify_fault(
                    exc, LspStage.LAUNCH, context=f"{context}: could not launch {self._command[0]}"
                ) from exc
            self._pid = child.pid
            self._note(f"started pid {child.pid}: {' '.join(self._command)}")
            log.info("lsp_child_started", root=str(self.root), pid=child.pid)
            connection = JsonRpcConnection(
                child.stdout,
                child.stdin,
                name=f"sourcekit-lsp[{child.pid}]",
                log_capacity=self._config.log_capacity,
                on_change=self._changed,
            )
            client = LspClient(connection)
            self._connection, self._client = connection, client
            self._documents = OpenDocuments(client, self._note)
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
                            self._started = self._accepting = True
                            self._publish()
                            task_status.started()
                            await self._serve(tg, child, connection)
                    finally:
                        self._accepting = False
                        self._publish()
                        with anyio.CancelScope(shield=True):
                            await self._stop_child(child, client, connection)
                            reader.cancel()
                            drain.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    await child.aclose()
            if handshake_failure is not None:
                status = "" if self._exit_status is None else f" (exit status {self._exit_status})"
                raise CodedError(
                    handshake_failure.code, f"{handshake_failure.message}{status}"
                ) from handshake_failure
        finally:
            self._accepting = False
            self._apply_pending()
            self._publish()
            # Queries still queued are answered ActorGone (→ sourcekit_lsp_not_running).
            with anyio.CancelScope(shield=True):
                await self._mailbox.aclose()
            if self._started:
                log.info(
                    "lsp_child_stopped",
                    root=str(self.root),
                    pid=self._pid,
                    exit_status=self._exit_status,
                    code=None if self._failure is None else self._failure.code,
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
                # On the loop, not in a thread: a few syscalls once per child (the view of the
                # build), and a thread's wait would let a test's mock clock jump the deadline.
                options = initialization_options(self.root, self._config)
                params = initialize_params(self.root, initialization_options=options)
                await client.initialize(params, timeout=math.inf)
                await client.initialized()
        except Exception as exc:
            if isinstance(exc, TimeoutError):
                detail = f"no answer to initialize within {self._config.initialize_timeout:g} s"
                raise CodedError(WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED, f"{context}: {detail}") from exc
            raise classify_fault(exc, LspStage.HANDSHAKE, context=f"{context}: initialize") from exc

    async def _serve(self, tg: TaskGroup, child: LspChild, connection: JsonRpcConnection) -> None:
        """Take queries (each answered by a task of its own) and the tasks' reports until the
        child is gone or has been idle for `idle_timeout`."""
        tg.start_soon(self._watch_child, child, connection)
        while True:
            envelope = await self._next_envelope()
            if envelope is None:
                self._accepting = False
                self._retired_idle = True
                self._note(f"idle for {self._config.idle_timeout:g} s: stopping")
                log.info("lsp_child_idle", root=str(self.root), pid=self._pid)
                return
            request = envelope.request
            if isinstance(request, QueryDone | ChildGone | Noted | Changed):
                envelope.close()
                self._apply(request)
                if isinstance(request, ChildGone):
                    await self._failed(connection, request.reason)
                    return
                continue
            self._in_flight += 1
            tg.start_soon(self._serve_one, cast(Envelope[LspQuery, LspAnswer], envelope))

    async def _next_envelope(self) -> Envelope[LspQuery | Report, LspAnswer] | None:
        """The next message, or None once the child has been idle for `idle_timeout`."""
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

    async def _watch_child(self, child: LspChild, connection: JsonRpcConnection) -> None:
        """Report, once, that the child exited or its connection broke."""
        reason: Exception | None = None
        status: int | None = None
        async with anyio.create_task_group() as tg:

            async def on_close() -> None:
                nonlocal reason
                reason = reason or await connection.wait_closed()
                tg.cancel_scope.cancel()

            async def on_exit() -> None:
                nonlocal reason, status
                status = await child.wait()
                reason = reason or ConnectionClosed(
                    f"the process exited with status {status}", peer_gone=True
                )
                tg.cancel_scope.cancel()

            tg.start_soon(on_close)
            tg.start_soon(on_exit)
        if reason is not None:
            await self._tell_owner(ChildGone(reason, status))

    async def _failed(self, connection: JsonRpcConnection, reason: Exception) -> None:
        """The child went away on its own: say why, and fail what still waits on it."""
        self._accepting = False
        failure = self._failure = classify_fault(
            reason, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}"
        )
        self._note(f"failed: {failure.code}: {failure.message}")
        log.warning(
            "lsp_child_failed",
            root=str(self.root),
            pid=self._pid,
            code=failure.code,
            error=failure.message,
        )
        # Requests still waiting get the same reason, even if the output pipe is still open.
        await connection.aclose(reason)

    async def _stop_child(self, child: LspChild, client: LspClient, connection: JsonRpcConnection) -> None:
        """shutdown (bounded), exit, wait, SIGTERM to it and its helpers, wait, SIGKILL. Call shielded."""
        if self._started and self._failure is None and connection.close_reason is not None:
            # Only this method closes the connection on purpose: it broke before we got here.
            self._failure = classify_fault(
                connection.close_reason, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}"
            )
        config = self._config
        if self._started and not connection.closed:
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
        self._exit_status = status
        self._publish()
        if status is None:
            log.error("lsp_child_unkillable", root=str(self.root), pid=self._pid)

    @staticmethod
    async def _wait_exit(child: LspChild, timeout: float) -> int | None:
        with anyio.move_on_after(timeout):
            return await child.wait()
        return None

    # -- queries ---------------------------------------------------------------------------

    async def _serve_one(self, envelope: Envelope[LspQuery, LspAnswer]) -> None:
        """Answer one query; the owner sends the answer once it has taken in what the query
        changed (a ready child), so a caller never hears of a state the actor does not show."""
        query = envelope.request
        outcome: Outcome[LspAnswer]
        try:
            outcome = Outcome(value=await self._answer(query))
        except BaseException as exc:
            if not isinstance(exc, Exception):
                envelope.close()  # cancelled (the child is being stopped): the caller hears ActorGone
                raise
            error = classify_fault(
                exc, LspStage.REQUEST, context=f"sourcekit-lsp for {self.root}: {query.describe()}"
            )
            if error.code is WarningCode.SOURCEKIT_LSP_TIMEOUT:
                self._note(f"timed out: {query.describe()}")
            log.info(
                "lsp_query_failed",
                **{
                    **envelope.log_context,
                    "root": str(self.root),
                    "query": query.describe(),
                    "code": error.code,
                },
            )
            outcome = Outcome(error=error)
        done = QueryDone(envelope, outcome, ready=outcome.error is None and isinstance(query, ReadyQuery))
        if not await self._tell_owner(done):
            done.answer()  # the owner has stopped serving: answer here

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
            return None
        documents = self._documents
        assert documents is not None
        try:
            with anyio.fail_after(self._config.request_timeout):
                document = await documents.open(query.path)
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
                return await documents.locations(ranges, name)
        except TimeoutError:
            raise TimeoutError(f"no answer within {self._config.request_timeout:g} s") from None
