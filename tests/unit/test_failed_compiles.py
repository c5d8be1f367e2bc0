"""Which units a failed compile wrote, asked for many units at once (FailedCompiles): the
compiler writes a file's unit even when its module does not compile, and the driver then
removes the object file the unit names. The same answers as asking one unit at a time."""

from __future__ import annotations

import os
from pathlib import Path

from xcindex.indexstore.writer import INDEX_BUILD, FailedCompiles, failed_compile


def test_a_missing_object_file_in_a_present_folder_is_a_failed_compile(tmp_path: Path) -> None:
    built = tmp_path / ".build" / "debug" / "Core.build"
    built.mkdir(parents=True)
    (built / "A.swift.o").write_bytes(b"")
    (built / "B.swift.o").write_bytes(b"")
    (tmp_path / "not-a-folder").write_text("")
    lsp = tmp_path / INDEX_BUILD.strip("/") / "Core.build"
    lsp.mkdir(parents=True)
    expected = {
        str(built / "A.swift.o"): False,  # compiled
        str(built / "C.swift.o"): True,  # the folder is there, the object file removed
        str(tmp_path / "moved" / "Core.build" / "A.swift.o"): False,  # a build made elsewhere
        str(tmp_path / "not-a-folder" / "A.swift.o"): False,
        str(lsp / "A.swift.o"): False,  # sourcekit-lsp indexes without object files
        "": False,  # the overlay's units name none
    }
    failed = FailedCompiles()
    for _ in range(2):
        assert {output: failed(output) for output in expected} == expected
    assert {output: failed_compile(output) for output in expected} == expected

    # One instance lists a folder once: a new instance sees an object file removed since.
    os.remove(built / "B.swift.o")
    assert not failed(str(built / "B.swift.o"))
    assert FailedCompiles()(str(built / "B.swift.o"))
