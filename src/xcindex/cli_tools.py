"""`xcindex symbol | refs | def | overrides | conformances | blast | status | rename`: the tools, for people.

Each subcommand asks the Engine one question and prints the answer for a person (grouped
by file, paths relative to the working directory, colour only on a terminal and never with
NO_COLOR) or, with `--json`, the same structured content the MCP tool returns. Notes about
freshness and warnings go to stderr, and so does progress during a first ingestion.

Exit codes: 0 an answer with results, 1 no results (nothing found; for `status`, never;
for `rename`, the refusal `usr_not_found`), 2 an error (bad input, no index, any other
rename refusal, ...), 130 interrupted. A bad input never prints a traceback.

Import-light at the top, like `cli.py`: argparse is all the parser needs; the Engine (and
with it anyio and cffi) is imported only when a tool runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypedDict

if TYPE_CHECKING:
    from xcindex.engine import Engine
    from xcindex.tools.common import Freshness
    from xcindex.tools.find_symbol import FindSymbolAnswer
    from xcindex.tools.references import SitesAnswer
    from xcindex.tools.status import StatusAnswer

EXIT_OK = 0
EXIT_NO_RESULTS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

TOOL_COMMANDS = ("symbol", "refs", "def", "overrides", "conformances", "blast", "status", "rename")
_USR = re.compile(r"^(s|c):")
_DEFAULT_MAX_RESULTS = 100
_MAX_RESULTS = 500
_DEFAULT_MAX_RANGES = 500
_STATUS_LISTED = 50
_MAX_RANGES = 5000


class UsageError(Exception):
    """Bad input found after parsing (an ambiguous name, ...): exit 2 with this message."""


# --- the parser ------------------------------------------------------------------------


def _bounded(maximum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not 1 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be between 1 and {maximum}; got {value}")
        return value

    return parse


def add_tool_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the tool subcommands on `xcindex`'s subparsers."""

    def tool(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help_text, description=description)
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
        return parser

    symbol_help = "a USR (s:… or c:…), or a name that find_symbol resolves to exactly one symbol"
    symbol = tool(
        "symbol",
        "find symbols by name, with their USRs",
        "Candidates for a name: fetchUser(id:), a bare fetchUser, or UserService.fetchUser(id:).",
    )
    symbol.add_argument("name")
    refs = tool(
        "refs",
        "every place a symbol is written",
        "Every source occurrence of a symbol, grouped by file, with its roles.",
    )
    refs.add_argument("name", nargs="?", help="a symbol name (every symbol it names)")
    refs.add_argument("--usr", help="one symbol, by USR (from `xcindex symbol`)")
    refs.add_argument(
        "--max-results",
        type=_bounded(_MAX_RESULTS),
        default=_DEFAULT_MAX_RESULTS,
        metavar="N",
        help=f"show at most N sites (default {_DEFAULT_MAX_RESULTS}, at most {_MAX_RESULTS})",
    )
    refs.add_argument("--all", action="store_true", help="every site (pages through the whole list)")
    definition = tool("def", "where a symbol is defined", "The canonical definition site of a symbol.")
    definition.add_argument("symbol", help=symbol_help)
    overrides = tool(
        "overrides",
        "overrides and protocol witnesses of a method",
        "Overrides in subclasses (transitively), protocol witnesses and default implementations.",
    )
    overrides.add_argument("symbol", help=symbol_help)
    overrides.add_argument("--all", action="store_true", help="every override (pages through the whole list)")
    conformances = tool(
        "conformances",
        "the types conforming to a protocol",
        "Every type that conforms to a protocol, including conformances declared in extensions.",
    )
    conformances.add_argument("symbol", help=symbol_help)
    blast = tool(
        "blast",
        "the files and tests a change to one file reaches",
        "Direct and transitive dependents of a source file, its covering tests, and the "
        "`swift test --filter` command that runs them.",
    )
    blast.add_argument("file", help="the source file (relative to the working directory, or absolute)")
    tool(
        "status",
        "index health and freshness",
        "Where the index store is, when it was last written, which files changed since, and "
        "what the database holds. Waits for a first ingestion (with progress on stderr).",
    )
    rename = tool(
        "rename",
        "plan a rename (never edits a file)",
        "Every range to edit for a rename, including overrides, witnesses and extensions, each "
        "with a confidence tier; sourcekit-lsp confirms the index's ranges unless --no-lsp.",
    )
    rename.add_argument("symbol", help=symbol_help)
    rename.add_argument("new_name", metavar="NEW_NAME")
    rename.add_argument(
        "--max-ranges",
        type=_bounded(_MAX_RANGES),
        default=_DEFAULT_MAX_RANGES,
        metavar="N",
        help=f"list at most N ranges (default {_DEFAULT_MAX_RANGES}, at most {_MAX_RANGES})",
    )
    rename.add_argument(
        "--no-lsp", action="store_true", help="plan from the index alone (no sourcekit-lsp cross-check)"
    )


