"""Which tasks write an actor's fields: attribute assignment and the mutation of containers
held in its fields (`.append`, item assignment, `.add`, `.pop`, …), recorded per task.

An actor owns its state: only the task running its `run` loop may change it. Tests wrap an
actor class with `record_writes`, drive it for real, and compare the writers with the owner.
Writes made while the instance is constructed (before `run` starts) are the constructor's.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest


@dataclass
class Writes:
    parts: tuple[type, ...] = ()
    """Classes of the objects an actor keeps its state in (the LSP pool's slots): only an
    owner task may write them."""
    owners: dict[int, int] = field(default_factory=dict)
    """id(actor) → the task id running its `run`."""
    strangers: list[str] = field(default_factory=list)
    """Writes by a task that does not own the actor: 'Class.field (how)'."""
    counted: int = 0

    def note(self, obj: object, name: str, how: str) -> None:
        if isinstance(obj, self.parts):
            allowed = set(self.owners.values())
        else:
            owner = self.owners.get(id(obj))
            allowed = set() if owner is None else {owner}
        if not allowed:
            return  # being constructed
        self.counted += 1
        try:
            task = anyio.get_current_task().id
        except RuntimeError:  # a worker thread: never the owner
            task = -1
        if task not in allowed:
            self.strangers.append(f"{type(obj).__name__}.{name} ({how})")


_MUTATORS: dict[type, tuple[str, ...]] = {
    dict: ("__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault"),
    set: ("add", "discard", "remove", "pop", "clear", "update", "difference_update", "intersection_update"),
    list: ("__setitem__", "__delitem__", "append", "extend", "insert", "pop", "remove", "clear", "sort"),
    deque: ("append", "appendleft", "extend", "extendleft", "pop", "popleft", "remove", "clear", "rotate"),
}


def _recording(kind: type, writes: Writes, actor: object, name: str) -> type:
    def wrap(method_name: str) -> Callable[..., Any]:
        original = getattr(kind, method_name)

        @functools.wraps(original)
        def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
            writes.note(actor, name, f".{method_name}")
            return original(self, *args, **kwargs)

        return recorded

    return type(f"Recording{kind.__name__.title()}", (kind,), {m: wrap(m) for m in _MUTATORS[kind]})


def _recorded(value: object, writes: Writes, actor: object, name: str) -> object:
    """`value`, as a recording copy when it is a container whose mutations must be seen."""
    kind = type(value)
    if kind not in _MUTATORS:
        return value
    recording = _recording(kind, writes, actor, name)
    if isinstance(value, deque):
        return recording(value, value.maxlen)
    return recording(value)


@contextmanager
def record_writes(
    monkeypatch: pytest.MonkeyPatch, *classes: type, parts: tuple[type, ...] = ()
) -> Iterator[Writes]:
    """Record every write to the fields of instances of `classes` once their `run` started,
    and to instances of `parts` (state an actor keeps in objects of its own, like the LSP
    pool's slots), which only an owner task may write."""
    writes = Writes(parts)
    for cls in (*classes, *parts):
        original_setattr = cls.__setattr__

        def setattr_(
            obj: object, name: str, value: object, _original: Callable[..., None] = original_setattr
        ) -> None:
            # A part's first assignment of a field is its construction, wherever it is made.
            if not (isinstance(obj, parts) and name not in vars(obj)):
                writes.note(obj, name, "=")
            _original(obj, name, _recorded(value, writes, obj, name))

        monkeypatch.setattr(cls, "__setattr__", setattr_)
    for cls in classes:
        original_run = cls.run  # type: ignore[attr-defined]

        async def run(actor: object, *args: Any, _original: Any = original_run, **kwargs: Any) -> Any:
            writes.owners[id(actor)] = anyio.get_current_task().id
            for name, value in list(vars(actor).items()):
                object.__setattr__(actor, name, _recorded(value, writes, actor, name))
            return await _original(actor, *args, **kwargs)

        monkeypatch.setattr(cls, "run", run)
    yield writes
