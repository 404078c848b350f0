"""Match state: the ``matches`` row, the engine cache and the transactions on one match.

- :class:`MatchRow` is one row as the hot path reads and writes it (``MUTABLE``: the columns
  a transaction may change). No ORM on the hot path: the statements are built once with
  SQLAlchemy Core, compiled once per dialect (:class:`Raw`) and run on the DB-API cursor of
  the transaction's connection (:func:`run`).
- The caches: :class:`LRU`, and :class:`EngineCache`, each recently used match's engine with
  the version and ``next_seq`` it was built at (:class:`Cached`), and per-match thread locks.
- :class:`Store` (the database, sealing box and engine cache of one process, and the
  transactions it opens) and :class:`Tx` (one transaction on one match).

The event log in the database is the truth. A request that finds the database further on
than its cached engine *catches up* (:func:`catch_up`, checking every chance event it draws
against the log); a full replay (unsealing the server seed, deriving K) happens only when
nothing is cached or catching up disagrees. Both take a sealed match's steps as verified
(``stored_steps``): each proof was checked once, by the process that stored it. Every write
first locks the match row (``SELECT … FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on
SQLite), so catching up inside it sees every committed event and several processes on one
database stay correct; a per-match thread lock keeps this process's threads off an engine
while another thread changes it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast, overload

from sqlalchemy import Connection, and_, bindparam, func, insert, select, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from fairness import SecretBox, chain_next, format_time_ms, protocol_for
from fairness.records import Lock, Read
from games import Engine, ReplayError
from games.base import MatchContext
from games.registry import find_engine
from games.replay import Replayer, replay
from games.sealed_backend import stored_steps

from .clock import SYSTEM_CLOCK, Clock, iso_of
from .db import LOOP, READ_ON_LOOP, WRITE_ON_LOOP, Database, WouldBlock, loop_guard, loop_mode
from .errors import NotFound, Unauthorized
from .kinds import Kind, Status
from .models import EventRow, Match, Seat, ServerSeed

log = logging.getLogger("qahwa.service")

KIND_MATCH, KIND_RNG = Kind.MATCH, Kind.RNG
SEATING, PLAYING, FINISHED = Status.SEATING, Status.PLAYING, Status.FINISHED

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


# -- the row and its statements -------------------------------------------------------------

_EVENTS = EventRow.__table__  # type: ignore[attr-defined]
_MATCHES = Match.__table__  # type: ignore[attr-defined]
_SEATS = Seat.__table__  # type: ignore[attr-defined]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _encoder() -> Callable[[Any], str]:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``'s encoder, made once:
    the same text without its set-up at every call (most of what a small object costs), and
    without the check for circular references (what is encoded here is parsed JSON and
    fresh values, never circular; one that were would still raise, RecursionError)."""
    plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C accelerator
        return plain.encode
    encode = make(
        None, plain.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    return lambda obj: "".join(encode(obj, 0))


#: ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``: the service's JSON (an
#: event's stored text, an answer's)
dumps = _encoder()


class Texts(list[Any]):
    """Events as an answer shows them: each :class:`fairness.records.Read` among them is a
    stored event, written as the text it was stored as (``service.matches.view_json``), not
    encoded again. The bytes are the same: an event's stored text is :func:`dumps` of its
    object (:meth:`Tx.append`, the only writer of the log's events, and migration 0008's
    appended ends), a stored event never changes, and ``dumps`` of what that text parses to
    is that text. Read only: a changed event is a new plain object in its place (a
    redaction)."""

    __slots__ = ()


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


# -- the in-memory caches -------------------------------------------------------------------


class LRU(Generic[K, V]):
    """At most ``size`` entries; :meth:`put` and a touching :meth:`get` make an entry the most
    recently used, and the least recently used one goes when there are too many. Each call
    holds the cache's own lock (several calls that must be atomic hold the caller's own)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU holds at least one entry, not {size}")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._guard = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @overload
    def get(self, key: K, *, touch: bool = True) -> V | None: ...
    @overload
    def get(self, key: K, default: V, *, touch: bool = True) -> V: ...
    def get(self, key: K, default: V | None = None, *, touch: bool = True) -> V | None:
        """The entry (``default`` when there is none); ``touch``: count this as a use."""
        with self._guard:
            try:
                value = self._entries[key]
            except KeyError:
                return default
            if touch:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._guard:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        with self._guard:
            return self._entries.pop(key, None)


# -- the engine cache -----------------------------------------------------------------------


@dataclass
class Cached:
    """An engine that has applied every event before ``next_seq``, at match ``version``."""

    version: int
    next_seq: int
    engine: Engine


class EngineCache(LRU[str, Cached]):
    """Engines by match id (least recently used dropped first); per-match thread locks."""

    def __init__(self, size: int = 512) -> None:
        super().__init__(size)
        self._locks = [threading.RLock() for _ in range(128)]

    def lock_for(self, match_id: str) -> threading.RLock:
        return self._locks[int(hashlib.sha256(match_id.encode()).hexdigest()[:8], 16) % 128]


def catch_up(engine: Engine, events: Sequence[dict[str, Any]], first_seq: int) -> None:
    """Apply logged events ``first_seq, first_seq + 1, …`` to an engine that has applied
    every earlier one, checking each chance event against what the engine draws.

    Raises ReplayError (the engine is then unusable) where the log and the engine disagree.
    The loop is :class:`games.replay.Replayer`, the one verify and the tests use.
    """
    Replayer(engine, next_seq=first_seq).feed(events).finish()


# -- transactions ---------------------------------------------------------------------------


@contextmanager
def _holding(lock: threading.RLock) -> Iterator[None]:
    """``lock`` held; on the event loop only if it is free now (else :class:`WouldBlock`)."""
    if not lock.acquire(blocking=not loop_mode()):
        raise WouldBlock
    try:
        yield
    finally:
        lock.release()


class Store:
    """The database, the sealing box and the engine cache of one process."""

    def __init__(
        self, db: Database, box: SecretBox, cache_size: int = 512, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.db = db
        self.box = box
        self.cache = EngineCache(cache_size)
        #: how many events were read from the log to build or advance engines (tests)
        self.events_read = 0
        #: how many full replays happened (tests)
        self.replays = 0
        #: how many times catching up needed a query of its own (tests): the events read
        #: with the row were missing or incomplete
        self.catch_up_queries = 0
        #: how many requests tried on the event loop went to the thread pool (WouldBlock)
        self.loop_fallbacks = 0
        #: called with ``(match_id, next_seq)`` after a write committed
        self.on_commit: list[Callable[[str, int], None]] = []
        #: called with no arguments after a write that added a transparency log entry (a
        #: lock, a reveal record): the checkpointer looks at the log then, not after a move
        self.on_log: list[Callable[[], None]] = []
        #: called with ``(match_id, next_seq, status)`` after a write that changed the status
        self.on_status: list[Callable[[str, int, str], None]] = []
        #: PostgreSQL: the channel each write that appended events NOTIFYs (at its commit)
        #: with ``"<match_id> <next_seq>"``, sent by the row update itself
        self.notify_channel: str | None = None
        #: PostgreSQL: whether any process waits for notifications now (service.watch.
        #: WatchersFlag); none: every write that appended events NOTIFYs
        self.notify_wanted: Callable[[], bool] | None = None
        #: the time deadlines are measured with (the app's; tests move theirs)
        self.clock = clock
        self._tokens = LRU[tuple[str, str], int](8192)  # a token's seat never changes
        #: the events read or logged lately, by their stored text (:meth:`event`): a seat
        #: reads an event soon after it is logged (a sealed step's is 4–16 KiB of text)
        self._events = LRU[str, Read](512)

    def now_iso(self) -> str:
        """The clock's time as RFC 3339 UTC with milliseconds (a row's timestamps)."""
        return iso_of(self.clock.now())

    # -- running a request ------------------------------------------------------------------
    async def on_loop(self, call: Callable[[], T], *, write: bool = False) -> T:
        """``call()`` (a read of a match, or with ``write`` an action on it), on SQLite right
        here on the event loop — saving the thread pool's hand-off, which cost more than a
        read — unless it meets anything that could wait or work long there: a per-match lock
        another thread holds, the process's write lock another thread holds, SQLite's write
        lock another process holds, a write where only a read was expected (a deadline to
        settle), a replay. Each raises :class:`WouldBlock` before anything changed, and the
        call runs again in the thread pool, as it always does on PostgreSQL (every statement
        a round trip). SQLite readers in WAL mode never wait for a writer."""
        if self.db.dialect == "sqlite":
            LOOP.mode = WRITE_ON_LOOP if write else READ_ON_LOOP
            try:
                return call()
            except WouldBlock:
                self.loop_fallbacks += 1
            finally:
                LOOP.mode = 0
        return await run_in_threadpool(call)

    # -- transactions ----------------------------------------------------------------------
    @contextmanager
    def write(self, match_id: str, *, kind: str) -> Iterator[Tx]:
        """A write transaction on the locked match row; the engine it used or started is
        cached after the commit, and any exception discards the cached engine if the
        transaction had started changing it."""
        loop_guard()
        with _holding(self.cache.lock_for(match_id)):
            tx: Tx | None = None
            try:
                with self.db.connect(write=True) as c:
                    tx = self._open(c, match_id, kind=kind, lock=True)
                    before = tx.m.mutable()
                    try:
                        yield tx
                        tx.flush()
                    finally:
                        tx.close()
                    changed = tx.m.changes(before)
                    # a new status is news even without an event (a v2 start at the last
                    # reveal: tawla's draws nothing) — event streams say so (service/watch.py)
                    restated = "status" in changed
                    if changed:
                        params = {f"_v_{k}": v for k, v in changed.items()}
                        params["_mid"] = match_id
                        notify = bool(
                            (tx.appended or restated)
                            and self.notify_channel
                            and (self.notify_wanted is None or self.notify_wanted())
                        )
                        if notify:
                            # one round trip: the update returns pg_notify's (empty) result
                            params["_channel"] = self.notify_channel
                            params["_payload"] = f"{match_id} {tx.m.next_seq}" + (
                                f" {tx.m.status}" if restated else ""
                            )
                        run(c, _update_for(tuple(changed), notify), params)
            except WouldBlock:  # a try on the event loop, before anything changed
                if tx is not None and tx.dirty:
                    self.cache.pop(match_id)
                raise
            except BaseException:
                if tx is None or tx.dirty:
                    self.cache.pop(match_id)
                raise
            if tx.current is not None:
                self.cache.put(match_id, Cached(tx.m.version, tx.m.next_seq, tx.current))
            elif tx.dirty:
                self.cache.pop(match_id)
        if tx.appended or tx.logged or restated:  # events, a log entry (a lock), a status
            for cb in self.on_commit:
                cb(match_id, tx.m.next_seq)
            if tx.logged:
                for lcb in self.on_log:
                    lcb()
            if restated:
                for scb in self.on_status:
                    scb(match_id, tx.m.next_seq, tx.m.status)

    @contextmanager
    def read(self, match_id: str, *, kind: str) -> Iterator[Tx]:
        """A read of one match: a transaction on SQLite; on PostgreSQL autocommit statements
        that agree with the row as read (``Database.connect``)."""
        with _holding(self.cache.lock_for(match_id)), self.db.connect(write=False) as c:
            tx = self._open(c, match_id, kind=kind, lock=False)
            try:
                yield tx
            finally:
                tx.close()

    @contextmanager
    def create(self, m: MatchRow) -> Iterator[Tx]:
        """A write transaction that inserts the new match row ``m``; the caller adds the
        rest (seats, sealed seed)."""
        with self.cache.lock_for(m.id), self.db.connect(write=True) as c:
            tx = Tx(self, c, m)
            try:
                c.execute(insert(_MATCHES).values(**{k: getattr(m, k) for k in MatchRow.__slots__}))
                yield tx
                tx.flush()
            finally:
                tx.close()

    def _open(self, c: Connection, match_id: str, *, kind: str, lock: bool) -> Tx:
        """The transaction object on the (locked) match row. With an engine cached, the same
        round trip also reads the events logged since it was cached (another process wrote
        them), so catching up costs no extra query."""
        entry = self.cache.get(match_id)
        if entry is None:
            rows = run(c, _GET_LOCKED if lock else _GET, {"id": match_id})
        else:
            rows = run(
                c,
                _GET_WITH_NEW_LOCKED if lock else _GET_WITH_NEW,
                {"id": match_id, "from_seq": entry.next_seq},
            )
        if not rows or rows[0][1] != kind:  # MatchRow's second field
            what = "match" if kind == KIND_MATCH else "rng session"
            raise NotFound(f"no {what} with id {match_id!r}")
        if entry is None:
            return Tx(self, c, MatchRow(*rows[0]))
        tx = Tx(self, c, MatchRow(*rows[0][:-1]))
        tx.prefetched = (entry.next_seq, [json.loads(r[-1]) for r in rows if r[-1] is not None])
        return tx

    # -- reads without a match transaction --------------------------------------------------
    def events_after(
        self, c: Connection, match_id: str, after: int = -1, *, before: int
    ) -> list[dict[str, Any]]:
        """The events with ``after < seq < before`` (``before``: the match row's
        ``next_seq`` as read, so a read outside a transaction sees what the row says)."""
        rows = run(c, _EVENTS_AFTER, {"mid": match_id, "after": after, "before": before})
        return [json.loads(b) for b, _ in rows]

    def events_and_chains(
        self, c: Connection, match_id: str, after: int = -1, *, before: int
    ) -> tuple[Texts, list[str | None]]:
        """:meth:`events_after` as an answer shows them (:class:`Texts`: each event with its
        stored text), with the chain head after each event (v2; None for v1)."""
        rows = run(c, _EVENTS_AFTER, {"mid": match_id, "after": after, "before": before})
        return Texts([self.event(b) for b, _ in rows]), [ch for _, ch in rows]

    def event(self, text: str, value: dict[str, Any] | None = None) -> Read:
        """The event a stored text holds (``value``: made already), parsed once while it is
        among the latest read or logged: a stored event never changes, and one text is one
        value (read only: every answer that shows the event shares it)."""
        found = self._events.get(text)
        if found is None:
            found = Read(text, json.loads(text) if value is None else value)
            self._events.put(text, found)
        return found

    def server_seed(self, c: Connection, match_id: str) -> bytes:
        stored = c.execute(_SEALED, {"mid": match_id}).scalar()
        if stored is None:
            raise RuntimeError(f"match {match_id} has no sealed seed")
        return self.box.open(stored, aad=match_id)

    def seat_of_token(self, c: Connection, match_id: str, token: str | None) -> int:
        if not token:
            raise Unauthorized("this needs a seat token: send 'Authorization: Bearer <token>'")
        h = hash_token(token)
        key = (match_id, h)
        seat = self._tokens.get(key)
        if seat is not None:
            return seat
        got = run(c, _SEAT_OF_TOKEN, {"mid": match_id, "h": h})
        found = got[0][0] if got else None
        if found is None:
            raise Unauthorized("the token is not a seat token of this match")
        self._tokens.put(key, int(found))
        return int(found)


class Tx:
    """One transaction on one match: its session, its row, and the engine it uses."""

    def __init__(self, store: Store, c: Connection, m: MatchRow) -> None:
        self.store = store
        self.c = c
        self.m = m
        #: the match's variant: the engine class of its game, ruleset and protocol, which
        #: carries the protocol it is played under and its deal (decided once, here)
        self.variant = find_engine(m.game, m.ruleset, protocol=m.protocol)
        self._s: Session | None = None
        self.current: Engine | None = None
        self.dirty = False  # the engine may differ from the committed log
        self.appended = False
        #: the write appended a log entry (a lock, a reveal record): on_log runs, so the
        #: checkpointer signs a checkpoint that includes it
        self.logged = False
        #: ``(from_seq, events)``: the events with seq >= from_seq, read with the row
        self.prefetched: tuple[int, list[dict[str, Any]]] | None = None
        #: v2: the time ``at`` (microseconds, a whole millisecond) of the events this
        #: transaction appended last (None before it appends)
        self.head_at_us: int | None = None

    @property
    def s(self) -> Session:
        """An ORM session in this transaction, made on first use (seats, creation)."""
        if self._s is None:
            self._s = Session(bind=self.c, expire_on_commit=False, autoflush=False)
        return self._s

    def flush(self) -> None:
        if self._s is not None:
            self._s.flush()

    def close(self) -> None:
        if self._s is not None:
            self._s.close()
            self._s = None

    # -- who ------------------------------------------------------------------------------
    def seats(self) -> list[Seat]:
        return list(self.s.scalars(_SEATS_OF, {"mid": self.m.id}).all())

    def set_seat(self, row: Seat, **values: Any) -> None:
        """Write columns of a loaded seat row with one plain UPDATE (the ORM's unit of work
        cost more than the statement) and set them on the row as loaded (nothing to flush)."""
        params = {f"_v_{k}": v for k, v in values.items()}
        self.c.execute(
            _seat_update(tuple(values)), {"_mid": self.m.id, "_seat": row.seat, **params}
        )
        for k, v in values.items():
            set_committed_value(row, k, v)

    def key(self, seats: list[Seat] | None = None) -> bytes:
        """K: v1's from the client seeds, v2's from the revealed seeds and nonces."""
        seats = seats if seats is not None else self.seats()
        if any(st.client_seed is None for st in seats):
            raise RuntimeError(f"match {self.m.id} is missing client seeds")
        m = self.m
        proto = protocol_for(m.protocol)  # the row's: K's derivation names it
        inputs = [
            proto.seat_input({"client_seed": st.client_seed, "nonce": st.nonce}) for st in seats
        ]
        return proto.match_key(
            self.store.server_seed(self.c, m.id), m.id, m.game, m.ruleset, inputs
        )

    def context(self) -> MatchContext | None:
        """v2: the match id and the roll-chain tips from the lock (None for v1)."""
        m = self.m
        if m.lock is None:  # (a qahwa-fair/1 row has none)
            return None
        return MatchContext.of_lock(Lock.parse(json.loads(m.lock)))

    # -- the engine -----------------------------------------------------------------------
    def engine(self) -> Engine:
        """The engine at the row's version: cached and caught up, else replayed."""
        if self.current is not None:
            return self.current
        m, store = self.m, self.store
        entry = store.cache.get(m.id)
        if entry is not None and entry.version <= m.version and entry.next_seq <= m.next_seq:
            if entry.next_seq < m.next_seq:
                pre = self.prefetched
                # Complete only if it reaches the row's next_seq: on PostgreSQL a locking
                # read that waited for another writer sees that writer's row but not the
                # events it added (READ COMMITTED re-checks only the locked row).
                if (
                    pre is not None
                    and pre[0] == entry.next_seq
                    and len(pre[1]) == m.next_seq - entry.next_seq
                ):
                    events = pre[1]
                else:
                    store.catch_up_queries += 1
                    events = store.events_after(self.c, m.id, entry.next_seq - 1, before=m.next_seq)
                store.events_read += len(events)
                try:
                    with stored_steps():  # each step verified once, before it was stored
                        catch_up(entry.engine, events, entry.next_seq)
                except (ReplayError, ValueError, TypeError, KeyError) as exc:
                    log.warning("match %s: catching up failed (%s); replaying", m.id, exc)
                    store.cache.pop(m.id)
                    return self._replay()
            entry.version, entry.next_seq = m.version, m.next_seq
            self.current = entry.engine
            return entry.engine
        return self._replay()

    def _replay(self) -> Engine:
        if loop_mode():  # a replay can take a while: not on the event loop
            raise WouldBlock
        m, store = self.m, self.store
        events = store.events_after(self.c, m.id, before=m.next_seq)
        store.events_read += len(events)
        store.replays += 1
        with stored_steps():  # each sealed step was verified once, before it was stored
            engine = replay(self.variant, m.ruleset, self.key(), events, ctx=self.context())
        store.cache.put(m.id, Cached(m.version, m.next_seq, engine))
        self.current = engine
        return engine

    def changing(self) -> Engine:
        """The engine, marked as about to change (an exception then discards it)."""
        engine = self.engine()
        self.dirty = True
        return engine

    # -- writes ---------------------------------------------------------------------------
    def event_time_us(self, not_before: float | None = None) -> int:
        """v2: the ``at`` of events appended now, in whole milliseconds (as microseconds):
        the clock's time, but never before the match's last activity (which is at or after
        every earlier event's ``at``), so ``at`` never decreases along the chain; and never
        before ``not_before`` (epoch seconds; a timeout's deadline: fairness-v2.md §7)."""
        now = max(self.store.clock.now(), self.m.last_activity)
        ms = int(now * 1000)
        if not_before is not None:
            ms = max(ms, round(not_before * 1000))  # the deadline's millisecond, or after
        return ms * 1000

    def append(self, events: Sequence[dict[str, Any]], *, not_before: float | None = None) -> Texts:
        """Append events (without ``seq``) to the log; returns them with their ``seq``, each
        with the text it is stored as (:class:`Texts`).

        v2: each event carries the server's time ``at`` (:meth:`event_time_us`, not before
        ``not_before``) and extends the chain (fairness-v2.md §7); the row keeps the head
        after it and the match row the newest head.
        """
        if not events:
            return Texts()
        m = self.m
        at = self.store.now_iso()
        rows = []
        out = Texts()
        head = bytes.fromhex(m.chain) if m.chain is not None else None
        ev_at: str | None = None
        if head is not None:
            self.head_at_us = self.event_time_us(not_before)
            ev_at = format_time_ms(self.head_at_us)
        for ev in events:
            full = {"seq": m.next_seq, **ev}
            if ev_at is not None:
                full["at"] = ev_at
            body = dumps(full)
            row = {
                "match_id": m.id,
                "seq": m.next_seq,
                "body": body,
                "created_at": at,
                "chain": None,
            }
            if head is not None:
                head = chain_next(head, full)
                row["chain"] = head.hex()
            rows.append(row)
            out.append(self.store.event(body, full))
            m.next_seq += 1
        if head is not None:
            m.chain = head.hex()
        self.flush()
        run_many(self.c, _INSERT_EVENTS, rows)
        self.appended = True
        return out

    def touch(self) -> None:
        self.m.version += 1
        self.m.last_activity = self.store.clock.now()
