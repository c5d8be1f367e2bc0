"""Who owns what: one actor per resource (a store's database, a sourcekit-lsp child, the pool of
children, the session ledger), each changing its own state in its own task and answering
messages through its mailbox (docs/architecture.md, "Actors").
"""
