"""Loggers for library code: structlog on top of the standard library's logging.

Library modules never configure anything and never print. Events go to the stdlib logger
of their module, so an embedding host's own logging decides where they end up (by default
only warnings, on stderr); the CLI's `xcindex.cli.log_setup.configure` renders them as JSON
lines. An unconfigured structlog would print to stdout, which is the MCP channel.

structlog is imported by the first event the stdlib logger would emit, not by the modules
that log: a server or a CLI call logging at warning never loads it for its info events.
"""

from __future__ import annotations

import logging

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import structlog


class Logger:
    """structlog's stdlib `BoundLogger` over `logging.getLogger(name)`, made when an event
    first passes the stdlib logger's level (as structlog's own `filter_by_level` decides)."""

    __slots__ = ("_bound", "_stdlib")

    def __init__(self, name: str) -> None:
        self._stdlib = logging.getLogger(name)
        self._bound: structlog.stdlib.BoundLogger | None = None

    def _logger(self) -> structlog.stdlib.BoundLogger:
        if self._bound is None:
            import structlog

            self._bound = structlog.wrap_logger(
                self._stdlib,
                processors=[
                    structlog.stdlib.filter_by_level,
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
                ],
                wrapper_class=structlog.stdlib.BoundLogger,
            )
        return self._bound

    def debug(self, event: str, **kw: Any) -> None:
        if self._stdlib.isEnabledFor(logging.DEBUG):
            self._logger().debug(event, **kw)

    def info(self, event: str, **kw: Any) -> None:
        if self._stdlib.isEnabledFor(logging.INFO):
            self._logger().info(event, **kw)

    def warning(self, event: str, **kw: Any) -> None:
        if self._stdlib.isEnabledFor(logging.WARNING):
            self._logger().warning(event, **kw)

    def error(self, event: str, **kw: Any) -> None:
        if self._stdlib.isEnabledFor(logging.ERROR):
            self._logger().error(event, **kw)

    def exception(self, event: str, **kw: Any) -> None:
        """An error with the exception being handled (its traceback)."""
        if self._stdlib.isEnabledFor(logging.ERROR):
            self._logger().exception(event, **kw)


def get_logger(name: str) -> Logger:
    return Logger(name)
