"""The ``matches`` row as the hot path reads and writes it, and the prebuilt statements.

SQLAlchemy Core only (no ORM on the hot path): :class:`MatchRow` is one row, ``MUTABLE``
the columns a transaction may change, and the ``_GET…`` / ``_EVENTS…`` statements are built
once at import. Also the small helpers for values stored in rows (timestamps, JSON, token
hashes).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, select, update

from fairness import FairProtocol, protocol_for
from games import Engine
from games.registry import find_engine

from ..kinds import Kind, Status
from ..models import EventRow, Match, Seat, ServerSeed

KIND_MATCH, KIND_RNG = Kind.MATCH, Kind.RNG

_EVENTS = EventRow.__table__  # type: ignore[attr-defined]
_MATCHES = Match.__table__  # type: ignore[attr-defined]
_SEATS = Seat.__table__  # type: ignore[attr-defined]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def what(kind: str) -> str:
    return "match" if kind == KIND_MATCH else "rng session"


@dataclass(slots=True)
class MatchRow:
    """One ``matches`` row, read and written with SQLAlchemy Core (the hot path has no ORM).
    A new match sets the columns without a default; the rest start as a new match has them."""

    id: str
    kind: str
    game: str
    ruleset: str
    commitment: str
    n_seats: int
    log_index: int
    record: str
    created_at: str
    last_activity: float
    protocol: str
    status: str = Status.SEATING
    version: int = 0
    next_seq: int = 0
    result: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    lock: str | None = None
    lock_index: int | None = None
    reveal_by: float | None = None
    end_by: float | None = None
    chain: str | None = None
    deadline: float | None = None
    owes: int | None = None
    transcript_sig: str | None = None

    @property
    def proto(self) -> FairProtocol:
        """The match's protocol object (its ``signed``: a v2 match, with a lock)."""
        return protocol_for(self.protocol)

    @property
    def variant(self) -> type[Engine]:
        """The match's engine class (:func:`games.registry.find_engine` of its game, ruleset
        and protocol), carrying the protocol its transcript names and its deal."""
        return find_engine(self.game, self.ruleset, protocol=self.protocol)

    def changes(self, since: tuple[Any, ...]) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k, old in zip(MUTABLE, since, strict=True)
            if getattr(self, k) != old
        }

    def mutable(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in MUTABLE)


MUTABLE = (
    "status",
    "version",
    "next_seq",
    "result",
    "started_at",
    "ended_at",
    "last_activity",
    "lock",
    "lock_index",
    "reveal_by",
    "end_by",
    "chain",
    "deadline",
    "owes",
    "transcript_sig",
)
_MATCH_COLS = [_MATCHES.c[f] for f in MatchRow.__slots__]
_GET = select(*_MATCH_COLS).where(_MATCHES.c.id == bindparam("id"))
_GET_LOCKED = _GET.with_for_update()
# The row and, in the same round trip, the events a cached engine has not applied yet (a
# LEFT JOIN: one row with a NULL body when there are none). Locks only the match row.
_GET_WITH_NEW = (
    select(*_MATCH_COLS, _EVENTS.c.body)
    .select_from(
        _MATCHES.outerjoin(
            _EVENTS,
            and_(_EVENTS.c.match_id == _MATCHES.c.id, _EVENTS.c.seq >= bindparam("from_seq")),
        )
    )
    .where(_MATCHES.c.id == bindparam("id"))
    .order_by(_EVENTS.c.seq)
)
_GET_WITH_NEW_LOCKED = _GET_WITH_NEW.with_for_update(of=_MATCHES)
_EVENTS_AFTER = (
    select(_EVENTS.c.body, _EVENTS.c.chain)
    .where(
        _EVENTS.c.match_id == bindparam("mid"),
        _EVENTS.c.seq > bindparam("after"),
        _EVENTS.c.seq < bindparam("before"),
    )
    .order_by(_EVENTS.c.seq)
)
_SEAT_OF_TOKEN = select(_SEATS.c.seat).where(
    _SEATS.c.match_id == bindparam("mid"), _SEATS.c.token_hash == bindparam("h")
)
_INSERT_EVENTS = insert(_EVENTS)
# The row's update after a write, one statement per set of changed columns, built once (a
# statement built per write cost more than executing it).
_UPDATES: dict[tuple[str, ...], Any] = {}


def _update_for(cols: tuple[str, ...], notify: bool) -> Any:
    stmt = _UPDATES.get((*cols, str(notify)))
    if stmt is None:
        stmt = (
            update(_MATCHES)
            .where(_MATCHES.c.id == bindparam("_mid"))
            .values({k: bindparam(f"_v_{k}") for k in cols})
        )
        if notify:
            stmt = stmt.returning(func.pg_notify(bindparam("_channel"), bindparam("_payload")))
        if len(_UPDATES) >= 1024:  # a few dozen sets occur; never grow without bound
            _UPDATES.clear()
        _UPDATES[(*cols, str(notify))] = stmt
    return stmt


# built once: the ORM statement cost more to build than to run
_SEAT_MATCH_ID: Any = Seat.match_id
_SEAT_NO: Any = Seat.seat
_SEATS_OF = select(Seat).where(_SEAT_MATCH_ID == bindparam("mid")).order_by(_SEAT_NO)


@functools.cache  # a couple of column sets occur (a commit's, a reveal's, an rng seed's)
def _seat_update(cols: tuple[str, ...]) -> Any:
    """The UPDATE of one seat's ``cols`` (``_v_<col>``), built once per set of columns."""
    return (
        update(_SEATS)
        .where(_SEATS.c.match_id == bindparam("_mid"), _SEATS.c.seat == bindparam("_seat"))
        .values({k: bindparam(f"_v_{k}") for k in cols})
    )


_SEEDS: Any = ServerSeed.__table__  # type: ignore[attr-defined]
_SEALED = select(_SEEDS.c.sealed).where(_SEEDS.c.match_id == bindparam("mid"))
