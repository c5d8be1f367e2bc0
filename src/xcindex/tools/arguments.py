"""What every tool's arguments share, and the one way an argument problem is worded.

Each tool declares its arguments once, as a frozen pydantic model in its own module: Python
names (`max_results`) for the Engine, camelCase aliases (`maxResults`) for MCP, a
description per parameter and its limits from named constants. The MCP schema, the
server's validation, the Engine's validation and the CLI's options all come from that
model, so a limit or a message cannot differ between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from xcindex.errors import XcindexError
from xcindex.vocabulary import MISSING_LOCATION

MAX_TEXT = 4096
"""The longest string any argument takes (names, USRs, paths)."""

Text = Annotated[StrictStr, Field(min_length=1, max_length=MAX_TEXT)]


class ArgumentProblem(ValueError):
    """A rule beyond types and limits, worded completely (shown as is, without a prefix)."""


class ToolArgs(BaseModel):
    """The arguments of one tool. `tool` names it; the registry maps it to everything else."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, validate_by_name=True, validate_by_alias=True
    )
    tool: ClassVar[str]

    @classmethod
    def from_mcp(cls, arguments: dict[str, Any] | None) -> Self:
        """Validate an MCP call's arguments (camelCase only). Raises XcindexError."""
        try:
            return cls.model_validate(arguments or {}, by_alias=True, by_name=False)
        except ValidationError as error:
            raise ArgumentsError(cls, error) from None

    @classmethod
    def build(cls, **values: Any) -> Self:
        """Validate the Engine's keyword arguments (Python names). Raises XcindexError."""
        try:
            return cls.model_validate(values, by_alias=False, by_name=True)
        except ValidationError as error:
            raise ArgumentsError(cls, error) from None

    @classmethod
    def public_name(cls, field: str) -> str:
        """The camelCase name a field is documented and called by."""
        info = cls.model_fields.get(field)
        return info.alias if info is not None and info.alias else field


class LocationArgs(ToolArgs):
    """Where the index is: a project (preferred) or the store itself."""

    project_path: Text | None = Field(
        None,
        description="Absolute: a package folder, Package.swift, .xcodeproj or .xcworkspace.",
    )
    index_store_path: Text | None = Field(
        None, description="Absolute: an index store (the folder holding v5/)."
    )

    @model_validator(mode="after")
    def _somewhere(self) -> LocationArgs:
        if self.project_path is None and self.index_store_path is None:
            raise ArgumentProblem(MISSING_LOCATION.removesuffix("."))
        return self


class ArgumentsError(XcindexError):
    """Arguments that do not fit a tool's model, worded once for every caller.

    Each problem names its argument by its documented (camelCase) name; `render` lets a
    caller spell the names its own way (the CLI says `--max-results`). `message` is what the
    Engine raises; `mcp_message` adds which tool it was, except for a rule's own complete
    sentence (an `ArgumentProblem`), which reads best alone.
    """

    def __init__(self, model: type[ToolArgs], error: ValidationError) -> None:
        self.tool = model.tool
        self._problems: list[tuple[str | None, str, str]] = []
        self.only_rules = True
        for item in error.errors(include_url=False):
            self._problems.append(_problem(model, item))
            if not isinstance(item.get("ctx", {}).get("error"), ArgumentProblem):
                self.only_rules = False
        self.message = self.render({})
        super().__init__(self.message)

    def render(self, names: Mapping[str, str]) -> str:
        """The problems, with each argument named as `names` says (default: 'camelCase')."""
        return (
            "; ".join(
                template.format(
                    "" if field is None else names[field] + rest if field in names else f"'{field}{rest}'"
                )
                for field, rest, template in self._problems
            )
            + "."
        )

    @property
    def mcp_message(self) -> str:
        if self.only_rules:
            return f"Error: {self.message}"
        return f"Error: invalid arguments for {self.tool}: {self.message}"


def _problem(model: type[ToolArgs], item: Any) -> tuple[str | None, str, str]:
    """(the argument's documented name, the path inside it, the problem with `{}` where the
    name goes)."""
    parts = [str(part) for part in item["loc"]]
    kind = item["type"]
    # An unknown key is named as the caller wrote it; a field by its documented name.
    field = (parts[0] if kind == "extra_forbidden" else model.public_name(parts[0])) if parts else None
    rest = "".join(f".{part}" for part in parts[1:])
    ctx = item.get("ctx", {})
    if isinstance(ctx.get("error"), ArgumentProblem):
        return None, "", _escaped(str(ctx["error"]))
    if field is None:
        return None, "", _escaped(str(item["msg"]).removeprefix("Value error, "))
    if kind == "missing":
        return field, rest, "{} is required"
    if kind == "extra_forbidden":
        return field, rest, "{} is not an argument of " + _escaped(model.tool)
    if kind in ("greater_than_equal", "less_than_equal") and not rest:
        bounds = _bounds(model, parts[0])
        if bounds is not None:
            low, high = bounds
            got = _number(item["input"])
            if high is None:
                return field, rest, f"{{}} must be {_number(low)} or more; got {got}"
            return field, rest, f"{{}} must be between {_number(low)} and {_number(high)}; got {got}"
    if kind in ("too_short", "too_long") and not rest:
        lengths = _length_bounds(model, parts[0])
        if lengths is not None and isinstance(item.get("input"), list):
            return field, rest, f"{{}} must name {lengths[0]} to {lengths[1]} items; got {len(item['input'])}"
    return field, rest, "{}: " + _escaped(str(item["msg"]))


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _limits(model: type[ToolArgs], field: object, low_key: str, high_key: str) -> tuple[Any, Any]:
    """A field's (lower, upper) limit of one kind (`ge`/`le` or `min_length`/`max_length`)."""
    info = model.model_fields.get(str(field))
    low = high = None
    for meta in info.metadata if info is not None else ():
        low = getattr(meta, low_key, None) if getattr(meta, low_key, None) is not None else low
        high = getattr(meta, high_key, None) if getattr(meta, high_key, None) is not None else high
    return low, high


def _bounds(model: type[ToolArgs], field: object) -> tuple[float, float | None] | None:
    low, high = _limits(model, field, "ge", "le")
    return None if low is None else (low, high)


def _length_bounds(model: type[ToolArgs], field: object) -> tuple[int, int] | None:
    low, high = _limits(model, field, "min_length", "max_length")
    return None if low is None or high is None else (low, high)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
