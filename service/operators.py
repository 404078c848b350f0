"""Operator keys: who may create matches and rng sessions (docs/api.md "Operators").

An operator key is a bearer secret (``qop_`` and 43 base64url characters, 256 random bits),
shown once by ``qahwa operators add`` and stored only as its SHA-256 (a random 256-bit
secret needs no salt or slow hash: nothing can be guessed from the hash). Every creation
reads the key's row, so ``qahwa operators revoke`` takes effect at once in every process
that shares the database.

Creation is limited per key to ``QAHWA_CREATE_RATE_PER_MINUTE`` with a sliding-window
counter kept in the database (``operator_rate``: one row per key and minute), so the limit
holds across every process on one PostgreSQL. The window is the common approximation of a
sliding minute: the previous minute's count, weighted by how much of it still overlaps,
plus this minute's. No rate-limit library has a SQL store (``limits`` keeps its state in
memory, Redis, Memcached or MongoDB), hence these few lines of our own.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Connection, and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel

from .clock import SYSTEM_CLOCK, Clock, now_iso
from .db import Database
from .errors import BadRequest, NotFound, Unauthorized
from .settings import Settings

KEY_PREFIX = "qop_"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
FIRST_KEY_NAME = "default"
WINDOW_SECONDS = 60


class OperatorKey(SQLModel, table=True):
    __tablename__ = "operator_keys"

    name: str = Field(primary_key=True, max_length=64)
    key_hash: str = Field(max_length=64, unique=True)
    created_at: str = Field(max_length=40)
    revoked_at: str | None = Field(default=None, max_length=40)


class OperatorRate(SQLModel, table=True):
    """Creations per operator and minute (``minute`` = Unix time // 60)."""

    __tablename__ = "operator_rate"

    name: str = Field(primary_key=True, max_length=64)
    minute: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    count: int = 0


_KEYS = OperatorKey.__table__  # type: ignore[attr-defined]
_RATE = OperatorRate.__table__  # type: ignore[attr-defined]


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class OperatorInfo:
    name: str
    created_at: str
    revoked_at: str | None


def add(db: Database, name: str, *, key: str | None = None) -> str:
    """Create operator ``name``; returns its key (the only time it is seen)."""
    if not NAME_RE.fullmatch(name):
        raise BadRequest(
            f"bad operator name {name!r}: 1 to 64 of A-Z a-z 0-9 . _ @ -, "
            "starting with a letter or digit",
            "bad_operator_name",
        )
    key = key or new_key()
    try:
        with db.connect(write=True) as c:
            c.execute(
                insert(_KEYS).values(
                    name=name, key_hash=hash_key(key), created_at=now_iso(), revoked_at=None
                )
            )
    except IntegrityError:
        raise BadRequest(
            f"an operator named {name!r} exists already (names are never "
            "reused, even after a revoke)",
            "operator_exists",
        ) from None
    return key


def listing(db: Database) -> list[OperatorInfo]:
    with db.connect(write=False) as c:
        rows = c.execute(
            select(_KEYS.c.name, _KEYS.c.created_at, _KEYS.c.revoked_at).order_by(
                _KEYS.c.created_at, _KEYS.c.name
            )
        ).all()
    return [OperatorInfo(*r) for r in rows]


def revoke(db: Database, name: str) -> None:
    with db.connect(write=True) as c:
        row = c.execute(select(_KEYS.c.revoked_at).where(_KEYS.c.name == name)).first()
        if row is None:
            raise NotFound(f"no operator named {name!r}")
        if row[0] is None:
            c.execute(update(_KEYS).where(_KEYS.c.name == name).values(revoked_at=now_iso()))


def ensure_first_key(db: Database, path: Path) -> bool:
    """On a database without operators: make one (``default``) and write its key, alone on
    one line, to ``path`` (mode 0600). Returns True if it did. A key already in ``path``
    (e.g. a database made anew next to an old data dir) is registered rather than replaced.
    """
    from .keys import key_file

    with db.connect(write=False) as c:
        if c.execute(select(_KEYS.c.name).limit(1)).first() is not None:
            return False
    try:
        add(db, FIRST_KEY_NAME, key=key_file(path, new_key))
    except BadRequest:  # another process registered it a moment ago
        return False
    return True


def retry_after(
    prev: int, cur: int, elapsed: float, limit: int, window: float = WINDOW_SECONDS
) -> int:
    """Whole seconds until one more creation fits under ``limit`` in the sliding window
    (``prev`` and ``cur``: the previous and current windows' counts, ``elapsed``: seconds
    into the current window). At least 1."""
    if cur + 1 <= limit and prev > 0:
        # prev * (1 - f) + cur + 1 <= limit  ⇔  f >= 1 - (limit - cur - 1) / prev
        f = 1 - (limit - cur - 1) / prev
        wait = f * window - elapsed
    else:
        # the next window: cur * (1 - g) + 1 <= limit
        g = max(0.0, 1 - (limit - 1) / cur) if cur > 0 else 0.0
        wait = window - elapsed + g * window
    return max(1, math.ceil(wait))


class Operators:
    """Checks operator keys and their creation rate (one per app)."""

    def __init__(self, db: Database, settings: Settings, clock: Clock = SYSTEM_CLOCK) -> None:
        self.db = db
        self.limit = settings.create_rate_per_minute
        self.clock = clock

    def authorize(self, key: str | None) -> str:
        """The operator's name; 401 without, or with a wrong or revoked key; 429 with
        ``Retry-After`` over the key's creation rate."""
        if not key:
            raise Unauthorized(
                "creating needs an operator key: send 'Authorization: Bearer "
                "<operator key>' (qahwa operators add NAME)"
            )
        h = hash_key(key)
        with self.db.connect(write=True) as c:
            q = select(_KEYS.c.name, _KEYS.c.revoked_at).where(_KEYS.c.key_hash == h)
            if self.db.dialect == "postgresql":
                q = q.with_for_update()  # one operator's creations count one at a time
            row = c.execute(q).first()
            if row is None:
                raise Unauthorized("this is not an operator key of this server")
            name, revoked = row
            if revoked is not None:
                raise Unauthorized(f"operator key {name!r} was revoked at {revoked}")
            wait = self._count(c, name)
        if wait is not None:
            raise HTTPException(
                429,
                f"operator {name!r} is over its rate of {self.limit} "
                f"creations a minute; retry in {wait} s",
                headers={"Retry-After": str(wait), "Qahwa-Limit": "create"},
            )
        return str(name)

    def _count(self, c: Connection, name: str) -> int | None:
        """Count one creation; None if it fits, else the seconds to wait (nothing counted)."""
        now = self.clock.now()
        window = int(now // WINDOW_SECONDS)
        elapsed = now - window * WINDOW_SECONDS
        rows = c.execute(
            select(_RATE.c.minute, _RATE.c.count).where(
                _RATE.c.name == name, _RATE.c.minute >= window - 1
            )
        ).all()
        counts = {int(m): int(n) for m, n in rows}
        prev, cur = int(counts.get(window - 1, 0)), int(counts.get(window, 0))
        if prev * (1 - elapsed / WINDOW_SECONDS) + cur + 1 > self.limit:
            return retry_after(prev, cur, elapsed, self.limit)
        if window in counts:
            c.execute(
                update(_RATE)
                .where(_RATE.c.name == name, _RATE.c.minute == window)
                .values(count=_RATE.c.count + 1)
            )
        else:
            c.execute(insert(_RATE).values(name=name, minute=window, count=1))
            c.execute(delete(_RATE).where(and_(_RATE.c.name == name, _RATE.c.minute < window - 1)))
        return None


_operator_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="OperatorKey",
    description="an operator key (qahwa operators add NAME)",
)


def require_operator(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_operator_bearer)],
) -> str:
    """FastAPI dependency of the creating routes: the operator's name (runs in the thread
    pool: it reads and writes the database)."""
    ops: Operators = request.app.state.operators
    return ops.authorize(creds.credentials if creds is not None else None)


OperatorDep = Depends(require_operator)
