"""Plain values read out of an index store, and the constants of libIndexStore's C API.

These cross a process boundary (the walk runs in a worker process), so they are small,
picklable tuples and dataclasses with no handles inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag
from typing import NamedTuple

PARAMETER_KIND = 25
"""libIndexStore's symbol kind for a function parameter."""


class Role(IntFlag):
    """Occurrence and relation roles (indexstore_symbol_role_t)."""

    DECLARATION = 1 << 0
    DEFINITION = 1 << 1
    REFERENCE = 1 << 2
    READ = 1 << 3
    WRITE = 1 << 4
    CALL = 1 << 5
    DYNAMIC = 1 << 6
    ADDRESSOF = 1 << 7
    IMPLICIT = 1 << 8
    REL_CHILDOF = 1 << 9
    REL_BASEOF = 1 << 10
    REL_OVERRIDEOF = 1 << 11
    REL_RECEIVEDBY = 1 << 12
    REL_CALLEDBY = 1 << 13
    REL_EXTENDEDBY = 1 << 14
    REL_ACCESSOROF = 1 << 15
    REL_CONTAINEDBY = 1 << 16
    REL_IBTYPEOF = 1 << 17
    REL_SPECIALIZATIONOF = 1 << 18
    UNDEFINITION = 1 << 19
    NAMEREFERENCE = 1 << 20


# The roles the tools report, in the order and spelling of the tools documentation. An
# occurrence's roles word also carries the union of its relations' roles, which is how
# `overrideOf` (an occurrence that overrides or witnesses something) shows up.
REPORTED_ROLES: tuple[tuple[Role, str], ...] = (
    (Role.DEFINITION, "definition"),
    (Role.DECLARATION, "declaration"),
    (Role.REFERENCE, "reference"),
    (Role.CALL, "call"),
    (Role.READ, "read"),
    (Role.WRITE, "write"),
    (Role.REL_OVERRIDEOF, "overrideOf"),
)


def role_names(roles: int) -> list[str]:
    return [name for bit, name in REPORTED_ROLES if roles & bit]


