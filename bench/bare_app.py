"""The baseline of ``make bench-api``: a bare FastAPI app doing, per action, one read (GET
the state) and one durable write (POST the action: bump the version, append one event,
commit), on the same database settings as the service (:class:`service.db.Database`).

Run: ``BARE_DATABASE_URL=sqlite:///x.db uvicorn --factory bench.bare_app:create_app``.
Matches end after ``BARE_ACTIONS`` actions (default 60) so clients start new ones as they
would with a game.
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from sqlalchemy import Column, Integer, MetaData, String, Table, Text, insert, select, update

from service.db import Database

META = MetaData()
MATCHES = Table(
    "bare_matches",
    META,
    Column("id", String(64), primary_key=True),
    Column("version", Integer, nullable=False),
)
EVENTS = Table(
    "bare_events",
    META,
    Column("match_id", String(64), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("body", Text, nullable=False),
)


class ActionIn(BaseModel):
    action: dict[str, Any]
    version: int


def create_app() -> FastAPI:
    db = Database(os.environ["BARE_DATABASE_URL"])
    length = int(os.environ.get("BARE_ACTIONS", "60"))
    META.create_all(db.write_engine, checkfirst=True)
    app = FastAPI()

    @app.post("/v1/matches", status_code=201)
    def create() -> dict[str, Any]:
        mid = "b_" + secrets.token_hex(10)
        with db.write() as s:
            s.execute(insert(MATCHES).values(id=mid, version=0))
        return {"match_id": mid, "seats": [{"seat": 0, "token": "t"}]}

    @app.get("/v1/matches/{mid}/state")
    def state(mid: str) -> dict[str, Any]:
        with db.read() as s:
            v = s.execute(select(MATCHES.c.version).where(MATCHES.c.id == mid)).scalar()
        if v is None:
            raise HTTPException(404)
        return {
            "status": "playing" if v < length else "finished",
            "turn": 0,
            "seat": 0,
            "version": v,
            "legal_actions": [{"type": "go"}],
            "suggested_actions": [{"type": "go"}],
        }

    @app.post("/v1/matches/{mid}/actions")
    def act(mid: str, body: ActionIn) -> dict[str, Any]:
        with db.write() as s:
            res = s.execute(
                update(MATCHES)
                .where(MATCHES.c.id == mid, MATCHES.c.version == body.version)
                .values(version=MATCHES.c.version + 1)
            )
            n = res.rowcount  # type: ignore[attr-defined]
            if n != 1:
                raise HTTPException(409)
            s.execute(
                insert(EVENTS).values(
                    match_id=mid,
                    seq=body.version,
                    body=json.dumps(
                        {"seq": body.version, "type": "action", "seat": 0, "action": body.action}
                    ),
                )
            )
        v = body.version + 1
        return {
            "version": v,
            "status": "playing" if v < length else "finished",
            "state": {"turn": 0, "seat": 0, "version": v},
        }

    return app
