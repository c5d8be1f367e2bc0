"""A machine as a user might have it, made in a private mount namespace (`unshare`): a
folder that is not there (an empty tmpfs over it: no /opt/swift) or cannot be written (a
read-only bind mount). The test process and the machine are untouched; what runs inside is
the real program, meeting the real errors (ENOENT, EROFS)."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

DEFAULT_TOOLCHAIN = Path("/opt/swift")


def in_namespace(
    command: Sequence[str], *, hidden: Sequence[Path] = (), read_only: Sequence[Path] = ()
) -> list[str]:
    """`command` where each folder of `hidden` is empty and each of `read_only` cannot be written."""
    assert shutil.which("unshare"), "these tests need unshare (util-linux) and user namespaces"
    steps = [f"mount -t tmpfs none {shlex.quote(str(path))}" for path in hidden if path.is_dir()]
    for path in read_only:
        quoted = shlex.quote(str(path))
        steps += [f"mount --bind {quoted} {quoted}", f"mount -o remount,bind,ro {quoted}"]
    script = " && ".join([*steps, 'exec "$@"'])
    return ["unshare", "--map-root-user", "--mount", "sh", "-c", script, "sh", *command]


def without_toolchain(command: Sequence[str]) -> list[str]:
    """`command` on a machine without the Swift toolchain at /opt/swift (PATH is the caller's)."""
    return in_namespace(command, hidden=[DEFAULT_TOOLCHAIN])
