"""qahwa-fair/1 matches already in a database when it is migrated: 0008 ends every one still
seating or playing (``abandoned``, as v1's service ended an idle one, the missing seeds drawn
by the server), after which v1 is read-only: served and verified as v1, never written (the
v1 seeding routes answer 409, the v2 paths 404)."""

from __future__ import annotations

import base64
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic import command

from fairness import PROTOCOL, SecretBox, Signer
from service import migrate
from service.db import Database
from service.settings import Settings
from tests.support.http_play import auth, ok
from tests.support.live_server import LiveServer
from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys

ROOT = Path(__file__).resolve().parents[2]


def _at_0002(tmp_path: Path) -> tuple[str, Database]:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    db = Database(url)
    cfg = migrate.alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.commit()
    return url, db


def test_v1_rows_end_at_the_migration_and_are_served_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # bench/ is not an installed package
    from bench.v1_rows import insert_v1_match

    signer = Signer.generate()
    master = secrets.token_bytes(32)
    url, db = _at_0002(tmp_path)
    box = SecretBox(master)
    seating, tokens = insert_v1_match(db, signer, box, "hokm", {"target": 1})
    playing, _ = insert_v1_match(
        db, signer, box, "hokm", {"target": 1}, client_seeds=["a", "b", "c", "d"], actions=9
    )
    ended, _ = insert_v1_match(
        db, signer, box, "tawla", {"match_length": 1}, client_seeds=["x", "y"], bots=3
    )
    session, (rng_token,) = insert_v1_match(db, signer, box, "rng", {})
    db.dispose()
    settings = Settings(
        database_url=url,
        data_dir=tmp_path,
        master_key=base64.b64encode(master).decode(),
        signing_key=signer.private_b64(),
    )
    with LiveServer(settings) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        keys = parse_keys(c.get("/v1/keys").text, source="server", origin="test server")
        docs: dict[str, dict[str, Any]] = {}
        for mid, kind in ((seating, "matches"), (playing, "matches"), (ended, "matches")):
            public = ok(c.get(f"/v1/{kind}/{mid}"))
            assert public["protocol"] == PROTOCOL and public["status"] == "finished"
            assert public["record"]["type"] == "commitment"
            doc = docs[mid] = ok(c.get(f"/v1/{kind}/{mid}/transcript"))
            assert doc["protocol"] == PROTOCOL and doc["log_index"] == public["log_index"]
            rep = verify_document(doc, keys)
            assert rep["status"] == VERIFIED, rep["checks"]
        docs[session] = ok(c.get(f"/v1/rng/{session}/transcript"))
        assert verify_document(docs[session], keys)["status"] == VERIFIED
        # the unfinished ones ended as v1's service ended an idle match
        for mid in (seating, playing, session):
            assert docs[mid]["events"][-1] == {
                "seq": len(docs[mid]["events"]) - 1,
                "type": "end",
                "reason": "abandoned",
            }
            assert docs[mid]["result"]["reason"] == "abandoned"
        assert {s["seed_source"] for s in docs[seating]["seats"]} == {"server"}
        assert [s["client_seed"] for s in docs[playing]["seats"]] == ["a", "b", "c", "d"]
        assert docs[ended]["result"]["reason"] == "finished"
        # v1 is read-only: its seeding answers 409, play and resignation too
        r = c.post(
            f"/v1/matches/{seating}/seats/0/seed",
            json={"client_seed": "late seed"},
            headers=auth(tokens[0]),
        )
        assert r.status_code == 409 and r.json()["error"]["code"] == "not_seating", r.text
        r = c.post(f"/v1/matches/{seating}/start", headers=auth(tokens[1]))
        assert r.status_code == 409 and r.json()["error"]["code"] == "not_seating", r.text
        r = c.post(
            f"/v1/matches/{seating}/actions",
            headers=auth(tokens[0]),
            json={"action": {"type": "tap"}, "version": 1},
        )
        assert r.status_code == 409 and r.json()["error"]["code"] == "match_over", r.text
        assert c.post(f"/v1/matches/{seating}/resign", headers=auth(tokens[0])).status_code == 409
        r = c.post(f"/v1/rng/{session}/seed", json={"client_seed": "s"}, headers=auth(rng_token))
        assert r.status_code == 409, r.text
        r = c.post(
            f"/v1/rng/{session}/draws",
            json={"kind": "dice", "count": 2, "sides": 6},
            headers=auth(rng_token),
        )
        assert r.status_code == 409 and r.json()["error"]["code"] == "match_over", r.text
        # the v2 paths are not a v1 match's
        for path in ("seats/0/commit", "seats/0/reveal"):
            r = c.post(
                f"/v1/matches/{seating}/{path}",
                headers=auth(tokens[0]),
                json={"seed_commitment": "ab" * 32}
                if "commit" in path
                else {"client_seed": "x", "nonce": "ab" * 32},
            )
            assert r.status_code == 404, r.text
        assert c.get(f"/v1/matches/{seating}/lock").status_code == 404
        # the transcripts stay as they were: nothing writes v1 rows
        for mid, doc in docs.items():
            kind = "rng" if mid == session else "matches"
            assert ok(c.get(f"/v1/{kind}/{mid}/transcript"))["events"] == doc["events"]
        # a v1 row written after the migration (as a restored backup would bring one) is
        # read-only too: nothing seeds, starts, plays or resigns it
        db = Database(url)
        late, late_tokens = insert_v1_match(db, signer, box, "hokm", {"target": 1})
        db.dispose()
        for path, body in (("seats/0/seed", {"client_seed": "s"}), ("start", None)):
            r = c.post(f"/v1/matches/{late}/{path}", json=body, headers=auth(late_tokens[0]))
            assert r.status_code == 409 and r.json()["error"]["code"] == "not_seating", r.text
        r = c.post(f"/v1/matches/{late}/resign", headers=auth(late_tokens[0]))
        assert r.status_code == 409 and "read-only" in r.json()["error"]["message"], r.text
        r = c.post(
            f"/v1/matches/{late}/actions",
            headers=auth(late_tokens[0]),
            json={"action": {"type": "tap"}, "version": 0},
        )
        assert r.status_code == 409, r.text
        assert ok(c.get(f"/v1/matches/{late}"))["status"] == "seating"
        # a new match on the same database is v2
        assert ok(c.post("/v1/matches", json={"game": "hokm"}), 201)["protocol"] == "qahwa-fair/2"


def test_the_migration_asks_for_the_master_key_when_v1_matches_are_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.v1_rows import insert_v1_match

    _, db = _at_0002(tmp_path)
    insert_v1_match(db, Signer.generate(), SecretBox(secrets.token_bytes(32)), "rng", {})
    try:
        with pytest.raises(RuntimeError, match="needs the master key"):
            migrate.upgrade(db)
    finally:
        db.dispose()
