"""Database tables (SQLModel). The schema itself is created by the Alembic migrations.

- ``matches``: one row per match or rng session, with the optimistic ``version``.
- ``seats``: names, client seeds and the SHA-256 of each seat token (never the token).
- ``server_seeds``: each match's server seed sealed with ``fairness.SecretBox``.
- ``events``: the append-only event log (the transcript's events, JSON).
- ``translog``: the append-only transparency log of commitment records.
- ``signing_keys``: every public key the server has signed with (or will: a staged key).
- ``log_identity``: the transparency log's origin and note key, shared by every process.
- ``service_heartbeat``: when the service last swept (turn deadlines that passed while
  nothing was serving are extended, fairness-v2.md §7).

qahwa-fair/2 columns (migration 0003) are null or false on the v1 rows made before it.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Index, String, Text, false
from sqlmodel import Field, SQLModel


class Match(SQLModel, table=True):
    __tablename__ = "matches"

    id: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=16)  # "match" or "rng"
    game: str = Field(max_length=32)
    ruleset: str = Field(sa_column=Column(Text, nullable=False))
    commitment: str = Field(max_length=64)
    status: str = Field(max_length=16, index=True)  # seating, playing, finished
    version: int = 0
    n_seats: int
    next_seq: int = 0
    log_index: int
    record: str = Field(sa_column=Column(Text, nullable=False))  # the signed commitment record
    result: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: str = Field(max_length=40)
    started_at: str | None = Field(default=None, max_length=40)
    ended_at: str | None = Field(default=None, max_length=40)
    last_activity: float = Field(index=True)
    protocol: str = Field(default="qahwa-fair/1", max_length=16)
    lock: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    lock_index: int | None = None
    reveal_by: float | None = None  # epoch seconds (the lock has the RFC 3339 time)
    end_by: float | None = None
    chain: str | None = Field(default=None, max_length=64)  # the head (hex)
    deadline: float | None = Field(default=None, index=True)  # seat ``owes`` acts by then
    owes: int | None = None
    transcript_sig: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class Seat(SQLModel, table=True):
    __tablename__ = "seats"

    match_id: str = Field(sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True))
    seat: int = Field(primary_key=True)
    name: str = Field(max_length=64)
    token_hash: str = Field(max_length=64, unique=True)
    client_seed: str | None = Field(default=None, max_length=600)
    seed_source: str | None = Field(default=None, max_length=8)
    house: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    seed_commitment: str | None = Field(default=None, max_length=64)
    nonce: str | None = Field(default=None, max_length=64)
    key: str | None = Field(default=None, max_length=64)
    roll_chain: str | None = Field(default=None, max_length=64)
    revealed: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )


class ServerSeed(SQLModel, table=True):
    __tablename__ = "server_seeds"

    match_id: str = Field(sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True))
    sealed: str = Field(sa_column=Column(Text, nullable=False))


class EventRow(SQLModel, table=True):
    __tablename__ = "events"

    match_id: str = Field(sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True))
    seq: int = Field(primary_key=True)
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: str = Field(max_length=40)
    chain: str | None = Field(default=None, max_length=64)  # the head after this event


class LogEntry(SQLModel, table=True):
    __tablename__ = "translog"

    #: the log it belongs to (``log_identity.id``): each log counts from index 0
    log_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    idx: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    match_id: str = Field(max_length=64)
    leaf: str = Field(sa_column=Column(Text, nullable=False))  # canonical JSON of the record
    leaf_hash: str = Field(max_length=64)
    created_at: str = Field(max_length=40)


class SigningKey(SQLModel, table=True):
    __tablename__ = "signing_keys"

    key_id: str = Field(primary_key=True, max_length=32)
    alg: str = Field(max_length=16)
    public_key: str = Field(max_length=64)
    created_at: str = Field(max_length=40)
    retired_at: str | None = Field(default=None, max_length=40)  # set by `qahwa keys rotate`
    #: when it signs from (null: from ``created_at``); later than now: staged, "next"
    activates_at: str | None = Field(default=None, max_length=40)
    #: the private key sealed under the master key (aad ``signing-key <key_id>``), so that
    #: every process of the deployment can switch to it without a restart
    sealed: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class LogIdentity(SQLModel, table=True):
    """The deployment's transparency log: its origin and note key (one row per log; the
    newest is the one appended to, the older ones are frozen and served read-only). Every
    process on the database signs checkpoints with this key under this origin, whatever
    host it runs on. ``id`` is the ``log_id`` of its entries, nodes and heads."""

    __tablename__ = "log_identity"

    id: int | None = Field(default=None, primary_key=True)
    origin: str = Field(max_length=255, unique=True)
    vkey: str = Field(sa_column=Column(Text, nullable=False))
    sealed: str = Field(sa_column=Column(Text, nullable=False))  # the note key's seed
    created_at: str = Field(max_length=40)


class Heartbeat(SQLModel, table=True):
    __tablename__ = "service_heartbeat"

    id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    at: float


Index("ix_translog_match", LogEntry.__table__.c.match_id)  # type: ignore[attr-defined]
