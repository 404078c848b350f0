"""The transparency log: an append-only RFC 6962 Merkle tree of commitment records.

Leaf i is the canonical JSON of the i-th signed commitment record. Hashes follow RFC 6962
§2.1 (RFC 9162 §2.1.1): ``leaf_hash = SHA-256(0x00 || leaf)``, ``node = SHA-256(0x01 ||
left || right)``, the tree of n leaves splits at the largest power of two below n, and the
empty tree's hash is SHA-256 of nothing.

Stored tree. Besides the leaves (``translog``), the table ``translog_nodes`` holds the hash
of every *complete* subtree: node ``(level, index)`` covers the leaves ``[index·2^level,
(index+1)·2^level)`` (level 0 are the leaf hashes). Appending leaf i adds its level-0 node
and every parent it completes, reading only the left siblings (at most log₂ n rows), in the
same transaction as the leaf. Any range of leaves that occurs in RFC 6962's recursion splits
into at most log₂ n aligned complete subtrees, so the root at any size, an inclusion proof
and a consistency proof each read O(log n) rows in one query.

Signed tree heads ``{"type": "tree_head", "protocol", "tree_size", "root_hash",
"timestamp"}`` (signed like every record) are cached per size in ``translog_heads``: the
head of size i+1 is signed when leaf i is appended; a size without a cached head (a log
built by the migration) gets one signed and stored on first request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, ParamSpec

from sqlalchemy import Column, Integer, String, Text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, col, func, select

from fairness import PROTOCOL, Signer, canonical_json

from .db import Database
from .models import LogEntry

EMPTY_ROOT = hashlib.sha256(b"").digest()


class TreeNode(SQLModel, table=True):
    """The hash of the complete subtree ``(level, idx)`` (hex)."""

    __tablename__ = "translog_nodes"

    level: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    idx: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    hash: str = Field(sa_column=Column(String(64), nullable=False))


class TreeHead(SQLModel, table=True):
    """The signed tree head of one size (its JSON)."""

    __tablename__ = "translog_heads"

    tree_size: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    head: str = Field(sa_column=Column(Text, nullable=False))


class LogError(Exception):
    """A request the log cannot answer: ``status`` 400 (bad request) or 404 (not there)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


# -- hashing -------------------------------------------------------------------------------

def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(hashes: Sequence[bytes]) -> bytes:
    """MTH over leaf hashes (RFC 6962 §2.1), from the leaves: O(n), for small trees."""
    n = len(hashes)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return hashes[0]
    k = _split(n)
    return node_hash(root(hashes[:k]), root(hashes[k:]))


