"""RFC 6962 Merkle trees: hashing, the stored-hash layout, proofs and compact ranges.

Hashes follow RFC 6962 §2.1 (RFC 9162 §2.1.1): ``leaf = SHA-256(0x00 || data)``, ``node =
SHA-256(0x01 || left || right)``; the tree of n leaves splits at the largest power of two
below n; the empty tree's hash is SHA-256 of nothing.

Storage. A log stores the hash of every *complete* subtree: node ``(level, k)`` covers the
leaves ``[k·2^level, (k+1)·2^level)``. Numbered in the order an append-only writer produces
them (record n's leaf hash, then every parent that leaf completes), node ``(level, k)`` has
the *stored hash index* :func:`stored_hash_index` — the same numbering as Go's
golang.org/x/mod/sumdb/tlog, so the two agree on which hash is which. Storage is read through
a :class:`HashReader`; every root and proof here reads O(log n) stored hashes in one call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()

Range = tuple[int, int]  # leaves [start, end)
NodeKey = tuple[int, int]  # (level, k)


class ProofError(ValueError):
    """A proof that is malformed or does not lead to the claimed hash."""


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_point(n: int) -> int:
    """The largest power of two smaller than n (n ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


# -- the stored-hash layout ------------------------------------------------------------------


def _record_start(n: int) -> int:
    """The stored index of record n's leaf hash: n + ⌊n/2⌋ + ⌊n/4⌋ + … = 2n − popcount(n)."""
    return 2 * n - n.bit_count()


def stored_hash_index(level: int, k: int) -> int:
    """The stored index of node ``(level, k)``.

    The node is written right after the leaf that completes it, the last leaf it covers,
    ``m = (k+1)·2^level − 1``, as that leaf's ``level``-th parent.
    """
    if level < 0 or k < 0:
        raise ValueError(f"no node ({level}, {k})")
    m = ((k + 1) << level) - 1
    return _record_start(m) + level


def split_stored_hash_index(index: int) -> NodeKey:
    """The node ``(level, k)`` stored at ``index`` (the inverse of :func:`stored_hash_index`)."""
    if index < 0:
        raise ValueError(f"no stored hash index {index}")
    n = index // 2  # _record_start(n) ≤ 2n ≤ index: a lower bound for the record
    while _record_start(n + 1) <= index:
        n += 1
    level = index - _record_start(n)
    return level, n >> level


def stored_hash_count(n: int) -> int:
    """How many hashes a tree of n records stores."""
    if n < 0:
        raise ValueError(f"a tree cannot have {n} records")
    return _record_start(n)


class HashReader(Protocol):
    """Storage of the stored hashes: ``read_hashes(indexes)`` returns one 32-byte hash per
    index, in the order asked (raising if any is missing)."""

    def read_hashes(self, indexes: Sequence[int]) -> list[bytes]: ...


class ListHashReader:
    """A :class:`HashReader` over an in-memory list of stored hashes (tests, small trees)."""

    def __init__(self, hashes: Sequence[bytes] = ()) -> None:
        self.hashes = list(hashes)

    @classmethod
    def from_leaf_hashes(cls, leaf_hashes: Sequence[bytes]) -> ListHashReader:
        """The stored hashes of a tree with these leaf hashes."""
        r = cls()
        for n, h in enumerate(leaf_hashes):
            r.hashes.extend(stored_hashes(n, h, r))
        return r

    def read_hashes(self, indexes: Sequence[int]) -> list[bytes]:
        out = []
        for i in indexes:
            if not 0 <= i < len(self.hashes):
                raise IndexError(f"stored hash {i} is not there ({len(self.hashes)} stored)")
            out.append(self.hashes[i])
        return out


def stored_hashes(n: int, data_hash: bytes, reader: HashReader) -> list[bytes]:
    """The hashes to store when record n (its leaf hash ``data_hash``) is appended, in
    stored-index order: the leaf hash, then each parent it completes. Reads the left
    siblings (at most log₂ n) from ``reader``."""
    siblings: list[int] = []
    level, k = 0, n
    while k & 1:
        siblings.append(stored_hash_index(level, k - 1))
        level, k = level + 1, k >> 1
    out = [data_hash]
    cur = data_hash
    for left in reader.read_hashes(siblings):
        cur = node_hash(left, cur)
        out.append(cur)
    return out


# -- which subtrees a root or proof needs ----------------------------------------------------


def range_nodes(start: int, end: int) -> list[NodeKey]:
    """The complete aligned subtrees covering ``[start, end)``, left to right (greedy)."""
    out: list[NodeKey] = []
    while start < end:
        level = (start & -start).bit_length() - 1 if start else (end - start).bit_length()
        while (1 << level) > end - start:
            level -= 1
        out.append((level, start >> level))
        start += 1 << level
    return out


def fold(parts: Sequence[bytes]) -> bytes:
    """MTH of a range from its complete subtrees (left to right): fold from the right."""
    h = parts[-1]
    for p in reversed(parts[:-1]):
        h = node_hash(p, h)
    return h


def path_ranges(m: int, start: int, end: int) -> list[Range]:
    """The leaf ranges whose MTHs make PATH(m, D[start:end]) (m absolute), in proof order."""
    out: list[Range] = []
    while end - start > 1:
        k = split_point(end - start)
        if m < start + k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
    out.reverse()
    return out


def consistency_ranges(m: int, n: int) -> list[Range]:
    """The leaf ranges whose MTHs make PROOF(m, D[n]) (RFC 9162 §2.1.4.1), 0 < m ≤ n."""
    out: list[Range] = []
    start, end, whole = 0, n, True
    while True:
        size = end - start
        if m == size:
            if not whole:
                out.append((start, end))
            break
        k = split_point(size)
        if m <= k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
            m -= k
            whole = False
    out.reverse()
    return out


def range_hashes(ranges: Sequence[Range], reader: HashReader) -> list[bytes]:
    """The MTH of each range, from its complete subtrees, read in one call."""
    parts = [range_nodes(a, b) for a, b in ranges]
    keys = sorted({k for p in parts for k in p})
    got = dict(
        zip(keys, reader.read_hashes([stored_hash_index(lv, k) for lv, k in keys]), strict=True)
    )
    return [fold([got[k] for k in p]) for p in parts]


# -- roots and proofs from storage -----------------------------------------------------------


def tree_hash(n: int, reader: HashReader) -> bytes:
    """MTH(D[n]) from at most log₂ n stored hashes."""
    if n < 0:
        raise ValueError(f"a tree cannot have {n} records")
    if n == 0:
        return EMPTY_ROOT
    return range_hashes([(0, n)], reader)[0]


def prove_record(t: int, n: int, reader: HashReader) -> list[bytes]:
    """The inclusion proof of record n in the tree of size t (RFC 6962 PATH)."""
    if not 0 <= n < t:
        raise ValueError(f"record {n} is not in a tree of size {t}")
    return range_hashes(path_ranges(n, 0, t), reader)


def prove_tree(t: int, n: int, reader: HashReader) -> list[bytes]:
    """The consistency proof that the tree of size n is a prefix of that of size t."""
    if not 0 < n <= t:
        raise ValueError(f"no consistency proof from size {n} to size {t}")
    if n == t:
        return []
    return range_hashes(consistency_ranges(n, t), reader)


# -- checking proofs (no storage needed) -----------------------------------------------------


def root_from_inclusion(index: int, tree_size: int, leaf_h: bytes, path: Sequence[bytes]) -> bytes:
    """The root an inclusion proof leads to (RFC 9162 §2.1.3.2)."""
    if not 0 <= index < tree_size:
        raise ProofError(f"index {index} is outside a tree of size {tree_size}")
    fn, sn = index, tree_size - 1
    r = leaf_h
    for p in path:
        if sn == 0:
            raise ProofError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    return r


def check_record(proof: Sequence[bytes], t: int, th: bytes, n: int, h: bytes) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows record n (leaf hash h) is in the tree
    of size t with root th."""
    if root_from_inclusion(n, t, h, proof) != th:
        raise ProofError(
            f"the inclusion proof of record {n} does not lead to the root of the tree of size {t}"
        )


def consistent(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether ``proof`` shows the tree of size ``second`` extends that of size ``first``
    (RFC 9162 §2.1.4.2). Size 0 is extended by every tree (with an empty proof)."""
    if first == 0:
        return not proof and first_root == EMPTY_ROOT
    if first == second:
        return not proof and first_root == second_root
    if not 0 < first < second:
        return False
    path = list(proof)
    if first & (first - 1) == 0:  # an exact power of two: the old root is a node of the new
        path.insert(0, first_root)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


def check_tree(proof: Sequence[bytes], t: int, th: bytes, n: int, h: bytes) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows the tree of size n (root h) is a
    prefix of the tree of size t (root th)."""
    if not consistent(n, t, h, th, proof):
        raise ProofError(f"the tree of size {t} does not extend the tree of size {n} by this proof")


# -- compact ranges --------------------------------------------------------------------------


class CompactRange:
    """The right edge of a tree: the complete subtrees of its leaves (at most log₂ n hashes,
    largest first), extended leaf by leaf; its root at any size while the leaves stream past."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        if size < 0 or len(hashes) != size.bit_count():
            raise ValueError(
                f"a compact range of size {size} has {max(size, 0).bit_count()} "
                f"hashes, not {len(hashes)}"
            )
        self.size = size
        self.hashes = list(hashes)

    def append(self, h: bytes) -> None:
        i = self.size
        while i & 1:
            h = node_hash(self.hashes.pop(), h)
            i >>= 1
        self.hashes.append(h)
        self.size += 1

    def root(self) -> bytes:
        return fold(self.hashes) if self.hashes else EMPTY_ROOT
