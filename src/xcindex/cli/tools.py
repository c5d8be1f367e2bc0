"""`xcindex symbol | refs | def | … | rename`: the tools, for people, made from the registry.

Every tool in `registry.TOOLS` is a subcommand: its argument model's fields become
positionals or `--kebab-case` options (help from the field's description, the default
shown), the model validates them exactly as it does for the MCP server and the Engine,
and the tool's terminal renderer prints the answer (`--json`: the structured content).

Exit codes: 0 an answer with results, 1 no results, 2 an error (bad input, no index, a
refusal other than "no such symbol"), 130 interrupted; a closed pipe ends quietly. A bad
input never prints a traceback.

Import-light at the top, like `cli.py`: building the parser reads the registry's words;
only the named tool's options are made (from its argument model: that tool and pydantic are
imported, no other tool, anyio or cffi), and the Engine is imported only when a tool runs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, get_args, get_origin

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from pydantic.fields import FieldInfo

    from xcindex.engine import Engine
    from xcindex.engine.declaration import ToolDecl
    from xcindex.presentation.terminal import Output
    from xcindex.tools.arguments import LocationArgs
    from xcindex.tools.find_symbol import FindSymbolAnswer

T = TypeVar("T")
_USR = re.compile(r"^(s|c):")
_LOCATION_FIELDS = ("project_path", "index_store_path")
CLI_OVERLAY_WAIT_S = 60.0
"""How long a command waits for the freshness overlay of the files its answer names (the
server waits 3 s): a person asked for this answer, and the process's end would drop the
work (a first compile that builds the system modules' cache takes seconds)."""


class UsageError(Exception):
    """Bad input found after parsing (an ambiguous name, ...): exit 2 with this message."""


def _command_names() -> tuple[str, ...]:
    from xcindex.engine.registry import TOOLS

    return tuple(tool.cli.command for tool in TOOLS)


def is_tool_command(command: str | None) -> bool:
    return command is not None and command in _command_names()


# --- the parser ------------------------------------------------------------------------


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def _metavar(field: str) -> str:
    return field.upper().removesuffix("_PATH") if field != "file_path" else "FILE"


def _is_list(info: FieldInfo) -> bool:
    annotation = info.annotation
    return get_origin(annotation) is list or any(get_origin(a) is list for a in get_args(annotation))


def _scalar(info: FieldInfo) -> type:
    for candidate in (info.annotation, *get_args(info.annotation)):
        if candidate in (int, float):
            return candidate  # type: ignore[no-any-return]
    return str


def add_tool_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], chosen: str | None = None
) -> None:
    """One subcommand per registered tool; only the `chosen` one gets its options (made from
    its argument model: the other tools are not imported, so `xcindex --help` stays quick)."""
    from xcindex.engine.registry import TOOLS

    for tool in TOOLS:
        parser = sub.add_parser(tool.cli.command, help=tool.cli.help, description=tool.cli.description)
        if tool.cli.command == chosen:
            _add_options(parser, tool)


def _add_options(parser: argparse.ArgumentParser, tool: ToolDecl[Any, Any]) -> None:
    from xcindex.engine.registry import SYMBOL_HELP

    spec = tool.cli
    if spec.symbol_field is not None:
        parser.add_argument("symbol", help=SYMBOL_HELP)
    for name, info in tool.args.model_fields.items():
        if name in _LOCATION_FIELDS or name == spec.symbol_field:
            continue
        help_text = info.description or ""
        if name in spec.positionals:
            nargs: str | None = "+" if _is_list(info) else "?" if name in spec.optional_positionals else None
            parser.add_argument(name, metavar=_metavar(name), nargs=nargs, help=help_text or None)
            continue
        # A list's default comes from a factory (its `default` is pydantic's "undefined"
        # marker, which `impact --help` printed); an empty one says nothing worth a note.
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        if default is not None and default != []:
            help_text += f" (default {default:g})" if isinstance(default, float) else f" (default {default})"
        parser.add_argument(
            _flag(name),
            dest=name,
            type=_scalar(info),
            nargs="+" if _is_list(info) else None,
            metavar="N" if _scalar(info) is not str else "TEXT",
            default=argparse.SUPPRESS,
            help=help_text,
        )
    if spec.paged:
        parser.add_argument("--all", action="store_true", help="every item: pages through the whole list")
    for flag in spec.flags:
        parser.add_argument(
            flag.flag, dest=flag.config_field, action="store_const", const=flag.value, help=flag.help
        )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--project",
        metavar="PATH",
        help="a Swift package folder, its Package.swift, an .xcodeproj or an .xcworkspace "
        "(default: the working directory)",
    )
    where.add_argument(
        "--index-store", metavar="PATH", help="the index store folder (the one that contains v5/)"
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON (for scripts)")
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=("debug", "info", "warning", "error"),
        help="JSON log lines on stderr at this level (default: warning)",
    )
    parser.set_defaults(tool=tool.name)


