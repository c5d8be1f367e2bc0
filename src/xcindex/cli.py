"""`xcindex serve | hook <event> | doctor | <tool> …`: the command line.

Import-light at the top: each subcommand imports what it needs when it runs, so that the
hooks (run on every edit an agent makes) never load anyio, mcp or cffi.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xcindex.cli_tools import TOOL_COMMANDS, add_tool_parsers


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xcindex", description="Compiler-accurate answers about Swift code."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the MCP server over stdio")
    serve.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.add_argument("--log-file", default=None, help="write JSON log lines here instead of stderr")
    hook = sub.add_parser("hook", help="run an agent hook (session-start, post-tool-use, pre-tool-use)")
    hook.add_argument("event", choices=("session-start", "post-tool-use", "pre-tool-use"))
    doctor = sub.add_parser("doctor", help="check this machine and a project, and fix what can be fixed")
    doctor.add_argument(
        "--project", default=None, help="the project to check (default: the working directory)"
    )
    doctor.add_argument("--install", action="store_true", help="build the index and write configuration")
    add_tool_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.version:
        from xcindex import __version__

        print(__version__)  # noqa: T201
        return 0
    if args.command == "serve":
        import anyio

        from xcindex.logging import configure
        from xcindex.server import serve_stdio

        configure(args.log_level, args.log_file)
        try:
            anyio.run(serve_stdio, backend=args.backend)
        except KeyboardInterrupt:
            return 130
        return 0
    if args.command == "hook":
        from xcindex.hooks import main as hook_main

        return hook_main(args.event)
    if args.command == "doctor":
        from xcindex.doctor import main as doctor_main

        return doctor_main(project=args.project, install=args.install)
    if args.command in TOOL_COMMANDS:
        from xcindex.cli_tools import run_tool

        return run_tool(args)
    _parser().print_help(sys.stderr)
    return 2
