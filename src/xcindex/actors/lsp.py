"""The LSP pool actor: supervises one `LspActor` (sourcekit-lsp child) per workspace root.

One task owns the pool's state (a slot per root: its child, its backoff, its crash
history, the queries waiting for it); everything else talks to it through its mailbox.
Callers send `Request`s; the pool's own tasks (a child's supervisor, a forwarder carrying
one query to a child, a backoff timer) report back with messages too, so nothing but the
owner ever changes a slot, and the owner never waits: every slow step runs in a task of
its own. Readers see frozen snapshots: `status()` and `recent_log()` build on what the
owner and each child last published.

The pool keeps at most `max_children` children (least recently used evicted first), starts
a child on first use, and restarts a crashed one on next use after an exponential backoff
(1 s, 2 s, … up to 30 s; reset once a child has stayed up for `stable_after`). After a
burst of crashes it refuses with `sourcekit_lsp_not_running` until the longest backoff has
passed. Every public method raises only `CodedError`, with a documented warning code.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from xcindex._log import get_logger
from xcindex.actors.lsp_child import Clock, LspActor
from xcindex.actors.lsp_messages import (
    LIVE,
    ChildStarted,
    ChildStopped,
    Close,
    Forwarded,
    PoolMessage,
    Request,
    Retry,
    SlotSnapshot,
    StartDue,
    status_of,
)
from xcindex.actors.mailbox import ActorHandle, Envelope, Mailbox, Published
from xcindex.errors import ActorGone, CodedError
from xcindex.lsp.config import LspPoolConfig
from xcindex.lsp.faults import LspStage, classify_fault
from xcindex.lsp.positions import LspLocation
from xcindex.lsp.process import Launcher, launch_process
from xcindex.lsp.queries import (
    DefinitionQuery,
    LspAnswer,
    LspQuery,
    ReadyQuery,
    ReferencesQuery,
    SymbolInfoQuery,
)
from xcindex.lsp.snapshot import ChildState, Fault, LspChildStatus
from xcindex.project.toolchain import find_sourcekit_lsp
from xcindex.vocabulary import WarningCode

log = get_logger(__name__)

ASK_GRACE = 5.0
"""Extra time the pool allows a child beyond the request's own deadline."""

_CRASH_CODES = frozenset(
    {
        WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED,
        WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED,
        WarningCode.SOURCEKIT_LSP_PROTOCOL_ERROR,
        WarningCode.SOURCEKIT_LSP_ERROR,
    }
)
# -- the owner's state and what it publishes -----------------------------------------------


@dataclass(frozen=True)
class _Job:
    query: LspQuery
    caller: Envelope[PoolMessage, LspAnswer]
    attempt: int


@dataclass(eq=False)
class _Slot:
    """The owner's book-keeping for one workspace root, across its children's lifetimes."""

    root: Path
    backoff: float
    crash_times: deque[float]
    state: ChildState = ChildState.STOPPED
    actor: LspActor | None = None
    handle: ActorHandle[LspQuery, LspAnswer] | None = None
    scope: anyio.CancelScope | None = None
    jobs: list[_Job] = field(default_factory=list)
    """Queries waiting for a running child."""
    timer: bool = False
    """A backoff timer will send StartDue."""
    last_error: Fault | None = None
    attempts: int = 0
    crashes: int = 0
    started_at: float | None = None
    next_start_at: float = -math.inf
    gave_up_until: float | None = None
    gave_up_after: int = 0
    last_used: float = 0.0
    in_flight: int = 0


class _StartSignal:
    """The task status handed to a child's run: reports the start to the owner."""

    def __init__(self, owner: ActorHandle[PoolMessage, LspAnswer], root: Path, actor: LspActor) -> None:
        self._owner = owner
        self._root = root
        self._actor = actor

    def started(self, value: object = None) -> None:
        self._owner.tell_nowait(ChildStarted(self._root, self._actor))


