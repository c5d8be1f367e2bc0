"""The errors xcindex raises, whose messages are fit to show an agent verbatim.

Apart from the vocabulary's enums (`enum` alone is a fifth of a hook's run): the session-start
hook and the toolchain search raise these without loading them. A CodedError carries one of
the vocabulary's warning codes.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is a hook's import too many
if TYPE_CHECKING:
    from collections.abc import Mapping

    from xcindex.vocabulary import WarningCode


class XcindexError(Exception):
    """A failure whose message is fit to show an agent verbatim (no traceback)."""

    def render(self, names: Mapping[str, str]) -> str:
        """The message with the arguments it names spelled as `names` says (the CLI says
        `--project` where the MCP tools say projectPath); as is by default."""
        return str(self)


class ArgumentError(XcindexError):
    """A failure about one argument's value, naming it in a `{}` slot of `template`."""

    def __init__(self, argument: str, template: str) -> None:
        self.argument = argument
        self.template = template
        super().__init__(template.format(argument))

    def render(self, names: Mapping[str, str]) -> str:
        return self.template.format(names.get(self.argument, self.argument))


class ActorGone(XcindexError):
    """An actor stopped before it could answer (defined here, below every layer that maps it)."""


class ActorTimeout(XcindexError):
    """An actor did not answer within the caller's deadline."""


class CodedError(XcindexError):
    """A failure that carries one of the documented warning codes."""

    def __init__(self, code: WarningCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
