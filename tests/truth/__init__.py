"""Truth from outside xcindex: an independent reader of index stores (dump_store.c,
store_dump.py) and the name-resolution cases it implies (name_cases.py)."""
