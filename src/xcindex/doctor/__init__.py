"""`xcindex doctor`: checks the machine and the project (toolchain, libIndexStore, sourcekit-lsp,
the index) and says what to do about each problem, with `--json` for scripts.
"""
