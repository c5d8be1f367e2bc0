"""Before and after, in one run: the starts of an older checkout beside this one's.

    python -m bench.compare OLD_CHECKOUT [--scale S] [--runs 20]

OLD_CHECKOUT is a folder holding an older xcindex's `src/` and `bin/xcindex` (`git archive
COMMIT | tar -x -C DIR`). Both are run with this virtual environment's interpreter and
packages, each from its own sources, their bytecode compiled first; every command of one is
interleaved with the other's and with `python -c pass`, so that the machine's load falls on
all of them. Measured: `xcindex --version` and `--help`, each hook through the console script
and through the plugin launcher (as in bench/starts.py), and spawn → first find_symbol with a
warm cache through the handshake client of bench/startup.py (an initialize, then the call).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench import starts
from bench.build import bench_dir
from bench.startup import handshake_client, subject_name

REPO = starts.REPO


def console_script(folder: Path, src: Path) -> Path:
    """What pip writes for `xcindex` (its `import re` included), with `src` first on the path."""
    script = folder / "xcindex"
    script.write_text(
        f"#!{sys.executable}\n"
        "import re\nimport sys\n"
        f"sys.path.insert(0, {str(src)!r})\n"
        "from xcindex.cli.main import main\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def plugin_data(folder: Path, src: Path, script: Path) -> Path:
    """A ready plugin environment whose interpreter and console script run `src`: a venv's
    layout of links to this one, with `src` on its path through a .pth file."""
    data = starts.plugin_data(folder)
    venv = next(data.glob("venv-*"))
    (venv / "bin" / "xcindex").unlink()
    (venv / "bin" / "xcindex").symlink_to(script)
    # The environment's own site-packages would put this checkout first: a private one.
    (venv / "lib").unlink()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    site.mkdir(parents=True)
    real = starts.VENV / "lib" / version / "site-packages"
    for entry in real.iterdir():
        if "xcindex" not in entry.name:
            (site / entry.name).symlink_to(entry)
    (site / "xcindex-src.pth").write_text(f"{src}\n", encoding="utf-8")
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a folder with an older checkout's src/ and bin/")
    parser.add_argument("--scale", default="S")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cache", type=Path, default=None, help="a warm XCINDEX_CACHE_DIR for the scale")
    args = parser.parse_args(argv)
    root = bench_dir() / args.scale
    sides = {"before": args.old.resolve(), "after": REPO}
    for side in sides.values():
        compileall.compile_dir(str(side / "src" / "xcindex"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="xcindex-bench-compare-") as tmp:
        commands: dict[str, starts.Command] = {"python -c pass": starts.FLOOR}
        payloads = starts.hook_payloads(root)
        exes: dict[str, str] = {}
        for label, side in sides.items():
            folder = Path(tmp) / label
            folder.mkdir()
            script = console_script(folder, side / "src")
            exes[label] = str(script)
            data = plugin_data(folder / "data", side / "src", script)
            env = {
                **os.environ,
                "TMPDIR": tmp,
                "CLAUDE_PROJECT_DIR": str(root),
                "CLAUDE_PLUGIN_ROOT": str(side),
                "CLAUDE_PLUGIN_DATA": str(data),
            }
            commands[f"{label}: xcindex --version"] = ([str(script), "--version"], b"", None)
            commands[f"{label}: xcindex --help"] = ([str(script), "--help"], b"", None)
            for event, payload in payloads.items():
                commands[f"{label}: {event} (console script)"] = ([str(script), "hook", event], payload, env)
                commands[f"{label}: {event} (plugin launcher)"] = (
                    [str(side / "bin" / "xcindex"), "hook", event],
                    payload,
                    env,
                )
        timings = starts.interleaved(commands, args.runs)
        cache = args.cache or Path(os.environ.get("XCINDEX_CACHE_DIR", Path(tmp) / "cache"))
        first: dict[str, list[float]] = {label: [] for label in exes}
        loads: list[float] = []
        for exe in exes.values():
            handshake_client(exe, root, cache)  # warm the cache, not counted
        for _ in range(max(3, args.runs // 4)):
            for label, exe in exes.items():
                loads.append(os.getloadavg()[0])
                first[label].append(handshake_client(exe, root, cache).first_answer_s)
    floor = timings["python -c pass"]["p50_ms"]
    print(
        f"Subject: `{subject_name(root)}` at {args.scale}; python -c pass p50 {floor} ms; load {os.getloadavg()[0]:.2f}"
    )
    print("| measure | before | after | python -c pass | after / floor |")
    print("|---|---|---|---|---|")
    names = sorted({key.split(": ", 1)[1] for key in timings if ": " in key}, key=_order)
    for name in names:
        before, after = timings[f"before: {name}"]["p50_ms"], timings[f"after: {name}"]["p50_ms"]
        print(f"| {name} (ms) | {before:.1f} | {after:.1f} | {floor:.1f} | {after / floor:.2f}x |")
    medians = {label: statistics.median(values) for label, values in first.items()}
    print(
        f"| spawn → first find_symbol, warm cache, handshake client (s) | {medians['before']:.3f} | "
        f"{medians['after']:.3f} | — | — |"
    )
    print(json.dumps({"timings": timings, "first_answer_s": first, "loads": loads}))
    return 0


def _order(name: str) -> tuple[int, str]:
    for rank, prefix in enumerate(("xcindex --version", "xcindex --help", "session-start", "post-tool-use")):
        if name.startswith(prefix):
            return rank, name
    return 9, name


if __name__ == "__main__":
    raise SystemExit(main())
