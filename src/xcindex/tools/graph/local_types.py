"""Types declared inside function bodies, which the index does not record (it leaves local
declarations out), but which can still conform to a protocol or inherit from a class:
swift-log's tests declare `struct CustomHandler: LogHandler` inside a test function.

The index does record the *mention* of the protocol in such a type's inheritance clause,
as a plain reference (no `baseOf`, since the type it would relate to is not in the index).
So the places to look are few and known: each such reference of the type, on a line that
declares a type whose inheritance clause holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xcindex.indexstore.database import Database, OccurrenceRow
from xcindex.indexstore.model import Role
from xcindex.swift.source import source_line
from xcindex.tools.shapes import LocalSubtypeJson

_LOCAL_TYPE = re.compile(
    r"^\s*(?:(?:@[\w.]+(?:\([^)]*\))?|private|fileprivate|internal|public|final|indirect)\s+)*"
    r"(struct|class|enum|actor)\s+(\w+)(?:<[^>{]*>)?\s*:([^{]*)"
)
_PLAIN_REFERENCE = int(Role.REFERENCE)
_NOT_PLAIN = int(Role.REL_BASEOF | Role.IMPLICIT | Role.DEFINITION | Role.DECLARATION)


@dataclass(frozen=True)
class LocalSubtype:
    """A type declared in a function body that names the type in its inheritance clause."""

    name: str
    kind: str
    mention: OccurrenceRow
    text: str

    def to_json(self) -> LocalSubtypeJson:
        return {
            "name": self.name,
            "kind": self.kind,
            "path": self.mention.path,
            "line": self.mention.line,
            "column": self.mention.column,
            "text": self.text,
        }


def local_subtypes(db: Database, type_id: int) -> list[LocalSubtype]:
    """The local types whose inheritance clause names the type, at its plain references."""
    found: list[LocalSubtype] = []
    for occ in db.occurrences_of(type_id):
        if not occ.roles & _PLAIN_REFERENCE or occ.roles & _NOT_PLAIN:
            continue
        text = source_line(occ.path, occ.line)
        match = _LOCAL_TYPE.match(text)
        if match is None:
            continue
        column = len(text.encode("utf-8")[: occ.column - 1].decode("utf-8", "replace"))
        if match.start(3) <= column < match.end(3):
            found.append(LocalSubtype(match.group(2), match.group(1), occ, text.strip()[:200]))
    return sorted(found, key=lambda local: (local.mention.path, local.mention.line))
