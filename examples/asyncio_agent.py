"""An asyncio agent that embeds xcindex to prepare a change to one method.

    python examples/asyncio_agent.py /path/to/Package [SYMBOL]

It asks what a careful agent asks before changing a signature: which symbol the name
means, where it is defined and used, who overrides it, and which tests cover its file
(three questions at once, in an asyncio TaskGroup, under one timeout). Then it records its
edit of the defining file, as an agent without Claude Code's hooks does, and shows that
answers naming that file now say so. SYMBOL defaults to `fetchUser(id:)`.
"""

from __future__ import annotations

import asyncio
import os
import sys

from xcindex import Engine, SitesAnswer, XcindexError


def show_sites(title: str, answer: SitesAnswer) -> None:
    print(f"{title}: {answer.total}" + (" (truncated)" if answer.truncated else ""))
    for site in answer.sites:
        roles = ", ".join(site.to_json()["roles"])
        print(f"  {site.occurrence.path}:{site.occurrence.line}:{site.occurrence.column} [{roles}]")


async def main(project: str, name: str) -> int:
    async with Engine() as engine:
        found = await engine.find_symbol(name, project_path=project)
        if not found.matches:
            print(f"{name}: no such symbol in the index ({found.freshness.completeness})")
            return 1
        match = found.matches[0]
        usr = match.symbol.usr
        if match.definition is None:
            print(f"{name}: {match.symbol.name} ({usr}) is an SDK symbol, with no source here")
            return 1
        print(f"{match.symbol.name} ({usr}) is defined at {match.definition.path}:{match.definition.line}")

        async with asyncio.timeout(120), asyncio.TaskGroup() as tasks:
            references = tasks.create_task(engine.find_references(usr=usr, project_path=project))
            overrides = tasks.create_task(engine.find_overrides(usr, project_path=project))
            radius = tasks.create_task(engine.blast_radius(match.definition.path, project_path=project))
        show_sites("references", references.result())
        show_sites("overrides", overrides.result())
        print(f"tests to run: {radius.result().swift_test_command or 'none found'}")

        # An agent without the hooks tells the engine what it edited. The file is unchanged
        # here, so the answer stays complete: an edit counts while the file is newer than its
        # index (and then it is re-indexed on its own).
        await engine.record_edit(match.definition.path)
        after = await engine.find_definition(usr, project_path=project)
        print(
            f"after recording an edit of an unchanged file: completeness={after.freshness.completeness}, "
            f"session-edited={list(after.freshness.session_edited_files)}"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} PROJECT_PATH [SYMBOL]")
    # The Engine takes absolute paths (an agent knows where its project is); a person types
    # a relative one.
    project = os.path.abspath(sys.argv[1])
    try:
        sys.exit(asyncio.run(main(project, sys.argv[2] if len(sys.argv) == 3 else "fetchUser(id:)")))
    except XcindexError as error:  # every xcindex failure says what to do, in one line
        sys.exit(f"{sys.argv[0]}: {error}")
