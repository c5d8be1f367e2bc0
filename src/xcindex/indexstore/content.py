"""A source file's content digest as the database keeps it (`source_digests`): one
definition for the database and for the readers outside the server (the session-start hook,
the doctor), which ask the database without loading its modules."""

from __future__ import annotations

import hashlib
import os


def content_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def not_as_indexed(store_path: str | os.PathLike[str], newer: list[str]) -> list[str]:
    """`newer` (files newer than the index) less those whose content is the one their live
    unit indexed (written again by a `git checkout`, an undone edit): what xcindex's answers
    count as current too (indexstore/writer.py's `record_source_digests`). Read-only, from
    xcindex's database of the store when there is one."""
    import sqlite3
    from pathlib import Path

    from xcindex.indexstore.cache import database_path_for

    database = database_path_for(Path(store_path))
    if not newer or not database.is_file():
        return newer
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return newer
    kept: list[str] = []
    try:
        for path in newer:
            row = connection.execute(
                "SELECT d.unit_mtime_ns, d.size, d.digest,"
                " (SELECT max(u.mtime_ns) FROM units u WHERE u.main_file_id = f.id AND u.live = 1)"
                " FROM files f JOIN source_digests d ON d.file_id = f.id WHERE f.path = ?",
                (os.path.realpath(path),),
            ).fetchone()
            if (
                row is None
                or row[3] is None
                or row[0] != row[3]
                or not has_content(path, row[1], bytes(row[2]))
            ):
                kept.append(path)
    except sqlite3.Error:
        return newer
    finally:
        connection.close()
    return kept


def has_content(path: str, size: int, digest: bytes) -> bool:
    """Whether the file at `path` now has this size and content digest."""
    try:
        with open(path, "rb") as source:
            data = source.read()
    except OSError:
        return False
    return len(data) == size and content_digest(data) == digest