# -- the pool ------------------------------------------------------------------------------


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
        self._mailbox: Mailbox[PoolMessage, LspAnswer]
        self._handle: ActorHandle[PoolMessage, LspAnswer]
        """Both made by `run` (a pool that never runs holds no streams); until then
        `_open` is False and callers are refused before touching them."""
        self._published: Published[tuple[SlotSnapshot, ...]] = Published(())
        # The owner's alone from here on.
        self._slots: OrderedDict[Path, _Slot] = OrderedDict()
        self._task_group: TaskGroup | None = None
        self._open = False
        self._ran = False
        self._finished: anyio.Event | None = None

    @property
    def config(self) -> LspPoolConfig:
        return self._config

    # -- what callers use ------------------------------------------------------------------

    async def request(self, root: Path, query: LspQuery) -> LspAnswer:
        """Answer `query` with `root`'s child: the one generic path every query takes."""
        if not self._open:
            raise CodedError(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, "the sourcekit-lsp pool is not running")
        real = _normalise(root)
        try:
            return await self._handle.ask(Request(real, query), log_context={"root": str(real)})
        except CodedError:
            raise
        except ActorGone as exc:
            raise CodedError(
                WarningCode.SOURCEKIT_LSP_NOT_RUNNING, "the sourcekit-lsp pool stopped before answering"
            ) from exc
        except Exception as exc:
            raise classify_fault(
                exc, LspStage.REQUEST, context=f"sourcekit-lsp for {real}: {query.describe()}"
            ) from exc

    async def references(
        self, root: Path, path: Path, line: int, utf8_column: int, *, include_declaration: bool = True
    ) -> list[LspLocation]:
        """`textDocument/references` at a 1-based line and UTF-8 byte column."""
        answer = await self.request(root, ReferencesQuery(path, line, utf8_column, include_declaration))
        return [item for item in answer or () if isinstance(item, LspLocation)]

    async def definition(self, root: Path, path: Path, line: int, utf8_column: int) -> list[LspLocation]:
        """`textDocument/definition` at a 1-based line and UTF-8 byte column."""
        answer = await self.request(root, DefinitionQuery(path, line, utf8_column))
        return [item for item in answer or () if isinstance(item, LspLocation)]

    async def symbol_info(self, root: Path, path: Path, line: int, utf8_column: int) -> list[str]:
        """The USRs of the symbol at a 1-based line and UTF-8 byte column (`textDocument/symbolInfo`)."""
        answer = await self.request(root, SymbolInfoQuery(path, line, utf8_column))
        return [item for item in answer or () if isinstance(item, str)]

    async def wait_ready(self, root: Path) -> None:
        """Wait until sourcekit-lsp has finished indexing the workspace (`workspace/synchronize`)."""
        await self.request(root, ReadyQuery())

    def snapshot(self) -> tuple[SlotSnapshot, ...]:
        """What the owner last published: one frozen entry per root it knows."""
        return self._published.value

    def status(self) -> list[LspChildStatus]:
        now = self._clock()
        return [status_of(slot, now) for slot in self._published.value]

    def recent_log(self, root: Path, n: int = 50) -> list[str]:
        """The last `n` log lines of `root`'s current (or last) child."""
        real = _normalise(root)
        for slot in self._published.value:
            if slot.root == real and slot.child is not None:
                lines = slot.child.value.log
                return [text for _, text in lines[-n:]] if n > 0 else []
        return []

    # -- life cycle ------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own every child until `aclose()` or cancellation; then stop them all (shielded)."""
        if self._ran:
            raise RuntimeError("an LspPool runs only once")
        self._ran = True
        self._finished = anyio.Event()
        # Unbounded: the pool's own tasks report with tell_nowait, which must never fail
        # for want of room; callers are bounded by their own concurrency.
        self._mailbox = Mailbox(math.inf)
        self._handle = self._mailbox.handle()
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                self._open = True
                task_status.started()
                try:
                    async for envelope in self._mailbox.inbox:
                        if isinstance(envelope.request, Close):
                            envelope.close()
                            break
                        self._receive(envelope)
                finally:
                    self._open = False
                    tg.cancel_scope.cancel()
        finally:
            # The children's stops are shielded: by now every one has stopped and reported.
            with anyio.CancelScope(shield=True):
                self._task_group = None
                self._drain()
                await self._mailbox.aclose()
                self._publish()
                self._finished.set()
            log.info("lsp_pool_stopped", roots=len(self._slots))

    async def aclose(self) -> None:
        """Shut every child down and wait until they are gone."""
        if self._finished is None:
            return
        self._handle.tell_nowait(Close())
        with anyio.CancelScope(shield=True):
            await self._finished.wait()

    # -- the owner: every handler is synchronous, and the only code that changes a slot ----

    def _receive(self, envelope: Envelope[PoolMessage, LspAnswer]) -> None:
        message = envelope.request
        match message:
            case Request(root=root, query=query):
                self._admit(_Job(query, envelope, 0), root)
            case Retry(root=root, query=query, caller=caller):
                self._admit(_Job(query, caller, 1), root)
            case Forwarded(root=root):
                slot = self._slots.get(root)
                if slot is not None:
                    slot.in_flight -= 1
                    slot.last_used = self._clock()
            case ChildStarted(root=root, actor=actor):
                self._on_started(root, actor)
            case ChildStopped(root=root, actor=actor, start_failure=failure):
                self._on_stopped(root, actor, failure)
                for slot in list(self._slots.values()):
                    self._advance(slot)  # room was freed, or this slot must restart
            case StartDue(root=root):
                slot = self._slots.get(root)
                if slot is not None:
                    slot.timer = False
                    self._advance(slot)
            case Close():
                pass
        if not isinstance(message, Request):
            envelope.close()  # a report, nobody waits for its answer (a Request's is its job's)
        self._publish()

    def _publish(self) -> None:
        self._published.publish(
            tuple(
                SlotSnapshot(
                    root=slot.root,
                    state=slot.state,
                    attempts=slot.attempts,
                    crashes=slot.crashes,
                    last_error=slot.last_error,
                    next_start_at=slot.next_start_at,
                    gave_up_until=slot.gave_up_until,
                    child=None if slot.actor is None else slot.actor.published,
                )
                for slot in self._slots.values()
            )
        )

    def _drain(self) -> None:
        """After the task group: take in the children's last reports, refuse the rest."""
        while True:
            try:
                envelope = self._mailbox.inbox.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            message = envelope.request
            if isinstance(message, ChildStopped):
                self._on_stopped(message.root, message.actor, message.start_failure)
            elif isinstance(message, Retry):
                message.caller.close()
            envelope.close()
        for slot in self._slots.values():
            self._fail_jobs(slot, self._not_running())

    def _not_running(self) -> CodedError:
        return CodedError(WarningCode.SOURCEKIT_LSP_NOT_RUNNING, "the sourcekit-lsp pool is not running")

    def _admit(self, job: _Job, root: Path) -> None:
        slot = self._slot_for(root)
        slot.in_flight += 1
        slot.last_used = self._clock()
        if self._accepting(slot):
            self._forward(slot, job)
        else:
            slot.jobs.append(job)
            self._advance(slot)

    def _accepting(self, slot: _Slot) -> bool:
        return (
            slot.state is ChildState.RUNNING
            and slot.handle is not None
            and slot.actor is not None
            and slot.actor.published.value.accepting
        )

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
            if (
                slot is not keep
                and slot.state in (ChildState.STOPPED, ChildState.CRASHED)
                and slot.in_flight == 0
                and not slot.timer
            ):
                del self._slots[root]

    def _fail_jobs(self, slot: _Slot, error: CodedError) -> None:
        jobs, slot.jobs = slot.jobs, []
        for job in jobs:
            job.caller.fail_nowait(CodedError(error.code, error.message))
            job.caller.close()
            slot.in_flight -= 1
        if jobs:
            slot.last_used = self._clock()

    def _advance(self, slot: _Slot) -> None:
        """Move `slot`'s waiting queries on: forward them, or get a child started for them
        (after any backoff, once there is room), or fail them with the reason there is none."""
        if not slot.jobs:
            return
        if not self._open:
            self._fail_jobs(slot, self._not_running())
            return
        if self._accepting(slot):
            jobs, slot.jobs = slot.jobs, []
            for job in jobs:
                self._forward(slot, job)
            return
        if slot.state in LIVE or slot.timer:
            return  # its ChildStarted, ChildStopped or StartDue will come
        now = self._clock()
        if slot.gave_up_until is not None:
            if now < slot.gave_up_until:
                error = slot.last_error
                self._fail_jobs(
                    slot,
                    CodedError(
                        WarningCode.SOURCEKIT_LSP_NOT_RUNNING,
                        f"sourcekit-lsp for {slot.root} gave up after {slot.gave_up_after} crashes, retrying "
                        f"after {math.ceil(slot.gave_up_until - now)} s"
                        + ("" if error is None else f" (last error {error.code}: {error.message})"),
                    ),
                )
                return
            slot.gave_up_until = None
        delay = slot.next_start_at - now
        if delay > 0:
            slot.timer = True
            self._spawn(self._start_after, slot.root, delay, name=f"sourcekit-lsp backoff {slot.root}")
            return
        if self._make_room(slot):
            self._start(slot)

    def _make_room(self, slot: _Slot) -> bool:
        """Whether a new child fits in `max_children`; if not, stop the least recently used
        one (its ChildStopped advances `slot` again) or fail `slot`'s queries."""
        live = [other for other in self._slots.values() if other is not slot and other.state in LIVE]
        if len(live) < self._config.max_children:
            return True
        if any(other.state is ChildState.STOPPING for other in live):
            return False
        running = [other for other in live if other.state is ChildState.RUNNING]
        if not running:
            self._fail_jobs(
                slot,
                CodedError(
                    WarningCode.SOURCEKIT_LSP_NOT_RUNNING,
                    f"all {self._config.max_children} sourcekit-lsp children are starting; try again",
                ),
            )
            return False
        victim = min(running, key=lambda other: (other.in_flight > 0, other.last_used))
        log.info("lsp_child_evicted", root=str(victim.root), for_root=str(slot.root))
        victim.handle = None
        victim.state = ChildState.STOPPING
        if victim.scope is not None:
            victim.scope.cancel()
        return False

    def _start(self, slot: _Slot) -> None:
        try:
            command = [str(find_sourcekit_lsp(self._config.binary)), *self._config.arguments]
        except Exception as exc:
            error = classify_fault(exc, LspStage.DISCOVERY, context=f"sourcekit-lsp for {slot.root}")
            slot.last_error = Fault.of(error)
            self._fail_jobs(slot, error)
            return
        actor = LspActor(slot.root, command, self._config, launcher=self._launcher, clock=self._clock)
        slot.attempts += 1
        slot.actor = actor
        slot.state = ChildState.STARTING
        slot.started_at = None
        slot.scope = anyio.CancelScope()
        self._spawn(self._supervise, slot.root, actor, slot.scope, name=f"sourcekit-lsp {slot.root}")

    def _forward(self, slot: _Slot, job: _Job) -> None:
        assert slot.actor is not None
        assert slot.handle is not None
        self._spawn(
            self._carry, slot.root, slot.actor, slot.handle, job, name=f"sourcekit-lsp query {slot.root}"
        )

    def _spawn(self, function: Callable[..., Coroutine[Any, Any, None]], *args: object, name: str) -> None:
        assert self._task_group is not None
        self._task_group.start_soon(function, *args, name=name)

    def _on_started(self, root: Path, actor: LspActor) -> None:
        slot = self._slots.get(root)
        if slot is None or slot.actor is not actor or slot.state is not ChildState.STARTING:
            return
        slot.handle = actor.handle()
        slot.state = ChildState.RUNNING
        slot.started_at = slot.last_used = self._clock()
        self._advance(slot)

    def _on_stopped(self, root: Path, actor: LspActor, start_failure: Fault | None) -> None:
        slot = self._slots.get(root)
        if slot is None or slot.actor is not actor:
            return
        final = actor.published.value
        slot.handle = None
        slot.scope = None
        error = start_failure
        if not final.started and error is None:
            error = Fault(
                WarningCode.SOURCEKIT_LSP_NOT_RUNNING, f"sourcekit-lsp for {root} stopped while starting"
            )
        failure = error or final.failure
        if failure is None:
            slot.state = ChildState.STOPPED
        else:
            slot.last_error = failure
            if failure.code in _CRASH_CODES:
                self._record_crash(slot)
            else:
                slot.state = ChildState.STOPPED
        if not final.started and failure is not None:
            self._fail_jobs(slot, failure.error())  # those waiting for this start hear why

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

    # -- the owner's tasks: they wait, then report back; they never touch a slot -----------

    async def _supervise(self, root: Path, actor: LspActor, scope: anyio.CancelScope) -> None:
        start_failure: Fault | None = None
        try:
            with scope:
                try:
                    await actor.run(task_status=_StartSignal(self._handle, root, actor))
                except CodedError as err:
                    start_failure = Fault.of(err)
                except Exception as exc:
                    start_failure = Fault.of(
                        classify_fault(exc, LspStage.REQUEST, context=f"sourcekit-lsp for {root}")
                    )
                    log.exception("lsp_actor_failed", root=str(root))
        finally:
            self._handle.tell_nowait(ChildStopped(root, actor, start_failure))

    async def _start_after(self, root: Path, delay: float) -> None:
        await anyio.sleep(delay)
        self._handle.tell_nowait(StartDue(root))

    async def _carry(
        self, root: Path, actor: LspActor, child: ActorHandle[LspQuery, LspAnswer], job: _Job
    ) -> None:
        """Ask the child; answer the caller (every fault as its documented code)."""
        query, caller = job.query, job.caller
        context = f"sourcekit-lsp for {root}: {query.describe()}"
        retry = False
        try:
            answer = await child.ask(
                query,
                timeout=query.deadline(self._config) + ASK_GRACE,
                log_context={**caller.log_context, "root": str(root)},
            )
        except CodedError as error:
            caller.fail_nowait(error)
        except ActorGone as exc:
            # The child retired for idleness just as this query arrived: ask a new one.
            if job.attempt == 0 and actor.published.value.retired_idle:
                retry = True
            else:
                caller.fail_nowait(classify_fault(exc, LspStage.REQUEST, context=context))
        except Exception as exc:
            caller.fail_nowait(classify_fault(exc, LspStage.REQUEST, context=context))
        else:
            caller.reply_nowait(answer)
        finally:
            self._handle.tell_nowait(Forwarded(root))
            if not (retry and self._handle.tell_nowait(Retry(root, query, caller))):
                caller.close()


def _normalise(root: Path) -> Path:
    return Path(os.path.realpath(root))
