"""The embedding API: `Engine`, one async method per tool, over the actors (docs/embedding.md).

`api` is the Engine's typed surface, `core` what every call stands on (the actors, locating
a store, the answer's freshness), `registry` every tool declared once.
"""

from xcindex.engine.api import Engine as Engine
from xcindex.engine.config import EngineConfig as EngineConfig
from xcindex.engine.config import StatusVersion as StatusVersion
from xcindex.engine.config import current_progress_listener as current_progress_listener

__all__ = ["Engine", "EngineConfig", "StatusVersion", "current_progress_listener"]
