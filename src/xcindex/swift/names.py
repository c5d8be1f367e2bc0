"""The names an agent types, taken apart: qualifiers, a member, its labels.

`parse_query` is the first step of name resolution (`tools/resolve.py`): a dotted path of
modules and types (generic arguments dropped), then a member spelled `name`,
`name(labels:)`, `name(...)`, `init(…)`, `subscript(…)` or an operator; `@Wrapper` names
the wrapper type.
"""

from __future__ import annotations

from dataclasses import dataclass

_OPERATOR_CHARS = frozenset("+-*/=<>!&|^~%?.")


@dataclass(frozen=True)
class Query:
    text: str
    qualifiers: tuple[str, ...]
    base: str
    labels: tuple[str, ...] | None
    """None for a bare name or `name(...)`; `()` for `name()`."""
    types_only: bool = False

    @property
    def member(self) -> str:
        if self.labels is None:
            return self.base
        return f"{self.base}({''.join(label + ':' for label in self.labels)})"


def _strip_ticks(name: str) -> str:
    return name.replace("`", "")


def _labels(content: str) -> tuple[str, ...] | None:
    """`id:name:` / `id: Int, name: String` / `_ payload: String` → labels; `...` → None."""
    content = content.strip()
    if content in ("...", "…"):
        return None
    if not content:
        return ()
    if "," in content:
        labels = [part.split(":")[0].split() for part in content.split(",")]
        return tuple(_strip_ticks(words[0]) if words else "_" for words in labels)
    if ":" not in content:
        return (_strip_ticks(content.split()[0]),)
    parts = content.split(":")[:-1]
    return tuple(_strip_ticks(part.split()[0]) if part.split() else "_" for part in parts)


def _skip_balanced(text: str, start: int, opening: str, closing: str) -> int:
    """The index just past the bracket that closes the one at `start` (len(text) if none)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def parse_query(text: str) -> Query:
    """Split a typed name into qualifiers and member (see the module docstring)."""
    raw = text.strip()
    types_only = raw.startswith("@")
    if types_only:
        raw = raw[1:].split("(", 1)[0].strip()
    components: list[str] = []
    labels: tuple[str, ...] | None = None
    index = 0
    while index < len(raw):
        if raw[index] in _OPERATOR_CHARS:
            # An operator member: the rest is its name (dots and angle brackets included).
            name, _, rest = raw[index:].partition("(")
            components.append(name.strip())
            labels = _labels(rest[:-1] if rest.endswith(")") else rest) if rest else None
            break
        end = index
        while end < len(raw) and (raw[end].isalnum() or raw[end] in "_`$"):
            end += 1
        name = _strip_ticks(raw[index:end])
        if end < len(raw) and raw[end] == "<":
            end = _skip_balanced(raw, end, "<", ">")  # generic arguments: dropped
        if end < len(raw) and raw[end] == "(":
            close = _skip_balanced(raw, end, "(", ")")
            labels = _labels(raw[end + 1 : close - 1])
            components.append(name)
            break
        components.append(name)
        if end < len(raw) and raw[end] == "?":
            end += 1  # `Type?.member`: optional chaining as typed
        if end >= len(raw):
            break
        if raw[end] != "." or end == index:
            # Not a name we can take apart: look it up as written.
            return Query(text, (), raw, None, types_only)
        index = end + 1
    if not components:
        return Query(text, (), raw, None, types_only)
    return Query(text, tuple(components[:-1]), components[-1], labels, types_only)


def name_labels(name: str) -> tuple[str, tuple[str, ...] | None]:
    """`send(payload:retries:)` → ("send", ("payload", "retries")); `count` → ("count", None)."""
    base, paren, rest = name.partition("(")
    if not paren:
        return name, None
    return base, tuple(label for label in rest.rstrip(")").split(":") if label)


def labels_match(wanted: tuple[str, ...], have: tuple[str, ...], *, subscript: bool) -> bool:
    """Whether `wanted` labels appear in order among `have` (a subscript's parameters are
    unlabelled, so a name typed for one matches `_`)."""
    position = 0
    for label in wanted:
        while position < len(have) and not (have[position] == label or (subscript and have[position] == "_")):
            position += 1
        if position == len(have):
            return False
        position += 1
    return True
