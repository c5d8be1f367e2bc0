"""`xcindex serve`: the stdio MCP server. `front` answers a session's first messages without the
MCP SDK, `protocol` reads and writes them as the SDK would, `sdk` is the SDK's server (the only
module that imports `mcp`), and `calls` runs one tool call for both.
"""
