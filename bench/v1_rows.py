"""qahwa-fair/1 matches as the service made them before qahwa-fair/2 (schema 0002 rows:
the commitment record logged at creation, the seed sealed, the seats waiting for seeds;
with ``client_seeds``, also seeded, started and played as v1's service did).

The service makes no v1 match and writes no v1 row any more (migration 0008 ends the
unfinished ones); it serves the v1 rows it has, and ``verify`` verifies them. The tests of
that need such rows, so they write them into the database directly, exactly as the v1
service did.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import inspect, text
from sqlmodel import Session

import tlog
from fairness import (
    PROTOCOL,
    SecretBox,
    Signer,
    canonical_json,
    canonical_ruleset,
    commitment,
    match_key,
    new_server_seed,
)
from games import Chance, find_engine
from service import translog
from service.clock import now_iso
from service.db import Database
from service.store import hash_token

_MATCH = text(
    "INSERT INTO matches (id, kind, game, ruleset, commitment, status, version, n_seats, "
    "next_seq, log_index, record, result, created_at, started_at, ended_at, last_activity) "
    "VALUES (:id, :kind, :game, :ruleset, :com, 'seating', 0, :n, 0, :idx, :record, NULL, "
    ":at, NULL, NULL, :t)"
)
_ENTRY_0002 = text(
    "INSERT INTO translog (idx, match_id, leaf, leaf_hash, created_at) "
    "VALUES (:idx, :m, :leaf, :h, :at)"
)
_NODE_0002 = text("INSERT INTO translog_nodes (level, idx, hash) VALUES (:lv, :idx, :h)")
_SEED = text("INSERT INTO server_seeds (match_id, sealed) VALUES (:m, :s)")
_SEAT = text("INSERT INTO seats (match_id, seat, name, token_hash) VALUES (:m, :i, :name, :h)")
_SEEDED = text(
    "UPDATE seats SET client_seed = :cs, seed_source = 'player' WHERE match_id = :m AND seat = :i"
)
_EVENT = text("INSERT INTO events (match_id, seq, body, created_at) VALUES (:m, :seq, :body, :at)")
_STARTED = text(
    "UPDATE matches SET status = :status, version = 1, next_seq = :n, result = :result, "
    "started_at = :at, ended_at = :ended WHERE id = :m"
)


def insert_v1_match(
    db: Database,
    signer: Signer,
    box: SecretBox,
    game: str,
    raw: dict[str, Any],
    *,
    client_seeds: list[str] | None = None,
    actions: int | None = None,
    bots: int = 0,
) -> tuple[str, list[str]]:
    """Write one v1 match waiting for its seeds (``game`` "rng": a plain session); returns
    its id and seat tokens. Works on the 0002 schema and on later ones (the columns 0003
    adds default to v1; from 0007 the entry goes to the active log).

    ``client_seeds`` (one per seat): the seats gave them and the match started, then random
    legal bots (``random.Random(bots)``) played ``actions`` actions (None: to its end, the
    match finished)."""
    cls = find_engine(game, protocol=PROTOCOL)
    parsed = cls.parse_ruleset(raw, protocol=PROTOCOL)
    ruleset, n = canonical_ruleset(parsed), cls.seat_count(parsed)
    kind = "rng" if game == "rng" else "match"
    mid = ("r_" if kind == "rng" else "m_") + secrets.token_hex(10)
    seed = new_server_seed()
    at = now_iso()
    tokens = [secrets.token_urlsafe(32) for _ in range(n)]
    with db.write() as s:
        sharded = _sharded(s)
        db.lock_table(s, "translog")  # a v1 commitment names its own index
        idx = translog.size(s, log=translog.active_log(s)) if sharded else _next_index_0002(s)
        record = signer.signed(
            {
                "type": "commitment",
                "protocol": PROTOCOL,
                "match_id": mid,
                "game": game,
                "ruleset": ruleset,
                "commitment": commitment(seed),
                "created_at": at,
                "log_index": idx,
            }
        )
        if sharded:
            assert translog.add(db, s, record, match_id=mid, at=at) == idx
        else:
            _append_0002(s, idx, mid, record, at)
        s.execute(
            _MATCH,
            {
                "id": mid,
                "kind": kind,
                "game": game,
                "ruleset": ruleset,
                "com": commitment(seed),
                "n": n,
                "idx": idx,
                "record": json.dumps(record),
                "at": at,
                "t": time.time(),
            },
        )
        s.execute(_SEED, {"m": mid, "s": box.seal(seed, aad=mid)})
        s.execute(
            _SEAT,
            [
                {
                    "m": mid,
                    "i": i,
                    "h": hash_token(tok),
                    "name": "session" if kind == "rng" else f"Seat {i}",
                }
                for i, tok in enumerate(tokens)
            ],
        )
    if client_seeds is not None:
        _play(db, mid, game, ruleset, seed, client_seeds, actions, random.Random(bots))
    return mid, tokens


# -- the log before migration 0007 (one log, no log_id) -----------------------------------------
def _sharded(s: Session) -> bool:
    """Whether the schema has log shards (migration 0007): ``translog.log_id``."""
    cols = inspect(s.connection()).get_columns("translog")
    return any(c["name"] == "log_id" for c in cols)


def _next_index_0002(s: Session) -> int:
    top = s.execute(text("SELECT MAX(idx) FROM translog")).scalar()
    return 0 if top is None else int(top) + 1


class _Nodes0002:
    """The stored tree of the 0002..0006 schema as a :class:`tlog.HashReader`."""

    def __init__(self, s: Session) -> None:
        self.s = s

    def read_hashes(self, indexes: Sequence[int]) -> list[bytes]:
        out = []
        for i in indexes:
            level, idx = tlog.split_stored_hash_index(i)
            h = self.s.execute(
                text("SELECT hash FROM translog_nodes WHERE level = :lv AND idx = :idx"),
                {"lv": level, "idx": idx},
            ).scalar_one()
            out.append(bytes.fromhex(h))
        return out


def _append_0002(s: Session, idx: int, mid: str, record: dict[str, Any], at: str) -> None:
    leaf = canonical_json(record)
    h = tlog.leaf_hash(leaf)
    s.execute(_ENTRY_0002, {"idx": idx, "m": mid, "leaf": leaf.decode(), "h": h.hex(), "at": at})
    hashes = tlog.stored_hashes(idx, h, _Nodes0002(s))
    s.execute(
        _NODE_0002,
        [{"lv": lv, "idx": idx >> lv, "h": x.hex()} for lv, x in enumerate(hashes)],
    )


def _play(
    db: Database,
    mid: str,
    game: str,
    ruleset: str,
    seed: bytes,
    client_seeds: list[str],
    actions: int | None,
    bots: random.Random,
) -> None:
    """Start the match with ``client_seeds`` and play it as v1's service stored it."""
    cls = find_engine(game, protocol=PROTOCOL)
    chance = Chance(match_key(seed, mid, game, ruleset, client_seeds))
    engine = cls(cls.parse_ruleset(json.loads(ruleset), protocol=PROTOCOL), chance)
    events: list[dict[str, Any]] = list(chance.take_events())
    played = 0
    while engine.outcome is None and (actions is None or played < actions):
        seat = engine.turn
        assert seat is not None
        events += engine.apply(seat, bots.choice(engine.bot_actions(seat)))
        played += 1
    at = now_iso()
    result = json.dumps(engine.outcome.to_json()) if engine.outcome is not None else None
    with db.write() as s:
        for i, cs in enumerate(client_seeds):
            s.execute(_SEEDED, {"m": mid, "i": i, "cs": cs})
        s.execute(
            _EVENT,
            [
                {"m": mid, "seq": i, "body": json.dumps({"seq": i, **ev}), "at": at}
                for i, ev in enumerate(events)
            ],
        )
        s.execute(
            _STARTED,
            {
                "m": mid,
                "status": "playing" if result is None else "finished",
                "n": len(events),
                "result": result,
                "at": at,
                "ended": None if result is None else at,
            },
        )
