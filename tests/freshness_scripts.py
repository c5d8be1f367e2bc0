"""Issue 24's property: an answer never says `complete` when it is not.

Random edit scripts (Hypothesis, derandomized, a bounded number of examples) are applied to a
built package with plain file writes (a "shell" edit: no hook, no ledger, no record_edit),
while the real `xcindex serve` is asked over stdio by the MCP SDK's client at random moments.
After every step a real `swift build --build-tests` runs, and its index store, read by the
independent dumper (`tests/truth/store_dump.py`; nothing here imports xcindex), is the truth
every answer given since the step's edit is judged against.

**A script** is one step of each kind, in an order Hypothesis draws, each with what it edits
drawn from the package as the last build left it:

- `call elsewhere`: a top-level function calling an existing symbol (a hand-checked use from
  the package's catalogue, `Use`) appended to a file of a module that sees it, not the
  symbol's own file;
- `new file`: a new file in a target's folder with a new type (`PropNew<n>`) whose method
  makes such a call;
- `delete`: any file of the package's targets (or one a script added), including one whose
  declarations are used elsewhere: then the build fails;
- `insert lines`: one to three comment lines at the top of a Swift file (one the build does
  not compile too: a target's excluded file, a file in no target);
- `rename`: a declaration and every site of it in its own file (the last build's sites),
  to `<name>Prop<n>`; used elsewhere, the build fails;
- `no compile`: a syntax error, or a type error, appended to a file.

A step whose build fails is undone (the files written back, the deleted one written again:
an `undo` step, asked and built like the others), so that every script goes on from a
package that compiles.

**Questions** are about the symbols a step touches (the called symbol, the new type, the
deleted, edited or renamed file's declarations and references, the renamed declaration's old
usr and new name) and about a few symbols no step touches: `find_references` (by usr),
`find_definition` (by usr) and `find_symbol` (by name). Moments: a step's first question
(its *poll*) comes at once or up to half a second after the edit and is asked again every
0.2 s until it says `complete` (or `stale` with `overlay_failed`: it will not change until
the file does) or 15 s pass; one to three more questions follow it, then the build, then one
or two after the build (none to two after a failed build, before the undo). Each script has a
server (and a database) of its own, with no hook and an empty session ledger.

**Truth** for a step whose build succeeds, from the live index of the rebuilt store:
- `find_references(usr)`: the (path, line, column) of every occurrence of the usr in a live
  file that is not implicit, once per place. This mirrors what xcindex documents and does
  for a symbol that is not an initialiser (tools/references.py: written occurrences, roles
  merged per place, declarations and definitions included; implicit ones, which include
  macro expansions, left out). Initialisers (which add the implicit calls of a property
  wrapper's attribute) are never asked about.
- `find_definition(usr)`: the written definition, else declaration, first by (path, line,
  column); none when there is none.
- `find_symbol(name)`: the (usr, path, line) of the definition of every symbol whose base
  name (the name before any `(`) is the name asked; the answer's candidates with that base
  name are compared (other candidates are the resolver's suggestions, not claims).
Every answer from the step's edit to the next edit that says `complete` must equal it, site
for site. The step's poll must have said `complete` within 15 s ("within the wait bound
every answer is fresh"; the server waits 3 s for the overlay, the rest is the background
re-index); the time it took is reported per kind of step.

**When the build fails**, the truth is "does not compile": the compiler's errors name the
files it rejects (`F`, from its `path:line:column: error:` lines, and the linker's
`path:line: error:` when an incremental build left a file using what changed uncompiled).
The answers judged are those from the failing edit until its undo is written, those asked
after the failed build included. A file in `F` has no
index that describes it (the compiler cannot resolve what it says), so an answer that says
`complete` is a lie when
- (a) it names a site in a file of `F` (a reference, the definition, a candidate's
  definition), or
- (b) the symbol it is about had a site in a file of `F` at the last successful build: its
  sites there are unknown now, whatever the answer lists.
An answer about a symbol with no site in `F`, before or now, is not judged (the program has
no build to compare with); such answers are counted apart. A failed build that names no
Swift file judges nothing and is reported.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.truth.store_dump import ACCESSOR_SUBKINDS, LOCAL, LiveIndex, dump, live_index

XCINDEX = Path(sys.executable).parent / "xcindex"
KINDS = ("call elsewhere", "new file", "delete", "insert lines", "rename", "no compile")
FRESH_WITHIN_S = 15.0
POLL_EVERY_S = 0.2
MAX_SITES = 200
"""Subjects with more written sites than this are not asked about (pages of 500 would do,
but a hub symbol says nothing more about freshness than a smaller one)."""
SWIFT = 100
SUBJECT_KINDS = frozenset({5, 6, 7, 8, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21})
"""enum, struct, class, protocol, typealias, function, variable, enum case, instance/class/
static method, instance/class/static property (indexstore.h); never initialisers (22)."""
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(.*\))?$")
_NOT_NAMES = frozenset({"init", "deinit", "subscript"})
_ERROR = re.compile(r"^(/[^:\n]+\.swift):\d+:(?:\d+:)? error: ", re.MULTILINE)
"""A compiler's error (`path:line:column: error:`) or the linker's (`path:line: error:
undefined reference`, when an incremental build did not recompile a file that uses what
changed)."""

Tool = Literal["find_references", "find_definition", "find_symbol"]
Site = tuple[Any, ...]


@dataclass(frozen=True)
class Use:
    """A use of an existing symbol of the package, hand-checked to compile where `places` say."""

    symbol: str
    """Its name as the index records it."""
    defined_in: str
    """Its definition's file, relative to the package."""
    code: str
    """A function declaration (its name is `{fn}`) that uses it, valid at file scope and in a type."""
    places: tuple[str, ...]
    """The modules whose files it may be written in (an `import` of the symbol's module is added)."""


