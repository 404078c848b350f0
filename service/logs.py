"""Reads of the public records: the transparency log (over :mod:`service.translog`), the
signing keys and the health check, so that no route queries the database itself."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from fairness import Signer

from . import translog
from .db import Database
from .models import SigningKey


class PublicLog:
    def __init__(self, db: Database, signer: Signer, log_key: dict[str, str] | None = None) -> None:
        self.db = db
        self.signer = signer
        self.log_key = log_key  # {"origin", "vkey"} of the C2SP log

    def tree_head(self, *, tree_size: int | None = None) -> dict[str, Any]:
        return translog.api(translog.signed_head, self.db, self.signer, tree_size)

    def proof(self, index: int, *, tree_size: int | None) -> dict[str, Any]:
        return translog.api(translog.inclusion, self.db, self.signer, index, tree_size)

    def consistency(self, *, first: int, second: int) -> dict[str, Any]:
        return translog.api(translog.consistency, self.db, self.signer, first, second)

    def entries(self, *, start: int, limit: int) -> dict[str, Any]:
        return translog.entries(self.db, start, limit)

    def keys(self) -> dict[str, Any]:
        """Every key this server has signed with; ``current``: not retired by ``qahwa keys
        rotate`` (``retired_at`` says when it was)."""
        with self.db.read() as s:
            rows = s.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all()
        out: dict[str, Any] = {
            "keys": [
                {
                    "key_id": r.key_id,
                    "alg": r.alg,
                    "public_key": r.public_key,
                    "created_at": r.created_at,
                    "current": r.retired_at is None,
                    "retired_at": r.retired_at,
                }
                for r in rows
            ]
        }
        if self.log_key is not None:
            out["log"] = dict(self.log_key)
        return out

    def healthy(self) -> bool:
        """The database answers."""
        with self.db.read() as s:
            s.exec(select(SigningKey.key_id).limit(1)).all()
        return True
