"""What each tool answers, as plain functions of the database: argument models, typed answers and
their JSON shapes, name resolution. No process, actor or rendering here; the graph tools are
in `tools.graph`, renaming in `tools.rename`.
"""
