"""Reads of the public records: the transparency log (over :mod:`service.translog`), the
signing keys and the health check, so that no route queries the database itself."""

from __future__ import annotations

import json
from typing import Any

from sqlmodel import col, select

from fairness import PROTOCOL, Signer

from . import translog
from .db import Database
from .errors import NotFound
from .models import LogEntry, SigningKey
from .store import now_iso


class PublicLog:
    def __init__(self, db: Database, signer: Signer) -> None:
        self.db = db
        self.signer = signer

    def _head(self, hashes: list[bytes]) -> dict[str, Any]:
        return self.signer.signed({
            "type": "tree_head", "protocol": PROTOCOL, "tree_size": len(hashes),
            "root_hash": translog.root(hashes).hex(), "timestamp": now_iso(),
        })

    def tree_head(self, *, tree_size: int | None = None) -> dict[str, Any]:
        with self.db.read() as s:
            hashes = translog.leaf_hashes(s, tree_size)
        if tree_size is not None and tree_size > len(hashes):
            raise NotFound(f"the log has {len(hashes)} entries, fewer than {tree_size}")
        return self._head(hashes)

    def proof(self, index: int, *, tree_size: int | None) -> dict[str, Any]:
        with self.db.read() as s:
            hashes = translog.leaf_hashes(s, tree_size)
            entry = s.get(LogEntry, index)
        n = len(hashes)
        if tree_size is not None and tree_size > n:
            raise NotFound(f"the log has {n} entries, fewer than {tree_size}")
        if entry is None or not 0 <= index < n:
            raise NotFound(f"no log entry {index} in a tree of size {n}")
        return {"index": index, "tree_size": n, "leaf": json.loads(entry.leaf),
                "leaf_hash": entry.leaf_hash,
                "audit_path": [h.hex() for h in translog.audit_path(index, hashes)],
                "tree_head": self._head(hashes)}

    def entries(self, *, start: int, limit: int) -> dict[str, Any]:
        with self.db.read() as s:
            rows = s.exec(
                select(LogEntry).where(col(LogEntry.idx) >= start)
                .order_by(col(LogEntry.idx)).limit(limit)
            ).all()
        return {"entries": [{"index": r.idx, "leaf": json.loads(r.leaf),
                             "leaf_hash": r.leaf_hash} for r in rows]}

    def keys(self) -> dict[str, Any]:
        """Every key this server has signed with; ``current`` marks the one in use."""
        with self.db.read() as s:
            rows = s.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all()
        return {"keys": [{"key_id": r.key_id, "alg": r.alg, "public_key": r.public_key,
                          "created_at": r.created_at, "current": r.key_id == self.signer.key_id}
                         for r in rows]}

    def healthy(self) -> bool:
        """The database answers."""
        with self.db.read() as s:
            s.exec(select(SigningKey.key_id).limit(1)).all()
        return True
