"""What `bin/xcindex` runs when xcindex is not installed yet, with a Python >= 3.11 it found:

    python -I -B <plugin>/src/xcindex/plugin/launch.py ROOT VERSION DATA FALLBACK MODE [ARGS...]

MODE is `setup` (install in the foreground), `setup-detached` (start the set-up in the
background, its output in `install.log`, and return), `session-start` (the SessionStart
hook's answer, starting the set-up when it is not running), or `serve` (the first-start
MCP front: answers at once, and becomes `xcindex serve ARGS` once the set-up is done).

`-I` keeps the user's PYTHONPATH and site-packages out, `-B` keeps `.pyc` files out of the
plugin folder; the plugin's `src/` is put on the path here, and only stdlib modules and
`xcindex.plugin` are imported (the package's `__init__` imports nothing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from xcindex.plugin.setup import Plugin

USAGE = "usage: launch.py ROOT VERSION DATA FALLBACK (setup|setup-detached|session-start|serve) [ARGS...]"


def main(argv: list[str]) -> int:
    if len(argv) < 5:
        sys.stderr.write(USAGE + "\n")
        return 2
    root, version, data, fallback, mode, *rest = argv
    plugin = Plugin(Path(root), version, Path(data), Path(fallback))
    if mode == "setup":
        from xcindex.plugin.setup import install

        return install(plugin)
    if mode == "setup-detached":
        from xcindex.plugin.background import spawn_installer

        spawn_installer(plugin)
        return 0
    if mode == "session-start":
        from xcindex.plugin.background import session_start_answer

        if (program := plugin.ready()) is not None:
            # Installed since the launcher looked: the real hook answers (stdin is unread).
            os.execv(program, [str(program), "hook", "session-start"])
        sys.stdout.write(session_start_answer(plugin) + "\n")
        return 0
    if mode == "serve":
        from xcindex.plugin.front import serve

        return serve(plugin, rest)
    sys.stderr.write(USAGE + "\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
