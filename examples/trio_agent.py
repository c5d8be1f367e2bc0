"""A trio agent that embeds xcindex to find the tests a protocol change reaches.

    python examples/trio_agent.py /path/to/Package [PROTOCOL]

It finds the protocol's conformers, then asks for the blast radius of every conformer's
file at once (one task per file in a trio nursery, each under its own deadline) and
prints the union of the covering tests with one `swift test --filter` expression. The
Engine needs no adapter under trio. PROTOCOL defaults to `AuthManager`.
"""

from __future__ import annotations

import os
import sys

import trio

from xcindex import BlastRadiusAnswer, Engine, TestTarget, XcindexError


async def main(project: str, name: str) -> int:
    async with Engine() as engine:
        found = await engine.find_symbol(name, project_path=project)
        protocols = [m for m in found.matches if m.to_json()["kind"] == "protocol"]
        if not protocols:
            print(f"{name}: no protocol of that name in the index ({found.freshness.completeness})")
            return 1
        protocol = protocols[0].symbol
        conformances = await engine.find_conformances(protocol.usr, project_path=project)
        print(f"{len(conformances.conformances)} type(s) conform to {protocol.name}:")
        for conformance in conformances.conformances:
            print(f"  {conformance.type_symbol.name} at {conformance.anchor.path}:{conformance.anchor.line}")

        radii: dict[str, BlastRadiusAnswer] = {}

        async def radius_of(path: str) -> None:
            with trio.fail_after(120):
                radii[path] = await engine.blast_radius(path, project_path=project)

        async with trio.open_nursery() as nursery:
            for path in sorted({c.anchor.path for c in conformances.conformances}):
                nursery.start_soon(radius_of, path)

        # Each target is a test, or some or all of a class or suite, or a module, as `swift
        # test list` names them, with the anchored `--filter` pattern that runs exactly it.
        # Two files' radii can name the same class with different tests; their patterns are
        # both kept (the union of the tests), never one in place of the other.
        targets: dict[str, TestTarget] = {}
        for radius in radii.values():
            targets.update((target.filter, target) for target in radius.tests)
        ordered = sorted(targets.values(), key=lambda t: (t.id, t.filter))
        print(f"covering tests across {len(radii)} file(s):")
        for target in ordered:
            print(f"  {target.label} ({target.kind}) in {target.path}")
        if ordered:
            print("run them: swift test --filter '" + "|".join(t.filter for t in ordered) + "'")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} PROJECT_PATH [PROTOCOL]")
    project = os.path.abspath(sys.argv[1])  # the Engine takes absolute paths; a person types any
    try:
        sys.exit(trio.run(main, project, sys.argv[2] if len(sys.argv) == 3 else "AuthManager"))
    except XcindexError as error:  # every xcindex failure says what to do, in one line
        sys.exit(f"{sys.argv[0]}: {error}")
