#!/usr/bin/env python3
"""A FAKE, scripted, misbehaving language server, for fault tests only. Not sourcekit-lsp.

It speaks just enough LSP (Content-Length framing, JSON-RPC 2.0) to drive xcindex's
sourcekit-lsp client through every failure it must survive. Standard library only, so it
runs under any Python 3.

    fake_lsp.py --mode MODE [--utf16-columns] [--ignore-sigterm] [--ignore-eof] [--spawn-helper]

Modes (also read from FAKE_LSP_MODE when --mode is absent):
    normal            answer initialize, references/definition (the asked position, with
                      `character` in UTF-8 bytes as sourcekit-lsp's index answers have it),
                      symbolInfo, workspace/synchronize (the 6.3.1 spelling only),
                      shutdown, exit
    hang-initialize   never answer initialize
    hang-references   never answer references (everything else works)
    exit-mid-request  exit with status 3 on references, without answering
    malformed-frame   answer references with a frame whose header is garbage
    error-response    answer references with a JSON-RPC error
    crash-on-start    exit with status 1 before reading anything
    server-requests   before answering references, send four requests to the client
                      (work-done progress, capability registration, configuration, an
                      unknown method) and check the answers; also send progress, log,
                      show-message and diagnostics notifications
    new-spelling      answer only sourcekit/workspace/synchronize (the newer spelling)
    empty-references  answer every references request with [] (an index that has nothing
                      yet, or a workspace without build settings)

Flags:
    --utf16-columns   answer positions in UTF-16 code units, as the protocol says
    --ignore-sigterm  survive SIGTERM (only SIGKILL ends it)
    --ignore-eof      keep running after stdin closes
    --spawn-helper    start `sleep 600` in a process group of its own (as sourcekit-lsp does
                      with swiftc), named in a log message

Every notification it receives is echoed back as a window/logMessage ("fake: <method> …"),
so tests can see what reached it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

MODES = (
    "normal",
    "hang-initialize",
    "hang-references",
    "exit-mid-request",
    "malformed-frame",
    "error-response",
    "crash-on-start",
    "server-requests",
    "new-spelling",
    "empty-references",
)

out = sys.stdout.buffer
inp = sys.stdin.buffer


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def respond(request_id: Any, result: Any) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def respond_error(request_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def notify(method: str, params: Any) -> None:
    send({"jsonrpc": "2.0", "method": method, "params": params})


def log(text: str) -> None:
    notify("window/logMessage", {"type": 4, "message": f"fake: {text}"})


def read_message() -> dict[str, Any] | None:
    length = None
    while True:
        line = inp.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    body = inp.read(length)
    if len(body) < length:
        return None
    message: dict[str, Any] = json.loads(body)
    return message


class Fake:
    def __init__(self, mode: str, *, utf16_columns: bool) -> None:
        self.mode = mode
        self.utf16_columns = utf16_columns
        self.documents: dict[str, str] = {}
        self.backlog: list[dict[str, Any]] = []

    def echo_range(self, params: dict[str, Any]) -> dict[str, Any]:
        """The asked position and 3 characters further, in the fake's column convention."""
        line, character = params["position"]["line"], params["position"]["character"]
        if not self.utf16_columns:
            text = self.documents.get(params["textDocument"]["uri"], "").split("\n")
            units = text[line].encode("utf-16-le")[: character * 2] if line < len(text) else b""
            character = len(units.decode("utf-16-le", errors="ignore").encode("utf-8"))
        return {
            "start": {"line": line, "character": character},
            "end": {"line": line, "character": character + 3},
        }

    def next_message(self) -> dict[str, Any] | None:
        if self.backlog:
            return self.backlog.pop(0)
        return read_message()

    def serve(self) -> None:
        while True:
            message = self.next_message()
            if message is None:
                return
            method = message.get("method")
            if method is None:
                continue  # a response to nothing we are waiting for
            if "id" in message:
                self.on_request(message["id"], method, message.get("params") or {})
            else:
                self.on_notification(method, message.get("params") or {})

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "exit":
            sys.exit(0)
        document = params.get("textDocument", {})
        if method == "textDocument/didOpen":
            self.documents[document["uri"]] = document["text"]
        elif method == "textDocument/didChange":
            self.documents[document["uri"]] = params["contentChanges"][-1]["text"]
        detail = f" {document.get('uri')} v{document.get('version')}" if document else ""
        if method == "$/cancelRequest":
            detail = f" id {params.get('id')}"
            respond_error(params.get("id"), -32800, "cancelled")
        log(f"{method}{detail}")

    def on_request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        mode = self.mode
        if method == "initialize":
            if mode == "hang-initialize":
                return
            respond(
                request_id, {"capabilities": {"referencesProvider": True}, "serverInfo": {"name": "fake"}}
            )
        elif method == "shutdown":
            respond(request_id, None)
        elif method == "textDocument/references":
            self.on_references(request_id, params)
        elif method == "textDocument/definition":
            link = self.echo_range(params)
            uri = params["textDocument"]["uri"]
            respond(request_id, [{"targetUri": uri, "targetRange": link, "targetSelectionRange": link}])
        elif method == "textDocument/symbolInfo":
            respond(request_id, [{"name": "fake", "usr": "s:4Fake5thingyyF", "kind": 12}, {"name": "nousr"}])
        elif method == (
            "sourcekit/workspace/synchronize" if mode == "new-spelling" else "workspace/synchronize"
        ):
            respond(request_id, {})
        else:
            respond_error(request_id, -32601, f"method not found: {method}")

    def on_references(self, request_id: Any, params: dict[str, Any]) -> None:
        mode = self.mode
        if mode == "hang-references":
            return
        if mode == "exit-mid-request":
            os._exit(3)
        if mode == "malformed-frame":
            out.write(b"Content-Length: twelve\r\n\r\n{}")
            out.flush()
            return
        if mode == "error-response":
            respond_error(request_id, -32001, "the fake refuses")
            return
        if mode == "empty-references":
            respond(request_id, [])
            return
        if mode == "server-requests":
            problem = self.exercise_client()
            if problem:
                respond_error(request_id, -32603, problem)
                return
        uri = params["textDocument"]["uri"]
        respond(request_id, [{"uri": uri, "range": self.echo_range(params)}])

    def exercise_client(self) -> str:
        """Send requests to the client; return what was wrong with its answers ("" if nothing)."""
        token = "indexing.fake"
        asks = {
            "s1": ("window/workDoneProgress/create", {"token": token}),
            "s2": ("client/registerCapability", {"registrations": []}),
            "s3": ("workspace/configuration", {"items": [{"section": "a"}, {"section": "b"}]}),
            "s4": ("custom/unknownRequest", {}),
        }
        for request_id, (method, params) in asks.items():
            send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        answers: dict[str, dict[str, Any]] = {}
        while len(answers) < len(asks):
            message = read_message()
            if message is None:
                sys.exit(4)
            if message.get("id") in asks and "method" not in message:
                answers[message["id"]] = message
            else:
                self.backlog.append(message)
        expected_results = {"s1": None, "s2": None, "s3": [None, None]}
        problems = [
            f"{key}: {answers[key]}"
            for key, result in expected_results.items()
            if "error" in answers[key] or answers[key].get("result", "missing") != result
        ]
        if answers["s4"].get("error", {}).get("code") != -32601:
            problems.append(f"s4: {answers['s4']}")
        begin = {"kind": "begin", "title": "Indexing", "percentage": 0, "message": "0 / 2"}
        notify("$/progress", {"token": token, "value": begin})
        notify(
            "$/progress", {"token": token, "value": {"kind": "report", "percentage": 50, "message": "1 / 2"}}
        )
        notify("window/showMessage", {"type": 3, "message": "fake: shown to the user"})
        notify("textDocument/publishDiagnostics", {"uri": "file:///nowhere.swift", "diagnostics": []})
        return "; ".join(problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=MODES, default=os.environ.get("FAKE_LSP_MODE", "normal"))
    parser.add_argument("--utf16-columns", action="store_true")
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--spawn-helper", action="store_true")
    options = parser.parse_args()
    if options.mode == "crash-on-start":
        sys.exit(1)
    if options.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if options.spawn_helper:
        helper = subprocess.Popen(
            ["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, process_group=0
        )
        log(f"helper pid {helper.pid}")
    Fake(options.mode, utf16_columns=options.utf16_columns).serve()
    if options.ignore_eof:
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