def audit_path(m: int, hashes: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]) of RFC 6962 §2.1.1 over leaf hashes (O(n))."""
    n = len(hashes)
    if not 0 <= m < n:
        raise IndexError(m)
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return audit_path(m, hashes[:k]) + [root(hashes[k:])]
    return audit_path(m - k, hashes[k:]) + [root(hashes[:k])]


# -- the shape of proofs: which ranges of leaves they hash ---------------------------------

Range = tuple[int, int]  # leaves [start, end)
NodeKey = tuple[int, int]  # (level, idx)


def path_ranges(m: int, start: int, end: int) -> list[Range]:
    """The leaf ranges whose MTHs make PATH(m, D[start:end]) (m absolute), in proof order."""
    out: list[Range] = []
    while end - start > 1:
        k = _split(end - start)
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
    start, end, b = 0, n, True
    while True:
        size = end - start
        if m == size:
            if not b:
                out.append((start, end))
            break
        k = _split(size)
        if m <= k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
            m -= k
            b = False
    out.reverse()
    return out


def range_nodes(start: int, end: int) -> list[NodeKey]:
    """The complete aligned subtrees covering [start, end), left to right (greedy)."""
    out: list[NodeKey] = []
    while start < end:
        level = (start & -start).bit_length() - 1 if start else (end - start).bit_length()
        while (1 << level) > end - start:
            level -= 1
        out.append((level, start >> level))
        start += 1 << level
    return out


def _fold(parts: Sequence[bytes]) -> bytes:
    """MTH of a range from its complete subtrees (left to right): fold from the right."""
    h = parts[-1]
    for p in reversed(parts[:-1]):
        h = node_hash(p, h)
    return h


# -- the stored tree -----------------------------------------------------------------------

def _fetch_nodes(session: Session, keys: Iterable[NodeKey]) -> dict[NodeKey, bytes]:
    wanted = sorted(set(keys))
    out: dict[NodeKey, bytes] = {}
    session.flush()  # driver-level SQL below: let it see this transaction's own nodes
    conn = session.connection()
    for i in range(0, len(wanted), 100):
        # An OR of primary-key equalities, so that SQLite and PostgreSQL search the index
        # for each (a row-value IN list makes SQLite scan the table). The SQL is written
        # here, not compiled by SQLAlchemy per request: the keys are Python ints (%d).
        where = " OR ".join(f"(level = {int(lv):d} AND idx = {int(ix):d})"
                            for lv, ix in wanted[i:i + 100])
        rows = conn.exec_driver_sql(
            f"SELECT level, idx, hash FROM translog_nodes WHERE {where}").all()
        out.update({(lv, ix): bytes.fromhex(h) for lv, ix, h in rows})
    missing = [k for k in wanted if k not in out]
    if missing:
        raise RuntimeError(f"the stored tree lacks nodes {missing[:4]} (run the migrations)")
    return out


def _range_hashes(session: Session, ranges: Sequence[Range]) -> list[bytes]:
    parts = [range_nodes(a, b) for a, b in ranges]
    nodes = _fetch_nodes(session, [k for p in parts for k in p])
    return [_fold([nodes[k] for k in p]) for p in parts]


def size(session: Session) -> int:
    top = session.exec(select(func.max(col(LogEntry.idx)))).one()
    return 0 if top is None else int(top) + 1


def stored_root(session: Session, tree_size: int) -> bytes:
    """MTH(D[tree_size]) from O(log n) stored nodes."""
    if tree_size == 0:
        return EMPTY_ROOT
    return _range_hashes(session, [(0, tree_size)])[0]


def inclusion_path(session: Session, index: int, tree_size: int) -> list[bytes]:
    return _range_hashes(session, path_ranges(index, 0, tree_size))


def consistency_path(session: Session, first: int, second: int) -> list[bytes]:
    if first == second:
        return []
    return _range_hashes(session, consistency_ranges(first, second))


def next_index(db: Database, session: Session) -> int:
    """The index the next entry gets; takes the log's append lock for this transaction."""
    db.lock_table(session, "translog")
    return size(session)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _head(signer: Signer, tree_size: int, root_h: bytes) -> dict[str, Any]:
    return signer.signed({"type": "tree_head", "protocol": PROTOCOL, "tree_size": tree_size,
                          "root_hash": root_h.hex(), "timestamp": _now_iso()})


def append(session: Session, idx: int, match_id: str, record: dict[str, object], at: str,
           signer: Signer | None = None) -> None:
    """Add leaf ``idx`` (the caller holds the append lock), its completed subtrees and,
    with ``signer``, the signed head of size idx+1 — all in the caller's transaction."""
    leaf = canonical_json(record)
    h = leaf_hash(leaf)
    session.add(LogEntry(idx=idx, match_id=match_id, leaf=leaf.decode("utf-8"),
                         leaf_hash=h.hex(), created_at=at))
    # The left siblings this leaf completes: (level, i-1) while i is odd at that level.
    siblings: list[NodeKey] = []
    level, i = 0, idx
    while i & 1:
        siblings.append((level, i - 1))
        level, i = level + 1, i >> 1
    new_size = idx + 1
    others = range_nodes(0, new_size)
    have = _fetch_nodes(session, siblings + others[:-1])
    new_nodes = [TreeNode(level=0, idx=idx, hash=h.hex())]
    level, i, cur = 0, idx, h
    for sib in siblings:
        cur = node_hash(have[sib], cur)
        level, i = level + 1, i >> 1
        new_nodes.append(TreeNode(level=level, idx=i, hash=cur.hex()))
    session.add_all(new_nodes)
    if signer is not None:
        # The last complete subtree of the new size is the one this leaf just completed.
        root_h = _fold([have[k] for k in others[:-1]] + [cur])
        session.add(TreeHead(tree_size=new_size,
                             head=json.dumps(_head(signer, new_size, root_h),
                                             separators=(",", ":"), ensure_ascii=False)))


def leaf_hashes(session: Session, tree_size: int | None = None) -> list[bytes]:
    q = select(LogEntry.idx, LogEntry.leaf_hash).order_by(col(LogEntry.idx))
    if tree_size is not None:
        q = q.where(col(LogEntry.idx) < tree_size)
    rows = session.exec(q).all()
    return [bytes.fromhex(h) for _, h in rows]


# -- the public reads ----------------------------------------------------------------------

P = ParamSpec("P")


