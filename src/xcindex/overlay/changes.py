"""Which of a project's Swift files the index no longer describes: edited since their unit,
new (no unit), or gone (a unit whose file no longer exists), whoever changed them.

The index actor keeps a `ChangeTracker` (plain state, changed by its loop only): the paths
a watch or a sweep says were touched since they were last found current, each with the
generation at which it was touched. Before an answer, a job classifies them against the
database (`classify`, in a worker thread): a touched file that is current again (rebuilt,
re-indexed, or put back) is forgotten; a gone one stops counting at once (its units are no
longer live); the rest are the `Changes` every answer accounts for (docs/tools.md,
"Freshness").
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from xcindex.indexstore.database import Database
from xcindex.indexstore.model import Role
from xcindex.indexstore.writer import FailedCompiles
from xcindex.overlay.arguments import SourceMap
from xcindex.project.realpaths import RealPaths
from xcindex.project.watch import TreeWatch, is_source, sweep


@dataclass(frozen=True)
class Changes:
    """The project's Swift files the index does not describe as they are now."""

    edited: tuple[str, ...] = ()
    """Newer than their live unit (the build's, or the overlay's)."""
    new: tuple[str, ...] = ()
    """In a target's folder, with no unit: the next build compiles them."""
    outside: tuple[str, ...] = ()
    """In no target's folder: no build will compile them."""
    gone: tuple[str, ...] = ()
    """Deleted since they were indexed: forgotten by the classification that found them."""
    watching: bool = False
    """A watch (not only sweeps) follows the project's folders."""
    suspects: tuple[str, ...] = ()
    """Unchanged files that use a declaration which is gone (its file deleted, or the
    declaration removed or renamed in an edit): until the compiler has checked them as they
    are now, their index may name what no longer exists."""

    @property
    def pending(self) -> tuple[str, ...]:
        """What an answer depends on and the index does not yet have: edited and new files,
        and the suspects."""
        return (*self.edited, *self.new, *(path for path in self.suspects if path not in self.edited))


@dataclass(frozen=True)
class ToClassify:
    """A snapshot of the tracker for one classification job."""

    touched: dict[str, int]
    sweep: bool
    gone_folders: frozenset[str]
    roots: tuple[Path, ...]
    sources: SourceMap | None
    watching: bool = False
    suspects: frozenset[str] = frozenset()
    seen: frozenset[str] | None = None
    """The Swift files on disk at this process's first sweep (None before it)."""


@dataclass(frozen=True)
class Classified:
    changes: Changes
    current: tuple[tuple[str, int], ...]
    """(path, generation) of touched paths found current (or gone and forgotten)."""
    swept: bool
    pending: tuple[str, ...] = field(default=())
    suspects: tuple[str, ...] = ()
    """Users of the declarations of the files found gone."""
    swept_files: int | None = None
    """On a sweep, a fingerprint of every Swift file's path and modification time (what a
    watch would have reported as touched); None otherwise."""
    on_disk: frozenset[str] | None = None
    """On a sweep, every Swift file it found."""


@dataclass
class ChangeTracker:
    touched: dict[str, int] = field(default_factory=dict)
    generation: int = 0
    needs_sweep: bool = True
    """Nothing watched yet (a first look), or the watch lost events: only a sweep knows."""
    gone_folders: set[str] = field(default_factory=set)
    suspects: set[str] = field(default_factory=set)
    """Files to check with the compiler (see `Changes.suspects`), until a check or a
    re-index clears them."""
    seen: frozenset[str] | None = None
    """The Swift files on disk at the first sweep: one found later appeared since."""
    appeared: set[str] = field(default_factory=set)
    """Files found new in this process (a module's sources include them, whatever their
    times, while they exist)."""

    def suspect(self, paths: Iterable[str]) -> None:
        self.suspects.update(paths)

    def cleared(self, path: str) -> None:
        self.suspects.discard(path)

    def touch(self, paths: set[str]) -> None:
        self.generation += 1
        for path in paths:
            self.touched[path] = self.generation

    def folder_gone(self, folder: str) -> None:
        self.gone_folders.add(folder)
        self.generation += 1

    def snapshot(self, roots: tuple[Path, ...], sources: SourceMap | None, *, watching: bool) -> ToClassify:
        return ToClassify(
            dict(self.touched),
            self.needs_sweep,
            frozenset(self.gone_folders),
            roots,
            sources,
            watching,
            frozenset(self.suspects),
            self.seen,
        )

    def classified(self, result: Classified, snapshot: ToClassify) -> None:
        """Forget what the job found current, unless it was touched again meanwhile."""
        for path, generation in result.current:
            if self.touched.get(path) == generation:
                del self.touched[path]
        # Edited and new files stay touched: each answer looks at them again until current.
        for path in result.pending:
            self.touched.setdefault(path, self.generation)
        if result.swept and snapshot.sweep:
            self.needs_sweep = False
        self.gone_folders -= snapshot.gone_folders
        self.suspects.update(result.suspects)
        self.suspects -= set(result.changes.gone)
        if self.seen is None and result.on_disk is not None:
            self.seen = result.on_disk
        self.appeared.update(result.changes.new)
        self.appeared -= set(result.changes.gone)