@dataclass(frozen=True)
class PackageSpec:
    name: str
    uses: tuple[Use, ...]
    structural_roots: tuple[str, ...]
    """Folders (relative) whose files calls, new files, deletions, renames and broken edits go to."""
    insert_roots: tuple[str, ...]
    """Folders whose files lines are inserted into."""


@dataclass(frozen=True)
class Question:
    tool: Tool
    subject: str
    """A usr, or for find_symbol a name."""
    label: str

    def __str__(self) -> str:
        return f"{self.tool}({self.label})"


@dataclass
class Answer:
    question: Question
    moment: str
    since_edit_s: float
    completeness: str
    sites: frozenset[Site]
    stale_files: tuple[str, ...] = ()
    overlay_files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    why_failed: tuple[str, ...] = ()
    """The messages of `overlay_failed` warnings."""
    error: str | None = None

    def describe(self) -> str:
        return (
            f"{self.question} {self.moment} at +{self.since_edit_s:.2f}s: {self.completeness}, "
            f"{len(self.sites)} sites, stale={list(self.stale_files)} overlay={list(self.overlay_files)} "
            f"warnings={list(self.warnings)}{' error=' + self.error if self.error else ''}"
            f"{' overlay_failed: ' + ' | '.join(self.why_failed) if self.why_failed else ''}"
        )


