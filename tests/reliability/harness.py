"""What the reliability tests share: the real server, a raw wire client, the process table.

Every server started here carries a unique tag in its environment. Its ingestion workers
and sourcekit-lsp children (and their helpers) inherit the environment, so the tag finds
them in /proc even after they were reparented: that is how "no surviving child" is checked
from the process table rather than from what the server says about itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client.stdio import StdioServerParameters

XCINDEX = Path(sys.executable).parent / "xcindex"
TAG_VARIABLE = "XCINDEX_RELIABILITY_TAG"
MAX_LINE = 64 * 1024 * 1024
PROTOCOL_VERSION = "2025-06-18"

EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception|Group|Interrupt|Exit)\b|\bTraceback\b")
"""A Python exception class name (KeyError, ExceptionGroup, …) or a traceback header."""


def interpreter_or(comm: str) -> str:
    """A process's name, with Python's interpreter spelled one way (`python`, `python3.11`:
    it depends on how the virtual environment was made)."""
    return "python" if re.fullmatch(r"python[0-9.]*", comm) else comm


def new_tag() -> str:
    return uuid.uuid4().hex


def server_env(cache_dir: Path, tag: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server under test: its own cache, the toolchain, a tag."""
    env = {
        "XCINDEX_CACHE_DIR": str(cache_dir),
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        TAG_VARIABLE: tag,
        # The session ledger of the test session, not of whoever runs the tests.
        "CLAUDE_PROJECT_DIR": os.environ["CLAUDE_PROJECT_DIR"],
    }
    for shared in ("PYTHONPATH", "XCINDEX_NATIVE_DIR"):  # the test session's compiled ingester, built once
        if shared in os.environ:
            env[shared] = os.environ[shared]
    env.update(extra or {})
    return env


def stdio_parameters(
    cache_dir: Path, tag: str, project_dir: Path, *args: str, log_file: Path | None = None
) -> StdioServerParameters:
    """`xcindex serve` for the MCP SDK's client; `project_dir` keeps the session ledger private."""
    logging = ["--log-file", str(log_file)] if log_file is not None else []
    return StdioServerParameters(
        command=str(XCINDEX),
        args=["serve", *logging, *args],
        env=server_env(cache_dir, tag, {"CLAUDE_PROJECT_DIR": str(project_dir)}),
    )


def server_pid(tag: str) -> int:
    """The one server this test process started with `tag`."""
    [server] = [p for p in tagged_processes(tag) if p.ppid == os.getpid()]
    return server.pid


# -- the process table ---------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    state: str
    comm: str


def process_info(pid: int) -> ProcessInfo | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # pid (comm) state ppid …; comm may hold spaces and parentheses.
    head, _, tail = raw.rpartition(b")")
    fields = tail.split()
    comm = head.partition(b"(")[2].decode(errors="replace")
    return ProcessInfo(pid, int(fields[1]), fields[0].decode(), comm)


