"""A small immutable value type for the hooks' modules, which must import almost nothing."""

from __future__ import annotations


class Record:
    """A small immutable value with equality. Not a dataclass: importing `dataclasses`
    (and `inspect` with it) was a fifth of a hook's run, and a hook runs on every edit."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """The fields in their constructor order."""

    def __init__(self, *values: object) -> None:
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(repr(v) for v in self._values())))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"