# --- running one ------------------------------------------------------------------------


def _cli_name(tool: ToolDecl[Any, Any]) -> dict[str, str]:
    """How each argument's documented name is spelled on this command line."""
    names: dict[str, str] = {"projectPath": "--project", "indexStorePath": "--index-store"}
    for field in tool.args.model_fields:
        public = tool.args.public_name(field)
        if field in _LOCATION_FIELDS:
            continue
        if field == tool.cli.symbol_field:
            names[public] = "SYMBOL"
        elif field in tool.cli.positionals:
            names[public] = _metavar(field)
        else:
            names[public] = _flag(field)
    return names


def _values(tool: ToolDecl[Any, Any], args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if args.index_store is not None:
        values["index_store_path"] = os.path.abspath(args.index_store)
    else:
        values["project_path"] = (
            os.path.abspath(args.project) if args.project else _enclosing_project(os.getcwd())
        )
    for field in tool.args.model_fields:
        if field in _LOCATION_FIELDS or field == tool.cli.symbol_field:
            continue
        value = getattr(args, field, None)
        if value is None:
            continue
        if field in tool.cli.path_fields:
            value = [os.path.abspath(v) for v in value] if isinstance(value, list) else os.path.abspath(value)
        values[field] = value
    return values


def _enclosing_project(start: str) -> str:
    """The folder a command run without --project is about: the nearest one holding a
    Package.swift, an .xcodeproj or an .xcworkspace, from the working directory up (as git
    finds its repository from a subfolder); a UsageError when none does (it said "--project
    '<the working directory>' is neither …", naming an option nobody gave)."""
    from xcindex.project.candidates import enclosing_project_folder

    found = enclosing_project_folder(Path(start))
    if found is None:
        raise UsageError(
            f"no Swift package or Xcode project in {os.path.abspath(start)} or a folder above it: run "
            "the command inside one, or name it with --project PATH (or the store with --index-store PATH)."
        )
    return str(found)


async def _resolve_usr(
    engine: Engine, where: dict[str, Any], symbol: str, output: Output, *, protocols: bool = False
) -> str | FindSymbolAnswer:
    """A USR as given, or the USR of the one symbol a name resolves to (docs/tools.md,
    "Resolving names"); the (empty) find_symbol answer when the name finds nothing."""
    from xcindex.indexstore.model import kind_name
    from xcindex.presentation.text import describe
    from xcindex.tools.resolve import PROTOCOL_KIND, pick_one

    if _USR.match(symbol):
        return symbol
    found = await engine.find_symbol(symbol, **where)
    resolved, note = found.resolved, found.resolved_note
    if protocols:
        kept = tuple(m for m in found.matches if m.symbol.kind == PROTOCOL_KIND)
        if found.matches and not kept:
            first = found.matches[0]
            raise UsageError(
                f"'{symbol}' names no protocol ({first.symbol.name} is a {kind_name(first.symbol.kind)}): "
                f"conformances lists the types that conform to a protocol; `xcindex types {symbol}` shows "
                "what a type conforms to."
            )
        found = replace(found, matches=kept)
        resolved, note = pick_one(kept)
    if not found.matches:
        return found
    if resolved is None:
        shown = found.matches[:20]
        candidates = "\n".join(f"  {describe(m)}" for m in shown)
        more = f"\n  … and {len(found.matches) - len(shown)} more" if len(found.matches) > len(shown) else ""
        raise UsageError(f"'{symbol}' names {len(found.matches)} symbols; give one USR:\n{candidates}{more}")
    if note:
        output.note(f"note: {note}")
    return resolved.symbol.usr


def _upper_bound(model: type[LocationArgs], field: str) -> int:
    """A field's `le` limit (the largest page `--all` asks for)."""
    return next(int(meta.le) for meta in model.model_fields[field].metadata if getattr(meta, "le", None))


def _emit_json(output: Output, payload: Any) -> None:
    output.line(json.dumps(payload, indent=2, ensure_ascii=False))


async def _ask(engine: Engine, tool: ToolDecl[Any, Any], args: argparse.Namespace, output: Output) -> int:
    from xcindex.presentation import terminal

    values = _values(tool, args)
    if getattr(args, "all", False) and "max_results" in tool.args.model_fields:
        values["max_results"] = _upper_bound(tool.args, "max_results")
    where = {key: values[key] for key in _LOCATION_FIELDS if key in values}
    subject = getattr(args, "symbol", None) or ""
    if tool.cli.symbol_field is not None:
        usr = await _resolve_usr(engine, where, subject, output, protocols=tool.cli.protocols_only)
        if not isinstance(usr, str):
            if args.json:
                _emit_json(output, usr.to_json())
                return terminal.EXIT_NO_RESULTS
            return terminal.symbol_not_found(usr, output)
        values[tool.cli.symbol_field] = usr
    built: LocationArgs = tool.args.build(**values)
    if tool.cli.settle_first:
        await engine.settle(**where)
    turned_off = any(getattr(args, flag.config_field, None) is not None for flag in tool.cli.flags)
    if tool.cli.slow_note is not None and not turned_off:
        answer = await _saying_when_slow(engine.call(tool, built), output, tool.cli.slow_note + "\n")
    else:
        answer = await engine.call(tool, built)
    if getattr(args, "all", False):
        answer = await _every_page(engine, tool, values, answer)
    ctx = terminal.Context(tool.cli.command, subject)
    if not args.json:
        return tool.show(answer, output, ctx)
    # The same exit code and stderr notes as for a person; stdout carries only the JSON.
    _emit_json(output, tool.structured(answer, None))
    return tool.show(answer, replace(output, out=io.StringIO()), ctx)


async def _saying_when_slow(call: Awaitable[T], output: Output, message: str, after_s: float = 1.0) -> T:
    """Await `call`, writing `message` to stderr if it takes longer than `after_s` (a refusal
    answers at once and should not claim to ask sourcekit-lsp)."""
    import anyio

    async with anyio.create_task_group() as tg:

        async def say_later() -> None:
            await anyio.sleep(after_s)
            output.err.write(message)
            output.err.flush()

        tg.start_soon(say_later)
        result = await call
        tg.cancel_scope.cancel()
    return result


async def _every_page(engine: Engine, tool: ToolDecl[Any, Any], values: dict[str, Any], answer: Any) -> Any:
    """`--all`: every page of a paged list, joined (the pages share one order)."""
    sites = list(answer.sites)
    while (offset := answer.next_offset()) is not None:
        answer = await engine.call(tool, tool.args.build(**{**values, "offset": offset}))
        sites.extend(answer.sites)
    return replace(answer, sites=tuple(sites), offset=0, truncated=False)


def _single(error: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def run_tool(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one tool subcommand; returns the exit code."""
    import anyio

    from xcindex._log import get_logger
    from xcindex.cli.log_setup import configure
    from xcindex.engine import Engine, EngineConfig, current_progress_listener
    from xcindex.engine.registry import BY_NAME
    from xcindex.errors import XcindexError
    from xcindex.presentation import terminal

    out = out or sys.stdout
    err = err or sys.stderr
    configure(args.log_level)
    log = get_logger(__name__)
    output = terminal.Output.for_streams(out, err)
    progress = terminal.Progress(err)
    tool = BY_NAME[args.tool]

    async def main() -> int:
        current_progress_listener.set(progress)
        settings: dict[str, Any] = {
            flag.config_field: getattr(args, flag.config_field)
            for flag in tool.cli.flags
            if getattr(args, flag.config_field, None) is not None
        }
        async with Engine(EngineConfig(overlay_wait_s=CLI_OVERLAY_WAIT_S, **settings)) as engine:
            try:
                return await _ask(engine, tool, args, output)
            finally:
                progress.finish()

    def fail(message: str) -> int:
        output.error(f"xcindex {args.command}: error: {message}")
        return terminal.EXIT_ERROR

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return terminal.EXIT_INTERRUPTED
    except BaseException as raised:
        error = _single(raised)
        if isinstance(error, KeyboardInterrupt):
            return terminal.EXIT_INTERRUPTED
        if isinstance(error, BrokenPipeError):
            raise error from None  # the reader has gone: `xcindex` ends quietly (cli.py)
        if isinstance(error, XcindexError):
            return fail(error.render(_cli_name(tool)))
        if isinstance(error, UsageError):
            return fail(str(error))
        if isinstance(error, Exception):
            log.debug("cli_tool_crashed", command=args.command, exc_info=error)
            return fail(
                f"unexpected {type(error).__name__}: {error} (this is a bug; "
                "--log-level debug shows the traceback)"
            )
        raise
