"""The `xcindex` command: `serve`, `doctor`, `hook <event>` and one subcommand per tool
(`cli.tools`, made from the registry), with the log set-up for the entry points only.
"""
