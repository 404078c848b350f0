"""service/kinds.py: the StrEnums are their old strings, on the wire and in the database."""

from __future__ import annotations

import json
import sqlite3
from enum import StrEnum
from pathlib import Path

import pytest

from fairness import SecretBox, Signer, canonical_json
from service import kinds, migrate
from service.db import Database
from service.matches import NOT_LOCKED, MatchService
from service.settings import Settings
from service.store import FINISHED, KIND_MATCH, KIND_RNG, PLAYING, SEATING
from tests.support import commit_all, reveal_all
from tests.support.http_play import GAMES, short_ruleset

ENUMS: list[type[StrEnum]] = [getattr(kinds, name) for name in kinds.__all__]
WIRE = {
    "Kind": {"match", "rng"},
    "Status": {"seating", "playing", "finished"},
    "EndReason": {"resigned", "abandoned", "not_locked", "no_reveal", "timeout", "expired"},
    "EventType": {"chance", "action", "end"},
    "RecordType": {"commitment", "commit", "lock", "reveal", "receipt", "tree_head"},
    "SeedSource": {"player", "server"},
}


def SEED(seat: int) -> str:
    return f"seed-{seat}"


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.__name__)
def test_members_are_their_strings_in_every_encoding(enum: type[StrEnum]) -> None:
    assert {m.value for m in enum} == WIRE[enum.__name__]
    for m in enum:
        plain = str(m.value)
        assert type(plain) is str and m == plain and hash(m) == hash(plain)
        assert str(m) == f"{m}" == plain
        assert json.dumps({m: m}) == json.dumps({plain: plain})
        assert canonical_json({"k": m}) == canonical_json({"k": plain})


def test_the_old_constants_are_the_members() -> None:
    assert (SEATING, PLAYING, FINISHED) == tuple(kinds.Status)
    assert (KIND_MATCH, KIND_RNG) == tuple(kinds.Kind)
    assert json.dumps(NOT_LOCKED) == (
        '{"status": "finished", "reason": "not_locked", "forfeited": [], "winners": []}'
    )


@pytest.mark.skipif("hokm" not in GAMES, reason="needs the hokm engine")
def test_rows_written_with_members_hold_plain_text(tmp_path: Path) -> None:
    """A match played and resigned through the service: the database holds the same text
    the old string literals wrote (read with the plain sqlite3 driver)."""
    path = tmp_path / "q.db"
    db = Database(f"sqlite:///{path}")
    migrate.upgrade(db)
    svc = MatchService(
        db,
        Settings(database_url=f"sqlite:///{path}", data_dir=tmp_path),
        Signer.generate(),
        SecretBox(bytes(range(32))),
    )
    created = svc.create_match("hokm", ruleset=short_ruleset("hokm"), names=None)
    mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
    nonces = commit_all(svc, mid, tokens, SEED)
    reveal_all(svc, mid, tokens, nonces, SEED)
    svc.resign(mid, token=tokens[1])
    db.dispose()
    with sqlite3.connect(path) as raw:
        row = raw.execute(
            "SELECT kind, typeof(kind), status, typeof(status), result FROM matches WHERE id = ?",
            (mid,),
        ).fetchone()
        assert row[:4] == ("match", "text", "finished", "text")
        assert json.loads(row[4])["reason"] == "resigned"
        seats = raw.execute(
            "SELECT DISTINCT seed_source, typeof(seed_source) FROM seats WHERE match_id = ?", (mid,)
        ).fetchall()
        assert seats == [("player", "text")]
        last = raw.execute(
            "SELECT body FROM events WHERE match_id = ? ORDER BY seq DESC LIMIT 1", (mid,)
        ).fetchone()[0]
        assert last.startswith('{"seq":') and '"type":"end","reason":"resigned"' in last
        records = [
            json.loads(r[0])["type"] for r in raw.execute("SELECT leaf FROM translog ORDER BY idx")
        ]
        assert records == ["lock", "reveal"]
