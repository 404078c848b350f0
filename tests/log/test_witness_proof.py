"""A player's offline proof: the server's tlog-proof of a match, cosigned by a witness run
with ``verify witness`` over real HTTP, checked by ``verify --log-proof --policy`` without
the server — and refused when the policy's quorum is not met. The witness keeps its state
across restarts and refuses a fork."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

import tlog
from tests.support.deploy_support import rng_session, running_witness, url_of, witness_fixture
from tests.support.live_server import LiveServer
from verify_cli.main import app
from verify_cli.witness import WitnessServer

LOG_SEED = hashlib.sha256(b"the log key of the witness tests").digest()
ORIGIN = "proof.test/log"
LOG = tlog.NoteSigner.from_seed(ORIGIN, LOG_SEED)

witness = witness_fixture(LOG)


def logging_server(witness: WitnessServer, checkpoint_seconds: float) -> LiveServer:
    """A server logging as ORIGIN under LOG's key, a checkpoint every ``checkpoint_seconds``,
    cosigned by ``witness`` as w1."""
    return LiveServer(
        log_origin=ORIGIN,
        log_key=base64.b64encode(LOG_SEED).decode(),
        checkpoint_seconds=checkpoint_seconds,
        witnesses=f"w1 {witness.witness.signer.vkey} {url_of(witness)}",
    )


def verify_json(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(app, [*args, "--json", "--no-state"], catch_exceptions=False)
    doc = json.loads(res.stdout)
    (rep,) = doc["results"]
    (chk,) = [c for c in rep["checks"] if c["name"] == "log"]
    return {"exit": res.exit_code, "status": rep["status"], **chk}


def test_offline_proof_with_a_witness_and_a_policy(witness: WitnessServer, tmp_path: Path) -> None:
    wv = witness.witness.signer.vkey
    assert httpx.get(url_of(witness) + "/").text == wv + "\n"
    with logging_server(witness, 3600) as srv, httpx.Client(base_url=srv.url) as c:
        assert c.get("/v1/keys").json()["log"]["vkey"] == LOG.vkey
        sid, _ = rng_session(c, "proof")
        log = srv.app.state.log_c2sp
        log.checkpoint_now()
        assert log.submit_all() == {"w1": True}
        proof = c.get(f"/v1/matches/{sid}/log-proof")
        assert proof.status_code == 200 and proof.headers["content-type"].startswith("text/plain")
        (tmp_path / "t.json").write_text(json.dumps(c.get(f"/v1/rng/{sid}/transcript").json()))
        (tmp_path / "k.json").write_text(json.dumps(c.get("/v1/keys").json()))
    (tmp_path / "p.tlog-proof").write_text(proof.text)
    policy = tmp_path / "policy"
    policy.write_text(f"log {LOG.vkey}\nwitness w1 {wv}\nquorum w1\n")
    # The server is gone: the proof is checked offline.
    files = [
        str(tmp_path / "t.json"),
        "--key",
        str(tmp_path / "k.json"),
        "--log-proof",
        str(tmp_path / "p.tlog-proof"),
    ]
    chk = verify_json(*files, "--policy", str(policy))
    assert chk["ok"] is True and chk["exit"] == 0 and chk["status"] == "verified", chk
    assert f"of {ORIGIN}, cosigned by w1 (the policy's quorum is met)" in chk["detail"]
    # A quorum of two witnesses, only one of which cosigned: the proof fails.
    other = tlog.CosignatureSigner.from_seed("witness.test/w2", bytes(32)).vkey
    policy.write_text(
        f"log {LOG.vkey}\nwitness w1 {wv}\nwitness w2 {other}\ngroup both all w1 w2\nquorum both\n"
    )
    chk = verify_json(*files, "--policy", str(policy))
    assert chk["ok"] is False and chk["exit"] == 1 and "quorum" in chk["detail"]
    # Without a policy the tlog-proof is not checked (and the verdict does not depend on it).
    chk = verify_json(*files)
    assert chk["ok"] is None and "--policy" in chk["detail"]
    # Another log's key in the policy: refused.
    stranger = tlog.NoteSigner.from_seed(ORIGIN, bytes(32)).vkey
    policy.write_text(f"log {stranger}\nquorum none\n")
    chk = verify_json(*files, "--policy", str(policy))
    assert chk["ok"] is False and "no known key signed" in chk["detail"]


def test_the_witness_keeps_its_state_and_refuses_a_fork(tmp_path: Path) -> None:
    state = tmp_path / "w" / "witness.json"
    reader = tlog.ListHashReader.from_leaf_hashes([tlog.leaf_hash(b"%d" % i) for i in range(6)])
    forked = tlog.ListHashReader.from_leaf_hashes([tlog.leaf_hash(b"f%d" % i) for i in range(6)])

    def body(old: int, size: int, r: tlog.ListHashReader, proof: list[bytes]) -> bytes:
        cp = tlog.Checkpoint(ORIGIN, size, tlog.tree_hash(size, r))
        lines = "".join(tlog.note.b64(h) + "\n" for h in proof)
        return f"old {old}\n{lines}\n{tlog.sign_note(cp.text, [LOG])}".encode()

    for round_ in range(2):
        with running_witness(tmp_path / "w", "w1", LOG.verifier) as (srv, _):
            post = url_of(srv) + "/add-checkpoint"
            if round_ == 0:
                r = httpx.post(post, content=body(0, 3, reader, []))
                assert r.status_code == 200 and r.text.startswith("\u2014 witness.test/w1 ")
                assert json.loads(state.read_text())["logs"][ORIGIN]["size"] == 3
            else:
                # Restarted: it remembers size 3, so old 0 is answered with 409 and the size.
                r = httpx.post(post, content=body(0, 5, reader, []))
                assert (r.status_code, r.headers["content-type"], r.text) == (
                    409,
                    "text/x.tlog.size",
                    "3\n",
                )
                r = httpx.post(post, content=body(3, 5, forked, tlog.prove_tree(5, 3, forked)))
                assert r.status_code == 422
                assert list((tmp_path / "w" / "witness-evidence").glob("refused-*.json"))
                r = httpx.post(post, content=body(3, 5, reader, tlog.prove_tree(5, 3, reader)))
                assert r.status_code == 200
                assert json.loads(state.read_text())["logs"][ORIGIN]["size"] == 5
    assert oct(state.stat().st_mode & 0o777) and not list(state.parent.glob(".witness-*"))


def test_the_background_threads_checkpoint_commits_and_get_them_cosigned(
    witness: WitnessServer,
) -> None:
    """No test hook: a commit wakes the checkpointer, whose new checkpoint wakes the witness
    thread; the served checkpoint soon carries the witness's verified cosignature."""
    import time

    wv = tlog.parse_vkey(witness.witness.signer.vkey)
    with logging_server(witness, 0.05) as srv, httpx.Client(base_url=srv.url) as c:
        rng_session(c, "proof")
        deadline = time.monotonic() + 60
        while True:
            cp, note = tlog.open_checkpoint(c.get("/log/checkpoint").text, LOG.verifier, [wv])
            if cp.size >= 1 and note.signed_by(wv):
                break
            assert time.monotonic() < deadline, f"not cosigned in time: size {cp.size}"
            time.sleep(0.05)
        assert witness.witness.state[ORIGIN][0] == cp.size


def test_a_match_not_yet_locked_has_no_log_proof() -> None:
    """A qahwa-fair/2 match logs nothing before its lock: its log-proof is 409 not_locked."""
    with LiveServer() as srv, httpx.Client(base_url=srv.url) as c:
        r = c.post(
            "/v1/matches",
            json={"game": "tawla", "ruleset": {}, "seats": [{"name": "a"}, {"name": "b"}]},
        )
        assert r.status_code == 201
        p = c.get(f"/v1/matches/{r.json()['match_id']}/log-proof")
        assert p.status_code == 409 and p.json()["error"]["code"] == "not_locked"
        assert c.get("/v1/matches/m_nonexistent/log-proof").status_code == 404
