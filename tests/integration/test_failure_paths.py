"""What a user sees when the machine lacks something xcindex needs: one error that names it and
its fix, the same from the CLI, from every MCP tool (the server stays up and answers what it
can), from the embedding API (an `XcindexError`, as docs/embedding.md promises) and from the
SessionStart hook, even when the session starts in a subfolder of the package.

The machine is made in a private mount namespace (tests/namespaces.py): no /opt/swift and
no `swift` on PATH; libIndexStore without sourcekit-lsp; a cache folder that cannot be
written. Everything else is real: the fixture's index, the server, its workers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY
from tests.line_client import LineClient
from tests.namespaces import DEFAULT_TOOLCHAIN, in_namespace, without_toolchain

pytestmark = [pytest.mark.toolchain]

XCINDEX = str(Path(sys.executable).parent / "xcindex")
NO_LIBRARY = (
    "libIndexStore was not found (searched: no toolchain found). Install the Swift toolchain (Xcode or "
    "swift.org), put `swift` on PATH, or set XCINDEX_LIBINDEXSTORE to the library's path."
)
TOOL_ERROR = f"ingestion worker failed: LibraryNotFound: {NO_LIBRARY}"
NO_LSP = (
    "no sourcekit-lsp in a Swift toolchain (next to swift, Xcode's, /opt/swift) or on PATH; set "
    "SOURCEKIT_LSP_PATH"
)
EMBEDDED = """
import sys, anyio
from xcindex import Engine, XcindexError

async def main() -> None:
    async with Engine() as engine:
        try:
            await engine.find_symbol("UserService", project_path=sys.argv[1])
        except XcindexError as error:
            print(f"{type(error).__name__}: {error}")

anyio.run(main)
"""


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No toolchain on PATH, a cache and HOME of the test's own."""
    (tmp_path / "home").mkdir(exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XCINDEX_CACHE_DIR": str(tmp_path / "cache"),
        "CLAUDE_PROJECT_DIR": str(CANARY),
        "LANG": "C.UTF-8",
        **extra,
    }


