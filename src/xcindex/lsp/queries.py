"""What can be asked of a sourcekit-lsp child: one frozen dataclass per request.

Positions are the index's convention (1-based lines, 1-based UTF-8 byte columns); the LSP
actor converts them to LSP's through the file's real text. To add a request: a dataclass
here (with `describe` and `deadline`), a branch in the actor's `_answer`, and, if callers
want one, a typed method on the pool that calls its generic `request`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from xcindex.lsp.config import LspPoolConfig
from xcindex.lsp.positions import LspLocation


@dataclass(frozen=True)
class _AtPosition:
    path: Path
    line: int
    utf8_column: int

    def deadline(self, config: LspPoolConfig) -> float:
        """Opening the file included (→ sourcekit_lsp_timeout; the child is kept)."""
        return config.request_timeout


@dataclass(frozen=True)
class ReferencesQuery(_AtPosition):
    """`textDocument/references`; answers `tuple[LspLocation, ...]`."""

    include_declaration: bool = True

    def describe(self) -> str:
        return f"references at {self.path}:{self.line}:{self.utf8_column}"


@dataclass(frozen=True)
class DefinitionQuery(_AtPosition):
    """`textDocument/definition`; answers `tuple[LspLocation, ...]`."""

    def describe(self) -> str:
        return f"definition at {self.path}:{self.line}:{self.utf8_column}"


@dataclass(frozen=True)
class SymbolInfoQuery(_AtPosition):
    """`textDocument/symbolInfo`; answers the USRs, `tuple[str, ...]`."""

    def describe(self) -> str:
        return f"symbolInfo at {self.path}:{self.line}:{self.utf8_column}"


@dataclass(frozen=True)
class ReadyQuery:
    """Wait until the child has finished (background) indexing; answers None."""

    def describe(self) -> str:
        return "workspace/synchronize"

    def deadline(self, config: LspPoolConfig) -> float:
        return config.ready_timeout


LspQuery: TypeAlias = ReferencesQuery | DefinitionQuery | SymbolInfoQuery | ReadyQuery
LspAnswer: TypeAlias = tuple[LspLocation, ...] | tuple[str, ...] | None
