"""The first-start MCP front: `xcindex serve` before xcindex is installed.

Claude Code gives an MCP server 30 s to answer its handshake and kills it otherwise; a first
install takes 20 s to a few minutes. So the launcher starts this instead (stdlib only, a
few tens of milliseconds), which:

- starts the set-up detached (or finds it running) and watches it;
- answers the handshake, `server/discover`, `ping` and `tools/list` at once, from
  `catalogue.json`: the real server's own answers, generated from its registry
  (`python -m xcindex.server.catalogue`; a test holds the two equal byte for byte);
- acknowledges a `subscriptions/listen` at once (the stream itself is the real server's);
- keeps a `tools/call` (and any other request) waiting up to `XCINDEX_FIRST_CALL_WAIT`
  seconds (20), with progress notifications when the client asked for them, then answers it
  as an error result saying how far the set-up is and when to ask again;
- once the environment is ready, *becomes* the real server: it execs
  `<venv>/bin/xcindex serve … --handover FD`, same process, same pipes, and hands it what
  set the connection's state (the client's `initialize` or 2026-07-28 envelope, the
  subscriptions it acknowledged) and every message not answered yet, through an unlinked
  temporary file (nothing is left behind).

A set-up that failed, or a data folder that cannot be written, is said at once, in every
tool answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcindex.plugin.background import ensure_setup, installing_words, start_setup
from xcindex.plugin.setup import Plugin, SetupState, setup_state

CATALOGUE = Path(__file__).resolve().parent / "catalogue.json"
CALL_WAIT_ENV = "XCINDEX_FIRST_CALL_WAIT"
DEFAULT_CALL_WAIT_S = 20.0
POLL_S = 0.25
PROGRESS_EVERY_S = 5.0
ASK_AGAIN_S = 30
MAX_RESTARTS = 2
"""How often a set-up that vanished without an outcome (killed) is started again."""
INTERNAL_ERROR = -32603
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
LISTEN_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")

RequestId = int | str


def wire(message: dict[str, Any]) -> bytes:
    """One line as the real server writes it (pydantic-core's compact JSON, UTF-8)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode()


def load_catalogue(path: Path = CATALOGUE) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@dataclass
class Waiting:
    """A request the front cannot answer yet: handed to the real server, or answered with
    the set-up's state once `deadline` passes (None: it waits for the real server)."""

    line: str
    request_id: RequestId | None
    method: str
    modern: bool
    deadline: float | None
    token: RequestId | None = None
    started: float = 0.0
    next_progress: float = 0.0


@dataclass
class Handover:
    """What the real server needs to go on with this connection (`--handover FD`)."""

    initialize: dict[str, Any] | None = None
    initialized: list[str] = field(default_factory=list)
    modern_meta: dict[str, Any] | None = None
    acknowledged: list[RequestId] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "initialize": self.initialize,
            "initialized": self.initialized,
            "modernMeta": self.modern_meta,
            "acknowledged": self.acknowledged,
            "pending": self.pending,
        }


