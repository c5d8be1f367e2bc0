"""Spawn `xcindex serve` → first answer with a warm cache, for one or more executables.

`python -m bench.startup --scales S,M,L --runs 7 --exe before=/path/xcindex --exe after=...`
times, on each built benchmark package, two clients: the MCP SDK's own client in its
default mode (what `bench.run` uses: `server/discover`, so the 2026-07-28 protocol, then
`find_symbol`) and a raw handshake-era client (`initialize`, `notifications/initialized`,
`find_symbol`: what Claude Code sends). Runs of the executables are interleaved, so a
change in the machine's load falls on all of them; it prints medians and the load average
seen. The cache folder must already hold each package's database (one warm-up call per
scale and executable is made and not counted). An executable is anything that takes
`serve`: an older checkout can be measured with a two-line shell script that puts its
`src` first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.build import bench_dir
from bench.measure import XCINDEX


@dataclass(frozen=True)
class Run:
    opened_s: float
    """Spawn → the handshake (or discover) answered."""
    first_answer_s: float
    """Spawn → the first find_symbol answered."""
    protocol: str


def subject_name(root: Path) -> str:
    name: str = json.loads((root / "bench-manifest.json").read_text())["queries"][0]["name"]
    return name


def environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "XCINDEX_CACHE_DIR": str(cache)}


async def sdk_client(exe: str, root: Path, cache: Path) -> Run:
    parameters = StdioServerParameters(
        command=exe, args=["serve", "--log-level", "warning"], env=environment(cache)
    )
    started = time.perf_counter()
    async with Client(parameters, read_timeout_seconds=600) as client:
        opened = time.perf_counter()
        result = await client.call_tool(
            "find_symbol", {"symbolName": subject_name(root), "projectPath": str(root)}
        )
        first = time.perf_counter()
        assert not result.is_error, result
        protocol = client.protocol_version
    return Run(opened - started, first - started, protocol)


def handshake_client(exe: str, root: Path, cache: Path) -> Run:
    """Blocking on purpose: the least client-side work between the server's lines."""
    started = time.perf_counter()
    with subprocess.Popen(
        [exe, "serve", "--log-level", "warning"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(cache),
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def send(message: dict[str, Any]) -> None:
            stdin.write(json.dumps(message).encode() + b"\n")
            stdin.flush()

        def answer(request_id: int) -> dict[str, Any]:
            while True:
                message: dict[str, Any] = json.loads(stdout.readline())
                if message.get("id") == request_id:
                    return message

        capabilities: dict[str, Any] = {"roots": {}}
        client_info = {"name": "bench-startup", "version": "0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": client_info}
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        protocol = answer(0)["result"]["protocolVersion"]
        opened = time.perf_counter()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        arguments = {"symbolName": subject_name(root), "projectPath": str(root)}
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "find_symbol", "arguments": arguments},
            }
        )
        result = answer(1)["result"]
        first = time.perf_counter()
        assert not result.get("isError"), result
        stdin.close()
        process.wait(30)
    return Run(opened - started, first - started, protocol)


async def measure(scales: Sequence[str], runs: int, exes: dict[str, str], cache: Path) -> list[str]:
    loads: list[float] = []
    results: dict[tuple[str, str, str], list[Run]] = {}
    for scale in scales:
        root = bench_dir() / scale
        for exe in exes.values():
            await sdk_client(exe, root, cache)
        for _ in range(runs):
            for label, exe in exes.items():
                loads.append(os.getloadavg()[0])
                results.setdefault((scale, label, "sdk client"), []).append(
                    await sdk_client(exe, root, cache)
                )
                results.setdefault((scale, label, "handshake"), []).append(
                    await anyio.to_thread.run_sync(handshake_client, exe, root, cache)
                )
    lines = []
    for (scale, label, client), measured in results.items():
        first = statistics.median(run.first_answer_s for run in measured)
        opened = statistics.median(run.opened_s for run in measured)
        every = " ".join(f"{run.first_answer_s:.2f}" for run in measured)
        lines.append(
            f"{scale} {label} {client} ({measured[0].protocol}): handshake {opened:.3f} s, "
            f"first answer {first:.3f} s (median of {len(measured)}: {every})"
        )
    lines.append(
        f"load average (1 min): {min(loads):.2f} to {max(loads):.2f}, median {statistics.median(loads):.2f}"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="S,M,L")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--cache", type=Path, default=None, help="a warm XCINDEX_CACHE_DIR (default: the environment's)"
    )
    parser.add_argument(
        "--exe", action="append", default=[], metavar="LABEL=PATH", help="default: this checkout's"
    )
    args = parser.parse_args(argv)
    exes = dict(item.split("=", 1) for item in args.exe) or {"xcindex": str(XCINDEX)}
    cache = args.cache or Path(os.environ["XCINDEX_CACHE_DIR"])
    for line in anyio.run(measure, args.scales.split(","), args.runs, exes, cache):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