_DECLARES = int(Role.DEFINITION | Role.DECLARATION)
_IMPLICIT = int(Role.IMPLICIT)


def declared_in(db: Database, paths: Iterable[str]) -> set[int]:
    """The symbols the live units of `paths` declare in their source (not implicitly)."""
    return {
        occurrence.symbol_id
        for path in paths
        for occurrence in db.occurrences_in_file(path)
        if occurrence.roles & _DECLARES and not occurrence.roles & _IMPLICIT
    }


def users_of_orphans(db: Database, symbol_ids: set[int], among: Iterable[str]) -> set[str]:
    """The live files, other than `among`, that use a symbol of `symbol_ids` which no live
    file but those of `among` declares any more: they were compiled against a declaration that
    is gone (deleted, renamed) and may no longer compile, or mean something else now."""
    if not symbol_ids:
        return set()
    excluded = set(among)
    declarations = db.declarations_of(symbol_ids)
    users: set[str] = set()
    for symbol_id in symbol_ids:
        if any(d.path not in excluded for d in declarations.get(symbol_id, ())):
            continue  # still declared elsewhere (an extension, an overload, another file)
        users.update(o.path for o in db.occurrences_of(symbol_id) if o.path not in excluded)
    return users


_OVERLOADABLE = frozenset({12, 16, 17, 18})
"""Functions and methods (libIndexStore's kinds): a call of one picks among its namesakes."""
MAX_NAMESAKE_USERS = 32
"""Files at most made suspects by one new overload (a name used more widely is left to the
next build: docs/tools.md, "Not seen")."""


def users_of_namesakes(db: Database, symbol_ids: set[int], among: Iterable[str]) -> set[str]:
    """The live files, other than `among`, that use another function or method named as one
    of `symbol_ids` (newly declared): a call there may now pick the new overload (a better
    match, `f(_: Int)` beside `f(_: Any)`), so it may mean something else without changing."""
    excluded = set(among)
    users: set[str] = set()
    for symbol in db.symbols_by_ids(symbol_ids).values():
        if symbol.kind not in _OVERLOADABLE or not (symbol.name[:1].isalpha() or symbol.name[:1] == "_"):
            continue  # an operator's namesakes are everywhere
        found: set[str] = set()
        for other in db.symbols_by_name(symbol.name):
            if other.id != symbol.id and other.kind in _OVERLOADABLE:
                found.update(o.path for o in db.occurrences_of(other.id) if o.path not in excluded)
            if len(found) > MAX_NAMESAKE_USERS:
                break
        if len(found) <= MAX_NAMESAKE_USERS:
            users |= found
    return users


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _same_as_indexed(db: Database, path: str, unit_mtime_ns: int) -> bool:
    try:
        return db.same_as_indexed(path, unit_mtime_ns, os.stat(path))
    except OSError:
        return False


class _Live:
    """The live units' mtimes of the paths asked about, looked up as the index spells a path,
    else by real path (a watch's spelling can differ: a symlinked folder). The whole list is
    read only for a sweep; the real-path map once per database version."""

    def __init__(self, db: Database, paths: list[str], *, everything: bool) -> None:
        self._db = db
        rows = (
            [(p, m) for p, m, *_ in db.live_files()]
            if everything
            else list(db.live_unit_mtimes(paths).items())
        )
        self.by_path = dict(rows)

    def find(self, path: str) -> tuple[str, int] | None:
        unit = self.by_path.get(path)
        if unit is not None:
            return path, unit
        real = os.path.realpath(path)
        by_real = self._db.derived("live_units_by_real_path", self._by_real_path)
        return by_real.get(real)

    def last_build(self) -> int:
        """When the last build wrote: its newest live unit's mtime (the overlay's units carry
        their files' times, not a build's)."""
        return self._db.derived("newest_build_unit", self._db.newest_build_unit_mtime)

    def _by_real_path(self) -> dict[str, tuple[str, int]]:
        real_path = RealPaths()
        return {real_path(p): (p, m) for p, m, *_ in self._db.live_files()}