def tagged_processes(tag: str) -> list[ProcessInfo]:
    """Live (not zombie) processes whose environment carries `tag`."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    found: list[ProcessInfo] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if marker not in environ.split(b"\0"):
            continue
        info = process_info(int(entry))
        if info is not None and info.state not in ("Z", "X"):
            found.append(info)
    return found


def untagged_among(processes: Iterable[ProcessInfo], tag: str) -> list[ProcessInfo]:
    """Those of `processes` alive now whose environment lacks `tag`. A process that ended
    since it was listed (a compiler job sourcekit-lsp ran) is not counted: only a live one
    could outlive the server untracked."""
    tagged = {p.pid for p in tagged_processes(tag)}
    marker = f"{TAG_VARIABLE}={tag}".encode()
    untagged: list[ProcessInfo] = []
    for process in processes:
        if process.pid in tagged:
            continue
        environ = settled_environ(process.pid)
        if environ is None or marker in environ.split(b"\0"):
            continue
        if (info := process_info(process.pid)) is not None and info.state not in ("Z", "X"):
            untagged.append(info)
    return untagged


def settled_environ(pid: int, within_s: float = 5.0, pause_s: float = 0.02) -> bytes | None:
    """`pid`'s environment once it can be read, or None once the process is gone.

    /proc/PID/environ reads empty while a process is inside exec (its new arguments are in
    place, its environment not yet) and while it exits. sourcekit-lsp starts short compiler
    jobs (`swift-frontend -print-target-info`) all the time; on two busy cores one was caught
    in that window for over 0.2 s (CI, twice), so an empty read is read again until it
    settles. A process whose environment stays empty for `within_s` is returned as is.
    """
    deadline = time.monotonic() + within_s
    while True:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            return None
        info = process_info(pid)
        if info is None or info.state in ("Z", "X"):
            return None
        if environ or time.monotonic() >= deadline:
            return environ
        time.sleep(pause_s)


def describe(processes: Iterable[ProcessInfo]) -> str:
    """One line per process: what a failure needs to tell a real leak from a race."""
    lines = []
    for process in processes:
        try:
            argv = Path(f"/proc/{process.pid}/cmdline").read_bytes().replace(b"\0", b" ")
            environ = Path(f"/proc/{process.pid}/environ").read_bytes()
        except OSError:
            lines.append(f"{process.pid}:{process.comm} (gone)")
            continue
        parent = process_info(process.ppid)
        variables = sorted(v.partition(b"=")[0].decode(errors="replace") for v in environ.split(b"\0") if v)
        lines.append(
            f"{process.pid}:{process.comm} state {process.state}, parent {process.ppid}:"
            f"{parent.comm if parent else '?'}, argv {argv[:200].decode(errors='replace')!r}, "
            f"environment of {len(environ)} bytes: {', '.join(variables)[:400]}"
        )
    return "\n".join(lines)


async def wait_for_no_tagged_processes(tag: str, within: float) -> list[ProcessInfo]:
    """Poll the process table until no tagged process is left or `within` seconds passed;
    returns the survivors (empty when all are gone)."""
    survivors = tagged_processes(tag)
    with anyio.move_on_after(within):
        while survivors:
            await anyio.sleep(0.05)
            survivors = tagged_processes(tag)
    return survivors


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


# -- answers -------------------------------------------------------------------------------


def database_integrity(cache_dir: Path) -> dict[str, str]:
    """`PRAGMA integrity_check` of every database in a cache folder, by file name."""
    results: dict[str, str] = {}
    for path in sorted(cache_dir.glob("*.sqlite")):
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            results[path.name] = str(connection.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            connection.close()
    return results


def without_echoes(text: str, arguments: object) -> str:
    """`text` with every string the caller sent removed (an error may quote the input)."""
    strings: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                collect(key)
                collect(item)
        elif isinstance(value, list | tuple):
            for item in value:
                collect(item)

    collect(arguments)
    for value in sorted(strings, key=len, reverse=True):
        if value:
            text = text.replace(value, "")
            text = text.replace(os.path.normpath(value), "") if value.startswith("/") else text
    return text


# -- a raw client over the wire ------------------------------------------------------------


class ServerGone(Exception):
    """The server closed its stdout (it exited)."""


@dataclass
class RawServer:
    """`xcindex serve` spoken to line by line: for what a polite client never sends, and
    for ending the server by EOF or by a signal rather than by the client's own shutdown."""

    env: dict[str, str]
    args: tuple[str, ...] = ()
    log_file: Path | None = None
    cwd: Path | None = None
    reply_within: float = 600.0
    """Seconds any one message may take to arrive: a hung server fails the test, never hangs it."""
    process: Process | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)
    _reader: BufferedByteReceiveStream | None = None
    _next_id: int = 0

    async def __aenter__(self) -> RawServer:
        command = [str(XCINDEX), "serve", *self.args]
        if self.log_file is not None:
            command += ["--log-file", str(self.log_file)]
        self.process = await anyio.open_process(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
        )
        assert isinstance(self.process.stdout, ByteReceiveStream)
        self._reader = BufferedByteReceiveStream(self.process.stdout)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        process = self.process
        assert process is not None
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                with anyio.move_on_after(20):
                    await self.close_stdin()
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def signal(self, signum: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    async def close_stdin(self) -> None:
        assert self.process is not None
        stdin = self.process.stdin
        assert stdin is not None
        await stdin.aclose()

    async def send_bytes(self, data: bytes) -> None:
        assert self.process is not None
        stdin = self.process.stdin
        assert isinstance(stdin, ByteSendStream)
        await stdin.send(data)

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        assert self._reader is not None
        try:
            with anyio.fail_after(self.reply_within):
                line = await self._reader.receive_until(b"\n", MAX_LINE)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError) as error:
            raise ServerGone(f"the server closed its output ({type(error).__name__})") from None
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response; notifications meanwhile are kept."""
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        await self.send(message)
        return await self.response_to(request_id)

    async def response_to(self, request_id: int | str) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if "id" in message and "method" not in message and message["id"] == request_id:
                return message
            if "method" in message:
                self.notifications.append(message)

    async def initialize(self) -> dict[str, Any]:
        response = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "xcindex-reliability", "version": "0"},
            },
        )
        assert "result" in response, response
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    async def start_tool_call(
        self, name: str, arguments: Mapping[str, Any], *, progress_token: str | None = None
    ) -> int:
        """Send a tools/call without waiting for its answer; returns the request id."""
        self._next_id += 1
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        await self.send({"jsonrpc": "2.0", "id": self._next_id, "method": "tools/call", "params": params})
        return self._next_id

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        response = await self.response_to(await self.start_tool_call(name, arguments))
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result


def result_text(result: Mapping[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))


def descendants_of(pid: int) -> list[ProcessInfo]:
    """Every live process below `pid` in the parent tree (now)."""
    children: dict[int, list[ProcessInfo]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = process_info(int(entry))
            if info is not None and info.state not in ("Z", "X"):
                children.setdefault(info.ppid, []).append(info)
    found: list[ProcessInfo] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child.pid)
    return found


def names(processes: Iterable[ProcessInfo]) -> list[str]:
    return sorted(f"{p.pid}:{p.comm}" for p in processes)


# -- corruption that makes libIndexStore crash -----------------------------------------------

_CRASH_SCANNER = r"""
import os, sys
from xcindex.indexstore.binding import IndexStore, IndexStoreError
store, kind, name, path = sys.argv[1:5]
with open(path, "rb") as handle:
    original = handle.read()
