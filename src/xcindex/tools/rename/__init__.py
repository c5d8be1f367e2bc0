"""plan_rename: the index plan (`plan`), its safety checks (`checks`), the text scan for what the
index cannot see (`scan`) and the reconciliation with sourcekit-lsp (`reconcile`). Never edits.
"""
