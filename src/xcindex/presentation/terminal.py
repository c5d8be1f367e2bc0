"""What a person sees at a terminal: grouped by file, paths relative to the working
directory, colour only on a terminal and never with NO_COLOR. Notes about freshness and
warnings go to stderr, and so does progress during a first ingestion.

Each renderer prints one answer and returns the command's exit code: 0 results, 1 no
results, 2 an error (a refusal other than "no such symbol").
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from xcindex.indexstore.model import kind_name
from xcindex.presentation.text import RUNS_MORE, VIA_WORDS
from xcindex.vocabulary import Completeness, MatchedBy, RefusalReason

if TYPE_CHECKING:
    from xcindex.tools.common import Freshness
    from xcindex.tools.conformances import ConformancesAnswer
    from xcindex.tools.find_symbol import FindSymbolAnswer
    from xcindex.tools.graph.blast_radius import BlastRadiusAnswer
    from xcindex.tools.references import DefinitionAnswer, SitesAnswer
    from xcindex.tools.rename.plan import RenamePlan
    from xcindex.tools.status import StatusAnswer
    from xcindex.tools.wait_for_fresh import FreshWaitAnswer

EXIT_OK = 0
EXIT_NO_RESULTS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
STATUS_LISTED = 50
"""Files listed per list by `xcindex status` (--json lists them all)."""


def colour_wanted(stream: TextIO) -> bool:
    """Colour only on a terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return isatty(stream)


def isatty(stream: TextIO) -> bool:
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

    @classmethod
    def for_streams(cls, out: TextIO, err: TextIO) -> Output:
        return cls(out, err, Style(colour_wanted(out)), Style(colour_wanted(err)), Path.cwd())

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def note(self, text: str) -> None:
        self.err.write(self.err_style.warn(text) + "\n")

    def error(self, text: str) -> None:
        self.err.write(self.err_style.error(text) + "\n")

    def path(self, path: str) -> str:
        """Relative to the working directory when the file is under it, else absolute."""
        try:
            return str(Path(path).relative_to(self.cwd))
        except ValueError:
            return path


@dataclass(frozen=True)
class Context:
    """What a renderer may need to know of the command that asked."""

    command: str
    subject: str
    """What the person typed to name the subject (a name or a USR)."""


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural_form or word + 's'}"


def print_freshness(output: Output, freshness: Freshness) -> None:
    if freshness.stale_files:
        files = ", ".join(output.path(p) for p in freshness.stale_files)
        output.note(f"note: changed since the index was built (rebuild before trusting them): {files}")
    if freshness.session_edited_files:
        files = ", ".join(output.path(p) for p in freshness.session_edited_files)
        output.note(f"note: edited this session, after the index was built: {files}")
    for warning in freshness.warnings:
        output.note(f"warning [{warning.code}]: {warning.message}")


def grouped(output: Output, rows: Iterable[tuple[str, int, int, str]]) -> None:
    """One header per file, then `line:column  text` per site, in the given order."""
    current: str | None = None
    for path, line, column, text in rows:
        if path != current:
            if current is not None:
                output.line()
            current = path
            output.line(output.style.file(output.path(path)))
        output.line(f"  {output.style.dim(f'{line}:{column}'.rjust(8))}  {text}")