def _request_id(value: object) -> RequestId | None:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _modern_meta(params: object) -> dict[str, Any] | None:
    """The 2026-07-28 envelope (`params._meta`) of a request, when it is one."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(PROTOCOL_VERSION_KEY) is not None:
        return meta
    return None


class FirstStartFront:
    """One connection, served from the catalogue until the real server takes it over."""

    def __init__(
        self,
        plugin: Plugin,
        serve_args: list[str],
        catalogue: dict[str, Any],
        *,
        write: Callable[[bytes], None],
        call_wait_s: float,
        exec_server: Callable[[Path, list[str], int], None],
    ) -> None:
        self.plugin = plugin
        self.serve_args = serve_args
        self.catalogue = catalogue
        self.write = write
        self.call_wait_s = call_wait_s
        self.exec_server = exec_server
        self.era: str | None = None
        self.handover = Handover()
        self.waiting: list[Waiting] = []
        self.state = SetupState("absent")
        self.problem: str | None = None
        """Why the set-up cannot even start (an unwritable data folder)."""
        self.restarts = 0

    # --- the set-up -----------------------------------------------------------------------

    def start(self) -> None:
        """Start the set-up unless it runs (or is done); note why it cannot start."""
        _, self.problem = ensure_setup(self.plugin)
        self.state = setup_state(self.plugin)

    def watch_setup(self) -> None:
        """Look at the set-up: hand over once it is done; start it again if it vanished."""
        if self.problem is not None:
            return
        previous = self.state
        self.state = setup_state(self.plugin)
        if self.state.kind == "absent" and previous.kind == "installing" and self.restarts < MAX_RESTARTS:
            # Killed without an outcome: the next set-up resumes where it stopped.
            self.restarts += 1
            start_setup(self.plugin)
            self.state = setup_state(self.plugin)

    def ready_program(self) -> Path | None:
        """The installed xcindex to become, unless becoming it already failed."""
        return self.state.program if self.state.kind == "ready" and self.problem is None else None

    def setup_words(self) -> tuple[str, bool]:
        """What a tool call is told now, and whether that is final (no point waiting)."""
        if self.problem is not None:
            return f"xcindex cannot set itself up: {self.problem}", True
        if self.state.kind == "failed":
            return (
                f"xcindex could not set itself up: {self.state.reason} /xcindex-setup tries again "
                f"(log: {self.plugin.log}).",
                True,
            )
        where = installing_words(self.state) if self.state.kind == "installing" else "starting"
        return (
            "xcindex is still setting itself up (the plugin's first start installs it into a private "
            f"environment, once): {where}. Ask again in about {ASK_AGAIN_S} s; this server answers "
            "as soon as the set-up is done (/xcindex-setup shows its progress).",
            False,
        )

    # --- messages ---------------------------------------------------------------------------

    def feed(self, line: str, now: float) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self._keep(line, None, "", modern=False, now=now, wait=False)
            return
        method: str = message["method"]
        params = message.get("params")
        if "id" not in message:
            self._notification(line, method, params)
            return
        request_id = _request_id(message["id"])
        if request_id is None:
            self._keep(line, None, method, modern=False, now=now, wait=False)
            return
        self._request(line, request_id, method, params, now)

    def _notification(self, line: str, method: str, params: object) -> None:
        if method == "notifications/initialized" and self.era == "handshake":
            self.handover.initialized.append(line)
            return
        if method == "notifications/cancelled" and isinstance(params, dict):
            cancelled = _request_id(params.get("requestId"))
            kept = [w for w in self.waiting if w.request_id != cancelled or w.request_id is None]
            if len(kept) != len(self.waiting):
                self.waiting = kept
                if cancelled in self.handover.acknowledged:
                    self.handover.acknowledged.remove(cancelled)
                return
        self.waiting.append(Waiting(line, None, method, self.era == "modern", None))

    def _request(self, line: str, request_id: RequestId, method: str, params: object, now: float) -> None:
        meta = _modern_meta(params)
        if self.era is None:
            if method == "initialize" and meta is None and self._initialize(request_id, params):
                return
            if meta is not None and meta.get(PROTOCOL_VERSION_KEY) == self.catalogue["modernVersion"]:
                self.era = "modern"
                self.handover.modern_meta = {k: v for k, v in meta.items() if k != "progressToken"}
        modern = (
            self.era == "modern"
            and meta is not None
            and meta.get(PROTOCOL_VERSION_KEY) == self.catalogue["modernVersion"]
        )
        handshake = self.era == "handshake" and meta is None
        if modern or handshake:
            result = self._catalogued(method, modern)
            if result is not None:
                self._send({"jsonrpc": "2.0", "id": request_id, "result": result})
                return
            if modern and method == "subscriptions/listen" and isinstance(params, dict):
                self._acknowledge(request_id, params)
                self._keep(line, request_id, method, modern=True, now=now, wait=False)
                return
        token = None
        if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            token = _request_id(params["_meta"].get("progressToken"))
        self._keep(line, request_id, method, modern=modern, now=now, wait=True, token=token)

    def _initialize(self, request_id: RequestId, params: object) -> bool:
        if not (
            isinstance(params, dict)
            and isinstance(params.get("protocolVersion"), str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(params.get("clientInfo"), dict)
        ):
            return False
        self.era = "handshake"
        self.handover.initialize = params
        result = dict(self.catalogue["initialize"])
        if params["protocolVersion"] in self.catalogue["handshakeVersions"]:
            result["protocolVersion"] = params["protocolVersion"]
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})
        return True

    def _catalogued(self, method: str, modern: bool) -> dict[str, Any] | None:
        if method == "tools/list":
            answer: dict[str, Any] = self.catalogue["toolsModern" if modern else "toolsHandshake"]
            return answer
        if method == "server/discover" and modern:
            discovered: dict[str, Any] = self.catalogue["discover"]
            return discovered
        if method == "ping" and not modern:
            return {}
        return None

    def _acknowledge(self, request_id: RequestId, params: dict[str, Any]) -> None:
        """Acknowledge a listen stream now, as the real server's SDK would (every flag asked
        for is honoured); the real server serves the stream and its own ack is dropped."""
        asked = params.get("notifications")
        asked = asked if isinstance(asked, dict) else {}
        honoured: dict[str, Any] = {flag: True for flag in LISTEN_FLAGS if asked.get(flag)}
        if asked.get("resourceSubscriptions"):
            honoured["resourceSubscriptions"] = list(asked["resourceSubscriptions"])
        self._send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {SUBSCRIPTION_ID_KEY: request_id}, "notifications": honoured},
            }
        )
        self.handover.acknowledged.append(request_id)

    def _keep(
        self,
        line: str,
        request_id: RequestId | None,
        method: str,
        *,
        modern: bool,
        now: float,
        wait: bool,
        token: RequestId | None = None,
    ) -> None:
        deadline = now + self.call_wait_s if wait and request_id is not None else None
        entry = Waiting(line, request_id, method, modern, deadline, token, now, now + PROGRESS_EVERY_S)
        self.waiting.append(entry)
        if deadline is not None:
            words, final = self.setup_words()
            if final:
                self._give_up(entry, words)

    # --- time -------------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Answer the requests whose wait is over; tell waiting calls how far the set-up is."""
        words, final = self.setup_words()
        for entry in list(self.waiting):
            if entry.deadline is None:
                continue
            if final or now >= entry.deadline:
                self._give_up(entry, words)
            elif entry.token is not None and now >= entry.next_progress:
                entry.next_progress = now + PROGRESS_EVERY_S
                params: dict[str, Any] = {
                    "progressToken": entry.token,
                    "progress": round(now - entry.started),
                }
                params["message"] = words
                self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    def next_wake(self, now: float) -> float:
        wakes = [now + POLL_S]
        for entry in self.waiting:
            if entry.deadline is not None:
                wakes.append(entry.deadline)
                if entry.token is not None:
                    wakes.append(entry.next_progress)
        return max(0.0, min(wakes) - now)

    def _give_up(self, entry: Waiting, words: str) -> None:
        self.waiting.remove(entry)
        assert entry.request_id is not None
        if entry.method == "tools/call":
            result: dict[str, Any] = {
                "content": [{"text": f"Error: {words}", "type": "text"}],
                "isError": True,
            }
            if entry.modern:
                result["resultType"] = "complete"
                result["_meta"] = {SERVER_INFO_KEY: self.catalogue["serverInfo"]}
            self._send({"jsonrpc": "2.0", "id": entry.request_id, "result": result})
        else:
            error = {"code": INTERNAL_ERROR, "message": words}
            self._send({"jsonrpc": "2.0", "id": entry.request_id, "error": error})

    def _send(self, message: dict[str, Any]) -> None:
        self.write(wire(message))

    # --- the handover -----------------------------------------------------------------------

    def hand_over(self, program: Path) -> None:
        """Become the real server (returns only if it could not be started)."""
        self.handover.pending = [entry.line for entry in self.waiting]
        with tempfile.TemporaryFile() as state:  # unlinked: nothing is left behind
            state.write(json.dumps(self.handover.to_json(), ensure_ascii=False).encode())
            state.flush()
            state.seek(0)
            descriptor = os.dup(state.fileno())  # open after `state` closes
        os.set_inheritable(descriptor, True)
        try:
            self.exec_server(program, [*self.serve_args, "--handover", str(descriptor)], descriptor)
        except OSError as error:
            os.close(descriptor)
            self.problem = f"xcindex is installed at {program} but could not be started ({error})."


