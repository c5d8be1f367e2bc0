"""What no polite client sends, written straight onto the server's stdin.

Non-UTF-8 bytes, raw and escaped NUL bytes, lone surrogates, lines that are not JSON or
not JSON-RPC, a 5 MB argument, a JSON nesting bomb. Lines that are JSON-RPC requests are
answered (non-UTF-8 bytes arrive as U+FFFD); lines the MCP SDK cannot parse are dropped
without an answer (its behaviour: it logs them at debug level). Either way the same server
process answers the next good question, and its log records no crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import RawServer, new_tag, result_text, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.toolchain]


def call_line(request_id: int, arguments_json: bytes, tool: bytes = b"find_symbol") -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' % (
        request_id,
        tool,
        arguments_json,
    )


async def good_question(server: RawServer, store: Path) -> None:
    result = await server.call_tool(
        "find_symbol", {"symbolName": "UserService", "indexStorePath": str(store)}
    )
    assert [r["name"] for r in result["structuredContent"]["results"]] == ["UserService"]


async def test_bytes_no_client_would_send(canary_store: Path, tmp_path: Path) -> None:
    store = json.dumps(str(canary_store)).encode()
    log = tmp_path / "server.log"
    env = server_env(tmp_path / "cache", new_tag(), {"CLAUDE_PROJECT_DIR": str(tmp_path)})
    async with RawServer(env, log_file=log) as server:
        await server.initialize()
        await good_question(server, canary_store)
        pid = server.pid

        answered: dict[int, bytes] = {
            # Invalid UTF-8 inside a string: decoded with replacement, then answered.
            101: call_line(101, b'{"symbolName":"\xff\xfe\xc3(User","indexStorePath":%s}' % store),
            # An escaped NUL is a valid JSON string.
            102: call_line(102, b'{"symbolName":"User\\u0000Service","indexStorePath":%s}' % store),
            # Arguments that are not an object, a name that is not a string.
            103: b'{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"find_symbol","arguments":"x"}}\n',
            104: b'{"jsonrpc":"2.0","id":104,"method":"tools/call","params":{"name":42}}\n',
            105: b'{"jsonrpc":"2.0","id":105,"method":"no/such/method"}\n',
            # 5 MB in one argument.
            106: call_line(106, b'{"symbolName":"%s","indexStorePath":%s}' % (b"A" * 5_000_000, store)),
            107: call_line(
                107, b'{"filePath":"\xc0\xafetc/passwd","indexStorePath":%s}' % store, b"blast_radius"
            ),
        }
        dropped = [
            b"this is not JSON\n",
            b"\n",
            b"\x00\x01\x02\xff\xfe\n",
            call_line(201, b'{"symbolName":"raw\x00nul","indexStorePath":%s}' % store),
            call_line(202, b'{"symbolName":"\\udcff","indexStorePath":%s}' % store),
            b'{"jsonrpc":"2.0","id":203,"method":"tools/call","params":{"name":"status","arguments":{}}\n',
            b"[" * 100_000 + b"]" * 100_000 + b"\n",
            b'{"jsonrpc":"1.0","id":204,"method":"tools/call"}\n',
            b"[1,2,3]\n",
        ]
        for line in dropped:
            await server.send_bytes(line)
        answers: dict[int, dict[str, Any]] = {}
        for request_id, line in answered.items():
            await server.send_bytes(line)
            answers[request_id] = await server.response_to(request_id)

        def text(request_id: int) -> str:
            return result_text(answers[request_id]["result"])

        assert "\ufffd" in text(101)
        assert not answers[101]["result"]["isError"]
        assert not answers[102]["result"]["isError"]
        assert answers[103]["error"]["code"] == -32602
        assert answers[104]["error"]["code"] == -32602
        assert answers[105]["error"]["code"] == -32601
        assert (
            text(106)
            == "Error: invalid arguments for find_symbol: 'symbolName': String should have at most 4096 characters."
        )
        assert answers[107]["result"]["isError"]
        assert text(107).startswith("Error: '\ufffd\ufffdetc/passwd' is not a source file of this index")

        await good_question(server, canary_store)
        assert server.pid == pid
        assert server.process is not None
        assert server.process.returncode is None
    written = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in written
    assert "tool_call_crashed" not in written
