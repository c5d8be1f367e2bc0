"""The fault → warning code table in xcindex.lsp.faults, one test per row."""

from __future__ import annotations

import errno

import anyio
import pytest

from xcindex.errors import ActorGone, ActorTimeout, CodedError
from xcindex.lsp.client import UnexpectedResponse
from xcindex.lsp.faults import LspStage, classify_fault, fault_code
from xcindex.lsp.jsonrpc import ConnectionClosed, FramingError, JsonRpcError, RequestTimeout
from xcindex.vocabulary import WarningCode

W = WarningCode
S = LspStage

ROWS = [
    # (stage, error, code)
    (S.REQUEST, CodedError(W.WORKSPACE_ROOT_UNRESOLVED, "x"), W.WORKSPACE_ROOT_UNRESOLVED),
    (S.DISCOVERY, FileNotFoundError(errno.ENOENT, "no such file"), W.SOURCEKIT_LSP_NOT_FOUND),
    (S.LAUNCH, FileNotFoundError(errno.ENOENT, "no such file"), W.SOURCEKIT_LSP_NOT_FOUND),
    (S.DISCOVERY, PermissionError(errno.EACCES, "denied"), W.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE),
    (S.LAUNCH, PermissionError(errno.EACCES, "denied"), W.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE),
    (S.LAUNCH, OSError(errno.ENOEXEC, "Exec format error"), W.SOURCEKIT_LSP_LAUNCH_FAILED),
    (S.HANDSHAKE, TimeoutError(), W.SOURCEKIT_LSP_LAUNCH_FAILED),
    (S.HANDSHAKE, ConnectionClosed("exited", peer_gone=True), W.SOURCEKIT_LSP_LAUNCH_FAILED),
    (S.HANDSHAKE, JsonRpcError(-32603, "bad"), W.SOURCEKIT_LSP_LAUNCH_FAILED),
    (S.HANDSHAKE, FramingError("garbage"), W.SOURCEKIT_LSP_LAUNCH_FAILED),
    (S.REQUEST, TimeoutError(), W.SOURCEKIT_LSP_TIMEOUT),
    (S.REQUEST, RequestTimeout("textDocument/references", 10), W.SOURCEKIT_LSP_TIMEOUT),
    (S.REQUEST, ActorTimeout("no answer"), W.SOURCEKIT_LSP_TIMEOUT),
    (S.REQUEST, ConnectionClosed("exited", peer_gone=True), W.SOURCEKIT_LSP_PROCESS_TERMINATED),
    (S.REQUEST, anyio.BrokenResourceError(), W.SOURCEKIT_LSP_PROCESS_TERMINATED),
    (S.REQUEST, anyio.EndOfStream(), W.SOURCEKIT_LSP_PROCESS_TERMINATED),
    (S.REQUEST, BrokenPipeError(errno.EPIPE, "broken pipe"), W.SOURCEKIT_LSP_PROCESS_TERMINATED),
    (S.REQUEST, ConnectionClosed("closed by us", peer_gone=False), W.SOURCEKIT_LSP_NOT_RUNNING),
    (S.REQUEST, anyio.ClosedResourceError(), W.SOURCEKIT_LSP_NOT_RUNNING),
    (S.REQUEST, ActorGone("stopped"), W.SOURCEKIT_LSP_NOT_RUNNING),
    (S.REQUEST, JsonRpcError(-32001, "refused"), W.SOURCEKIT_LSP_PROTOCOL_ERROR),
    (S.REQUEST, FramingError("malformed Content-Length"), W.SOURCEKIT_LSP_PROTOCOL_ERROR),
    (S.REQUEST, UnexpectedResponse("not a list"), W.SOURCEKIT_LSP_PROTOCOL_ERROR),
    (S.FILE_READ, FileNotFoundError(errno.ENOENT, "gone"), W.LSP_FILE_READ_FAILED),
    (S.FILE_READ, PermissionError(errno.EACCES, "denied"), W.LSP_FILE_READ_FAILED),
    (S.FILE_READ, UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), W.LSP_FILE_READ_FAILED),
    (S.FILE_READ, ValueError("odd"), W.SOURCEKIT_LSP_ERROR),
    (S.REQUEST, ValueError("odd"), W.SOURCEKIT_LSP_ERROR),
    (S.LAUNCH, RuntimeError("odd"), W.SOURCEKIT_LSP_ERROR),
    (
        S.REQUEST,
        ExceptionGroup("one", [ConnectionClosed("exited", peer_gone=True)]),
        W.SOURCEKIT_LSP_PROCESS_TERMINATED,
    ),
    (S.REQUEST, ExceptionGroup("two", [ValueError("a"), TimeoutError()]), W.SOURCEKIT_LSP_ERROR),
]


@pytest.mark.parametrize(
    ("stage", "error", "code"),
    [
        pytest.param(stage, error, code, id=f"{stage}-{type(error).__name__}-{code}")
        for stage, error, code in ROWS
    ],
)
def test_each_fault_maps_to_its_documented_code(
    stage: LspStage, error: BaseException, code: WarningCode
) -> None:
    assert fault_code(error, stage) is code
    coded = classify_fault(error, stage, context="sourcekit-lsp for /r")
    assert coded.code is code
    if isinstance(error, CodedError):
        assert coded is error
    else:
        assert coded.message.startswith("sourcekit-lsp for /r: ")


def test_every_sourcekit_lsp_code_has_a_row() -> None:
    lsp_codes = {
        code
        for code in WarningCode
        if code.value.startswith("sourcekit_lsp_") or code.value.startswith("lsp_")
    }
    covered = {code for _, _, code in ROWS}
    # Not faults of the process: one comes from the workspace, one from checking
    # sourcekit-lsp's locations against the file's bytes in a rename plan.
    assert lsp_codes - covered == {W.SOURCEKIT_LSP_NEEDS_COMPILE_COMMANDS, W.LSP_RANGE_OFF_NAME}


def test_the_message_names_the_error_and_keeps_the_cause() -> None:
    error = JsonRpcError(-32001, "refused", method="textDocument/references")
    coded = classify_fault(error, S.REQUEST, context="ctx")
    assert coded.message == "ctx: textDocument/references failed with JSON-RPC error -32001: refused"
    assert coded.__cause__ is error
    assert classify_fault(TimeoutError(), S.REQUEST).message == "sourcekit-lsp: TimeoutError"
