"""An independent reader of an index store: the truth tests compare xcindex against.

It shares no code with xcindex (tests/truth/test_store_dump.py checks that nothing here
imports it): `dump_store.c`, written against the toolchain's own `indexstore.h`, is compiled
with the machine's `cc` into a cache folder (once per source and library; a second session
reuses it), run on a store, and its lines are parsed into plain dataclasses.

- `dump(store)`: what the store holds, unjudged: every unit with its dependencies, and every
  record a non-system unit depends on (each record once; records are content-addressed).
- `live(store)`: the view a tool's answers should match, from the dump alone (cached per
  process): `files` (the live files), `symbols` (USR → Symbol), `occurrences` (USR → its
  live occurrences, implicit ones included and flagged), `declarations`/`definition`/
  `references` of a USR, and its relations both ways: `related(usr, ROLE)`, `relating(usr,
  ROLE)`, `relations(usr)` by name, `edges_from`/`edges_to` with the occurrence each
  relation sits on. What the words mean:

  A **live unit** is, per main file, the newest unit (by the unit file's modification time,
  ties broken by unit name) among the units that are not system units, have a main file
  that exists on disk, and whose main file is not a source the build generated (a path
  containing `/.build/` or `/DerivedData/`, such as SwiftPM's test-discovery files). This is
  xcindex's documented rule, written again here in a few lines of our own (`live_units`);
  xcindex breaks a tie of modification times by ingestion order, this reader by unit name.

  A **live file** is a file a live unit reads a non-system record for: every live main file
  and the project's own headers a C unit includes (never a system header). A **live
  occurrence** is an occurrence of such a record, placed in that file; a record that live
  units reach at one path counts once, and its module is the smallest module name among
  those units (C units name no module: ""). A file reached through two different records
  (a header edited between two compilations that include it) contributes both.

Speed (this machine): the dumper itself runs in 0.02-0.09 s on the corpus stores; parsing
and the live view take 0.3 s (swift-log), 0.35 s (Yams) and 1.3 s (swift-atomics, 240,000
lines).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("dump_store.c")

# Role bits (indexstore.h, indexstore_symbol_role_t).
DECLARATION, DEFINITION, REFERENCE, READ, WRITE, CALL, DYNAMIC, ADDRESSOF, IMPLICIT = (
    1 << i for i in range(9)
)
UNDEFINITION, NAMEREFERENCE = 1 << 19, 1 << 20
RELATIONS: dict[str, int] = {
    "childOf": 1 << 9,
    "baseOf": 1 << 10,
    "overrideOf": 1 << 11,
    "receivedBy": 1 << 12,
    "calledBy": 1 << 13,
    "extendedBy": 1 << 14,
    "accessorOf": 1 << 15,
    "containedBy": 1 << 16,
    "ibTypeOf": 1 << 17,
    "specializationOf": 1 << 18,
}
CHILD_OF, BASE_OF, OVERRIDE_OF = RELATIONS["childOf"], RELATIONS["baseOf"], RELATIONS["overrideOf"]
CALLED_BY, EXTENDED_BY, CONTAINED_BY = (
    RELATIONS["calledBy"],
    RELATIONS["extendedBy"],
    RELATIONS["containedBy"],
)
ROLES: dict[str, int] = {
    "declaration": DECLARATION,
    "definition": DEFINITION,
    "reference": REFERENCE,
    "read": READ,
    "write": WRITE,
    "call": CALL,
    "dynamic": DYNAMIC,
    "addressOf": ADDRESSOF,
    "implicit": IMPLICIT,
    "undefinition": UNDEFINITION,
    "nameReference": NAMEREFERENCE,
    **RELATIONS,
}
# Symbol kinds, subkinds and properties (indexstore.h) the truth helpers name.
MODULE, ENUM, STRUCT, CLASS, PROTOCOL, EXTENSION = 1, 5, 6, 7, 8, 9
CONSTRUCTOR, PARAMETER = 22, 25
GENERIC_TYPE_PARAM = 1013
ACCESSOR_SUBKINDS = frozenset({3, 4, 1000, 1001, 1002, 1003, 1014, 1015, 1016, 1017, 1018})
"""getter, setter, willSet, didSet, addressors, _read, _modify, init, borrow, mutate."""
LOCAL = 1 << 7


def role_names(roles: int) -> set[str]:
    return {name for name, bit in ROLES.items() if roles & bit}


@dataclass(frozen=True, slots=True)
class Dependency:
    kind: str
    """"unit", "record" or "file"."""
    name: str
    path: str
    module: str
    is_system: bool


@dataclass(frozen=True, slots=True)
class Unit:
    name: str
    main_file: str
    module: str
    is_system: bool
    output_file: str
    provider: str
    target: str
    mtime_ns: int
    dependencies: tuple[Dependency, ...]


@dataclass(frozen=True, slots=True)
class Symbol:
    usr: str
    name: str
    kind: int
    subkind: int
    properties: int
    language: int


@dataclass(frozen=True, slots=True)
class Relation:
    roles: int
    usr: str


@dataclass(frozen=True, slots=True)
class Occurrence:
    usr: str
    roles: int
    line: int
    column: int
    """1-based, in UTF-8 bytes."""
    relations: tuple[Relation, ...]


@dataclass(frozen=True, slots=True)
class Record:
    name: str
    symbols: tuple[Symbol, ...]
    occurrences: tuple[Occurrence, ...]


@dataclass(frozen=True)
class StoreDump:
    store: Path
    api_version: int
    format_version: int
    units: tuple[Unit, ...]
    records: Mapping[str, Record]
    unreadable: tuple[tuple[str, str, str], ...]
    """(unit|record, name, libIndexStore's message) for each file it could not open."""


# --- compiling and running the dumper ----------------------------------------------------


def toolchain_root() -> Path:
    """The toolchain of the `swift` on PATH (`<root>/usr/bin/swift`), else /opt/swift."""
    swift = shutil.which("swift")
    return Path(swift).resolve().parents[2] if swift else Path("/opt/swift")


@cache
def dumper() -> Path:
    """The compiled dumper, built once per source, library and header (checked once per
    process). Built under a temporary name and renamed: concurrent sessions never see half
    a binary."""
    root = toolchain_root()
    library = root / "usr" / "lib" / "libIndexStore.so"
    include = root / "usr" / "local" / "include"
    header = include / "indexstore" / "indexstore.h"
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not (library.is_file() and header.is_file() and compiler):
        raise RuntimeError(f"the truth dumper needs {library}, {header} and a C compiler (cc)")
    digest = hashlib.sha256(SOURCE.read_bytes() + header.read_bytes() + str(library).encode()).hexdigest()
    folder = Path(tempfile.gettempdir()) / f"xcindex-truth-{os.getuid()}"
    binary = folder / f"dump_store-{digest[:16]}"
    if binary.is_file():
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{binary.name}.{os.getpid()}"
    command = [compiler, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror"]
    command += [f"-I{include}", "-o", str(partial), str(SOURCE), f"-L{library.parent}"]
    command += [f"-l:{library.name}", f"-Wl,-rpath,{library.parent}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"compiling the truth dumper failed:\n{' '.join(command)}\n{result.stderr}")
    os.replace(partial, binary)
    return binary


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            char = {"t": "\t", "n": "\n", "r": "\r"}.get(escaped := next(chars), escaped)
        out.append(char)
    return "".join(out)


def dump(store: Path) -> StoreDump:
    """Run the dumper on `store` (the folder holding v5/) and parse what it prints."""
    result = subprocess.run([str(dumper()), str(store)], capture_output=True, check=False, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"dump_store {store} exited {result.returncode}: {result.stderr.decode()}")
    return parse(store, result.stdout.decode("utf-8", errors="surrogateescape"))


def parse(store: Path, text: str) -> StoreDump:
    version = (0, 0)
    units: list[Unit] = []
    records: dict[str, Record] = {}
    unreadable: list[tuple[str, str, str]] = []
    unit: list[str] | None = None
    dependencies: list[Dependency] = []
    record: str | None = None
    symbols: list[Symbol] = []
    occurrences: list[Occurrence] = []
    relations: list[Relation] = []
    occurrence: list[str] | None = None

    def end_occurrence() -> None:
        nonlocal occurrence, relations
        if occurrence is not None:
            usr, roles, line, column = occurrence
            occurrences.append(Occurrence(usr, int(roles), int(line), int(column), tuple(relations)))
            occurrence, relations = None, []

    def end_unit() -> None:
        nonlocal unit, dependencies
        if unit is not None:
            name, main, module, system, output, provider, target, seconds, nanoseconds = unit
            mtime = int(seconds) * 1_000_000_000 + int(nanoseconds)
            units.append(
                Unit(name, main, module, system == "1", output, provider, target, mtime, tuple(dependencies))
            )
            unit, dependencies = None, []

    def end_record() -> None:
        nonlocal record, symbols, occurrences
        end_occurrence()
        if record is not None:
            records[record] = Record(record, tuple(symbols), tuple(occurrences))
            record, symbols, occurrences = None, [], []

    kinds = {"U": "unit", "R": "record", "F": "file"}
    for line in text.split("\n"):
        if not line:
            continue
        tag, *fields = (_unescape(f) for f in line.split("\t")) if "\\" in line else line.split("\t")
        if tag == "L":
            relations.append(Relation(int(fields[0]), fields[1]))
        elif tag == "O":
            end_occurrence()
            occurrence = fields
        elif tag == "S":
            usr, name, kind, subkind, properties, language = fields
            symbols.append(Symbol(usr, name, int(kind), int(subkind), int(properties), int(language)))
        elif tag == "D":
            kind, name, path, module, system = fields
            dependencies.append(Dependency(kinds.get(kind, kind), name, path, module, system == "1"))
        elif tag == "U":
            end_unit()
            unit = fields
        elif tag == "R":
            end_unit()
            end_record()
            record = fields[0]
        elif tag == "E":
            unreadable.append((fields[0], fields[1], fields[2]))
        elif tag == "V":
            version = (int(fields[0]), int(fields[1]))
        else:
            raise ValueError(f"unexpected dump line: {line!r}")
    end_unit()
    end_record()
    return StoreDump(store, version[0], version[1], tuple(units), records, tuple(unreadable))


# --- the live view -----------------------------------------------------------------------


def is_build_generated(path: str) -> bool:
    return "/.build/" in path or "/DerivedData/" in path


def live_units(units: tuple[Unit, ...]) -> list[Unit]:
    """The newest usable unit of each main file (the module docstring's rule)."""
    newest: dict[str, Unit] = {}
    for unit in units:
        path = unit.main_file
        if unit.is_system or not path or is_build_generated(path) or not os.path.exists(path):
            continue
        best = newest.get(path)
        if best is None or (unit.mtime_ns, unit.name) > (best.mtime_ns, best.name):
            newest[path] = unit
    return sorted(newest.values(), key=lambda u: u.main_file)


@dataclass(frozen=True, slots=True)
class LiveOccurrence:
    usr: str
    path: str
    line: int
    column: int
    roles: int
    module: str
    relations: tuple[Relation, ...]

    @property
    def implicit(self) -> bool:
        return bool(self.roles & IMPLICIT)

    @property
    def declares(self) -> bool:
        """A definition or a declaration (implicit or written)."""
        return bool(self.roles & (DEFINITION | DECLARATION))

    @property
    def where(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)


@dataclass(frozen=True, slots=True)
class Edge:
    """One relation of one live occurrence: `usr`'s occurrence relates to `related` with
    `roles`. Read it as "usr <role> related": childOf (usr is a member of related), baseOf
    (usr is a base of related), overrideOf (usr overrides or witnesses related), calledBy
    (usr is called by related), containedBy (the mention of usr lies in related),
    extendedBy (type usr is extended by extension related), accessorOf, receivedBy, …"""

    usr: str
    roles: int
    related: str
    occurrence: LiveOccurrence


@dataclass
class LiveIndex:
    """The live occurrences, symbols and relations of a store (see the module docstring)."""

    dump: StoreDump
    units: list[Unit]
    files: frozenset[str]
    modules: dict[str, str]
    """Live file → module of the live unit(s) reaching it."""
    symbols: dict[str, Symbol] = field(default_factory=dict)
    occurrences: dict[str, list[LiveOccurrence]] = field(default_factory=dict)
    """USR → its live occurrences, implicit ones included, in (path, line, column, roles) order."""
    edges_from: dict[str, list[Edge]] = field(default_factory=dict)
    edges_to: dict[str, list[Edge]] = field(default_factory=dict)

    def all_occurrences(self) -> Iterator[LiveOccurrence]:
        for occurrences in self.occurrences.values():
            yield from occurrences

    def declarations(self, usr: str, *, written: bool = True) -> list[LiveOccurrence]:
        """Definitions and declarations of `usr` (only the source's own unless written=False)."""
        return [o for o in self.occurrences.get(usr, ()) if o.declares and not (written and o.implicit)]

    def definition(self, usr: str) -> LiveOccurrence | None:
        """The written definition, else declaration, first in (path, line, column)."""
        found = self.declarations(usr)
        return min(found, key=lambda o: (not o.roles & DEFINITION, o.where), default=None)

    def references(self, usr: str, *, implicit: bool = True) -> list[LiveOccurrence]:
        """Occurrences that are not definitions or declarations."""
        return [o for o in self.occurrences.get(usr, ()) if not o.declares and (implicit or not o.implicit)]

    def related(self, usr: str, role: int) -> set[str]:
        """Symbols `usr`'s occurrences relate to with `role` (childOf: its parents; calledBy:
        its callers; overrideOf: what it overrides; baseOf: its subtypes or their extensions)."""
        return {e.related for e in self.edges_from.get(usr, ()) if e.roles & role}

    def relations(self, usr: str) -> dict[str, set[str]]:
        """`usr`'s relations by name, from its live occurrences: {"calledBy": its callers,
        "overrideOf": what it overrides, …}."""
        found: dict[str, set[str]] = {}
        for edge in self.edges_from.get(usr, ()):
            for name in role_names(edge.roles):
                found.setdefault(name, set()).add(edge.related)
        return found

    def relating(self, usr: str, role: int) -> set[str]:
        """Symbols whose occurrences relate to `usr` with `role` (childOf: its members;
        calledBy: what it calls; overrideOf: its overriders; baseOf: its bases)."""
        return {e.usr for e in self.edges_to.get(usr, ()) if e.roles & role}


def live_index(data: StoreDump) -> LiveIndex:
    units = live_units(data.units)
    reached: dict[tuple[str, str], set[str]] = {}
    for unit in units:
        for dep in unit.dependencies:
            if dep.kind == "record" and not dep.is_system and dep.name in data.records:
                reached.setdefault((dep.name, dep.path), set()).add(unit.module)
    index = LiveIndex(data, units, frozenset(path for _, path in reached), {})
    for (record_name, path), modules in sorted(reached.items()):
        module = min(modules)
        index.modules.setdefault(path, module)
        record = data.records[record_name]
        for symbol in record.symbols:
            index.symbols.setdefault(symbol.usr, symbol)
        for occ in record.occurrences:
            live = LiveOccurrence(occ.usr, path, occ.line, occ.column, occ.roles, module, occ.relations)
            index.occurrences.setdefault(occ.usr, []).append(live)
            for relation in occ.relations:
                edge = Edge(occ.usr, relation.roles, relation.usr, live)
                index.edges_from.setdefault(occ.usr, []).append(edge)
                index.edges_to.setdefault(relation.usr, []).append(edge)
    for occurrences in index.occurrences.values():
        occurrences.sort(key=lambda o: (o.path, o.line, o.column, o.roles))
    return index


_CACHE: dict[tuple[str, int], LiveIndex] = {}


def live(store: Path) -> LiveIndex:
    """The live view of `store`, kept for the process while its units folder is unchanged
    (a rebuild that rewrites a unit changes the folder's modification time)."""
    key = (str(store), (store / "v5" / "units").stat().st_mtime_ns)
    if key not in _CACHE:
        _CACHE[key] = live_index(dump(store))
    return _CACHE[key]
