"""The anchors of ``make bench-api``: two bare FastAPI apps doing, per action, one read (GET
the state) and one durable write (POST the action: bump the version, append one event,
commit), each the way someone would write it *instead of* qahwa — so neither imports the
service (tests/repo/test_bench_api.py checks):

- :func:`create_raw_app`, **the floor**: raw DB-API, the driver and nothing else (``sqlite3``;
  ``psycopg`` on PostgreSQL), a small pool of connections, the statements written out;
- :func:`create_sqlmodel_app`, **the hand-written stack**: plain SQLModel sessions over
  ``create_engine``, ``session.get`` / ``session.add`` / ``session.commit``, what a FastAPI
  developer writes from SQLModel's tutorial.

On SQLite both set the pragmas the service sets on its connections (:data:`SQLITE_PRAGMAS`:
WAL, ``synchronous=NORMAL``, the busy timeout, mmap and cache); tests/repo/test_bench_api.py
checks they match ``service.db``'s. The write is durable as the service's: committed in WAL
before the answer.

Run: ``BARE_DATABASE_URL=sqlite:///x.db uvicorn --factory bench.bare_app:create_raw_app``
(or ``:create_sqlmodel_app``). Matches end after ``BARE_ACTIONS`` actions (default 60) so
clients start new ones as they would with a game.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

SQLITE_BUSY_MS = 10_000
#: the service's per-connection SQLite settings (service/db.py), stated again here
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    f"PRAGMA busy_timeout={SQLITE_BUSY_MS}",
    "PRAGMA synchronous=NORMAL",
    f"PRAGMA mmap_size={1 << 30}",
    f"PRAGMA cache_size=-{16 * 1024}",
)
DDL = (
    "CREATE TABLE IF NOT EXISTS bare_matches (id VARCHAR(64) PRIMARY KEY, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bare_events (match_id VARCHAR(64) NOT NULL, seq INTEGER NOT NULL, "
    "body TEXT NOT NULL, PRIMARY KEY (match_id, seq))",
)


class ActionIn(BaseModel):
    action: dict[str, Any]
    version: int


def _length() -> int:
    return int(os.environ.get("BARE_ACTIONS", "60"))


def _state(v: int, length: int) -> dict[str, Any]:
    return {
        "status": "playing" if v < length else "finished",
        "turn": 0,
        "seat": 0,
        "version": v,
        "legal_actions": [{"type": "go"}],
        "suggested_actions": [{"type": "go"}],
    }


def _acted(v: int, length: int) -> dict[str, Any]:
    return {
        "version": v,
        "status": "playing" if v < length else "finished",
        "state": {"turn": 0, "seat": 0, "version": v},
    }


def _event(version: int, action: dict[str, Any]) -> str:
    return json.dumps({"seq": version, "type": "action", "seat": 0, "action": action})


def _created(mid: str) -> dict[str, Any]:
    return {"match_id": mid, "seats": [{"seat": 0, "token": "t"}]}


# -- the floor: raw DB-API -----------------------------------------------------------------


class _Pool:
    """Connections made on demand and kept (as many as threads used them at once)."""

    def __init__(self, connect: Any) -> None:
        self._connect = connect
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()

    @contextmanager
    def conn(self) -> Iterator[Any]:
        try:
            c = self._idle.get_nowait()
        except queue.Empty:
            c = self._connect()
        try:
            yield c
        finally:
            self._idle.put(c)


def _sqlite_path(url: str) -> str:
    path = url.split(":///", 1)[1]
    if not path:
        raise ValueError(f"BARE_DATABASE_URL {url!r}: a SQLite URL names a file")
    return path


def _raw_sqlite() -> tuple[_Pool, str, Any]:
    path = _sqlite_path(os.environ["BARE_DATABASE_URL"])

    def connect() -> sqlite3.Connection:
        c = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        for p in SQLITE_PRAGMAS:
            c.execute(p)
        return c

    @contextmanager
    def write(c: sqlite3.Connection) -> Iterator[sqlite3.Cursor]:
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c.cursor()
        except BaseException:
            c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")

    return _Pool(connect), "?", write


def _raw_pg() -> tuple[_Pool, str, Any]:
    import psycopg

    url = os.environ["BARE_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://", 1)

    def connect() -> Any:
        return psycopg.connect(url, autocommit=True)

    @contextmanager
    def write(c: Any) -> Iterator[Any]:
        with c.transaction(), c.cursor() as cur:
            yield cur

    return _Pool(connect), "%s", write


def create_raw_app() -> FastAPI:
    """The floor: the driver's own connections and statements, nothing between."""
    url = os.environ["BARE_DATABASE_URL"]
    pool, p, write = _raw_pg() if url.startswith("postgresql") else _raw_sqlite()
    length = _length()
    with pool.conn() as c, write(c) as cur:
        for ddl in DDL:
            cur.execute(ddl)
    app = FastAPI()

    @app.post("/v1/matches", status_code=201)
    def create() -> dict[str, Any]:
        mid = "b_" + secrets.token_hex(10)
        with pool.conn() as c, write(c) as cur:
            cur.execute(f"INSERT INTO bare_matches (id, version) VALUES ({p}, 0)", (mid,))
        return _created(mid)

    @app.get("/v1/matches/{mid}/state")
    def state(mid: str) -> dict[str, Any]:
        with pool.conn() as c:
            row = c.execute(f"SELECT version FROM bare_matches WHERE id = {p}", (mid,)).fetchone()
        if row is None:
            raise HTTPException(404)
        return _state(row[0], length)

    @app.post("/v1/matches/{mid}/actions")
    def act(mid: str, body: ActionIn) -> dict[str, Any]:
        with pool.conn() as c, write(c) as cur:
            cur.execute(
                f"UPDATE bare_matches SET version = version + 1 WHERE id = {p} AND version = {p}",
                (mid, body.version),
            )
            if cur.rowcount != 1:
                raise HTTPException(409)
            cur.execute(
                f"INSERT INTO bare_events (match_id, seq, body) VALUES ({p}, {p}, {p})",
                (mid, body.version, _event(body.version, body.action)),
            )
        return _acted(body.version + 1, length)

    return app


