"""Talking to sourcekit-lsp: JSON-RPC framing, the typed client, positions, faults, workspaces.

The only package that imports lsprotocol. The processes themselves are owned by
`xcindex.actors.lsp`.
"""
