"""Which modules a file's overlay compile emits first (SourceMap.changed_dependencies): those
its module depends on whose sources changed since the build, by content where the database
knows what the build compiled, and any module emitted into the overlay's folder before,
which that compile would otherwise find as it was then."""

from __future__ import annotations

import os
from pathlib import Path

from xcindex.indexstore.content import content_digest
from xcindex.overlay.arguments import ModuleInvocation, SourceMap

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


def _names(found: list[ModuleInvocation]) -> list[str]:
    return [invocation.module_name for invocation in found]


def test_a_source_written_back_as_built_is_no_change_unless_emitted_since(tmp_path: Path) -> None:
    sources, as_built = _map(tmp_path)
    base = tmp_path / "Sources" / "Base" / "Base.swift"
    base.write_bytes(base.read_bytes())  # a new time, the build's content
    assert _names(sources.changed_dependencies("Feature", built_ns=BUILT_NS, as_built=as_built)) == []
    # Without the build's content known, the time decides.
    assert _names(sources.changed_dependencies("Feature", built_ns=BUILT_NS)) == ["Base"]
    # Emitted into the overlay since: emitted as it is now again.
    emitted = {"Base"}.__contains__
    found = sources.changed_dependencies("Feature", built_ns=BUILT_NS, as_built=as_built, emitted=emitted)
    assert _names(found) == ["Base"]


def test_a_real_change_is_emitted_and_so_is_every_module_emitted_before(tmp_path: Path) -> None:
    sources, as_built = _map(tmp_path)
    core = tmp_path / "Sources" / "Core" / "Core.swift"
    core.write_text("public struct Core { public var added = 1 }\n")
    found = sources.changed_dependencies("Feature", built_ns=BUILT_NS, as_built=as_built)
    assert _names(found) == ["Core"]
    # Base, as built, was emitted before (an earlier session, a build since): the compile that
    # searches the overlay's folder first would find that one, so it is refreshed, deepest first.
    found = sources.changed_dependencies(
        "Feature", built_ns=BUILT_NS, as_built=as_built, emitted={"Base"}.__contains__
    )
    assert _names(found) == ["Base", "Core"]
    # Nothing changed: the build's modules alone, whatever the overlay's folder holds.
    core.write_text("public struct Core {}\n")
    assert (
        _names(
            sources.changed_dependencies(
                "Feature", built_ns=BUILT_NS, as_built=as_built, emitted={"Base"}.__contains__
            )
        )
        == []
    )