def classify(db: Database, job: ToClassify) -> Classified:
    """Classify the touched paths (every Swift file under the roots, on a sweep) against the
    live units; forget the gone ones at once."""
    everything = job.sweep or bool(job.gone_folders)
    found = _Live(db, sorted(job.touched), everything=everything)
    live = found.by_path
    candidates: dict[str, int] = dict(job.touched)
    on_disk: dict[str, int] = {}
    if job.sweep:
        on_disk = sweep(job.roots)
        for path in on_disk:
            candidates.setdefault(path, 0)
        # A live file no sweep found may be gone (or outside the roots: looked at below).
        for path in live:
            if path not in on_disk:
                candidates.setdefault(path, 0)
    for folder in job.gone_folders:
        prefix = folder.rstrip("/") + "/"
        for path in live:
            if path.startswith(prefix):
                candidates.setdefault(path, 0)
    edited: list[str] = []
    new: list[str] = []
    outside: list[str] = []
    gone: list[str] = []
    current: list[tuple[str, int]] = []
    maybe_current: list[tuple[str, int, str]] = []
    for touched, generation in sorted(candidates.items()):
        if not is_source(touched) and touched.endswith(".swift"):
            current.append((touched, generation))  # a package manifest: not a target's source
            continue
        mtime = on_disk.get(touched) if touched in on_disk else _mtime(touched)
        spelled = found.find(touched)
        path, unit = spelled if spelled is not None else (touched, None)
        if path != touched and path in candidates:
            current.append((touched, generation))  # the same file, also touched as the index spells it
            continue
        if mtime is None:
            if unit is not None:
                gone.append(path)
            current.append((touched, generation))
        elif unit is not None:
            if mtime > unit and not _same_as_indexed(db, path, unit):
                edited.append(path)
            else:  # not newer, or written again as it was indexed (git checkout)
                maybe_current.append((touched, generation, path))
        elif not is_source(path) or "/.build/" in path:
            current.append((touched, generation))
        elif mtime <= found.last_build() and not (
            generation > 0
            or (job.seen is not None and touched not in job.seen)
            or (job.sources is not None and job.sources.lists(path))
        ):
            # Older than the last build and no unit: a file the build leaves out (excluded in
            # Package.swift, a target of another platform, in no target of an Xcode project) or
            # whose unit is unreadable. Only a file written since the last build is new, or
            # one that appeared since this process first looked, whatever its time: moved
            # (`git mv`), or copied with its time kept (`cp -p`, `tar x`, `rsync -a`); or one
            # the build planned and did not compile (its tests, built without --build-tests).
            current.append((touched, generation))
        elif job.sources is not None and job.sources.outside_targets(path):
            outside.append(path)
        else:
            new.append(path)
    declared = declared_in(db, gone) if gone else set()
    # A unit newer than its file may come from a failed compile (the file, or another of its
    # module, did not compile): its sites are not to be trusted; re-indexed, it is replaced.
    outputs = db.live_output_files([path for _, _, path in maybe_current]) if maybe_current else {}
    failed = FailedCompiles()
    for touched, generation, path in maybe_current:
        if failed(outputs.get(path, "")):
            edited.append(path)
        else:
            current.append((touched, generation))
    returning = db.paths_with_units(new) if new else set()
    if gone or returning:
        # A deleted file's units stop counting; a file put back (git checkout) has its
        # units back: what the index holds is recomputed, then those looked at again.
        db.recompute_live_units()
        if returning:
            again = {path: mtime for path, mtime, *_ in db.live_files() if path in returning}
            for path, unit in again.items():
                new.remove(path)
                mtime = _mtime(path)
                if mtime is not None and mtime > unit and not _same_as_indexed(db, path, unit):
                    edited.append(path)
                elif path in candidates:
                    current.append((path, candidates[path]))
    suspects = users_of_orphans(db, declared, gone) if declared else set()
    changes = Changes(
        tuple(sorted(edited)),
        tuple(new),
        tuple(outside),
        tuple(gone),
        job.watching,
        tuple(sorted((suspects | job.suspects) - set(gone))),
    )
    return Classified(
        changes,
        tuple(current),
        job.sweep,
        (*edited, *new, *outside),
        tuple(sorted(suspects)),
        hash(frozenset(on_disk.items())) if job.sweep else None,
        frozenset(on_disk) if job.sweep else None,
    )


