"""The graph tools: the call graph over the index (dispatch included) and what reads it:
call_hierarchy, type_hierarchy, change_impact and blast_radius.
"""
