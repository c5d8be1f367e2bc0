"""How the pool runs sourcekit-lsp: durations, bounds, and the options it is started with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xcindex.lsp.build_view import build_view, scratch_folder
from xcindex.lsp.client import DEFAULT_INITIALIZATION_OPTIONS
from xcindex.lsp.jsonrpc import JsonValue


@dataclass(frozen=True)
class LspPoolConfig:
    """How the pool runs sourcekit-lsp. Durations are in seconds.

    Args:
        binary: the sourcekit-lsp to run; None discovers it (SOURCEKIT_LSP_PATH, the
            toolchain, PATH).
        arguments: extra command-line arguments (for example `--scratch-path`).
        initialize_timeout: launch + `initialize` deadline (→ sourcekit_lsp_launch_failed).
        request_timeout: deadline of a references/definition/symbolInfo query, including
            opening the file (→ sourcekit_lsp_timeout; the child is kept).
        ready_timeout: deadline of `wait_ready` (background indexing can take minutes).
        max_children: live children at most; the least recently used is stopped first.
        idle_timeout: a child unused this long is shut down (restarted on next use).
        backoff_initial, backoff_max: restart delays after crashes, doubling in between.
        stable_after: a child that stayed up this long resets the backoff when it crashes.
        crash_burst, crash_window: this many crashes within the window → give up for
            `backoff_max` (sourcekit_lsp_not_running).
        shutdown_timeout, exit_timeout, terminate_timeout: the stop sequence's waits (for
            the `shutdown` answer, for the exit after `exit`, for the exit after SIGTERM).
        log_capacity: log lines kept per child (its log messages, stderr, lifecycle).
        scratch_root: where a SwiftPM workspace's sourcekit-lsp keeps what it writes
            (`swiftPM.scratchPath`, one folder per root); None leaves sourcekit-lsp's default,
            `.build/index-build` inside the project. xcindex sets it so that asking a
            question never writes into the user's tree.
        read_build: with `scratch_root` set, a package whose build wrote an index store is
            read through a view of its build (`lsp/build_view.py`, background indexing off)
            instead of being prepared and indexed again by sourcekit-lsp; False (or no
            built store) lets sourcekit-lsp index it itself.
    """

    binary: Path | None = None
    arguments: tuple[str, ...] = ()
    initialize_timeout: float = 10.0
    request_timeout: float = 10.0
    ready_timeout: float = 300.0
    max_children: int = 4
    idle_timeout: float = 900.0
    backoff_initial: float = 1.0
    backoff_max: float = 30.0
    stable_after: float = 60.0
    crash_burst: int = 5
    crash_window: float = 60.0
    shutdown_timeout: float = 0.5
    exit_timeout: float = 2.0
    terminate_timeout: float = 0.5
    log_capacity: int = 500
    scratch_root: Path | None = None
    read_build: bool = True


def initialization_options(root: Path, config: LspPoolConfig) -> dict[str, JsonValue]:
    """The defaults, plus a scratch path outside the project for a SwiftPM root: a view of
    its build (background indexing off) when it has a built index store and `read_build`,
    else a folder where sourcekit-lsp builds and indexes the package itself. Touches the
    file system: the view is made (or brought up to date) here, a few syscalls."""
    options: dict[str, JsonValue] = dict(DEFAULT_INITIALIZATION_OPTIONS)
    if config.scratch_root is None or not (root / "Package.swift").is_file():
        return options
    try:
        view = build_view(root, config.scratch_root) if config.read_build else None
    except OSError:
        view = None  # the cache refused the view: sourcekit-lsp indexes the package itself
    if view is not None:
        options["backgroundIndexing"] = False
        options["swiftPM"] = {"scratchPath": str(view)}
    else:
        options["swiftPM"] = {"scratchPath": str(scratch_folder(config.scratch_root, root, ""))}
    return options
