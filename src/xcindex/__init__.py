"""xcindex: compiler-accurate answers about Swift code, from the index store.

The embedding API: `async with Engine() as engine: await engine.find_symbol(...)`. It runs
under asyncio and trio alike and never configures the host's logging.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Engine", "EngineConfig", "__version__"]


def __getattr__(name: str) -> object:
    # Lazy, so that `xcindex hook …` (which runs on every edit an agent makes) stays
    # import-light: it must not pull in anyio, mcp or cffi.
    if name in ("Engine", "EngineConfig"):
        from xcindex import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'xcindex' has no attribute {name!r}")
