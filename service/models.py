"""Database tables (SQLModel). The schema itself is created by the Alembic migrations.

- ``matches``: one row per match or rng session, with the optimistic ``version``.
- ``seats``: names, client seeds and the SHA-256 of each seat token (never the token).
- ``server_seeds``: each match's server seed sealed with ``fairness.SecretBox``.
- ``events``: the append-only event log (the transcript's events, JSON).
- ``translog``: the append-only transparency log of commitment records.
- ``signing_keys``: every public key the server has signed with.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, String, Text
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


class Seat(SQLModel, table=True):
    __tablename__ = "seats"

    match_id: str = Field(
        sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True)
    )
    seat: int = Field(primary_key=True)
    name: str = Field(max_length=64)
    token_hash: str = Field(max_length=64, unique=True)
    client_seed: str | None = Field(default=None, max_length=600)
    seed_source: str | None = Field(default=None, max_length=8)


class ServerSeed(SQLModel, table=True):
    __tablename__ = "server_seeds"

    match_id: str = Field(
        sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True)
    )
    sealed: str = Field(sa_column=Column(Text, nullable=False))


class EventRow(SQLModel, table=True):
    __tablename__ = "events"

    match_id: str = Field(
        sa_column=Column(String(64), ForeignKey("matches.id"), primary_key=True)
    )
    seq: int = Field(primary_key=True)
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: str = Field(max_length=40)


class LogEntry(SQLModel, table=True):
    __tablename__ = "translog"

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


Index("ix_translog_match", LogEntry.__table__.c.match_id)  # type: ignore[attr-defined]