# --- output ----------------------------------------------------------------------------


def colour_wanted(stream: TextIO) -> bool:
    """Colour only on a terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass(frozen=True)
class Style:
    enabled: bool

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def file(self, text: str) -> str:
        return self._wrap("1;36", text)

    def name(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def warn(self, text: str) -> str:
        return self._wrap("33", text)

    def error(self, text: str) -> str:
        return self._wrap("31", text)

    def tier(self, tier: str) -> str:
        return self._wrap({"green": "32", "yellow": "33", "red": "31"}[tier.split("-")[0]], tier)


@dataclass(frozen=True)
class Output:
    out: TextIO
    err: TextIO
    style: Style
    err_style: Style
    cwd: Path

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def note(self, text: str) -> None:
        self.err.write(self.err_style.warn(text) + "\n")

    def path(self, path: str) -> str:
        """Relative to the working directory when the file is under it, else absolute."""
        try:
            return str(Path(path).relative_to(self.cwd))
        except ValueError:
            return path


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _print_freshness(output: Output, freshness: Freshness) -> None:
    if freshness.stale_files:
        files = ", ".join(output.path(p) for p in freshness.stale_files)
        output.note(f"note: changed since the index was built (rebuild before trusting them): {files}")
    if freshness.session_edited_files:
        files = ", ".join(output.path(p) for p in freshness.session_edited_files)
        output.note(f"note: edited this session, after the index was built: {files}")
    for warning in freshness.warnings:
        output.note(f"warning [{warning.code}]: {warning.message}")


def _grouped(output: Output, rows: Iterable[tuple[str, int, int, str]]) -> None:
    """One header per file, then `line:column  text` per site, in the given order."""
    current: str | None = None
    for path, line, column, text in rows:
        if path != current:
            if current is not None:
                output.line()
            current = path
            output.line(output.style.file(output.path(path)))
        output.line(f"  {output.style.dim(f'{line}:{column}'.rjust(8))}  {text}")


# --- progress --------------------------------------------------------------------------


class Progress:
    """Progress of a first ingestion on stderr: one updating line on a terminal, else a
    line at the start, at most one a second, and one at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = _isatty(stream) and os.environ.get("TERM") != "dumb"
        self.waiting_since: float | None = None
        self.started: float | None = None
        self.last_line = 0.0
        self.shown = False

    async def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        self.waiting_since = self.waiting_since or now
        if not total:
            return  # nothing read yet, or a warm start whose refresh finds nothing to read
        if self.started is None:
            self.started = self.waiting_since
            self.stream.write(
                "xcindex: first ingestion of this index store (later runs reuse the database)\n"
            )
        text = f"xcindex: indexing: {done}/{total} records"
        if self.live:
            self.stream.write(f"\r\x1b[K{text}")
            self.shown = True
        elif now - self.last_line >= 1.0 or done >= total:
            self.stream.write(text + "\n")
            self.last_line = now
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.shown = False
        if self.started is not None:
            self.stream.write(f"xcindex: indexed in {time.monotonic() - self.started:.1f} s\n")
            self.started = None
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# --- the commands ----------------------------------------------------------------------


