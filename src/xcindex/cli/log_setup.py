"""structlog set-up for the CLI and the server, never run at import time.

JSON lines go to stderr (stdout is the MCP channel) or to a file: xcindex's own events
(structlog event dicts carried by stdlib records, `xcindex._log`) and records from other
libraries (mcp, anyio) are rendered by one formatter on the root handler. A library user's own logging is
never touched: only the entry points call `configure`.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

TYPE_CHECKING = False
if TYPE_CHECKING:
    import structlog


class _JsonLines(logging.Formatter):
    """structlog's ProcessorFormatter (below), made by the first record it formats: a run
    that logs nothing at its level never imports structlog."""

    def __init__(self) -> None:
        super().__init__()
        self._formatter: structlog.stdlib.ProcessorFormatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:
            self._formatter = _processor_formatter()
        return self._formatter.format(record)


def _processor_formatter() -> structlog.stdlib.ProcessorFormatter:
    import structlog

    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    # Library code logs through stdlib loggers wrapped by `xcindex._log` (never through a
    # structlog configuration): this formatter renders their events and every other
    # library's records alike.
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.ExtraAdder()],
        processors=[
            *shared,
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
    )


def configure(level: str = "info", file: str | None = None) -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    stream: TextIO = open(file, "a", encoding="utf-8", buffering=1) if file else sys.stderr  # noqa: SIM115
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_JsonLines())
    root = logging.getLogger()
    # The MCP SDK may have called basicConfig: our handler must be the only one.
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(numeric)
