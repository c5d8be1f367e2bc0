"""The catalogue the plugin's first-start front answers from: the real server's own answers.

Before xcindex is installed, `xcindex.plugin.front` (stdlib only) answers the handshake and
`tools/list` from `src/xcindex/plugin/catalogue.json`; this builds that file from the
registry, with the functions the real front end answers with. The real front end answers
`tools/list` from the same file too (`protocol.tools_list_result`: it spares a session's
start loading every tool), so a stale file would be served: the test below guards both. Regenerate it after changing
a tool, the instructions or the version:

    python -m xcindex.server.catalogue

(`tests/unit/test_plugin_front.py` fails while the committed file differs.)
"""

from __future__ import annotations

import json
import sys
from typing import Any

from xcindex.server.calls import SERVER_NAME, SERVER_VERSION
from xcindex.server.protocol import (
    CATALOGUE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSION,
    discover_result,
    initialize_result,
    made_tools_list,
)

PATH = CATALOGUE


def catalogue() -> dict[str, Any]:
    return {
        "version": SERVER_VERSION,
        "handshakeVersions": list(HANDSHAKE_VERSIONS),
        "modernVersion": MODERN_VERSION,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "initialize": initialize_result({"protocolVersion": LATEST_HANDSHAKE_VERSION}),
        "discover": discover_result(),
        "toolsHandshake": made_tools_list(False),
        "toolsModern": made_tools_list(True),
    }


def text() -> str:
    return json.dumps(catalogue(), ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    PATH.write_text(text(), encoding="utf-8")
    sys.stdout.write(f"wrote {PATH}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