def api(fn: Callable[P, dict[str, Any]], *args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
    """Call a read below, reporting a :class:`LogError` as the service's error."""
    from .errors import BadRequest, NotFound  # the service's errors (imported late: no cycle)

    try:
        return fn(*args, **kwargs)
    except LogError as exc:
        raise (NotFound if exc.status == 404 else BadRequest)(exc.message, exc.code) from None


def _check_size(n: int, tree_size: int) -> None:
    if tree_size > n:
        raise LogError(404, "not_found", f"the log has {n} entries, fewer than {tree_size}")


def _cached_head(session: Session, tree_size: int) -> dict[str, Any] | None:
    row = session.get(TreeHead, tree_size)
    if row is None:
        return None
    head: dict[str, Any] = json.loads(row.head)
    return head


def _sign_and_cache(db: Database, signer: Signer, tree_size: int,
                    root_h: bytes) -> dict[str, Any]:
    """Sign the head of ``tree_size``, cache it, return the cached one (first signer wins)."""
    head = _head(signer, tree_size, root_h)
    try:
        with db.write() as w:
            if w.get(TreeHead, tree_size) is None:
                w.add(TreeHead(tree_size=tree_size, head=json.dumps(
                    head, separators=(",", ":"), ensure_ascii=False)))
    except IntegrityError:
        pass  # another process cached this size first: serve that one
    with db.read() as s:
        cached = _cached_head(s, tree_size)
    assert cached is not None
    return cached


def _head_in(s: Session, tree_size: int, late: list[int]) -> dict[str, Any] | None:
    """The cached head of ``tree_size`` from session ``s``, or None (noted in ``late``)."""
    head = _cached_head(s, tree_size)
    if head is None:
        late.append(tree_size)
    return head


def _fill(db: Database, signer: Signer, late: list[int]) -> dict[int, dict[str, Any]]:
    out = {}
    for n in late:
        with db.read() as s:
            root_h = stored_root(s, n)
        out[n] = _sign_and_cache(db, signer, n, root_h)
    return out


def signed_head(db: Database, signer: Signer, tree_size: int | None = None) -> dict[str, Any]:
    """The signed head of ``tree_size`` (default: the whole log), cached per size."""
    with db.read() as s:
        n = size(s)
        want = n if tree_size is None else tree_size
        _check_size(n, want)
        head = _cached_head(s, want)
        if head is not None:
            return head
        root_h = stored_root(s, want)
    return _sign_and_cache(db, signer, want, root_h)


def inclusion(db: Database, signer: Signer, index: int,
              tree_size: int | None = None) -> dict[str, Any]:
    """Entry ``index`` with its audit path to the signed head of ``tree_size``."""
    late: list[int] = []
    with db.read() as s:
        n = size(s)
        want = n if tree_size is None else tree_size
        _check_size(n, want)
        if not 0 <= index < want:
            raise LogError(404, "not_found", f"no log entry {index} in a tree of size {want}")
        entry = s.get(LogEntry, index)
        if entry is None:
            raise LogError(404, "not_found", f"no log entry {index}")
        path = inclusion_path(s, index, want)
        head = _head_in(s, want, late)
    head = head or _fill(db, signer, late)[want]
    return {"index": index, "tree_size": want, "leaf": json.loads(entry.leaf),
            "leaf_hash": entry.leaf_hash, "audit_path": [h.hex() for h in path],
            "tree_head": head}


def consistency(db: Database, signer: Signer, first: int, second: int) -> dict[str, Any]:
    """PROOF(first, D[second]) of RFC 9162 §2.1.4 with both signed heads."""
    if first < 1:
        raise LogError(400, "bad_request", "first must be at least 1 (every log extends the "
                                           "empty one)")
    if first > second:
        raise LogError(400, "bad_request",
                       f"first ({first}) must not be larger than second ({second})")
    late: list[int] = []
    with db.read() as s:
        n = size(s)
        _check_size(n, second)
        proof = consistency_path(s, first, second)
        heads = {k: _head_in(s, k, late) for k in (first, second)}
    filled = _fill(db, signer, sorted(set(late)))
    return {"first": first, "second": second, "proof": [h.hex() for h in proof],
            "first_head": heads[first] or filled[first],
            "second_head": heads[second] or filled[second]}


def entries(db: Database, start: int, limit: int) -> dict[str, Any]:
    with db.read() as s:
        rows = s.exec(
            select(LogEntry).where(col(LogEntry.idx) >= start)
            .order_by(col(LogEntry.idx)).limit(limit)
        ).all()
    return {"entries": [{"index": r.idx, "leaf": json.loads(r.leaf),
                         "leaf_hash": r.leaf_hash} for r in rows]}
