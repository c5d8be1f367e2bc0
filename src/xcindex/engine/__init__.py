"""The embedding API: `Engine`, one async method per tool, over the actors (docs/embedding.md).

`api` is the Engine's typed surface, `core` what every call stands on (the actors, locating
a store, the answer's freshness), `registry` every tool declared once.

`Engine` is imported on first use: `xcindex.engine.registry` (the tools' names and words,
which `xcindex --help` reads) must not pull in the actors.
"""

from xcindex.engine.config import EngineConfig as EngineConfig
from xcindex.engine.config import StatusVersion as StatusVersion
from xcindex.engine.config import current_progress_listener as current_progress_listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from xcindex.engine.api import Engine as Engine

__all__ = ["Engine", "EngineConfig", "StatusVersion", "current_progress_listener"]


def __getattr__(name: str) -> object:
    if name == "Engine":
        from xcindex.engine.api import Engine

        return Engine
    raise AttributeError(f"module 'xcindex.engine' has no attribute {name!r}")