class Where(TypedDict):
    """The location arguments every Engine method takes."""

    project_path: str | None
    index_store_path: str | None


def _where(args: argparse.Namespace) -> Where:
    if args.index_store is not None:
        return Where(project_path=None, index_store_path=os.path.abspath(args.index_store))
    return Where(project_path=os.path.abspath(args.project or "."), index_store_path=None)


async def _resolve_usr(
    engine: Engine, where: Where, symbol: str, output: Output, *, protocols: bool = False
) -> str | FindSymbolAnswer:
    """A USR as given, or the USR of the one symbol a name resolves to (docs/tools.md,
    "Resolving names"); the (empty) find_symbol answer when the name finds nothing."""
    from dataclasses import replace

    from xcindex.tools.find_symbol import describe
    from xcindex.tools.resolve import PROTOCOL_KIND, pick_one

    if _USR.match(symbol):
        return symbol
    found = await engine.find_symbol(symbol, **where)
    resolved, note = found.resolved, found.resolved_note
    if protocols:
        kept = tuple(m for m in found.matches if m.symbol.kind == PROTOCOL_KIND)
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


def _not_found(output: Output, args: argparse.Namespace, found: FindSymbolAnswer) -> int:
    if args.json:
        _emit_json(output, found.to_json())
    else:
        output.line(f"No symbol named {found.query} in this index.")
        if "(" not in found.query:
            output.line("Swift methods are named with their labels, e.g. fetchUser(id:).")
    _print_freshness(output, found.freshness)
    return EXIT_NO_RESULTS


def _emit_json(output: Output, payload: dict[str, Any]) -> None:
    output.line(json.dumps(payload, indent=2, ensure_ascii=False))


