"""The transparency log's storage: its tables, their SQL, and the signing of its heads.

Leaf i is the canonical JSON of the i-th signed record (v1 commitments; v2 locks and
reveals) of its log. The deployment has one log at a time (the newest row of
``log_identity``); ``qahwa keys new-log`` starts another from index 0, and the older ones
stay stored and served read-only. Every row of the tables below carries its ``log_id``
(``log_identity.id``, migration 0007) first in its key, and every function below reads or
writes one log, named by ``log``. The tree math — RFC 6962 hashing, roots and proofs from stored hashes — is
:mod:`tlog`; this module stores what it needs and reads it back through
:class:`StoredTree`, a :class:`tlog.HashReader` over SQL.

Stored tree. Besides the leaves (``translog``), the table ``translog_nodes`` holds the hash
of every *complete* subtree: node ``(level, idx)`` covers the leaves ``[idx·2^level,
(idx+1)·2^level)`` (level 0 are the leaf hashes). Appending leaf i adds its level-0 node
and every parent it completes (:func:`tlog.stored_hashes`, reading at most log₂ n left
siblings), in the same transaction as the leaf. A root, an inclusion proof and a
consistency proof each read O(log n) rows in one query; a hash tile (c2sp.org/tlog-tiles)
is one range of one level.

Signed tree heads of the JSON API ``{"type": "tree_head", "protocol", "tree_size",
"root_hash", "timestamp"}`` (signed like every record) are signed on first request and
cached per size in ``translog_heads``. Checkpoints (c2sp.org/tlog-checkpoint, signed by the
log's note key) are kept in ``translog_checkpoints`` with the witnesses' cosignatures in
``translog_cosignatures``; :mod:`service.c2sp` makes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Integer, String, Text, UniqueConstraint
from sqlmodel import Field, Session, SQLModel, col, func, select

import tlog
from fairness import PROTOCOL, canonical_json

from .clock import now_iso
from .db import Database
from .errors import BadLogRequest, NotInLog
from .keys import RecordSigner
from .kinds import RecordType
from .models import LogEntry, LogIdentity

NodeKey = tuple[int, int]  # (level, idx)


class TreeNode(SQLModel, table=True):
    """The hash of the complete subtree ``(level, idx)`` (hex)."""

    __tablename__ = "translog_nodes"

    log_id: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    level: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    idx: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    hash: str = Field(sa_column=Column(String(64), nullable=False))


class TreeHead(SQLModel, table=True):
    """The signed tree head of one size (its JSON)."""

    __tablename__ = "translog_heads"

    log_id: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    tree_size: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    head: str = Field(sa_column=Column(Text, nullable=False))


class CheckpointRow(SQLModel, table=True):
    """A checkpoint note signed by the log's key (no cosignatures), one per origin and size."""

    __tablename__ = "translog_checkpoints"
    __table_args__ = (UniqueConstraint("origin", "tree_size"),)

    id: int | None = Field(
        default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True)
    )
    origin: str = Field(sa_column=Column(String(255), nullable=False))
    tree_size: int = Field(sa_column=Column(Integer, nullable=False))
    note: str = Field(sa_column=Column(Text, nullable=False))
    created_at: str = Field(sa_column=Column(String(40), nullable=False))


class CosignatureRow(SQLModel, table=True):
    """A witness's verified cosignature line on a checkpoint."""

    __tablename__ = "translog_cosignatures"

    checkpoint_id: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    witness: str = Field(sa_column=Column(String(255), primary_key=True))
    line: str = Field(sa_column=Column(Text, nullable=False))
    created_at: str = Field(sa_column=Column(String(40), nullable=False))


# -- the stored tree -----------------------------------------------------------------------


class StoredTree:
    """The stored hashes of one log's ``translog_nodes`` as a :class:`tlog.HashReader`."""

    def __init__(self, session: Session, log: int) -> None:
        self.session = session
        self.log = log

    def read_hashes(self, indexes: Sequence[int]) -> list[bytes]:
        keys = [tlog.split_stored_hash_index(i) for i in indexes]
        wanted = sorted(set(keys))
        got: dict[NodeKey, bytes] = {}
        self.session.flush()  # driver-level SQL below: let it see this transaction's own nodes
        conn = self.session.connection()
        for i in range(0, len(wanted), 100):
            # An OR of whole primary-key equalities, the log's id in each, so that SQLite and
            # PostgreSQL search the index for each (a row-value IN list makes SQLite scan the
            # table; so does ``log_id = L AND (… OR …)``: SQLite then searches the log's prefix
            # only and reads every node of the log). The SQL is written here, not compiled by
            # SQLAlchemy per request: the keys are Python ints (%d).
            where = " OR ".join(
                f"(log_id = {int(self.log):d} AND level = {int(lv):d} AND idx = {int(ix):d})"
                for lv, ix in wanted[i : i + 100]
            )
            rows = conn.exec_driver_sql(
                f"SELECT level, idx, hash FROM translog_nodes WHERE {where}"
            ).all()
            got.update({(lv, ix): bytes.fromhex(h) for lv, ix, h in rows})
        missing = [k for k in wanted if k not in got]
        if missing:
            raise RuntimeError(f"the stored tree lacks nodes {missing[:4]} (run the migrations)")
        return [got[k] for k in keys]


