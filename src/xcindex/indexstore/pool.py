"""The pool of ingestion worker processes (libIndexStore readers).

Workers are started on demand, reused across refreshes (so a one-file refresh does not pay
for a Python start-up, about a quarter of a second, most of it cffi parsing declarations),
killed when idle for a while except the last one, which is kept warm for the next refresh,
and killed for certain when the pool closes: no worker outlives the Engine. A worker that dies mid-request raises WorkerDied,
which the ingester turns into a bisection of the batch.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteSendStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from xcindex._log import get_logger
from xcindex.errors import XcindexError

log = get_logger(__name__)

# The folder holding the `xcindex` package, so a worker imports the same code as its parent.
_SOURCE_ROOT = str(Path(__file__).resolve().parent.parent.parent)


_UNPICKLE_IN_THREAD = 64 * 1024


class WorkerDied(XcindexError):
    """The worker process exited while serving a request (libIndexStore aborted)."""


@dataclass(eq=False)
class _Worker:
    process: Process
    reader: BufferedByteReceiveStream
    idle_since: float = 0.0


class WorkerPool:
    def __init__(self, size: int = 2, idle_timeout_s: float = 300.0) -> None:
        self._limiter = anyio.CapacityLimiter(size)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._idle_timeout_s = idle_timeout_s
        self._closed = False

    @property
    def pids(self) -> list[int]:
        return [worker.process.pid for worker in self._all]

    async def _spawn(self) -> _Worker:
        env = dict(os.environ)
        env["PYTHONPATH"] = _SOURCE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # Shielded: a cancellation (the server told to stop mid-ingestion) arriving while the
        # process starts would leave it running and unknown to the pool, outliving the server
        # (seen in CI: a worker alive after SIGTERM). A worker that starts after the pool
        # closed is killed at once.
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                [sys.executable, "-u", "-m", "xcindex.indexstore.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            stdout = process.stdout
            assert stdout is not None
            worker = _Worker(process, BufferedByteReceiveStream(stdout))
            self._all.add(worker)
            if self._closed:
                await self._kill(worker)
                raise XcindexError("the ingestion worker pool is closed")
        log.debug("ingest_worker_started", pid=process.pid)
        return worker

    async def warm_up(self) -> None:
        """Start one worker ahead of need, so that the first refresh after a warm open (a
        rebuild while the server runs) does not wait for a Python start-up."""
        if self._closed or self._all:
            return
        async with self._limiter:
            if self._closed or self._all:
                return
            worker = await self._spawn()
            worker.idle_since = anyio.current_time()
            self._idle.append(worker)

    async def _kill(self, worker: _Worker) -> None:
        self._all.discard(worker)
        with anyio.CancelScope(shield=True):
            if worker.process.returncode is None:
                worker.process.kill()
            await worker.process.wait()
            await worker.process.aclose()

    async def run(
        self, function: str, store_path: str, names: list[str], options: dict[str, Any] | None = None
    ) -> list[Any]:
        if self._closed:
            raise XcindexError("the ingestion worker pool is closed")
        async with self._limiter:
            worker = await self._checkout()
            try:
                result = await self._request(worker, function, store_path, names, options or {})
            except BaseException:
                await self._kill(worker)
                raise
            worker.idle_since = anyio.current_time()
            self._idle.append(worker)
            return result

    async def _checkout(self) -> _Worker:
        now = anyio.current_time()
        while self._idle:
            worker = self._idle.pop()
            alive = worker.process.returncode is None
            # The last worker is never reaped for idleness: it is the warm one.
            fresh = now - worker.idle_since < self._idle_timeout_s or len(self._all) == 1
            if alive and fresh:
                return worker
            await self._kill(worker)
        return await self._spawn()

    async def _request(
        self, worker: _Worker, function: str, store_path: str, names: list[str], options: dict[str, Any]
    ) -> list[Any]:
        stdin = worker.process.stdin
        assert isinstance(stdin, ByteSendStream)
        try:
            await stdin.send(pickle.dumps((function, store_path, names, options), pickle.HIGHEST_PROTOCOL))
            header = await worker.reader.receive_until(b"\n", 64)
            status, _, size = header.partition(b" ")
            payload = await worker.reader.receive_exactly(int(size))
        except (
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
            anyio.IncompleteRead,
            anyio.DelimiterNotFound,
            ValueError,
        ) as error:
            raise WorkerDied(f"ingestion worker {worker.process.pid} died: {type(error).__name__}") from None
        # A batch of records is megabytes of pickle: unpickle it off the event loop.
        if len(payload) > _UNPICKLE_IN_THREAD:
            value = await anyio.to_thread.run_sync(pickle.loads, payload)
        else:
            value = pickle.loads(payload)
        if status != b"OK":
            raise XcindexError(f"ingestion worker failed: {value}")
        assert isinstance(value, list)
        return value

    async def aclose(self) -> None:
        self._closed = True
        with anyio.CancelScope(shield=True):
            for worker in list(self._all):
                await self._kill(worker)
            self._idle.clear()