def tool_result(server: LineClient, number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = server.request(number, "tools/call", {"name": name, "arguments": arguments}, within_s=120)
    result: dict[str, Any] = answer["result"]
    return result


def session_start(command: list[str], env: dict[str, str]) -> str:
    ran = subprocess.run(command, env=env, input=b'{"source": "startup"}', capture_output=True, timeout=60)
    assert ran.returncode == 0, ran
    text: str = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def test_without_the_toolchain_every_path_says_what_to_install(canary_store: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    where = {"projectPath": str(CANARY)}

    cli = subprocess.run(
        without_toolchain([XCINDEX, "symbol", "UserService", "--project", str(CANARY)]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2
    assert cli.stderr.splitlines()[-1] == f"xcindex symbol: error: {TOOL_ERROR}"

    server = LineClient(without_toolchain([XCINDEX, "serve"]), env, cwd=CANARY)
    try:
        server.initialize()
        for number, (name, arguments) in enumerate(
            [
                ("find_symbol", {"symbolName": "UserService", **where}),
                ("find_references", {"symbolName": "fetchUser(id:)", **where}),
                ("status", where),
                (
                    "blast_radius",
                    {"filePath": str(CANARY / "Sources" / "CanaryCore" / "UserService.swift"), **where},
                ),
            ],
            start=1,
        ):
            assert tool_result(server, number, name, arguments) == {
                "content": [{"text": f"Error: {TOOL_ERROR}", "type": "text"}],
                "isError": True,
            }, name
        assert len(server.request(9, "tools/list")["result"]["tools"]) == 12, "the server is still up"
    finally:
        assert server.close() == 0

    # The session starts in a subfolder of the package: the hook finds it, and says why
    # the tools cannot answer.
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(CANARY / "Sources" / "CanaryCore")}
    assert session_start(without_toolchain([XCINDEX, "hook", "session-start"]), hook_env) == (
        f"[xcindex] xcindex cannot read the index of SwiftCanary: {NO_LIBRARY} Until then its tools answer "
        "with this error."
    )


def test_without_the_toolchain_the_embedding_api_raises_an_xcindex_error(
    canary_store: Path, tmp_path: Path
) -> None:
    env = bare_env(tmp_path)
    embedded = subprocess.run(
        without_toolchain([sys.executable, "-c", EMBEDDED, str(CANARY)]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert embedded.stdout == f"XcindexError: {TOOL_ERROR}\n", embedded.stderr


def test_without_sourcekit_lsp_the_index_answers_and_rename_plans_say_why_unverified(
    canary_store: Path, tmp_path: Path
) -> None:
    library = tmp_path / "lib" / "libIndexStore.so"
    library.parent.mkdir()
    (found,) = [
        path
        for path in (DEFAULT_TOOLCHAIN / "usr" / "lib").glob("libIndexStore.so*")
        if not path.is_symlink()
    ]
    shutil.copyfile(found, library)
    env = bare_env(tmp_path, XCINDEX_LIBINDEXSTORE=str(library))
    where = {"projectPath": str(CANARY)}
    server = LineClient(without_toolchain([XCINDEX, "serve"]), env, cwd=CANARY)
    try:
        server.initialize()
        references = tool_result(server, 1, "find_references", {"symbolName": "fetchUser(id:)", **where})
        assert references["isError"] is False
        assert len(references["structuredContent"]["results"]) >= 5
        plan = tool_result(
            server,
            2,
            "plan_rename",
            {"usr": "s:10CanaryCore11UserServiceC", "newName": "AccountService", **where},
        )
        assert plan["isError"] is False
        structured = plan["structuredContent"]
        assert [(w["code"], w["message"]) for w in structured["warnings"]] == [
            ("reconciliation_unavailable", f"sourcekit-lsp was not consulted: {NO_LSP}"),
            ("sourcekit_lsp_not_found", NO_LSP),
        ]
        assert structured["ranges"]
        assert {r["tier"] for r in structured["ranges"]} == {"green-indexstore"}, (
            "nothing claims verification"
        )
    finally:
        assert server.close() == 0
    said = session_start(without_toolchain([XCINDEX, "hook", "session-start"]), env)
    assert said.startswith("[xcindex] Index is current for SwiftCanary (last built ")
    assert said.endswith(
        f"(sourcekit-lsp: {NO_LSP}. Until one is found, plan_rename's ranges are not verified by it and "
        "the other tools answer from the index alone.)"
    )


def test_an_unwritable_cache_folder_is_named_with_its_fix(canary_store: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    env = bare_env(tmp_path, PATH=f"{DEFAULT_TOOLCHAIN / 'usr' / 'bin'}:/usr/bin:/bin")
    problem = (
        f"xcindex's cache folder {cache} cannot be written (Read-only file system): make it writable, or "
        "set XCINDEX_CACHE_DIR to a folder that is."
    )

    cli = subprocess.run(
        in_namespace([XCINDEX, "refs", "UserService", "--project", str(CANARY)], read_only=[cache]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (cli.returncode, cli.stderr) == (2, f"xcindex refs: error: {problem}\n")

    # The doctor and the session's first words say it too (they said all was well).
    doctor = subprocess.run(
        in_namespace([XCINDEX, "doctor", "--project", str(CANARY)], read_only=[cache]),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert doctor.returncode == 1, doctor.stdout
    assert f"  [FAIL] {problem}\n" in doctor.stdout
    assert session_start(in_namespace([XCINDEX, "hook", "session-start"], read_only=[cache]), env) == (
        f"[xcindex] xcindex's cache folder {cache} cannot be written: its tools answer SwiftCanary's "
        "questions with that error until it is made writable, or XCINDEX_CACHE_DIR names a folder that is."
    )

    server = LineClient(in_namespace([XCINDEX, "serve"], read_only=[cache]), env, cwd=CANARY)
    try:
        server.initialize()
        for number, name in enumerate(("status", "find_symbol"), start=1):
            arguments = {
                "projectPath": str(CANARY),
                **({"symbolName": "UserService"} if name == "find_symbol" else {}),
            }
            assert tool_result(server, number, name, arguments) == {
                "content": [{"text": f"Error: {problem}", "type": "text"}],
                "isError": True,
            }
    finally:
        assert server.close() == 0


@pytest.mark.toolchain
def test_a_file_named_as_libindexstore_that_is_no_library_says_how_to_undo_it(
    canary_store: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "libIndexStore.so"
    fake.write_text("not a shared library\n", encoding="utf-8")
    env = bare_env(
        tmp_path,
        PATH=f"{DEFAULT_TOOLCHAIN / 'usr' / 'bin'}:/usr/bin:/bin",
        XCINDEX_LIBINDEXSTORE=str(fake),
    )
    cli = subprocess.run(
        [XCINDEX, "refs", "UserService", "--project", str(CANARY)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2, cli
    # One line, the reason and the way back; no JSON log line saying it first.
    assert cli.stderr.count("\n") == 1, cli.stderr
    assert cli.stderr.startswith(
        f"xcindex refs: error: ingestion worker failed: IndexStoreError: libIndexStore at {fake} could not be loaded ("
    )
    assert cli.stderr.endswith(
        "unset XCINDEX_LIBINDEXSTORE (it names this file) to use the toolchain's, or point it at one "
        "(usr/lib/libIndexStore.so in a Swift toolchain).\n"
    )