# -- the hand-written stack: plain SQLModel sessions ---------------------------------------


@functools.cache
def _sqlmodel_tables() -> tuple[Any, Any, Any]:
    """The two table models (on a registry of their own: the service's metadata never sees
    them), made once per process."""
    from sqlalchemy.orm import registry
    from sqlmodel import Field, SQLModel

    class Base(SQLModel, registry=registry()):
        pass

    class BareMatch(Base, table=True):
        __tablename__ = "bare_matches"
        id: str = Field(primary_key=True, max_length=64)
        version: int

    class BareEvent(Base, table=True):
        __tablename__ = "bare_events"
        match_id: str = Field(primary_key=True, max_length=64)
        seq: int = Field(primary_key=True)
        body: str

    return Base.metadata, BareMatch, BareEvent


def create_sqlmodel_app() -> FastAPI:
    """SQLModel as its tutorial has it: table models, ``Session(engine)``, ``get``, ``add``,
    ``commit``; on SQLite the pragmas set on connect (SQLAlchemy's documented listener)."""
    from sqlalchemy import event
    from sqlmodel import Session, create_engine

    metadata, BareMatch, BareEvent = _sqlmodel_tables()
    url = os.environ["BARE_DATABASE_URL"]
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            for pragma in SQLITE_PRAGMAS:
                cur.execute(pragma)
            cur.close()

    else:
        engine = create_engine(url)
    metadata.create_all(engine)
    length = _length()
    app = FastAPI()

    @app.post("/v1/matches", status_code=201)
    def create() -> dict[str, Any]:
        mid = "b_" + secrets.token_hex(10)
        with Session(engine) as s:
            s.add(BareMatch(id=mid, version=0))
            s.commit()
        return _created(mid)

    @app.get("/v1/matches/{mid}/state")
    def state(mid: str) -> dict[str, Any]:
        with Session(engine) as s:
            m = s.get(BareMatch, mid)
            if m is None:
                raise HTTPException(404)
            return _state(m.version, length)

    @app.post("/v1/matches/{mid}/actions")
    def act(mid: str, body: ActionIn) -> dict[str, Any]:
        with Session(engine) as s:
            m = s.get(BareMatch, mid, with_for_update=True)
            if m is None:
                raise HTTPException(404)
            if m.version != body.version:
                raise HTTPException(409)
            m.version += 1
            s.add(BareEvent(match_id=mid, seq=body.version, body=_event(body.version, body.action)))
            s.commit()
        return _acted(body.version + 1, length)

    return app
