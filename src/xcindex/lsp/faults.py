"""The one place where a failure talking to sourcekit-lsp becomes a documented warning code.

Every exception raised while finding, launching, handshaking with or querying sourcekit-lsp,
or reading a file to open in it, goes through `classify_fault` together with the stage it
happened in; the result is a `CodedError` that the engine reports as a warning.

| stage            | failure                                            | code                                |
|------------------|----------------------------------------------------|-------------------------------------|
| any              | CodedError                                         | its own code                        |
| discovery/launch | FileNotFoundError                                  | sourcekit_lsp_not_found             |
| discovery/launch | PermissionError                                    | sourcekit_lsp_binary_not_executable |
| launch           | any other OSError (exec format error, …)           | sourcekit_lsp_launch_failed         |
| handshake        | any failure (timeout, exit, error, bad frame, …)   | sourcekit_lsp_launch_failed         |
| request          | TimeoutError, RequestTimeout, ActorTimeout         | sourcekit_lsp_timeout               |
| request          | peer gone (ConnectionClosed, broken pipe, EOF)     | sourcekit_lsp_process_terminated    |
| request          | closed by us (ConnectionClosed, ActorGone, closed) | sourcekit_lsp_not_running           |
| request          | JsonRpcError, FramingError, UnexpectedResponse     | sourcekit_lsp_protocol_error        |
| file read        | OSError, UnicodeDecodeError                        | lsp_file_read_failed                |
| any              | a group of exactly one exception                   | that exception's code               |
| any              | anything else                                      | sourcekit_lsp_error                 |
"""

from __future__ import annotations

from enum import StrEnum

import anyio

from xcindex.errors import ActorGone, ActorTimeout, CodedError
from xcindex.lsp.client import UnexpectedResponse
from xcindex.lsp.jsonrpc import ConnectionClosed, FramingError, JsonRpcError
from xcindex.vocabulary import WarningCode


class LspStage(StrEnum):
    """Where a failure happened; the same exception means different things in each."""

    DISCOVERY = "discovery"
    LAUNCH = "launch"
    HANDSHAKE = "handshake"
    REQUEST = "request"
    FILE_READ = "file_read"


_PEER_GONE = (anyio.BrokenResourceError, anyio.EndOfStream, BrokenPipeError, ConnectionResetError)
_CLOSED_BY_US = (anyio.ClosedResourceError, ActorGone)


def _describe(error: BaseException) -> str:
    text = str(error)
    return text if text else type(error).__name__


def fault_code(error: BaseException, stage: LspStage) -> WarningCode:
    """The documented warning code for `error` raised during `stage`."""
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return fault_code(error.exceptions[0], stage)
    if isinstance(error, CodedError):
        return error.code
    if stage is LspStage.FILE_READ:
        if isinstance(error, OSError | UnicodeDecodeError):
            return WarningCode.LSP_FILE_READ_FAILED
        return WarningCode.SOURCEKIT_LSP_ERROR
    if stage in (LspStage.DISCOVERY, LspStage.LAUNCH):
        if isinstance(error, FileNotFoundError):
            return WarningCode.SOURCEKIT_LSP_NOT_FOUND
        if isinstance(error, PermissionError):
            return WarningCode.SOURCEKIT_LSP_BINARY_NOT_EXECUTABLE
        if stage is LspStage.LAUNCH and isinstance(error, OSError):
            return WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED
        return WarningCode.SOURCEKIT_LSP_ERROR
    if stage is LspStage.HANDSHAKE:
        return WarningCode.SOURCEKIT_LSP_LAUNCH_FAILED
    # LspStage.REQUEST
    if isinstance(error, TimeoutError | ActorTimeout):
        return WarningCode.SOURCEKIT_LSP_TIMEOUT
    if isinstance(error, ConnectionClosed):
        if error.peer_gone:
            return WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED
        return WarningCode.SOURCEKIT_LSP_NOT_RUNNING
    if isinstance(error, _PEER_GONE):
        return WarningCode.SOURCEKIT_LSP_PROCESS_TERMINATED
    if isinstance(error, _CLOSED_BY_US):
        return WarningCode.SOURCEKIT_LSP_NOT_RUNNING
    if isinstance(error, JsonRpcError | FramingError | UnexpectedResponse):
        return WarningCode.SOURCEKIT_LSP_PROTOCOL_ERROR
    return WarningCode.SOURCEKIT_LSP_ERROR


def classify_fault(error: BaseException, stage: LspStage, *, context: str = "sourcekit-lsp") -> CodedError:
    """`error` as a CodedError carrying its documented code; CodedErrors pass through.

    Args:
        error: what was raised.
        stage: where it was raised.
        context: prefixed to the message, e.g. "sourcekit-lsp for /path/to/root: references".
    """
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return classify_fault(error.exceptions[0], stage, context=context)
    if isinstance(error, CodedError):
        return error
    coded = CodedError(fault_code(error, stage), f"{context}: {_describe(error)}")
    coded.__cause__ = error
    return coded
