"""Reads of the public records: the transparency log (over :mod:`service.translog`), the
signing keys and the health check, so that no route queries the database itself."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlmodel import col, select

from . import translog
from .clock import epoch_of
from .db import Database
from .errors import user_errors
from .keys import RecordSigner
from .models import SigningKey

ACTIVE_LOG_TTL = 1.0  # seconds


class PublicLog:
    def __init__(
        self,
        db: Database,
        signer: RecordSigner,
        log_key: dict[str, str] | None = None,
        *,
        log_id: int = 1,
        logs: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.db = db
        self.signer = signer
        self.log_key = log_key  # {"origin", "vkey"} of the C2SP log
        self._log_id = log_id  # the active log as last read (log_identity.id)
        self._log_read = time.monotonic()
        self.logs = logs  # every log of the deployment (service.c2sp.LogShelf.listing)

    @property
    def log_id(self) -> int:
        """The active log, the one appended to (re-read at most every second: after ``qahwa
        keys new-log`` the JSON reads follow the appends before this process restarts)."""
        now = time.monotonic()
        if now - self._log_read >= ACTIVE_LOG_TTL:
            with self.db.read() as s:
                self._log_id = translog.active_log(s)
            self._log_read = now
        return self._log_id

    # the log's errors (NotInLog, BadLogRequest) are answered as the service's (user_errors)
    def tree_head(self, *, tree_size: int | None = None) -> dict[str, Any]:
        with user_errors():
            return translog.signed_head(self.db, self.signer, tree_size, log=self.log_id)

    def proof(self, index: int, *, tree_size: int | None) -> dict[str, Any]:
        with user_errors():
            return translog.inclusion(self.db, self.signer, index, tree_size, log=self.log_id)

    def consistency(self, *, first: int, second: int) -> dict[str, Any]:
        with user_errors():
            return translog.consistency(self.db, self.signer, first, second, log=self.log_id)

    def entries(self, *, start: int, limit: int) -> dict[str, Any]:
        return translog.entries(self.db, start, limit, log=self.log_id)

    def keys(self, now: float) -> dict[str, Any]:
        """Every key this server has signed with or will: ``current`` while in force (from
        ``activates_at``, or ``created_at``, until ``retired_at``), ``next`` while staged
        by ``qahwa keys rotate`` (before ``activates_at``: nothing is signed with it yet);
        each with its ``announcements`` (fairness-v2.md, revision "key announcements")."""
        rows = key_rows(self.db)
        out: dict[str, Any] = {"keys": [_key(r, now) for r in rows]}
        announce = getattr(self.signer, "announcements", None)  # a KeyRing's
        found: dict[str, list[dict[str, Any]]] = announce(rows) if announce is not None else {}
        for k in out["keys"]:
            k["announcements"] = found.get(k["key_id"], [])
        if self.log_key is not None:
            out["log"] = dict(self.log_key)
        if self.logs is not None:
            out["logs"] = self.logs()
        return out

    def healthy(self) -> bool:
        """The database answers."""
        with self.db.read() as s:
            s.exec(select(SigningKey.key_id).limit(1)).all()
        return True


def _key(r: SigningKey, now: float) -> dict[str, Any]:
    start = epoch_of(r.activates_at or r.created_at)
    retired = r.retired_at is not None and epoch_of(r.retired_at) <= now
    return {
        "key_id": r.key_id,
        "alg": r.alg,
        "public_key": r.public_key,
        "created_at": r.created_at,
        "activates_at": r.activates_at or r.created_at,
        "current": start <= now and not retired,
        "next": start > now,
        "retired_at": r.retired_at,
    }


def key_rows(db: Database) -> list[SigningKey]:
    """Every signing key's row, oldest first."""
    with db.read() as s:
        return list(s.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all())


def key_listing(db: Database, now: float) -> list[dict[str, Any]]:
    """Every signing key as ``/v1/keys`` lists it at ``now`` (without announcements)."""
    return [_key(r, now) for r in key_rows(db)]