class Progress:
    """Progress of a first ingestion on stderr: one updating line on a terminal, else a
    line at the start, at most one a second, and one at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = isatty(stream) and os.environ.get("TERM") != "dumb"
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
            # Not only the first run's: a build since the last run has new records too.
            self.stream.write(
                f"xcindex: reading {total} new record(s) of the index store into its database "
                "(later runs reuse what is read)\n"
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


# --- one renderer per tool ---------------------------------------------------------------


def symbol_not_found(answer: FindSymbolAnswer, output: Output) -> int:
    output.line(f"No symbol named {answer.query} in this index.")
    if "(" not in answer.query:
        output.line("Swift methods are named with their labels, e.g. fetchUser(id:).")
    print_freshness(output, answer.freshness)
    return EXIT_NO_RESULTS


def find_symbol(answer: FindSymbolAnswer, output: Output, ctx: Context) -> int:
    """Ranked, best first, each with where it is declared (or its SDK module)."""
    if not answer.matches:
        return symbol_not_found(answer, output)
    how = " (by base name)" if answer.matched_by is MatchedBy.BASE_NAME else ""
    page = answer.shown()
    output.line(f"{plural(len(answer.matches), 'symbol')} named {answer.query}{how}, best first")
    output.line()
    for m in page:
        where = (
            f"{output.style.file(output.path(m.definition.path))}:{m.definition.line}"
            if m.definition is not None
            else f"{m.module} (SDK)"
        )
        inside = f" in {m.container_name}" if m.container else ""
        inherited = " (inherited)" if m.inherited else ""
        output.line(
            f"{output.style.name(m.symbol.name)}  {kind_name(m.symbol.kind)}{inside}{inherited}  "
            f"{where}  {output.style.dim(m.symbol.usr)}"
        )
        if m.hint:
            # Overloads share a name and differ in their heads: show it (the JSON always has it).
            if m.signature:
                output.line(f"    {m.signature}")
            output.line(f"    {output.style.dim(m.hint)}")
    next_offset = answer.next_offset()
    if next_offset is not None or answer.offset:
        first, last = answer.offset + 1, answer.offset + len(page)
        more = f"; --offset {next_offset} for the next page" if next_offset is not None else ""
        output.line()
        output.line(f"(showing {first}-{last} of {len(answer.matches)}{more})")
    if answer.resolved_note:
        output.note(f"note: {answer.resolved_note}")
    print_freshness(output, answer.freshness)
    return EXIT_OK


def _sites(answer: SitesAnswer, output: Output, what: str, preposition: str, more: str) -> int:
    if answer.sites:
        files = plural(len({site.occurrence.path for site in answer.sites}), "file")
        subject = ", ".join(sorted({s.name for s in answer.symbols})) or answer.query
        paged = answer.truncated or answer.offset > 0
        first, last = answer.offset + 1, answer.offset + len(answer.sites)
        where_shown = f"({first}-{last}, in {files})" if paged else f"in {files}"
        output.line(f"{plural(answer.total, what)} {preposition} {subject} {where_shown}")
        output.line()
        grouped(
            output,
            (
                (
                    site.occurrence.path,
                    site.occurrence.line,
                    site.occurrence.column,
                    f"{output.style.name(answer.label(site))}  {output.style.dim(site.role_text())}",
                )
                for site in answer.sites
            ),
        )
        if answer.truncated:
            next_offset = answer.next_offset()
            following = f"; --offset {next_offset} for the next page" if next_offset is not None else ""
            output.line()
            output.line(f"(showing {first}-{last} of {answer.total}{following}{more})")
    elif not answer.symbols:
        output.line(
            f"No symbol {answer.query} in this index: check the name (methods need labels) or the USR."
        )
    else:
        output.line(f"No {what}s {preposition} {answer.query} in this index.")
    if answer.note:
        output.note(f"note: {answer.note}")
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.sites else EXIT_NO_RESULTS


def references(answer: SitesAnswer, output: Output, ctx: Context) -> int:
    return _sites(answer, output, "reference", "to", "; raise --max-results (at most 500), or --all")


def overrides(answer: SitesAnswer, output: Output, ctx: Context) -> int:
    return _sites(answer, output, "override", "of", "; --all lists every one")


def definition(answer: DefinitionAnswer, output: Output, ctx: Context) -> int:
    if answer.site is not None:
        occ = answer.site.occurrence
        output.line(
            f"{output.style.file(output.path(occ.path))}:{occ.line}:{occ.column}  "
            f"{output.style.name(answer.site.symbol.name)}"
        )
    else:
        output.line(
            f"No definition of {answer.usr} in this index: an SDK symbol's source is not indexed, "
            "and a project symbol needs a build (or a USR from `xcindex symbol NAME`)."
        )
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.site is not None else EXIT_NO_RESULTS


def conformances(answer: ConformancesAnswer, output: Output, ctx: Context) -> int:
    if answer.conformances:
        name = answer.protocol.name if answer.protocol else answer.usr
        files = {c.anchor.path for c in answer.conformances}
        output.line(
            f"{plural(len(answer.conformances), 'type')} {'conforms' if len(answer.conformances) == 1 else 'conform'} "
            f"to {name} in {plural(len(files), 'file')}"
        )
        output.line()

        grouped(
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
        output.line(f"No protocol {answer.usr} in this index: `xcindex symbol NAME` gives its USR.")
    else:
        output.line(f"No type conforms to {answer.protocol.name} in this index.")
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.conformances else EXIT_NO_RESULTS


def blast_radius(answer: BlastRadiusAnswer, output: Output, ctx: Context) -> int:
    output.line(
        f"Changing {output.style.file(output.path(answer.file_path))} reaches "
        f"{plural(len(answer.affected_files), 'file')} "
        f"({len(answer.direct_dependents)} directly, {plural(len(answer.covering_tests), 'test file')})"
    )
    indirect = [p for p in answer.affected_files if p not in answer.direct_dependents]
    tests_by_path: dict[str, list[str]] = {}
    for test in answer.tests:
        tests_by_path.setdefault(test.path, []).append(test.label)
    sections: list[tuple[str, list[str]]] = [
        ("Direct dependents", [output.path(p) for p in answer.direct_dependents]),
        (
            f"Transitive dependents (after {plural(answer.depth, 'hop')})",
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
        if answer.selection.command.runs_more:
            output.line(output.style.dim(RUNS_MORE))
        output.line(f"Run them: {answer.swift_test_command}")
        likely, via = answer.selection.likely, answer.selection.likely_via
        if likely is not None and likely.text and via is not None:
            output.line(f"The likely few (reached {VIA_WORDS[via.label]}): {likely.text}")
    print_freshness(output, answer.freshness)
    return EXIT_OK if answer.affected_files else EXIT_NO_RESULTS


def status(answer: StatusAnswer, output: Output, ctx: Context) -> int:
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
        ("Re-indexed since the build (overlay)", answer.overlay_files),
    ):
        if paths:
            output.line()
            output.line(output.style.name(f"{title} ({len(paths)})"))
            for path in paths[:STATUS_LISTED]:
                output.line(f"  {output.path(path)}")
            if len(paths) > STATUS_LISTED:
                output.line(f"  … and {len(paths) - STATUS_LISTED} more (--json lists them all)")
    for warning in answer.warnings:
        output.note(f"warning [{warning.code}]: {warning.message}")
    return EXIT_OK


def _freshness_line(answer: StatusAnswer) -> str:
    completeness = answer.completeness
    if completeness is Completeness.INDEXING:
        done, total = answer.state.progress
        return f"indexing ({done}/{total} records read)"
    details: list[str] = []
    if answer.built_in is not None:
        details.append(f"built in {answer.built_in}, not here: rebuild here (warning below)")
    if answer.stale_files:
        details.append(f"{plural(len(answer.stale_files), 'file')} changed since indexed: rebuild")
    if answer.session_edited_files:
        details.append(f"{plural(len(answer.session_edited_files), 'file')} edited this session")
    if answer.state.failures:
        details.append(f"{plural(len(answer.state.failures), 'unit/record file')} could not be read")
    return str(completeness) + (f" ({'; '.join(details)})" if details else ": every indexed file is current")


def wait_for_fresh(answer: FreshWaitAnswer, output: Output, ctx: Context) -> int:
    state = "fresh" if answer.fresh else "timed out" if answer.timed_out else "settled"
    output.line(f"{state} after {answer.waited_s:.1f} s")
    for f in sorted(answer.files, key=lambda f: (f.settled, f.path)):
        edited = output.style.dim("  (edited this session)") if f.session_edited else ""
        output.line(f"  {f.state!s:<12} {output.path(f.path)}{edited}")
    for warning in answer.warnings:
        output.note(f"warning [{warning.code}]: {warning.message}")
    return EXIT_OK if answer.fresh else EXIT_NO_RESULTS


def plan_rename(plan: RenamePlan, output: Output, ctx: Context) -> int:
    if plan.refusal is None:
        files = plural(len({r.path for r in plan.ranges}), "file")
        output.line(
            f"Rename {output.style.name(plan.old_name or plan.usr)} to {output.style.name(plan.new_name)}: "
            f"{plural(len(plan.ranges), 'range')} in {files}"
        )
        output.line(
            "  "
            + " · ".join(
                f"{output.style.tier(key.replace('_', '-'))} {count}" for key, count in plan.summary().items()
            )
        )
        output.line()
        shown = plan.ranges[: plan.max_ranges]
        grouped(
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
            output.line(f"(showing {len(shown)} of {len(plan.ranges)}; raise --max-ranges)")
        sites = plan.unproven_shown()
        if sites:
            output.line()
            output.line(
                f"{plural(len(plan.unproven), 'unproven site')} (check each code one; labels are others'):"
            )
            grouped(
                output, ((m.path, m.line, m.column, f"{output.style.dim(m.kind)}  {m.text}") for m in sites)
            )
        if plan.text_mentions:
            output.line()
            output.line(
                f"{plural(len(plan.text_mentions), 'mention')} in comments and literals (--json lists them)"
            )
        if plan.not_visible_count:
            output.line(f"{plan.not_visible_count} more in modules that cannot see it (not listed)")
    for code, message in plan.warnings:
        output.note(f"warning [{code}]: {message}")
    if plan.refusal is not None:
        refusal = plan.refusal
        not_found = refusal.reason is RefusalReason.USR_NOT_FOUND
        message = f"refused ({refusal.reason}): {refusal.message}\n  {refusal.remediation}"
        prefix = "xcindex rename: " if not_found else "xcindex rename: error: "
        output.error(prefix + message)
        return EXIT_NO_RESULTS if not_found else EXIT_ERROR
    return EXIT_OK if plan.ranges else EXIT_NO_RESULTS
