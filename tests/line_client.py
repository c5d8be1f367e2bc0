"""A raw MCP client over a subprocess's stdio, for tests that must see every line: JSON
lines in and out, a thread reading the server's stdout so that a test can wait for a line
with a deadline, and its stderr kept for the failure message."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "xcindex-tests", "version": "1"},
}


class LineClient:
    """`bin/xcindex serve` (or any command) with JSON lines in and out; a thread reads its
    stdout so that a test can wait for a line with a deadline."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str], cwd: Path | None = None) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self.transcript: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        self._errors = threading.Thread(target=self._read_errors, daemon=True)
        self._errors.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw)
        self._lines.put(b"")

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self._stderr.append(raw)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def receive(self, within_s: float) -> dict[str, Any]:
        try:
            raw = self._lines.get(timeout=within_s)
        except queue.Empty:
            raise AssertionError(f"no line within {within_s} s; stderr:\n{self.stderr[-3000:]}") from None
        if not raw:
            raise AssertionError(f"the server closed its output; stderr:\n{self.stderr[-3000:]}")
        message: dict[str, Any] = json.loads(raw)
        self.transcript.append(message)
        return message

    def answer(self, request_id: int | str, within_s: float = 60.0) -> dict[str, Any]:
        """The answer to `request_id` (notifications meanwhile stay in the transcript)."""
        deadline = time.monotonic() + within_s
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id and "method" not in message:
                return message

    def request(
        self,
        request_id: int | str,
        method: str,
        params: Mapping[str, Any] | None = None,
        within_s: float = 60.0,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send(message)
        return self.answer(request_id, within_s)

    def initialize(self) -> float:
        """The handshake; the seconds from the start of the process to its answer."""
        answer = self.request(0, "initialize", INITIALIZE, within_s=30)
        assert answer["result"]["serverInfo"]["name"] == "xcindex", answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return time.monotonic() - self.started

    def close(self, within_s: float = 30.0) -> int:
        """Close the server's stdin (the client leaves); its exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=within_s)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._reader.join(timeout=10)
        self._errors.join(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
