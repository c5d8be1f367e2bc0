"""Claude Code's hooks (`xcindex hook <event>`): SessionStart, PostToolUse (the ledger), PreToolUse
(the Grep nudge). Import-light: a hook runs on every edit an agent makes, so nothing here
imports anyio, pydantic, cffi or the MCP SDK.
"""
