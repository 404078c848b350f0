"""The ``matches`` row as the hot path reads and writes it, and the prebuilt statements.

No ORM on the hot path: :class:`MatchRow` is one row, ``MUTABLE`` the columns a
transaction may change, and the ``_GET…`` / ``_EVENTS…`` statements are built once at
import with SQLAlchemy Core and run by :func:`run`: compiled once per dialect to the
driver's own SQL, executed on the DB-API cursor of the transaction's connection (SQLAlchemy
keeps the connections and the transactions; its per-statement layer cost more than the
statements on SQLite). Also the small helpers for values stored in rows (timestamps, JSON,
token hashes).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection, and_, bindparam, func, insert, select, update

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


class Raw:
    """A Core statement run on the DB-API cursor (:func:`run`): its SQL and parameter order
    per dialect, compiled on first use. ``keys``: the columns an INSERT sets."""

    __slots__ = ("stmt", "keys", "_by_dialect")

    def __init__(self, stmt: Any, keys: tuple[str, ...] | None = None) -> None:
        self.stmt = stmt
        self.keys = keys
        self._by_dialect: dict[str, tuple[str, tuple[str, ...] | None]] = {}

    def sql(self, dialect: Any) -> tuple[str, tuple[str, ...] | None]:
        """The driver's SQL and, for a positional paramstyle (sqlite3's ``?``), the
        parameter names in order (None: the driver takes the dict, psycopg's ``%(name)s``)."""
        got = self._by_dialect.get(dialect.name)
        if got is None:
            comp = self.stmt.compile(
                dialect=dialect, column_keys=list(self.keys) if self.keys else None
            )
            names = tuple(comp.positiontup) if comp.positional else None
            got = self._by_dialect[dialect.name] = (comp.string, names)
        return got


def run(c: Connection, raw: Raw, params: dict[str, Any]) -> list[Any]:
    """Execute ``raw`` with ``params`` on a DB-API cursor of ``c``'s connection, in its
    transaction; its rows (the driver's tuples; none for a statement without any)."""
    sql, names = raw.sql(c.dialect)
    cur = c.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cur.execute(sql, tuple([params[n] for n in names]) if names is not None else params)
        return cast(list[Any], cur.fetchall()) if cur.description is not None else []
    finally:
        cur.close()


def run_many(c: Connection, raw: Raw, rows: list[dict[str, Any]]) -> None:
    """:func:`run` for several parameter sets (one ``executemany``)."""
    sql, names = raw.sql(c.dialect)
    cur = c.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    if names is not None:
        cur.executemany(sql, [tuple([r[n] for n in names]) for r in rows])
    else:
        cur.executemany(sql, rows)
    cur.close()


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
_GET_CORE = select(*_MATCH_COLS).where(_MATCHES.c.id == bindparam("id"))
_GET = Raw(_GET_CORE)
_GET_LOCKED = Raw(_GET_CORE.with_for_update())
# The row and, in the same round trip, the events a cached engine has not applied yet (a
# LEFT JOIN: one row with a NULL body when there are none). Locks only the match row.
_GET_WITH_NEW_CORE = (
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
_GET_WITH_NEW = Raw(_GET_WITH_NEW_CORE)
_GET_WITH_NEW_LOCKED = Raw(_GET_WITH_NEW_CORE.with_for_update(of=_MATCHES))
_EVENTS_AFTER = Raw(
    select(_EVENTS.c.body, _EVENTS.c.chain)
    .where(
        _EVENTS.c.match_id == bindparam("mid"),
        _EVENTS.c.seq > bindparam("after"),
        _EVENTS.c.seq < bindparam("before"),
    )
    .order_by(_EVENTS.c.seq)
)
_SEAT_OF_TOKEN = Raw(
    select(_SEATS.c.seat).where(
        _SEATS.c.match_id == bindparam("mid"), _SEATS.c.token_hash == bindparam("h")
    )
)
_INSERT_EVENTS = Raw(insert(_EVENTS), ("match_id", "seq", "body", "created_at", "chain"))
# The row's update after a write, one statement per set of changed columns, built once (a
# statement built per write cost more than executing it).
_UPDATES: dict[tuple[str, ...], Raw] = {}


def _update_for(cols: tuple[str, ...], notify: bool) -> Raw:
    got = _UPDATES.get((*cols, str(notify)))
    if got is None:
        stmt = (
            update(_MATCHES)
            .where(_MATCHES.c.id == bindparam("_mid"))
            .values({k: bindparam(f"_v_{k}") for k in cols})
        )
        if notify:
            stmt = stmt.returning(func.pg_notify(bindparam("_channel"), bindparam("_payload")))
        if len(_UPDATES) >= 1024:  # a few dozen sets occur; never grow without bound
            _UPDATES.clear()
        got = _UPDATES[(*cols, str(notify))] = Raw(stmt)
    return got


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
