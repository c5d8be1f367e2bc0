"""The compiler's index store, read and mirrored: the cffi binding over libIndexStore, the worker
processes that walk it (and the compiled ingester), and the SQLite database (schema, writer,
queries) every answer is read from.
"""