@dataclass
class Tally:
    """What a run checked, for the measured output."""

    label: str
    answers: int = 0
    compared: Counter[str] = field(default_factory=Counter)
    """`complete` answers compared site for site with a successful build, per tool."""
    judged_failed: int = 0
    """`complete` answers judged against a failed build (rules a and b)."""
    unjudged_failed: int = 0
    """`complete` answers during a failed build about symbols with no site in a rejected file."""
    stale: int = 0
    errors: int = 0
    lies: list[str] = field(default_factory=list)
    not_fresh: list[str] = field(default_factory=list)
    fresh_s: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    steps: Counter[str] = field(default_factory=Counter)
    failed_builds: Counter[str] = field(default_factory=Counter)
    unexplained_failures: list[str] = field(default_factory=list)
    build_s: list[float] = field(default_factory=list)
    scripts: int = 0
    script_logs: list[list[str]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def lines(self) -> list[str]:
        elapsed = time.monotonic() - self.started
        out = [
            f"{self.label}: {self.scripts} scripts, {sum(self.steps.values())} steps "
            f"({', '.join(f'{k} {n}' for k, n in sorted(self.steps.items()))}), "
            f"builds that failed: {dict(sorted(self.failed_builds.items())) or 'none'}; "
            f"{elapsed:.0f} s in all, builds {sum(self.build_s):.0f} s",
            f"{self.label}: {self.answers} answers checked, {self.compared.total()} complete answers "
            f"compared site for site with the build ({', '.join(f'{t} {n}' for t, n in sorted(self.compared.items()))}), "
            f"{self.judged_failed} complete answers judged against a failed "
            f"build ({self.unjudged_failed} more about symbols the failure does not reach), {self.stale} "
            f"stale, {self.errors} errors; lies: {len(self.lies)}; not fresh within "
            f"{FRESH_WITHIN_S:g} s: {len(self.not_fresh)}",
        ]
        for kind, times in sorted(self.fresh_s.items()):
            out.append(
                f"{self.label}: time to a complete answer after `{kind}`: p50 {percentile(times, 50):.2f} s, "
                f"p95 {percentile(times, 95):.2f} s, max {max(times):.2f} s (n={len(times)})"
            )
        for number, log in enumerate(self.script_logs, start=1):
            out += [f"{self.label}: script {number}, {line[:240]}" for line in log]
        out += [f"{self.label}: LIE {lie}" for lie in self.lies]
        out += [f"{self.label}: NOT FRESH {late}" for late in self.not_fresh]
        out += [f"{self.label}: build failed naming no file: {why}" for why in self.unexplained_failures]
        return out


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[p - 1]


# --- the truth ---------------------------------------------------------------------------


def store_of(package: Path) -> Path:
    return next((package / ".build").glob("*-unknown-linux-gnu/debug/index/store"))


@dataclass(frozen=True)
class Built:
    ok: bool
    rejected: frozenset[str]
    """Files the compiler reported an error in (real paths)."""
    seconds: float
    output: str


def build(package: Path) -> Built:
    """The real, incremental `swift build --build-tests`."""
    started = time.monotonic()
    result = subprocess.run(
        ["swift", "build", "--build-tests", "--package-path", str(package)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    output = result.stdout + result.stderr
    rejected = frozenset(os.path.realpath(path) for path in _ERROR.findall(output))
    return Built(result.returncode == 0, rejected, time.monotonic() - started, output[-3000:])


def base_name(name: str) -> str:
    return name.split("(", 1)[0]


class Truth:
    """The rebuilt store's live index (read afresh: never a cached one) and what the
    questions need from it."""

    def __init__(self, package: Path) -> None:
        self.package = str(package)
        self.index: LiveIndex = live_index(dump(store_of(package)))
        self.by_file: dict[str, set[str]] = defaultdict(set)
        self.subjects: list[str] = []
        for usr, occurrences in self.index.occurrences.items():
            if self.is_subject(usr):
                self.subjects.append(usr)
                for occ in occurrences:
                    if not occ.implicit:
                        self.by_file[occ.path].add(usr)
        self.subjects.sort()

    def is_subject(self, usr: str) -> bool:
        symbol = self.index.symbols.get(usr)
        if (
            symbol is None
            or symbol.language != SWIFT
            or symbol.kind not in SUBJECT_KINDS
            or symbol.subkind in ACCESSOR_SUBKINDS
            or symbol.properties & LOCAL
            or not _IDENTIFIER.match(symbol.name)
            or base_name(symbol.name) in _NOT_NAMES
        ):
            return False
        definition = self.index.definition(usr)
        if definition is None or not definition.path.startswith(self.package + "/"):
            return False
        return len(self.sites(Question("find_references", usr, ""))) <= MAX_SITES

    def name(self, usr: str) -> str:
        symbol = self.index.symbols.get(usr)
        return symbol.name if symbol else usr

    def usr_of(self, name: str, defined_in: str) -> str:
        path = os.path.join(self.package, defined_in)
        found = [
            usr
            for usr in self.subjects
            if self.name(usr) == name and (d := self.index.definition(usr)) is not None and d.path == path
        ]
        assert len(found) == 1, f"{name} in {defined_in}: {found}"
        return found[0]

    def files(self, roots: Iterable[str]) -> list[str]:
        """The live Swift files under `roots`."""
        tops = tuple(os.path.join(self.package, root) + "/" for root in roots)
        return sorted(p for p in self.index.files if p.endswith(".swift") and p.startswith(tops))

    def module(self, path: str) -> str:
        return self.index.modules.get(path, "")

    def sites(self, question: Question) -> frozenset[Site]:
        index = self.index
        if question.tool == "find_references":
            return frozenset(o.where for o in index.occurrences.get(question.subject, ()) if not o.implicit)
        if question.tool == "find_definition":
            definition = index.definition(question.subject)
            return frozenset() if definition is None else frozenset({definition.where})
        found: set[Site] = set()
        for usr, symbol in index.symbols.items():
            if base_name(symbol.name) == question.subject:
                definition = index.definition(usr)
                if definition is not None:
                    found.add((usr, definition.path, definition.line))
        return frozenset(found)

    def files_of(self, question: Question) -> set[str]:
        """The files of the question's truth (for rule b)."""
        return {str(site[0] if question.tool != "find_symbol" else site[1]) for site in self.sites(question)}


def answer_files(answer: Answer) -> set[str]:
    if answer.question.tool == "find_symbol":
        return {str(site[1]) for site in answer.sites if site[1] is not None}
    return {str(site[0]) for site in answer.sites}


# --- asking ------------------------------------------------------------------------------


def server(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=str(XCINDEX), args=["serve"], env=env)


def server_env(cache: Path, *, watch: bool) -> dict[str, str]:
    """A server with the run's cache folder (a new database per script, `forget_databases`),
    no hook, and the test session's empty ledger."""
    env = {
        "XCINDEX_CACHE_DIR": str(cache),
        "PATH": os.environ["PATH"],
        "CLAUDE_PROJECT_DIR": os.environ["CLAUDE_PROJECT_DIR"],
        "XCINDEX_WATCH": "1" if watch else "0",
    }
    if "XCINDEX_NATIVE_DIR" in os.environ:
        env["XCINDEX_NATIVE_DIR"] = os.environ["XCINDEX_NATIVE_DIR"]
    return env


class Asker:
    def __init__(self, client: Client, package: Path, tally: Tally) -> None:
        self.client = client
        self.package = str(package)
        self.tally = tally

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, {"projectPath": self.package, **arguments})
        if result.is_error:
            text = "\n".join(getattr(block, "text", "") for block in result.content)
            raise AskError(text)
        content = result.structured_content
        assert isinstance(content, dict), result
        return content

    async def ask(self, question: Question, moment: str, edited_at: float) -> Answer:
        self.tally.answers += 1
        try:
            pages = await self._pages(question)
        except AskError as error:
            self.tally.errors += 1
            return Answer(
                question, moment, time.monotonic() - edited_at, "error", frozenset(), error=str(error)
            )
        sites: set[Site] = set()
        for page in pages:
            sites |= self._sites(question, page)
        verdicts = {page["completeness"] for page in pages}
        completeness = verdicts.pop() if len(verdicts) == 1 else "mixed:" + ",".join(sorted(verdicts))
        if completeness != "complete":
            self.tally.stale += 1
        first = pages[0]
        return Answer(
            question,
            moment,
            time.monotonic() - edited_at,
            completeness,
            frozenset(sites),
            tuple(first.get("staleFiles", ())),
            tuple(first.get("overlayFiles", ())),
            tuple(str(w["code"]) for w in first.get("warnings", ())),
            tuple(
                str(w["message"])[:400] for w in first.get("warnings", ()) if w["code"] == "overlay_failed"
            ),
        )

    async def _pages(self, question: Question) -> list[dict[str, Any]]:
        if question.tool == "find_definition":
            return [await self.call("find_definition", usr=question.subject)]
        if question.tool == "find_symbol":
            return [await self.call("find_symbol", symbolName=question.subject, maxResults=500)]
        pages = [await self.call("find_references", usr=question.subject, maxResults=500)]
        while "nextOffset" in pages[-1]:
            offset = pages[-1]["nextOffset"]
            pages.append(
                await self.call("find_references", usr=question.subject, maxResults=500, offset=offset)
            )
        return pages

    @staticmethod
    def _sites(question: Question, content: dict[str, Any]) -> set[Site]:
        if question.tool == "find_references":
            return {(r["path"], r["line"], r["column"]) for r in content["results"]}
        if question.tool == "find_definition":
            site = content["result"]
            return set() if site is None else {(site["path"], site["line"], site["column"])}
        return {
            (r["usr"], r["definitionPath"], r["definitionLine"])
            for r in content["results"]
            if base_name(r["name"]) == question.subject
        }

    async def ready(self, question: Question) -> None:
        """Until the first ingestion is over (answers say `indexing` before)."""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            pages = await self._pages(question)
            if pages[0]["completeness"] != "indexing":
                return
            await anyio.sleep(0.5)
        raise AssertionError("the server was still indexing after 10 minutes")


class AskError(Exception):
    """A tool call answered with an error."""


# --- the scripts -------------------------------------------------------------------------


@dataclass
class Step:
    kind: str
    text: str
    edited_at: float
    poll: Question
    questions: list[Question]
    undo: dict[Path, bytes | None]
    """What to write back if the build fails (None: remove the file)."""
    answers: list[Answer] = field(default_factory=list)


class Script:
    """One script on one package, asked through one server."""

    def __init__(
        self,
        spec: PackageSpec,
        package: Path,
        asker: Asker,
        draw: Callable[[st.SearchStrategy[Any], str], Any],
        tally: Tally,
        number: int,
    ) -> None:
        self.spec = spec
        self.package = package
        self.asker = asker
        self.draw = draw
        self.tally = tally
        self.truth = Truth(package)
        self.log: list[str] = []
        self.counter = 0
        self.number = number
        shuffled = list(self.truth.subjects)
        random.Random(spec.name).shuffle(shuffled)
        self.untouched = [Question("find_references", usr, self.truth.name(usr)) for usr in shuffled[:3]] + [
            Question("find_definition", usr, self.truth.name(usr)) for usr in shuffled[3:4]
        ]
        self.touched: list[Question] = []

    # drawing -----------------------------------------------------------------------------

    def pick(self, options: list[Any], label: str) -> Any:
        assert options, f"nothing to draw for {label}"
        return self.draw(st.sampled_from(options), label)

    def fresh_name(self) -> int:
        self.counter += 1
        return self.number * 100 + self.counter

    def rel(self, path: str | Path) -> str:
        return os.path.relpath(path, self.package)

    def on_disk(self, roots: Iterable[str]) -> list[str]:
        """The Swift files under `roots` the build compiles, and those it does not (a target's
        excluded file, a file in no target): an edit there must change no answer."""
        found = set(self.truth.files(roots))
        for root in roots:
            found |= {str(p) for p in (self.package / root).rglob("*.swift") if ".build" not in p.parts}
        return sorted(found)

    def questions_about_file(self, path: str) -> list[Question]:
        """Questions about what `path` declares and mentions (at the last build)."""
        usrs = sorted(self.truth.by_file.get(path, ()))
        if not usrs:
            return []
        declared = [u for u in usrs if (d := self.truth.index.definition(u)) is not None and d.path == path]
        chosen = self.pick(declared or usrs, "subject in the file")
        found = [Question("find_references", chosen, self.truth.name(chosen))]
        found.append(Question("find_definition", chosen, self.truth.name(chosen)))
        others = [u for u in usrs if u != chosen]
        if others:
            other = self.pick(others, "another subject in the file")
            found.append(Question("find_references", other, self.truth.name(other)))
        return found

    # the steps ---------------------------------------------------------------------------

    def use_and_file(self, *, new_file: bool) -> tuple[Use, str, str, str]:
        """A use of the catalogue, its symbol's usr, a file (or for a new file, a folder) it
        may go to, and the import line it needs there."""
        use = self.pick(list(self.spec.uses), "use")
        usr = self.truth.usr_of(use.symbol, use.defined_in)
        module_of_symbol = self.truth.module(os.path.join(str(self.package), use.defined_in))
        files = [
            f
            for f in self.truth.files(self.spec.structural_roots)
            if self.truth.module(f) in use.places and self.rel(f) != use.defined_in
        ]
        if new_file:
            folders = sorted({os.path.dirname(f) for f in files})
            target = self.pick(folders, "folder for a new file")
            module = self.truth.module(next(f for f in files if os.path.dirname(f) == target))
        else:
            target = self.pick(files, "file for a call")
            module = self.truth.module(target)
        imports = f"import {module_of_symbol}\n" if module != module_of_symbol else ""
        return use, usr, target, imports

    def apply(self, kind: str) -> Step:
        n = self.fresh_name()
        if kind == "call elsewhere":
            use, usr, target, imports = self.use_and_file(new_file=False)
            path = Path(target)
            before = path.read_bytes()
            block = f"\n{imports}{use.code.format(fn=f'propCall{n}')}\n"
            edited_at = write(path, before + block.encode())
            about = Question("find_references", usr, use.symbol)
            return Step(
                kind,
                f"append a call of `{use.symbol}` to {self.rel(path)}: {block.strip()!r}",
                edited_at,
                about,
                [Question("find_definition", usr, use.symbol)],
                {path: before},
            )
        if kind == "new file":
            use, usr, folder, imports = self.use_and_file(new_file=True)
            path = Path(folder) / f"PropNew{n}.swift"
            code = "\n".join("    " + line for line in use.code.format(fn="run").split("\n"))
            text = f"{imports}struct PropNew{n} {{\n{code}\n}}\n"
            edited_at = write(path, text.encode())
            return Step(
                kind,
                f"write {self.rel(path)}: {text!r}",
                edited_at,
                Question("find_symbol", f"PropNew{n}", f"PropNew{n}"),
                [Question("find_references", usr, use.symbol)],
                {path: None},
            )
        if kind == "delete":
            path = Path(self.pick(self.truth.files(self.spec.structural_roots), "file to delete"))
            questions = self.questions_about_file(str(path)) or list(self.untouched[:1])
            before = path.read_bytes()
            path.unlink()
            edited_at = time.monotonic()
            return Step(
                kind, f"delete {self.rel(path)}", edited_at, questions[0], questions[1:], {path: before}
            )
        if kind == "insert lines":
            path = Path(self.pick(self.on_disk(self.spec.insert_roots), "file to insert into"))
            count = self.draw(st.integers(1, 3), "lines inserted")
            questions = self.questions_about_file(str(path)) or list(self.untouched[:1])
            before = path.read_bytes()
            edited_at = write(path, f"// prop {n}\n".encode() * count + before)
            return Step(
                kind,
                f"insert {count} comment lines at the top of {self.rel(path)}",
                edited_at,
                questions[0],
                questions[1:],
                {path: before},
            )
        if kind == "rename":
            return self.rename(n)
        path = Path(self.pick(self.truth.files(self.spec.structural_roots), "file to break"))
        broken = self.pick([f"\nfunc propBroken{n}( {{\n", f'\nlet propBad{n}: Int = "prop"\n'], "error")
        questions = self.questions_about_file(str(path)) or list(self.untouched[:1])
        before = path.read_bytes()
        edited_at = write(path, before + broken.encode())
        return Step(
            kind,
            f"append {broken.strip()!r} to {self.rel(path)}",
            edited_at,
            questions[0],
            questions[1:],
            {path: before},
        )

    def rename(self, n: int) -> Step:
        """A declaration and its sites in its own file, renamed; all of them must read as its
        base name at the build's columns (UTF-8), or another is drawn."""
        index = self.truth.index
        files = set(self.truth.files(self.spec.structural_roots))
        candidates = [
            u
            for u in self.truth.subjects
            if (d := index.definition(u)) is not None
            and d.path in files
            and not base_name(self.truth.name(u)).startswith("test")
        ]
        for _ in range(20):
            usr = self.pick(candidates, "declaration to rename")
            definition = index.definition(usr)
            assert definition is not None
            path = Path(definition.path)
            old = base_name(self.truth.name(usr)).encode()
            sites = sorted(
                {o.where for o in index.occurrences[usr] if o.path == definition.path and not o.implicit},
                reverse=True,
            )
            lines = path.read_bytes().split(b"\n")
            if all(lines[line - 1][column - 1 : column - 1 + len(old)] == old for _, line, column in sites):
                break
        else:
            raise AssertionError("no declaration whose sites all read as its name")
        new = old.decode() + f"Prop{n}"
        before = path.read_bytes()
        for _, line, column in sites:
            text = lines[line - 1]
            lines[line - 1] = text[: column - 1] + new.encode() + text[column - 1 + len(old) :]
        edited_at = write(path, b"\n".join(lines))
        elsewhere = sorted(
            {self.rel(o.path) for o in index.occurrences[usr] if o.path != str(path) and not o.implicit}
        )
        return Step(
            "rename",
            f"rename `{self.truth.name(usr)}` to `{new}` at its {len(sites)} sites in {self.rel(path)}"
            + (f" (also used in {elsewhere})" if elsewhere else ""),
            edited_at,
            Question("find_references", usr, self.truth.name(usr)),
            [Question("find_symbol", new, new), Question("find_definition", usr, self.truth.name(usr))],
            {path: before},
        )

    # asking and judging ------------------------------------------------------------------

    def extra_questions(self, step: Step, least: int, most: int) -> list[Question]:
        pool = [*step.questions, *self.touched, *self.untouched]
        count = self.draw(st.integers(least, most), "questions")
        return [self.pick(pool, "question") for _ in range(count)]

    async def poll(self, step: Step) -> None:
        """Ask the step's first question until it is complete (or definitely stale), at most 15 s."""
        await anyio.sleep(self.draw(st.sampled_from([0.0, 0.0, 0.1, 0.5]), "delay before the first question"))
        deadline = step.edited_at + FRESH_WITHIN_S
        while True:
            answer = await self.asker.ask(step.poll, "poll", step.edited_at)
            step.answers.append(answer)
            if answer.completeness == "complete" or "overlay_failed" in answer.warnings:
                return
            if time.monotonic() >= deadline:
                return
            await anyio.sleep(POLL_EVERY_S)

    async def run_step(self, kind: str) -> None:
        step = self.apply(kind)
        await self.ask_and_build(step)

    async def ask_and_build(self, step: Step) -> None:
        self.tally.steps[step.kind] += 1
        self.log.append(f"step {len(self.log) + 1} ({step.kind}): {step.text}")
        await self.poll(step)
        for question in self.extra_questions(step, 1, 3):
            step.answers.append(await self.asker.ask(question, "after the edit", step.edited_at))
        built = await anyio.to_thread.run_sync(build, self.package)
        self.tally.build_s.append(built.seconds)
        self.log[-1] += f" (build {built.seconds:.0f} s)"
        if built.ok:
            self.truth = await anyio.to_thread.run_sync(Truth, self.package)
            for question in self.extra_questions(step, 1, 2):
                step.answers.append(await self.asker.ask(question, "after the build", step.edited_at))
            self.judge_built(step)
            self.touched.extend([step.poll, *step.questions])
            return
        self.tally.failed_builds[step.kind] += 1
        self.log[-1] += f" -> the build fails, rejecting {sorted(self.rel(p) for p in built.rejected)}"
        if step.kind == "undo":
            raise AssertionError(f"an undo did not compile:\n{self.describe()}\n{built.output}")
        for question in self.extra_questions(step, 0, 2):
            step.answers.append(await self.asker.ask(question, "after the failed build", step.edited_at))
        self.judge_failed(step, built)
        undo = Step(
            "undo", f"write back {sorted(self.rel(p) for p in step.undo)}", 0.0, step.poll, step.questions, {}
        )
        for path, data in step.undo.items():
            if data is None:
                path.unlink()
            else:
                write(path, data)
        undo.edited_at = time.monotonic()
        await self.ask_and_build(undo)

    def judge_built(self, step: Step) -> None:
        first_complete: float | None = None
        for answer in step.answers:
            if answer.completeness != "complete":
                continue
            if answer.moment == "poll" and first_complete is None:
                first_complete = answer.since_edit_s
            self.tally.compared[answer.question.tool] += 1
            truth = self.truth.sites(answer.question)
            if answer.sites != truth:
                self.lie(
                    answer,
                    f"missing {sorted(truth - answer.sites, key=str)[:6]} "
                    f"unexpected {sorted(answer.sites - truth, key=str)[:6]} (the build has {len(truth)})",
                )
        if first_complete is None:
            last = [a for a in step.answers if a.moment == "poll"][-1]
            self.tally.not_fresh.append(f"{self.log[-1]}: last poll {last.describe()}")
        else:
            self.tally.fresh_s[step.kind].append(first_complete)

    def judge_failed(self, step: Step, built: Built) -> None:
        if not built.rejected:
            self.tally.unexplained_failures.append(f"{self.log[-1]}: {built.output[-600:]}")
            return
        rejected = built.rejected
        for answer in step.answers:
            if answer.completeness != "complete":
                continue
            named = {os.path.realpath(p) for p in answer_files(answer)} & rejected
            had = {os.path.realpath(p) for p in self.truth.files_of(answer.question)} & rejected
            if not named and not had:
                self.tally.unjudged_failed += 1
                continue
            self.tally.judged_failed += 1
            why = []
            if named:
                why.append(f"(a) it names sites in {sorted(self.rel(p) for p in named)}")
            if had:
                why.append(f"(b) at the last build it had sites in {sorted(self.rel(p) for p in had)}")
            self.lie(answer, "complete while the compiler rejects: " + "; ".join(why))

    def lie(self, answer: Answer, what: str) -> None:
        self.tally.lies.append(
            f"{answer.describe()}: {what}\n  script so far:\n    " + "\n    ".join(self.log)
        )

    def describe(self) -> str:
        return "\n".join(self.log)


def write(path: Path, data: bytes) -> float:
    """A shell's edit: the bytes, written in place (no hook, no ledger); when it was done."""
    path.write_bytes(data)
    return time.monotonic()


async def run_script(
    spec: PackageSpec,
    package: Path,
    draw: Callable[[st.SearchStrategy[Any], str], Any],
    tally: Tally,
    cache: Path,
    *,
    watch: bool,
    number: int,
    steps: int,
) -> None:
    """One script: a server of its own, `steps` kinds of step in the order drawn, each judged."""
    order = draw(st.permutations(KINDS), "order of the steps")[:steps]
    async with Client(server(server_env(cache, watch=watch)), read_timeout_seconds=300) as client:
        asker = Asker(client, package, tally)
        script = Script(spec, package, asker, draw, tally, number)
        await asker.ready(script.untouched[0])
        try:
            for kind in order:
                await script.run_step(kind)
        finally:
            tally.scripts += 1
            tally.script_logs.append(script.log)


def snapshot(package: Path) -> None:
    """A copy of the built package beside it (`<name>.pristine`), to start each script from."""
    pristine = package.with_name(package.name + ".pristine")
    shutil.rmtree(pristine, ignore_errors=True)
    shutil.copytree(package, pristine, symlinks=True)


def restore(package: Path) -> None:
    """The package as built, back at its own path (a build is incremental only there)."""
    pristine = package.with_name(package.name + ".pristine")
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(pristine, package, symlinks=True)


def forget_databases(cache: Path) -> None:
    """A new database for the next script (its store went back to the pristine one), in the
    same cache folder: the overlay's module cache stays warm, at the path its modules name."""
    for database in cache.glob("*.sqlite*"):
        database.unlink()
    for place in (cache / "overlay").glob("*"):
        if place.name != "ModuleCache":
            shutil.rmtree(place)


def run_property(
    spec: PackageSpec, package: Path, tally: Tally, cache: Path, *, watch: bool, examples: int, steps: int
) -> None:
    """`examples` scripts (Hypothesis, derandomized: the same scripts on every run), each
    from the package as built (`restore`), with a server and a database of their own."""
    numbers = itertools.count(1)

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def script(data: st.DataObject) -> None:
        number = next(numbers)
        restore(package)
        forget_databases(cache)

        def draw(strategy: st.SearchStrategy[Any], label: str) -> Any:
            return data.draw(strategy, label=label)

        anyio.run(
            partial(run_script, spec, package, draw, tally, cache, watch=watch, number=number, steps=steps),
            backend="asyncio",
        )

    script()
