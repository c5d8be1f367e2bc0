"""`xcindex serve | hook <event> | doctor | <tool> …`: the command line.

Import-light at the top: each subcommand imports what it needs when it runs, so that the
hooks (run on every edit an agent makes) never load anyio, mcp or cffi.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself is a third of a hook's imports
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

HOOK_EVENTS = ("session-start", "post-tool-use", "pre-tool-use")


def _parser(words: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line; a tool's options are made only for the tool named in `words`
    (each reads its argument model, which imports the tool and pydantic)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="xcindex", description="Compiler-accurate answers about Swift code."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the MCP server over stdio")
    serve.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.add_argument("--log-file", default=None, help="write JSON log lines here instead of stderr")
    # The plugin's first-start front execs `serve --handover FD` once xcindex is installed.
    serve.add_argument("--handover", type=int, default=None, help=argparse.SUPPRESS)
    hook = sub.add_parser("hook", help="run an agent hook (session-start, post-tool-use, pre-tool-use)")
    hook.add_argument("event", choices=HOOK_EVENTS)
    doctor = sub.add_parser("doctor", help="check this machine and a project, and fix what can be fixed")
    doctor.add_argument(
        "--project", default=None, help="the project to check (default: the working directory)"
    )
    doctor.add_argument("--install", action="store_true", help="build the index and write configuration")
    doctor.add_argument(
        "--build-scheme",
        action="append",
        metavar="SCHEME",
        help="Xcode project: build this scheme's index with xcodebuild (repeatable)",
    )
    commands = sub.add_parser(
        "build-commands",
        help="print the commands that refresh a project's index (a package, or each Xcode scheme)",
    )
    commands.add_argument(
        "--project", default=None, help="the project (default: the one holding the working directory)"
    )
    from xcindex.cli.tools import add_tool_parsers

    add_tool_parsers(sub, _command(words))
    return parser


def _command(words: Sequence[str]) -> str | None:
    """The subcommand `words` name: the first word that is not an option (the top level has
    no option taking a value)."""
    return next((word for word in words if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) == 2 and words[0] == "hook" and words[1] in HOOK_EVENTS:
        # The fast path: a hook runs on every edit an agent makes, so it skips building the
        # whole command line (and importing the tools' subcommands).
        from xcindex.hooks.events import main as hook_main

        return hook_main(words[1])
    if words == ["--version"]:
        # Fast too: the plugin's launcher asks an `xcindex` on PATH for its version.
        from xcindex import __version__

        print(__version__)  # noqa: T201
        return 0
    args = _parser(words).parse_args(words)
    if args.version:
        from xcindex import __version__

        print(__version__)  # noqa: T201
        return 0
    if args.command == "serve":
        import anyio

        from xcindex.cli.log_setup import configure
        from xcindex.server.front import Handover, serve_stdio

        configure(args.log_level, args.log_file)
        handover = Handover.read(args.handover) if args.handover is not None else None
        try:
            anyio.run(serve_stdio, handover, backend=args.backend)
        except KeyboardInterrupt:
            return 130
        return 0
    if args.command == "hook":
        from xcindex.hooks.events import main as hook_main

        return hook_main(args.event)
    if args.command == "doctor":
        from xcindex.doctor.checks import main as doctor_main

        return doctor_main(project=args.project, install=args.install, build_schemes=args.build_scheme)
    if args.command == "build-commands":
        from xcindex.cli.build_commands import main as build_commands_main

        return build_commands_main(args.project)
    from xcindex.cli.tools import is_tool_command, run_tool

    if is_tool_command(args.command):
        try:
            code = run_tool(args)
            sys.stdout.flush()
        except BrokenPipeError:
            return _reader_gone()
        return code
    _parser().print_help(sys.stderr)
    return 2


EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what `git log | head` ends with when the reader closes the pipe."""


def _reader_gone() -> int:
    """The reader closed the pipe (`xcindex refs X | head -1`): stop quietly, as git does.
    Whatever is still buffered for stdout goes nowhere, so the interpreter's own flush at
    exit cannot complain either."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE
