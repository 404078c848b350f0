"""The transparency log: an append-only RFC 6962 Merkle tree of commitment records.

Leaf i is the canonical JSON of the i-th signed commitment record. Hashes follow RFC 6962
§2.1: ``leaf_hash = SHA-256(0x00 || leaf)``, ``node = SHA-256(0x01 || left || right)``, the
tree of n leaves splits at the largest power of two below n, and the empty tree's hash is
SHA-256 of nothing. The signed tree head is ``{"type": "tree_head", "protocol",
"tree_size", "root_hash", "timestamp"}`` signed like every record; an inclusion proof is
the RFC 6962 audit path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlmodel import Session, col, func, select

from fairness import canonical_json

from .db import Database
from .models import LogEntry


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def root(hashes: Sequence[bytes]) -> bytes:
    """MTH over leaf hashes (RFC 6962 §2.1)."""
    n = len(hashes)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashes[0]
    k = _split(n)
    return node_hash(root(hashes[:k]), root(hashes[k:]))


def audit_path(m: int, hashes: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of RFC 6962 §2.1.1 over leaf hashes."""
    n = len(hashes)
    if not 0 <= m < n:
        raise IndexError(m)
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return audit_path(m, hashes[:k]) + [root(hashes[k:])]
    return audit_path(m - k, hashes[k:]) + [root(hashes[:k])]


def root_from_path(index: int, tree_size: int, leaf_h: bytes, path: Sequence[bytes]) -> bytes:
    """Recompute the root from an inclusion proof (RFC 9162 §2.1.3.2)."""
    if not 0 <= index < tree_size:
        raise ValueError("index outside the tree")
    fn, sn = index, tree_size - 1
    r = leaf_h
    for p in path:
        if sn == 0:
            raise ValueError("audit path too long")
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
        raise ValueError("audit path too short")
    return r


def next_index(db: Database, session: Session) -> int:
    """The index the next entry gets; takes the log's append lock for this transaction."""
    db.lock_table(session, "translog")
    top = session.exec(select(func.max(col(LogEntry.idx)))).one()
    return 0 if top is None else int(top) + 1


def append(session: Session, idx: int, match_id: str, record: dict[str, object], at: str) -> None:
    leaf = canonical_json(record)
    session.add(
        LogEntry(idx=idx, match_id=match_id, leaf=leaf.decode("utf-8"),
                 leaf_hash=leaf_hash(leaf).hex(), created_at=at)
    )


def leaf_hashes(session: Session, tree_size: int | None = None) -> list[bytes]:
    q = select(LogEntry.idx, LogEntry.leaf_hash).order_by(col(LogEntry.idx))
    if tree_size is not None:
        q = q.where(col(LogEntry.idx) < tree_size)
    rows = session.exec(q).all()
    return [bytes.fromhex(h) for _, h in rows]
