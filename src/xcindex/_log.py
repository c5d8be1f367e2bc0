"""Loggers for library code: structlog on top of the standard library's logging.

Library modules never configure anything and never print. Events go to the stdlib logger
of their module, so an embedding host's own logging decides where they end up (by default
only warnings, on stderr); the CLI's `xcindex.cli.log_setup.configure` renders them as JSON
lines. An unconfigured structlog would print to stdout, which is the MCP channel.
"""

from __future__ import annotations

import logging

import structlog


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(name),
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return logger