async def _symbol(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    from xcindex.indexstore.model import kind_name

    answer = await engine.find_symbol(args.name, **where)
    if args.json:
        _emit_json(output, answer.to_json())
    elif answer.matches:
        how = " (by base name)" if answer.matched_by == "base_name" else ""
        output.line(f"{_plural(len(answer.matches), 'symbol')} named {args.name}{how}, best first")
        output.line()
        for m in answer.matches:
            where_text = (
                f"{output.style.file(output.path(m.definition.path))}:{m.definition.line}"
                if m.definition is not None
                else f"{m.module} (SDK)"
            )
            inside = f" in {m.container_name}" if m.container else ""
            inherited = " (inherited)" if m.inherited else ""
            output.line(
                f"{output.style.name(m.symbol.name)}  {kind_name(m.symbol.kind)}{inside}{inherited}  "
                f"{where_text}  {output.style.dim(m.symbol.usr)}"
            )
            if m.hint:
                output.line(f"    {output.style.dim(m.hint)}")
    else:
        output.line(f"No symbol named {args.name} in this index.")
        if "(" not in args.name:
            output.line("Swift methods are named with their labels, e.g. fetchUser(id:).")
    _print_freshness(output, answer.freshness)
    return EXIT_OK if answer.matches else EXIT_NO_RESULTS


async def _sites(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:

    if args.command == "refs":
        if (args.name is None) == (args.usr is None):
            raise UsageError("give a symbol name or --usr USR (one of them)")
        limit = _MAX_RESULTS if args.all else args.max_results
        answer = await _every_page(
            args.all,
            lambda offset: engine.find_references(
                args.name, usr=args.usr, max_results=limit, offset=offset, **where
            ),
        )
        what, preposition = "reference", "to"
    else:
        usr = await _resolve_usr(engine, where, args.symbol, output)
        if not isinstance(usr, str):
            return _not_found(output, args, usr)
        answer = await _every_page(
            args.all, lambda offset: engine.find_overrides(usr, offset=offset, **where)
        )
        what, preposition = "override", "of"
    if args.json:
        _emit_json(output, answer.to_json())
    elif answer.sites:
        files = _plural(len({site.occurrence.path for site in answer.sites}), "file")
        subject = ", ".join(sorted({s.name for s in answer.symbols})) or answer.query
        where_shown = f"(the first {len(answer.sites)}, in {files})" if answer.truncated else f"in {files}"
        output.line(f"{_plural(answer.total, what)} {preposition} {subject} {where_shown}")
        output.line()
        _grouped(
            output,
            (
                (
                    site.occurrence.path,
                    site.occurrence.line,
                    site.occurrence.column,
                    f"{output.style.name(site.symbol.name)}  {output.style.dim(site.role_text())}",
                )
                for site in answer.sites
            ),
        )
        if answer.truncated:
            output.line()
            more = "; raise --max-results (at most 500), or --all" if args.command == "refs" else "; --all"
            output.line(f"(showing {len(answer.sites)} of {answer.total}{more})")
    elif not answer.symbols:
        output.line(
            f"No symbol {answer.query} in this index: check the name (methods need labels) or the USR."
        )
    else:
        output.line(f"No {what}s {preposition} {answer.query} in this index.")
    _print_freshness(output, answer.freshness)
    return EXIT_OK if answer.sites else EXIT_NO_RESULTS


async def _every_page(every: bool, fetch: Callable[[int], Awaitable[SitesAnswer]]) -> SitesAnswer:
    """One page, or (`--all`) every page joined: the pages share one order."""
    from dataclasses import replace

    answer = await fetch(0)
    if not every:
        return answer
    sites = list(answer.sites)
    while (offset := answer.next_offset()) is not None:
        answer = await fetch(offset)
        sites.extend(answer.sites)
    return replace(answer, sites=tuple(sites), offset=0, truncated=False)


async def _definition(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    usr = await _resolve_usr(engine, where, args.symbol, output)
    if not isinstance(usr, str):
        return _not_found(output, args, usr)
    answer = await engine.find_definition(usr, **where)
    if args.json:
        _emit_json(output, answer.to_json())
    elif answer.site is not None:
        occ = answer.site.occurrence
        output.line(
            f"{output.style.file(output.path(occ.path))}:{occ.line}:{occ.column}  "
            f"{output.style.name(answer.site.symbol.name)}"
        )
    else:
        output.line(f"No definition of {usr} in this index.")
    _print_freshness(output, answer.freshness)
    return EXIT_OK if answer.site is not None else EXIT_NO_RESULTS


async def _conformances(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    from xcindex.indexstore.model import kind_name

    usr = await _resolve_usr(engine, where, args.symbol, output, protocols=True)
    if not isinstance(usr, str):
        return _not_found(output, args, usr)
    answer = await engine.find_conformances(usr, **where)
    if args.json:
        _emit_json(output, answer.to_json())
    elif answer.conformances:
        name = answer.protocol.name if answer.protocol else usr
        files = {c.anchor.path for c in answer.conformances}
        output.line(
            f"{_plural(len(answer.conformances), 'type')} conform to {name} in {_plural(len(files), 'file')}"
        )
        output.line()

        _grouped(
            output,
            (
                (
                    c.anchor.path,
                    c.anchor.line,
                    c.anchor.column,
                    f"{output.style.name(c.type_symbol.name)}  {kind_name(c.type_symbol.kind)}  "
                    f"{output.style.dim(c.how())}",
                )
                for c in answer.conformances
            ),
        )
    elif answer.protocol is None:
        output.line(f"No protocol {usr} in this index: `xcindex symbol NAME` gives its USR.")
    else:
        output.line(f"No type conforms to {answer.protocol.name} in this index.")
    _print_freshness(output, answer.freshness)
    return EXIT_OK if answer.conformances else EXIT_NO_RESULTS


async def _blast(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    answer = await engine.blast_radius(args.file, **where)
    if args.json:
        _emit_json(output, answer.to_json())
    else:
        output.line(
            f"Changing {output.style.file(output.path(answer.file_path))} reaches "
            f"{_plural(len(answer.affected_files), 'file')} "
            f"({len(answer.direct_dependents)} directly, {_plural(len(answer.covering_tests), 'test file')})"
        )
        indirect = [p for p in answer.affected_files if p not in answer.direct_dependents]
        tests_by_path: dict[str, list[str]] = {}
        for test in answer.tests:
            tests_by_path.setdefault(test.path, []).append(test.filter)
        sections: list[tuple[str, list[str]]] = [
            ("Direct dependents", [output.path(p) for p in answer.direct_dependents]),
            (
                f"Transitive dependents (after {_plural(answer.depth, 'hop')})",
                [output.path(p) for p in indirect],
            ),
            (
                "Covering tests",
                [
                    output.path(p)
                    + (f"  {output.style.dim(', '.join(tests_by_path[p]))}" if p in tests_by_path else "")
                    for p in answer.covering_tests
                ],
            ),
        ]
        for title, rows in sections:
            if rows:
                output.line()
                output.line(output.style.name(title))
                for row in rows:
                    output.line(f"  {row}")
        if answer.bounded:
            output.line(f"(stopped after {answer.depth} hops: the radius may be larger)")
        if answer.swift_test_command:
            output.line()
            output.line(f"Run them: {answer.swift_test_command}")
    _print_freshness(output, answer.freshness)
    return EXIT_OK if answer.affected_files else EXIT_NO_RESULTS


async def _status(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    # A person asking for status wants the settled answer: wait for a first ingestion here
    # (with progress), where the MCP tool answers at once with its progress instead.
    await engine.run_query(lambda db: None, **where)
    answer = await engine.status(**where)
    if args.json:
        _emit_json(output, answer.to_json())
        return EXIT_OK
    data = answer.to_json()
    counts = data["counts"]
    rows = [
        ("Index store", data["indexStorePath"]),
        ("Last write", data["indexMtime"] or "unknown"),
        ("Database", data["databasePath"]),
    ]
    if counts is not None:
        rows.append(
            (
                "Contents",
                f"{counts['liveUnits']} live units, {counts['records']} records, "
                f"{counts['symbols']} symbols, {counts['occurrences']} occurrences",
            )
        )
    rows.append(("Freshness", _freshness_line(answer)))
    for label, value in rows:
        output.line(f"{output.style.name(f'{label:<12}')} {value}")
    for title, paths in (
        ("Changed since indexed", answer.stale_files),
        ("Edited this session", answer.session_edited_files),
    ):
        if paths:
            output.line()
            output.line(output.style.name(f"{title} ({len(paths)})"))
            for path in paths[:_STATUS_LISTED]:
                output.line(f"  {output.path(path)}")
            if len(paths) > _STATUS_LISTED:
                output.line(f"  … and {len(paths) - _STATUS_LISTED} more (--json lists them all)")
    for warning in answer.warnings:
        output.note(f"warning [{warning.code}]: {warning.message}")
    return EXIT_OK


async def _rename(engine: Engine, args: argparse.Namespace, where: Where, output: Output) -> int:
    usr = await _resolve_usr(engine, where, args.symbol, output)
    if not isinstance(usr, str):
        return _not_found(output, args, usr)
    if not args.no_lsp:
        output.err.write("xcindex: asking sourcekit-lsp to confirm the ranges (--no-lsp skips this)\n")
        output.err.flush()
    plan = await engine.plan_rename(
        usr, args.new_name, max_ranges=args.max_ranges, reconcile_with_lsp=not args.no_lsp, **where
    )
    if args.json:
        _emit_json(output, plan.to_json())
    elif plan.refusal is None:
        files = _plural(len({r.path for r in plan.ranges}), "file")
        output.line(
            f"Rename {output.style.name(plan.old_name or usr)} to {output.style.name(plan.new_name)}: "
            f"{_plural(len(plan.ranges), 'range')} in {files}"
        )
        output.line(
            "  "
            + " · ".join(
                f"{output.style.tier(key.replace('_', '-'))} {count}" for key, count in plan.summary().items()
            )
        )
        output.line()
        shown = plan.ranges[: plan.max_ranges]
        _grouped(
            output,
            (
                (
                    r.path,
                    r.line,
                    r.column,
                    f"{output.style.tier(str(r.tier))}  "
                    f"{output.style.dim(', '.join(str(reason) for reason in r.reasons))}"
                    + ("  (UTF-16 columns, from sourcekit-lsp)" if r.source == "sourcekit-lsp" else ""),
                )
                for r in shown
            ),
        )
        if len(shown) < len(plan.ranges):
            output.line()
            output.line(
                f"(showing {len(shown)} of {len(plan.ranges)}; raise --max-ranges, at most {_MAX_RANGES})"
            )
    for code, message in plan.warnings:
        output.note(f"warning [{code}]: {message}")
    if plan.refusal is not None:
        refusal = plan.refusal
        not_found = str(refusal.reason) == "usr_not_found"
        message = f"refused ({refusal.reason}): {refusal.message}\n  {refusal.remediation}"
        prefix = "xcindex rename: " if not_found else "xcindex rename: error: "
        output.err.write(output.err_style.error(prefix + message) + "\n")
        return EXIT_NO_RESULTS if not_found else EXIT_ERROR
    return EXIT_OK if plan.ranges else EXIT_NO_RESULTS


def _freshness_line(answer: StatusAnswer) -> str:
    completeness = str(answer.completeness)
    if completeness == "indexing":
        done, total = answer.state.progress
        return f"indexing ({done}/{total} records read)"
    details: list[str] = []
    if answer.stale_files:
        details.append(f"{_plural(len(answer.stale_files), 'file')} changed since indexed: rebuild")
    if answer.session_edited_files:
        details.append(f"{_plural(len(answer.session_edited_files), 'file')} edited this session")
    if answer.state.failures:
        details.append(f"{_plural(len(answer.state.failures), 'unit/record file')} could not be read")
    return completeness + (f" ({'; '.join(details)})" if details else ": every indexed file is current")


_COMMANDS: dict[str, Callable[[Engine, argparse.Namespace, Where, Output], Any]] = {
    "symbol": _symbol,
    "refs": _sites,
    "def": _definition,
    "overrides": _sites,
    "conformances": _conformances,
    "blast": _blast,
    "status": _status,
    "rename": _rename,
}


def _single(error: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def run_tool(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one tool subcommand; returns the exit code."""
    import anyio

    from xcindex._log import get_logger
    from xcindex.engine import Engine, current_progress_listener
    from xcindex.logging import configure
    from xcindex.warnings import XcindexError

    out = out or sys.stdout
    err = err or sys.stderr
    configure(args.log_level)
    log = get_logger(__name__)
    output = Output(out, err, Style(colour_wanted(out)), Style(colour_wanted(err)), Path.cwd())
    progress = Progress(err)
    where = _where(args)
    if args.command == "blast":
        args.file = os.path.abspath(args.file)

    async def main() -> int:
        current_progress_listener.set(progress)
        async with Engine() as engine:
            try:
                code: int = await _COMMANDS[args.command](engine, args, where, output)
            finally:
                progress.finish()
            return code

    def fail(message: str) -> int:
        # The Engine names its arguments as the MCP tools do; a person typed the options.
        message = message.replace("projectPath", "--project").replace("indexStorePath", "--index-store")
        err.write(output.err_style.error(f"xcindex {args.command}: error: {message}") + "\n")
        return EXIT_ERROR

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BaseException as raised:
        error = _single(raised)
        if isinstance(error, KeyboardInterrupt):
            return EXIT_INTERRUPTED
        if isinstance(error, BrokenPipeError):
            raise error from None  # the reader went away (`| head`): `cli.main` ends quietly
        if isinstance(error, UsageError | XcindexError):
            return fail(str(error))
        if isinstance(error, Exception):
            log.debug("cli_tool_crashed", command=args.command, exc_info=error)
            return fail(
                f"unexpected {type(error).__name__}: {error} (this is a bug; "
                "--log-level debug shows the traceback)"
            )
        raise