# The offset tables near the end of a unit or record are where a wrong byte makes the
# reader follow a wild pointer; each try runs in a forked child, which may die of it.
for offset in range(len(original) - 1, 15, -1):
    if original[offset] == 0xFF:
        continue
    mutated = bytearray(original)
    mutated[offset] = 0xFF
    with open(path, "wb") as handle:
        handle.write(mutated)
    child = os.fork()
    if child == 0:
        os.close(2)
        try:
            with IndexStore(store) as reader:
                (reader.read_record if kind == "record" else reader.read_unit)(name)
        except IndexStoreError:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        print(offset, os.WTERMSIG(status))
        sys.exit(0)
with open(path, "wb") as handle:
    handle.write(original)
sys.exit(1)
"""


def corrupt_until_libindexstore_crashes(store: Path, kind: str, name: str, path: Path) -> tuple[int, int]:
    """Overwrite one byte of `path` (a unit or record file of `store`) so that reading it
    kills the reading process with a signal, checked in a throwaway child. Returns the
    offset and the signal."""
    done = subprocess.run(
        [sys.executable, "-c", _CRASH_SCANNER, str(store), kind, name, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"no single-byte corruption of {path.name} crashes libIndexStore: {done.stderr}")
    offset, signum = done.stdout.split()
    return int(offset), int(signum)