def size(session: Session, *, log: int) -> int:
    top = session.exec(select(func.max(col(LogEntry.idx))).where(col(LogEntry.log_id) == log)).one()
    return 0 if top is None else int(top) + 1


def active_log(session: Session) -> int:
    """The log appended to: the newest of ``log_identity`` (1 before any is recorded)."""
    top = session.exec(select(func.max(col(LogIdentity.id)))).one()
    return 1 if top is None else int(top)


def log_of_entry(session: Session, match_id: str, index: int) -> int | None:
    """The log whose entry ``index`` is ``match_id``'s (None: no such entry)."""
    found = session.exec(
        select(LogEntry.log_id)
        .where(col(LogEntry.match_id) == match_id, col(LogEntry.idx) == index)
        .order_by(col(LogEntry.log_id).desc())
        .limit(1)
    ).first()
    return None if found is None else int(found)


def reveal_of(session: Session, match_id: str) -> tuple[int, int] | None:
    """(log, index) of ``match_id``'s reveal record (fairness-v2 §8), the last if the logs
    hold more than one; None when none holds it."""
    rows = session.exec(
        select(LogEntry.log_id, LogEntry.idx, LogEntry.leaf)
        .where(col(LogEntry.match_id) == match_id)
        .order_by(col(LogEntry.log_id), col(LogEntry.idx))
    ).all()
    found = None
    for log_id, idx, leaf in rows:
        record = json.loads(leaf)
        if isinstance(record, dict) and record.get("type") == RecordType.REVEAL:
            found = (int(log_id), int(idx))
    return found


def stored_root(session: Session, tree_size: int, *, log: int) -> bytes:
    """MTH(D[tree_size]) from O(log n) stored nodes."""
    return tlog.tree_hash(tree_size, StoredTree(session, log))


def inclusion_path(session: Session, index: int, tree_size: int, *, log: int) -> list[bytes]:
    return tlog.prove_record(tree_size, index, StoredTree(session, log))


def consistency_path(session: Session, first: int, second: int, *, log: int) -> list[bytes]:
    return tlog.prove_tree(second, first, StoredTree(session, log))


def tile_hashes(session: Session, level: int, first: int, count: int, *, log: int) -> list[bytes]:
    """``count`` stored hashes of tree level ``level`` from index ``first``: a hash tile's
    body, in one range query (all must exist)."""
    rows = (
        session.connection()
        .exec_driver_sql(
            f"SELECT idx, hash FROM translog_nodes WHERE log_id = {int(log):d} "
            f"AND level = {int(level):d} "
            f"AND idx >= {int(first):d} AND idx < {int(first + count):d} ORDER BY idx"
        )
        .all()
    )
    if len(rows) != count:
        raise RuntimeError(f"the stored tree lacks hashes of level {level} from {first}")
    return [bytes.fromhex(h) for _, h in rows]


def leaves_between(session: Session, start: int, end: int, *, log: int) -> list[bytes]:
    """The leaves ``[start, end)`` (an entry bundle's), in one range query."""
    rows = (
        session.connection()
        .exec_driver_sql(
            f"SELECT idx, leaf FROM translog WHERE log_id = {int(log):d} "
            f"AND idx >= {int(start):d} AND idx < {int(end):d} ORDER BY idx"
        )
        .all()
    )
    if len(rows) != end - start:
        raise RuntimeError(f"the log lacks entries between {start} and {end}")
    return [leaf.encode("utf-8") for _, leaf in rows]


# The active log and its size in one statement (no parameters: the same text on every
# driver, so it is sent as it is).
_NEXT = (
    "SELECT a.l, (SELECT MAX(idx) FROM translog WHERE log_id = a.l) "
    "FROM (SELECT COALESCE(MAX(id), 1) AS l FROM log_identity) a"
)


def add(db: Database, session: Session, record: dict[str, Any], *, match_id: str, at: str) -> int:
    """Add ``record`` (a signed record: a lock, a reveal) as the next leaf of the active log
    (the newest of ``log_identity``) with its completed subtrees, in the caller's
    transaction; its index. Takes the log's append lock for the transaction, which ``qahwa
    keys new-log`` takes too, so an entry never lands in a log that is no longer the active
    one. Nothing is signed here: heads are signed on request and checkpoints by
    :mod:`service.c2sp`, off this path."""
    leaf = canonical_json(record)
    if len(leaf) > tlog.MAX_ENTRY:
        raise ValueError(f"a log entry of {len(leaf)} bytes does not fit an entry bundle")
    db.lock_table(session, "translog")
    session.flush()  # the query below sees this transaction's earlier entries
    got, top = session.connection().exec_driver_sql(_NEXT).one()
    log, idx = int(got), 0 if top is None else int(top) + 1
    h = tlog.leaf_hash(leaf)
    session.add(
        LogEntry(
            log_id=log,
            idx=idx,
            match_id=match_id,
            leaf=leaf.decode("utf-8"),
            leaf_hash=h.hex(),
            created_at=at,
        )
    )
    hashes = tlog.stored_hashes(idx, h, StoredTree(session, log))
    session.add_all(
        TreeNode(log_id=log, level=level, idx=idx >> level, hash=x.hex())
        for level, x in enumerate(hashes)
    )
    return idx


