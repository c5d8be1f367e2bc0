"""The symbols table is found by a hash of the USR: the compiled ingester and Python must
compute the same one (FNV-1a, 64 bits, as SQLite's signed integer)."""

from __future__ import annotations

from xcindex.indexstore.model import usr_hash


def test_usr_hash_is_fnv1a_64_as_a_signed_integer() -> None:
    # Published FNV-1a 64 test vectors.
    assert usr_hash("") == 0xCBF29CE484222325 - (1 << 64)
    assert usr_hash("a") == 0xAF63DC4C8601EC8C - (1 << 64)
    assert usr_hash("foobar") == 0x85944171F73967E8 - (1 << 64)
    assert -(1 << 63) <= usr_hash("s:10CanaryCore11UserServiceC") < 1 << 63
