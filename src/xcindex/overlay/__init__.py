"""The freshness overlay: re-index files edited since the last build into a private store.

Below `tools/`: imports the index store layer and the leaves only (docs/architecture.md).
"""
