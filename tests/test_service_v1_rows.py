"""qahwa-fair/1 matches already in a database when it is migrated to 0003 keep working:
seeded with /seed (and /start), played, ended, served and verified as v1; the v2 paths
answer 404 for them."""

from __future__ import annotations

import base64
import json
import random
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
from alembic import command
from http_play import auth, ok
from live_server import LiveServer
from sqlalchemy import text

from fairness import PROTOCOL, SecretBox, Signer, canonical_ruleset, commitment, new_server_seed
from games import engine_class
from service import migrate, translog
from service.db import Database
from service.settings import Settings
from service.store import hash_token, now_iso
from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys


def _v1_match(db: Database, signer: Signer, box: SecretBox, game: str,
              raw: dict[str, Any]) -> tuple[str, list[str]]:
    """A match as qahwa-fair/1's service made it (schema 0002): its commitment record in
    the log, its seed sealed, its seats waiting for seeds."""
    cls = engine_class(game)
    ruleset = canonical_ruleset(cls.parse_ruleset(raw, protocol=PROTOCOL))
    n = cls.seat_count(cls.parse_ruleset(raw, protocol=PROTOCOL))
    mid = "m_" + secrets.token_hex(10)
    seed = new_server_seed()
    at = now_iso()
    tokens = [secrets.token_urlsafe(32) for _ in range(n)]
    with db.write() as s:
        idx = translog.next_index(db, s)
        record = signer.signed({"type": "commitment", "protocol": PROTOCOL, "match_id": mid,
                                "game": game, "ruleset": ruleset,
                                "commitment": commitment(seed), "created_at": at,
                                "log_index": idx})
        translog.append(s, idx, mid, record, at, signer)
        s.execute(text(
            "INSERT INTO matches (id, kind, game, ruleset, commitment, status, version, "
            "n_seats, next_seq, log_index, record, result, created_at, started_at, ended_at, "
            "last_activity) VALUES (:id, 'match', :game, :ruleset, :com, 'seating', 0, :n, 0, "
            ":idx, :record, NULL, :at, NULL, NULL, :t)"),
            {"id": mid, "game": game, "ruleset": ruleset, "com": commitment(seed), "n": n,
             "idx": idx, "record": json.dumps(record), "at": at,
             "t": time.time()})
        s.execute(text("INSERT INTO server_seeds (match_id, sealed) VALUES (:m, :s)"),
                  {"m": mid, "s": box.seal(seed, aad=mid)})
        for i, tok in enumerate(tokens):
            s.execute(text("INSERT INTO seats (match_id, seat, name, token_hash) "
                           "VALUES (:m, :i, :name, :h)"),
                      {"m": mid, "i": i, "name": f"Seat {i}", "h": hash_token(tok)})
    return mid, tokens


def test_v1_rows_survive_the_migration_and_are_served(tmp_path: Path) -> None:
    signer = Signer.generate()
    master = secrets.token_bytes(32)
    url = f"sqlite:///{tmp_path / 'q.db'}"
    db = Database(url)
    cfg = migrate.alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.commit()
    box = SecretBox(master)
    mid, tokens = _v1_match(db, signer, box, "hokm", {"target": 1})
    db.dispose()
    settings = Settings(database_url=url, data_dir=tmp_path,
                        master_key=base64.b64encode(master).decode(),
                        signing_key=signer.private_b64())
    with LiveServer(settings) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        public = ok(c.get(f"/v1/matches/{mid}"))
        assert public["protocol"] == PROTOCOL and public["status"] == "seating"
        assert public["record"]["type"] == "commitment"
        # the v2 paths are not this match's
        for path in ("seats/0/commit", "seats/0/reveal"):
            r = c.post(f"/v1/matches/{mid}/{path}", headers=auth(tokens[0]),
                       json={"seed_commitment": "ab" * 32} if "commit" in path else
                       {"client_seed": "x", "nonce": "ab" * 32})
            assert r.status_code == 404, r.text
        assert c.get(f"/v1/matches/{mid}/lock").status_code == 404
        # v1's flow: a seed from seat 0, then /start draws the rest (v1 only)
        ok(c.post(f"/v1/matches/{mid}/seats/0/seed", json={"client_seed": "old seed"},
                  headers=auth(tokens[0])))
        assert ok(c.post(f"/v1/matches/{mid}/start", headers=auth(tokens[1])))["status"] \
            == "playing"
        rnd = random.Random(9)
        for _ in range(3000):
            view = ok(c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[0])))
            if view["status"] != "playing":
                break
            seat = view["turn"]
            view = ok(c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[seat])))
            # a v1 match takes no signature
            action = rnd.choice(view["suggested_actions"])
            r = c.post(f"/v1/matches/{mid}/actions", headers=auth(tokens[seat]),
                       json={"action": action, "version": view["version"], "sig": "AAAA"})
            assert r.status_code == 422 and r.json()["error"]["code"] == "bad_signature"
            assert "receipt" not in ok(c.post(
                f"/v1/matches/{mid}/actions", headers=auth(tokens[seat]),
                json={"action": action, "version": view["version"]}))
        doc = ok(c.get(f"/v1/matches/{mid}/transcript"))
        assert doc["protocol"] == PROTOCOL and doc["log_index"] == public["log_index"]
        assert doc["seats"][0]["client_seed"] == "old seed"
        assert doc["seats"][1]["seed_source"] == "server"
        keys = parse_keys(c.get("/v1/keys").text, source="server", origin="test server")
        rep = verify_document(doc, keys)
        assert rep["status"] == VERIFIED, rep["checks"]
        # a new match on the same database is v2
        assert ok(c.post("/v1/matches", json={"game": "hokm"}), 201)["protocol"] == \
            "qahwa-fair/2"