def usr_hash(usr: str) -> int:
    """64-bit FNV-1a of the USR's UTF-8 bytes, as SQLite's signed integer: what the symbols
    table is indexed by (a unique index of the USRs themselves was the database's largest
    index). The compiled ingester computes the same (native_ingest.c, hash_bytes)."""
    value = 0xCBF29CE484222325
    for byte in usr.encode("utf-8"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def keeps_relations(symbol: SymbolInfo, roles: int) -> bool:
    """Whether an occurrence's relations are stored: all but those of a *use* of a
    parameter or a local (which function contains it, a third of a large project's
    relations, is never asked; its declaration keeps its parent). The compiled ingester
    applies the same rule (native_ingest.c, on_occurrence)."""
    local = symbol.kind == PARAMETER_KIND or bool(symbol.properties & Property.LOCAL)
    return not local or bool(roles & (Role.DEFINITION | Role.DECLARATION))


_IMPLICIT_ROLE = int(Role.IMPLICIT)
_DECLARES = int(Role.DEFINITION | Role.DECLARATION)


def states_relations(roles: int) -> bool:
    """Whether the `overrideOf`, `baseOf` and `extendedBy` relations an occurrence carries
    are the source's (docs/tools.md, "Implicit occurrences"): every occurrence's but a
    synthesised declaration's (an implicit definition: an inherited initialiser, a Codable
    member), which no one wrote. An implicit *use* counts: it is how the compiler records, at
    a conformance, that a member declared elsewhere (another file or module, the SDK)
    witnesses a requirement, and, at a composition typealias (`Codable`), the protocols it
    stands for. The same rule in SQL: queries.STATED_RELATIONS."""
    return not (roles & _IMPLICIT_ROLE and roles & _DECLARES)


def is_generated_name(name: str) -> bool:
    """Macro expansions (Swift Testing's @Test, …) index helpers named `$s…`: not source."""
    return name.startswith("$") or ":$s" in name


SYMBOL_KINDS: dict[int, str] = {
    0: "unknown",
    1: "module",
    2: "namespace",
    3: "namespaceAlias",
    4: "macro",
    5: "enum",
    6: "struct",
    7: "class",
    8: "protocol",
    9: "extension",
    10: "union",
    11: "typealias",
    12: "function",
    13: "variable",
    14: "field",
    15: "enumConstant",
    16: "instanceMethod",
    17: "classMethod",
    18: "staticMethod",
    19: "instanceProperty",
    20: "classProperty",
    21: "staticProperty",
    22: "constructor",
    23: "destructor",
    24: "conversionFunction",
    25: "parameter",
    26: "using",
    27: "concept",
    1000: "commentTag",
}

SYMBOL_SUBKINDS: dict[int, str] = {
    0: "none",
    1: "cxxCopyConstructor",
    2: "cxxMoveConstructor",
    3: "accessorGetter",
    4: "accessorSetter",
    5: "usingTypename",
    6: "usingValue",
    7: "usingEnum",
    1000: "swiftAccessorWillSet",
    1001: "swiftAccessorDidSet",
    1002: "swiftAccessorAddressor",
    1003: "swiftAccessorMutableAddressor",
    1004: "swiftExtensionOfStruct",
    1005: "swiftExtensionOfClass",
    1006: "swiftExtensionOfEnum",
    1007: "swiftExtensionOfProtocol",
    1008: "swiftPrefixOperator",
    1009: "swiftPostfixOperator",
    1010: "swiftInfixOperator",
    1011: "swiftSubscript",
    1012: "swiftAssociatedType",
    1013: "swiftGenericTypeParam",
    1014: "swiftAccessorRead",
    1015: "swiftAccessorModify",
    1016: "swiftAccessorInit",
    1017: "swiftAccessorBorrow",
    1018: "swiftAccessorMutate",
}

LANGUAGES: dict[int, str] = {0: "c", 1: "objc", 2: "cxx", 100: "swift"}


def kind_name(kind: int) -> str:
    return SYMBOL_KINDS.get(kind, "unknown")


def language_name(language: int) -> str:
    return LANGUAGES.get(language, "unknown")


class Property(IntFlag):
    GENERIC = 1 << 0
    TEMPLATE_PARTIAL_SPECIALIZATION = 1 << 1
    TEMPLATE_SPECIALIZATION = 1 << 2
    UNITTEST = 1 << 3
    IBANNOTATED = 1 << 4
    IBOUTLETCOLLECTION = 1 << 5
    GKINSPECTABLE = 1 << 6
    LOCAL = 1 << 7
    PROTOCOL_INTERFACE = 1 << 8
    SWIFT_ASYNC = 1 << 16


class DependencyKind:
    UNIT = 1
    RECORD = 2
    FILE = 3


class UnitDependency(NamedTuple):
    kind: int
    name: str
    file_path: str
    module_name: str
    is_system: bool


@dataclass(frozen=True)
class UnitInfo:
    name: str
    mtime_ns: int
    main_file: str
    module_name: str
    working_dir: str
    output_file: str
    target: str
    provider: str
    is_system: bool
    is_module_unit: bool
    has_main_file: bool
    dependencies: tuple[UnitDependency, ...]
    digest: bytes = b""
    """The unit file's content digest (see ingest.unit_digests); empty when not known."""

    def record_dependencies(self) -> list[UnitDependency]:
        """The records of the project's own files this unit covers. A system header's record
        (a C target's `/usr/include/stdio.h`, the toolchain's clang headers) is SDK code:
        never ingested, so its declarations are never taken for the project's."""
        return [d for d in self.dependencies if d.kind == DependencyKind.RECORD and not d.is_system]


class SymbolInfo(NamedTuple):
    usr: str
    name: str
    kind: int
    subkind: int
    language: int
    properties: int


class Occurrence(NamedTuple):
    """One occurrence; `symbol` and each related symbol index into RecordData.symbols."""

    symbol: int
    roles: int
    line: int
    column: int
    relations: tuple[tuple[int, int], ...]  # (roles, symbol index)


@dataclass(frozen=True)
class RecordData:
    name: str
    symbols: tuple[SymbolInfo, ...]
    occurrences: tuple[Occurrence, ...]


@dataclass(frozen=True)
class ReadFailure:
    """A unit or record that libIndexStore could not read (or crashed on)."""

    name: str
    message: str
