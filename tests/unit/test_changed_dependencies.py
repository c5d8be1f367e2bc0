"""Which modules a file's overlay compile emits first (SourceMap.changed_dependencies): those
its module depends on whose sources changed since the build, by content where the database
knows what the build compiled; the others are as built, and their copies emitted into the
overlay's folder before (searched first) are removed (remove_emitted)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from xcindex.indexstore.content import content_digest
from xcindex.overlay.arguments import ModuleInvocation, SourceMap
from xcindex.overlay.compile import OverlayPlace, remove_emitted

BUILT_NS = 1_000 * 10**9


def _module(root: Path, name: str) -> ModuleInvocation:
    folder = root / "Sources" / name
    folder.mkdir(parents=True)
    source = folder / f"{name}.swift"
    source.write_text(f"public struct {name} {{}}\n")
    os.utime(source, ns=(BUILT_NS - 10**9, BUILT_NS - 10**9))  # as the build compiled it
    return ModuleInvocation(name, "swiftc", (str(source),), str(root / "Modules"), ())


def _map(root: Path) -> tuple[SourceMap, dict[str, tuple[int, bytes]]]:
    invocations = {name: _module(root, name) for name in ("Base", "Core", "Feature")}
    by_file = {source: invocation for invocation in invocations.values() for source in invocation.sources}
    dependencies = {"Feature": ("Core", "Base"), "Core": ("Base",), "Base": ()}
    as_built = {
        source: (len(data), content_digest(data)) for source in by_file if (data := Path(source).read_bytes())
    }
    return SourceMap.from_invocations(by_file, dependencies), as_built


def _changes(sources: SourceMap, **options: Any) -> tuple[list[str], list[str]]:
    emit, as_built = sources.changed_dependencies("Feature", built_ns=BUILT_NS, **options)
    return [invocation.module_name for invocation in emit], as_built


def test_a_source_written_back_as_built_is_no_change(tmp_path: Path) -> None:
    sources, as_built = _map(tmp_path)
    base = tmp_path / "Sources" / "Base" / "Base.swift"
    base.write_bytes(base.read_bytes())  # a new time, the build's content
    assert _changes(sources, as_built=as_built) == ([], ["Base", "Core"])
    # Without the build's content known, the time decides.
    assert _changes(sources) == (["Base"], ["Core"])


def test_a_real_change_is_emitted_deepest_first_and_the_others_named_as_built(tmp_path: Path) -> None:
    sources, as_built = _map(tmp_path)
    core = tmp_path / "Sources" / "Core" / "Core.swift"
    core.write_text("public struct Core { public var added = 1 }\n")
    assert _changes(sources, as_built=as_built) == (["Core"], ["Base"])
    base = tmp_path / "Sources" / "Base" / "Base.swift"
    base.write_text("public struct Base { public var added = 2 }\n")
    assert _changes(sources, as_built=as_built) == (["Base", "Core"], [])
    (tmp_path / "Sources" / "Base" / "New.swift").write_text("public struct New {}\n")
    core.write_text("public struct Core {}\n")  # back as built
    base.write_text("public struct Base {}\n")
    assert _changes(sources, as_built=as_built) == (["Base"], ["Core"]), "a new file is a change"


def test_copies_emitted_for_modules_now_as_built_are_removed(tmp_path: Path) -> None:
    place = OverlayPlace(tmp_path / "overlay")
    place.modules.mkdir(parents=True)
    kept = ["BaseTests.swiftmodule", "Other.swiftmodule", "Other.stamp"]
    removed = ["Base.swiftmodule", "Base.swiftdoc", "Base.swiftsourceinfo", "Base.o", "Base.stamp"]
    for name in kept + removed:
        (place.modules / name).write_bytes(b"")
    remove_emitted(place, ["Base", "Missing"])
    assert sorted(os.listdir(place.modules)) == sorted(kept)
    remove_emitted(OverlayPlace(tmp_path / "never-made"), ["Base"])  # no folder: nothing to do
