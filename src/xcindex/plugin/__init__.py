"""The plugin's first start: what runs before xcindex is installed (stdlib only).

A marketplace install copies the repository; nothing installs the Python package. The
launcher (`bin/xcindex`, POSIX sh) runs these modules straight from the plugin folder with
a Python >= 3.11 it found, so they import nothing but the standard library and each other:
`setup` makes the private environment (a lock, a venv, pip, a stamp), `front` answers the
MCP handshake from `catalogue.json` while `setup` runs detached and then becomes the real
server, `launch` is the command line the launcher calls.
"""
