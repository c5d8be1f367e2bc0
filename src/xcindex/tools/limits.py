"""The tools' defaults and limits that are named outside the tools: in the Engine's method
signatures and in the tools' descriptions.

Here, apart from the tools' modules (which take them from here), so that naming them does not
import every tool and pydantic: the registry's metadata and the Engine's typed surface load a
tool only when it is called (`xcindex --help` and a server's first answer stay import-light).
"""

from __future__ import annotations

DEFAULT_MAX_CANDIDATES = 25
"""A page of find_symbol candidates: ranking puts the meant symbol first, and a common name
(`init`) has hundreds; the rest are a `nextOffset` away."""
DEFAULT_MAX_RESULTS = 100
"""A page of sites (find_references, find_overrides)."""
DEFAULT_MAX_RANGES = 500
"""A page of a rename plan's ranges."""
DEFAULT_TIMEOUT_S = 60.0
"""How long wait_for_fresh waits by default."""
MAX_TIMEOUT_S = 600.0
"""The longest wait_for_fresh waits."""
