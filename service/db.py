"""The one module that owns the SQLAlchemy engine.

SQLite: WAL journal, foreign keys on, a busy timeout, and ``BEGIN IMMEDIATE`` for write
transactions (so two writers never interleave a read-check-write). PostgreSQL: ordinary
transactions; the match service takes ``SELECT … FOR UPDATE`` row locks and the
transparency log a table lock, so several server processes on one database stay correct.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import QueuePool
from sqlmodel import Session

SQLITE_BUSY_MS = 10_000


class WouldBlock(Exception):
    """A request run on the event loop (``service.store.Store.on_loop``) reached what could
    wait or work long there (a lock another thread or process holds, a write where only a
    read was expected, a replay): it starts again in the thread pool, having changed
    nothing."""


#: ``mode`` while a request runs on the event loop's thread (``Store.on_loop``): READ_ON_LOOP
#: (any write would block: raise) or WRITE_ON_LOOP (writes go ahead only if their locks are
#: free now); 0 (unset) in the thread pool
LOOP = threading.local()
READ_ON_LOOP, WRITE_ON_LOOP = 1, 2


def loop_mode() -> int:
    return int(getattr(LOOP, "mode", 0))


def loop_guard() -> None:
    """Raise :class:`WouldBlock` where a read runs on the event loop (a write there may wait
    for the lock)."""
    if loop_mode() == READ_ON_LOOP:
        raise WouldBlock


# Per connection: the file mapped (virtual, shared) and the page cache in KiB.
SQLITE_MMAP_BYTES = 1 << 30
SQLITE_CACHE_KIB = 16 * 1024


def _sqlite_engine(url: str, immediate: bool) -> Engine:
    eng = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_MS / 1000},
        poolclass=QueuePool,
        pool_size=8,
        max_overflow=16,
    )

    @event.listens_for(eng, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy (not the driver) emit BEGIN, so we choose DEFERRED or IMMEDIATE.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cur.execute("PRAGMA synchronous=NORMAL")
        # A big log (1M entries is about 1 GB) outgrows SQLite's default 2 MB page cache, and
        # reads of old tiles and entry bundles then go to the file each time: map the file
        # (reads are then page-cache hits shared by every connection) and keep a larger cache.
        cur.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
        cur.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
        cur.close()

    begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    def _do_begin(dbapi_conn: Any) -> None:
        if not (immediate and loop_mode()):
            dbapi_conn.execute(begin)
            return
        # on the event loop: the write lock now or not at all (another process holds it:
        # the request goes to the thread pool, which waits for it)
        dbapi_conn.execute("PRAGMA busy_timeout=0")
        try:
            dbapi_conn.execute(begin)
        except sqlite3.OperationalError as exc:
            raise WouldBlock from exc
        finally:
            dbapi_conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")

    # BEGIN as the dialect's own step (``Dialect.do_begin``, which SQLAlchemy calls for every
    # transaction and whose driver errors it wraps as for any statement), not a "begin" event
    # listener running it as a statement: an engine with a Connection event listener
    # dispatches four events around every statement it executes, which cost about a third of
    # a write transaction's time in SQLAlchemy.
    eng.dialect.do_begin = _do_begin  # type: ignore[method-assign,assignment]
    return eng


class Database:
    """Read and write sessions over one database URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            db = parsed.database
            if db and db != ":memory:":
                Path(db).parent.mkdir(parents=True, exist_ok=True)
                # a new file readable by its owner only (0600, like the key files): SQLite
                # gives its -wal and -shm files the database file's mode
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self._read = _sqlite_engine(url, immediate=False)
            self._write = _sqlite_engine(url, immediate=True)
            self._read_rows = self._read
            # SQLite has one writer at a time: this process's write transactions queue here
            # instead of in SQLite's busy handler, which sleeps and retries (1, 2, 5, … ms)
            # while the lock is held — wasted wake-ups and latency under load. Other
            # processes still meet the busy timeout. Re-entrant: a thread that nests write
            # transactions fails in SQLite as it did before, not here.
            self._gate_lock: threading.RLock | None = threading.RLock()
            self._write_gate: AbstractContextManager[object] = self._gate_lock
        else:
            # ORM read sessions (``read()``: the log, sweeps) see one snapshot; writes lock
            # rows.
            self._read = create_engine(
                url,
                pool_pre_ping=True,
                pool_size=5,
                max_overflow=10,
                isolation_level="REPEATABLE READ",
            )
            self._write = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)
            # The match hot path's reads (``connect(write=False)``): no transaction, so no
            # BEGIN and ROLLBACK round trips. Each statement is its own snapshot; the match
            # store keeps them consistent (the row and its new events come in one
            # statement; events are append-only and read only below the row's next_seq).
            self._read_rows = create_engine(
                url, pool_pre_ping=True, pool_size=5, max_overflow=10, isolation_level="AUTOCOMMIT"
            )
            self._gate_lock = None
            self._write_gate = nullcontext()  # row locks order writers

    @property
    def write_engine(self) -> Engine:
        return self._write

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session (closed, never committed, at the end)."""
        with Session(self._read, expire_on_commit=False) as s:
            yield s

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed when the block succeeds, rolled back otherwise."""
        if loop_mode():
            raise WouldBlock  # an ORM write on the event loop: not on the hot path
        with self._write_gate, Session(self._write, expire_on_commit=False) as s:
            try:
                yield s
                s.commit()
            except BaseException:
                s.rollback()
                raise

    def insert_once(self, row: Any) -> bool:
        """Insert ``row`` in a transaction of its own; False when its key is taken (another
        process stored it first: the first one wins). The row keeps its values after."""
        try:
            with self.write() as s:
                s.add(row)
        except IntegrityError:
            return False
        return True

    @contextmanager
    def connect(self, *, write: bool) -> Iterator[Connection]:
        """A Core connection (the hot path: no ORM session). A write is one transaction,
        committed when the block succeeds. A read is a transaction on SQLite (rolled back at
        the end) and, on PostgreSQL, autocommit statements (see ``_read_rows``)."""
        if write:
            loop_guard()
            gate = self._gate_lock
            if loop_mode() and gate is not None:
                if not gate.acquire(blocking=False):  # another thread writes: not here
                    raise WouldBlock
                try:
                    with self._write.connect() as conn, conn.begin():
                        yield conn
                finally:
                    gate.release()
                return
            with self._write_gate, self._write.connect() as conn, conn.begin():
                yield conn
            return
        with self._read_rows.connect() as conn:
            conn.begin()
            yield conn

    def lock_table(self, session: Session, table: str) -> None:
        """Serialize appends to ``table`` across processes (SQLite's BEGIN IMMEDIATE already does)."""
        if self.dialect == "postgresql":
            session.execute(text(f'LOCK TABLE "{table}" IN SHARE ROW EXCLUSIVE MODE'))

    def dispose(self) -> None:
        self._read.dispose()
        if self._write is not self._read:
            self._write.dispose()
        if self._read_rows is not self._read:
            self._read_rows.dispose()
