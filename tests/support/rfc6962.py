"""The log's Merkle tree (RFC 6962 §2.1), written out straight from the RFC: the tests hold
``tlog``, the service's log and the clients' proof checks to this reference, never to the
tree code they test. ``hashes`` are leaf hashes, ``d`` the entries themselves."""

from __future__ import annotations

import hashlib


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """k, the largest power of two smaller than n."""
    return 1 << ((n - 1).bit_length() - 1)


def root(hashes: list[bytes]) -> bytes:
    """MTH over leaf hashes (at least one)."""
    if len(hashes) == 1:
        return hashes[0]
    k = _split(len(hashes))
    return _node(root(hashes[:k]), root(hashes[k:]))


def audit_path(m: int, hashes: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of RFC 6962 §2.1.1."""
    if len(hashes) == 1:
        return []
    k = _split(len(hashes))
    if m < k:
        return audit_path(m, hashes[:k]) + [root(hashes[k:])]
    return audit_path(m - k, hashes[k:]) + [root(hashes[:k])]


def consistency_proof(m: int, hashes: list[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 6962 §2.1.2 (empty when m is n)."""

    def sub(m: int, d: list[bytes], b: bool) -> list[bytes]:
        n = len(d)
        if m == n:
            return [] if b else [root(d)]
        k = _split(n)
        if m <= k:
            return sub(m, d[:k], b) + [root(d[k:])]
        return sub(m - k, d[k:], False) + [root(d[:k])]

    return [] if m == len(hashes) else sub(m, hashes, True)


def mth(d: list[bytes]) -> bytes:
    """MTH(D[n]) of the entries ``d`` (the empty tree's too)."""
    return root([leaf_hash(x) for x in d]) if d else hashlib.sha256(b"").digest()


def path(m: int, d: list[bytes]) -> list[bytes]:
    return audit_path(m, [leaf_hash(x) for x in d])


def proof(m: int, d: list[bytes]) -> list[bytes]:
    return consistency_proof(m, [leaf_hash(x) for x in d])
