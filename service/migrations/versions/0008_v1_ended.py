"""end every unfinished qahwa-fair/1 match: v1 is read-only from here on

The service writes no qahwa-fair/1 match again (no v1 seeding, start, action or deadline:
docs/api.md); ``verify`` keeps verifying v1 transcripts forever. A v1 match (or plain
session) still seating or playing ends here exactly as the v1 service ended an idle one
(``abandoned``): a seat without a client seed gets one drawn by the server (marked
``seed_source: server``), the deal is drawn if it had not started, then the engine's own
``{"type": "end", "reason": "abandoned"}`` event is appended and the outcome stored. A v1
transcript is signed when served, so its ``verify`` passes like any other.

The seeds are sealed under the master key: ``service.migrate.upgrade(db, master_key=...)``
passes a function that gives it. A database with no unfinished v1 match needs none.
"""

import json
import time
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision = "0008"
down_revision = "0007"

V1 = "qahwa-fair/1"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT id, game, ruleset, status, next_seq, version FROM matches "
            "WHERE protocol = :v1 AND status IN ('seating', 'playing') ORDER BY id"
        ),
        {"v1": V1},
    ).all()
    if not rows:
        return
    get_key = context.config.attributes.get("master_key") if context.config else None
    if get_key is None:
        raise RuntimeError(
            f"migration 0008 ends {len(rows)} unfinished qahwa-fair/1 match(es) and needs the "
            "master key to open their seeds: run it through the service "
            "(service.migrate.upgrade(db, master_key=...), as `qahwa serve` does)"
        )
    master = get_key()
    for row in rows:
        _end(conn, master, row)


def _end(conn: sa.Connection, master: bytes, row: Any) -> None:
    from fairness import V1 as PROTOCOL_V1
    from fairness import SecretBox, new_client_seed
    from games import Chance, find_engine
    from games.replay import replay

    mid, game, ruleset, status, next_seq, version = row
    sealed = conn.execute(
        sa.text("SELECT sealed FROM server_seeds WHERE match_id = :m"), {"m": mid}
    ).scalar_one()
    seed = SecretBox(master).open(sealed, aad=mid)
    seats = conn.execute(
        sa.text("SELECT seat, client_seed FROM seats WHERE match_id = :m ORDER BY seat"),
        {"m": mid},
    ).all()
    client_seeds = []
    for seat, client_seed in seats:
        if client_seed is None:  # as v1's start did: the server draws it, and says so
            client_seed = new_client_seed()
            conn.execute(
                sa.text(
                    "UPDATE seats SET client_seed = :cs, seed_source = 'server' "
                    "WHERE match_id = :m AND seat = :s"
                ),
                {"cs": client_seed, "m": mid, "s": seat},
            )
        client_seeds.append(client_seed)
    key = PROTOCOL_V1.match_key(seed, mid, game, ruleset, client_seeds)
    cls = find_engine(game, protocol=PROTOCOL_V1)
    now = _now_iso()
    started: str | None = None
    if status == "seating":
        chance = Chance(key)
        engine = cls(cls.parse_ruleset(json.loads(ruleset), protocol=PROTOCOL_V1), chance)
        new = list(chance.take_events())
        started = now
    else:
        bodies = conn.execute(
            sa.text("SELECT body FROM events WHERE match_id = :m ORDER BY seq"), {"m": mid}
        ).scalars()
        engine = replay(cls, ruleset, key, [json.loads(b) for b in bodies], protocol=PROTOCOL_V1)
        new = []
    if engine.outcome is None:
        new += engine.end_match("abandoned", [])
    assert engine.outcome is not None
    for i, ev in enumerate(new):
        conn.execute(
            sa.text(
                "INSERT INTO events (match_id, seq, body, created_at) "
                "VALUES (:m, :seq, :body, :at)"
            ),
            {"m": mid, "seq": next_seq + i, "body": _dumps({"seq": next_seq + i, **ev}), "at": now},
        )
    conn.execute(
        sa.text(
            "UPDATE matches SET status = 'finished', next_seq = :n, version = :v, "
            "result = :result, started_at = COALESCE(started_at, :started), ended_at = :at, "
            "last_activity = :t WHERE id = :m"
        ),
        {
            "m": mid,
            "n": next_seq + len(new),
            "v": version + 1,
            "result": _dumps(engine.outcome.to_json()),
            "started": started,
            "at": now,
            "t": time.time(),
        },
    )


def downgrade() -> None:
    # The ended matches stay ended: their end events are part of what was served.
    pass
