"""qahwa-fair/1 matches already in a database when it is migrated to 0003 keep working:
seeded with /seed (and /start), played, ended, served and verified as v1; the v2 paths
answer 404 for them."""

from __future__ import annotations

import base64
import random
import secrets
from pathlib import Path

import httpx
import pytest
from alembic import command
from http_play import auth, ok
from live_server import LiveServer

from fairness import PROTOCOL, SecretBox, Signer
from service import migrate
from service.db import Database
from service.settings import Settings
from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys

ROOT = Path(__file__).resolve().parent.parent


def test_v1_rows_survive_the_migration_and_are_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # bench/ is not an installed package
    from bench.v1_rows import insert_v1_match

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
    mid, tokens = insert_v1_match(db, signer, box, "hokm", {"target": 1})
    db.dispose()
    settings = Settings(
        database_url=url,
        data_dir=tmp_path,
        master_key=base64.b64encode(master).decode(),
        signing_key=signer.private_b64(),
    )
    with LiveServer(settings) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        public = ok(c.get(f"/v1/matches/{mid}"))
        assert public["protocol"] == PROTOCOL and public["status"] == "seating"
        assert public["record"]["type"] == "commitment"
        # the v2 paths are not this match's
        for path in ("seats/0/commit", "seats/0/reveal"):
            r = c.post(
                f"/v1/matches/{mid}/{path}",
                headers=auth(tokens[0]),
                json={"seed_commitment": "ab" * 32}
                if "commit" in path
                else {"client_seed": "x", "nonce": "ab" * 32},
            )
            assert r.status_code == 404, r.text
        assert c.get(f"/v1/matches/{mid}/lock").status_code == 404
        # v1's flow: a seed from seat 0, then /start draws the rest (v1 only)
        ok(
            c.post(
                f"/v1/matches/{mid}/seats/0/seed",
                json={"client_seed": "old seed"},
                headers=auth(tokens[0]),
            )
        )
        assert (
            ok(c.post(f"/v1/matches/{mid}/start", headers=auth(tokens[1])))["status"] == "playing"
        )
        rnd = random.Random(9)
        for _ in range(3000):
            view = ok(c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[0])))
            if view["status"] != "playing":
                break
            seat = view["turn"]
            view = ok(c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[seat])))
            # a v1 match takes no signature
            action = rnd.choice(view["suggested_actions"])
            r = c.post(
                f"/v1/matches/{mid}/actions",
                headers=auth(tokens[seat]),
                json={"action": action, "version": view["version"], "sig": "AAAA"},
            )
            assert r.status_code == 422 and r.json()["error"]["code"] == "bad_signature"
            assert "receipt" not in ok(
                c.post(
                    f"/v1/matches/{mid}/actions",
                    headers=auth(tokens[seat]),
                    json={"action": action, "version": view["version"]},
                )
            )
        doc = ok(c.get(f"/v1/matches/{mid}/transcript"))
        assert doc["protocol"] == PROTOCOL and doc["log_index"] == public["log_index"]
        assert doc["seats"][0]["client_seed"] == "old seed"
        assert doc["seats"][1]["seed_source"] == "server"
        keys = parse_keys(c.get("/v1/keys").text, source="server", origin="test server")
        rep = verify_document(doc, keys)
        assert rep["status"] == VERIFIED, rep["checks"]
        # a new match on the same database is v2
        assert ok(c.post("/v1/matches", json={"game": "hokm"}), 201)["protocol"] == "qahwa-fair/2"