_PROJECT_MARKERS = ("Package.swift", ".git")
_PROJECT_SUFFIXES = (".xcodeproj", ".xcworkspace")


def _project_folder(path: str) -> str:
    """The folder of the project holding `path`: the nearest with a Package.swift, an Xcode
    project or a repository (at most eight levels up), else the file's own folder."""
    folder = os.path.dirname(path)
    for _ in range(8):
        try:
            names = os.listdir(folder)
        except OSError:
            break
        if any(name in _PROJECT_MARKERS or name.endswith(_PROJECT_SUFFIXES) for name in names):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return os.path.dirname(path)


def roots_for(sources: SourceMap | None, live_files: list[str]) -> tuple[Path, ...]:
    """Where a project's Swift sources are: its targets' folders' parents (a SwiftPM build
    description), else the project folders its live files are in (an Xcode project)."""
    if sources is not None and sources.folders:
        return sources.roots()
    folders: dict[str, str] = {}
    for path in live_files:
        if "/.build/" in path or "/DerivedData/" in path:
            continue
        folder = os.path.dirname(path)
        if folder not in folders:
            folders[folder] = _project_folder(path)
    kept: list[str] = []
    for root in sorted(set(folders.values())):
        if not any(root == other or root.startswith(other + "/") for other in kept):
            kept.append(root)
    return tuple(Path(root) for root in kept)


class WatchedTree:
    """An index actor's view of its project's files: the watch (when there is one), its
    roots, the build's source map, the tracker and the last changes found. Changed by the
    actor's loop only; the watch is opened in a thread and handed over."""

    def __init__(self) -> None:
        self.watch: TreeWatch | None = None
        self.roots: tuple[Path, ...] = ()
        self.sources: SourceMap | None = None
        self.tracker = ChangeTracker()
        self.changes = Changes()
        self.opened = False
        self._swept_files: int | None = None

    def open(self, watch: TreeWatch | None, roots: tuple[Path, ...], sources: SourceMap | None) -> None:
        self.watch, self.roots, self.sources, self.opened = watch, roots, sources, True
        self.tracker.needs_sweep = True  # what changed before the watch began: a first look

    def drain(self) -> set[str]:
        """Take in what the watch saw; the touched Swift files that exist (to re-index)."""
        if self.watch is None:
            return set()
        drained = self.watch.drain()
        if drained.overflowed or self.watch.limit_reached:
            self.tracker.needs_sweep = True
        for folder in drained.gone_folders:
            self.tracker.folder_gone(folder)
        if drained.paths:
            self.tracker.touch(drained.paths)
        return drained.paths

    def quiet(self) -> bool:
        """Nothing to classify: the last changes still hold (a watch sees every change; with
        no watch, every question sweeps)."""
        tracker = self.tracker
        return (
            self.watch is not None
            and not tracker.touched
            and not tracker.needs_sweep
            and not tracker.gone_folders
            and not tracker.suspects
        )

    def snapshot(self) -> ToClassify:
        if self.watch is None:
            self.tracker.needs_sweep = True
        return self.tracker.snapshot(self.roots, self.sources, watching=self.watch is not None)

    def classified(self, result: Classified, snapshot: ToClassify) -> None:
        self.tracker.classified(result, snapshot)
        if result.swept_files is not None and result.swept_files != self._swept_files:
            if self._swept_files is not None:
                self.tracker.generation += 1  # a sweep saw a file written (a watch touches it)
            self._swept_files = result.swept_files
        self.changes = result.changes

    def cleared(self, path: str) -> None:
        """The compiler checked `path` (or re-indexed it): not a suspect any more, in the
        changes a quiet watch answers with as well as in the tracker."""
        self.tracker.cleared(path)
        if path in self.changes.suspects:
            self.changes = replace(
                self.changes, suspects=tuple(p for p in self.changes.suspects if p != path)
            )

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None


def open_tree(
    sources: SourceMap | None, live_files: list[str], watch: bool = True
) -> tuple[TreeWatch | None, tuple[Path, ...]]:
    """The roots, and a watch over them unless `watch` is off (in a thread: it walks every folder)."""
    roots = roots_for(sources, live_files)
    return (TreeWatch.open(roots) if roots and watch else None), roots
