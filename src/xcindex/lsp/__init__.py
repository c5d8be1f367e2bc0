"""Talking to sourcekit-lsp: JSON-RPC framing, the typed client, positions, faults, queries.

The only package that imports lsprotocol. The processes themselves are owned by
`xcindex.actors.lsp`; which folder is a workspace root is `xcindex.project.workspace`.
"""
