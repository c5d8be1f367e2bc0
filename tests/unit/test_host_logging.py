"""An embedding host that configures only the standard library's logging reads xcindex's
events as lines once it installs structlog's ProcessorFormatter (docs/architecture.md)."""

from __future__ import annotations

import io
import json
import logging

import structlog

from xcindex._log import get_logger


def test_a_stdlib_host_reads_events_as_json_lines_with_processor_formatter() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ]
        )
    )
    host = logging.getLogger("xcindex")
    host.addHandler(handler)
    host.setLevel(logging.INFO)
    try:
        get_logger("xcindex.engine").info("index_refreshed", units_read=3)
    finally:
        host.removeHandler(handler)
        host.setLevel(logging.NOTSET)
    event = json.loads(stream.getvalue().strip())
    assert event == {"event": "index_refreshed", "units_read": 3}