def exec_server(program: Path, args: list[str], _descriptor: int) -> None:
    note(f"the set-up is done: becoming {program} {' '.join(args)}")
    os.execv(program, [str(program), *args])


def note(line: str) -> None:
    """One line for the client's server log (Claude Code keeps a server's stderr)."""
    with contextlib.suppress(OSError):
        os.write(2, f"[xcindex] {line}\n".encode())


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def serve(plugin: Plugin, serve_args: list[str]) -> int:
    """Serve stdin/stdout until the client leaves, or until the real server takes over."""
    wait = float(os.environ.get(CALL_WAIT_ENV) or DEFAULT_CALL_WAIT_S)
    front = FirstStartFront(
        plugin, serve_args, load_catalogue(), write=_write_all, call_wait_s=wait, exec_server=exec_server
    )
    front.start()
    note(
        f"first start of the plugin: answering from the catalogue while the set-up runs "
        f"({front.problem or front.state.kind}; log: {plugin.log})"
    )
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    buffer = b""
    try:
        while True:
            now = time.monotonic()
            front.watch_setup()
            program = front.ready_program()
            if program is not None and not buffer:
                front.hand_over(program)
            front.tick(now)
            if not selector.select(front.next_wake(now)):
                continue
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return 0  # the client left; the set-up goes on without us
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                front.feed(raw.decode("utf-8", "replace") + "\n", time.monotonic())
    except BrokenPipeError:
        return 0
    finally:
        selector.close()