def latest_checkpoint(session: Session, origin: str) -> CheckpointRow | None:
    return session.exec(
        select(CheckpointRow)
        .where(col(CheckpointRow.origin) == origin)
        .order_by(col(CheckpointRow.tree_size).desc())
        .limit(1)
    ).first()


def cosignatures(session: Session, checkpoint_id: int) -> dict[str, str]:
    rows = session.exec(
        select(CosignatureRow).where(col(CosignatureRow.checkpoint_id) == checkpoint_id)
    ).all()
    return {r.witness: r.line for r in rows}


def leaf_hashes(session: Session, tree_size: int | None = None, *, log: int) -> list[bytes]:
    q = (
        select(LogEntry.idx, LogEntry.leaf_hash)
        .where(col(LogEntry.log_id) == log)
        .order_by(col(LogEntry.idx))
    )
    if tree_size is not None:
        q = q.where(col(LogEntry.idx) < tree_size)
    rows = session.exec(q).all()
    return [bytes.fromhex(h) for _, h in rows]


# -- the public reads ----------------------------------------------------------------------


def _check_size(n: int, tree_size: int) -> None:
    if tree_size > n:
        raise NotInLog(f"the log has {n} entries, fewer than {tree_size}")


def _cached_head(session: Session, tree_size: int, log: int) -> dict[str, Any] | None:
    row = session.get(TreeHead, (log, tree_size))
    if row is None:
        return None
    head: dict[str, Any] = json.loads(row.head)
    return head


def signed_head(
    db: Database, signer: RecordSigner, tree_size: int | None = None, *, log: int
) -> dict[str, Any]:
    """The signed head of ``tree_size`` (default: the whole log), cached per size."""
    with db.read() as s:
        n = size(s, log=log)
        want = n if tree_size is None else tree_size
        _check_size(n, want)
        head = _cached_head(s, want, log)
        if head is not None:
            return head
        root_h = stored_root(s, want, log=log)
    # sign it, cache it, return the cached one (the first signer wins)
    record = {
        "type": RecordType.TREE_HEAD,
        "protocol": PROTOCOL,
        "tree_size": want,
        "root_hash": root_h.hex(),
        "timestamp": now_iso(),
    }
    text = json.dumps(signer.signed(record), separators=(",", ":"), ensure_ascii=False)
    db.insert_once(TreeHead(log_id=log, tree_size=want, head=text))  # or another's first
    with db.read() as s:
        cached = _cached_head(s, want, log)
    assert cached is not None
    return cached


def inclusion(
    db: Database, signer: RecordSigner, index: int, tree_size: int | None = None, *, log: int
) -> dict[str, Any]:
    """Entry ``index`` with its audit path to the signed head of ``tree_size`` (a head not
    cached yet is signed after the read)."""
    with db.read() as s:
        n = size(s, log=log)
        want = n if tree_size is None else tree_size
        _check_size(n, want)
        if not 0 <= index < want:
            raise NotInLog(f"no log entry {index} in a tree of size {want}")
        entry = s.get(LogEntry, (log, index))
        if entry is None:
            raise NotInLog(f"no log entry {index}")
        path = inclusion_path(s, index, want, log=log)
        head = _cached_head(s, want, log)
    return {
        "index": index,
        "tree_size": want,
        "leaf": json.loads(entry.leaf),
        "leaf_hash": entry.leaf_hash,
        "audit_path": [h.hex() for h in path],
        "tree_head": head or signed_head(db, signer, want, log=log),
    }


def consistency(
    db: Database, signer: RecordSigner, first: int, second: int, *, log: int
) -> dict[str, Any]:
    """PROOF(first, D[second]) of RFC 9162 §2.1.4 with both signed heads."""
    if first < 1:
        raise BadLogRequest("first must be at least 1 (every log extends the empty one)")
    if first > second:
        raise BadLogRequest(f"first ({first}) must not be larger than second ({second})")
    with db.read() as s:
        _check_size(size(s, log=log), second)
        proof = consistency_path(s, first, second, log=log)
        heads = [_cached_head(s, k, log) for k in (first, second)]
    return {
        "first": first,
        "second": second,
        "proof": [h.hex() for h in proof],
        "first_head": heads[0] or signed_head(db, signer, first, log=log),
        "second_head": heads[1] or signed_head(db, signer, second, log=log),
    }


def entries(db: Database, start: int, limit: int, *, log: int) -> dict[str, Any]:
    with db.read() as s:
        rows = s.exec(
            select(LogEntry)
            .where(col(LogEntry.log_id) == log, col(LogEntry.idx) >= start)
            .order_by(col(LogEntry.idx))
            .limit(limit)
        ).all()
    return {
        "entries": [
            {"index": r.idx, "leaf": json.loads(r.leaf), "leaf_hash": r.leaf_hash} for r in rows
        ]
    }
