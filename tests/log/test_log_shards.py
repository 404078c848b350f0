"""A new log from index 0 (docs/deploy.md §10, ``qahwa keys new-log``), on SQLite with one
host and on PostgreSQL with two (separate data dirs, as deploy.md §4 describes):

- the old log is frozen at its final checkpoint and served read-only under
  ``/logs/<id>/log/``; ``/v1/keys`` lists both logs with origin, key and state;
- new entries go to the new log from index 0 at once (also from a process not restarted
  yet), and every host restarted with the new origin serves the new log's checkpoint,
  cosigned by the witness configured for it;
- checkpoints and tlog-proofs of the old log fetched before still verify, a tlog-proof of
  an old match fetched after verifies under the old log's key and witness;
- ``verify log`` audits the new log, and ``verify log --origin OLD`` the old one.
"""

from __future__ import annotations

import base64
import hashlib
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import tlog
from fairness import Signer
from tests.support.deploy_support import (
    fresh_pg,
    needs_pg,
    qahwa_keys,
    rng_session,
    running_witness,
    verify,
)
from tests.support.live_server import Serve, deployment_env
from verify_cli.main import app as verify_app

OLD = "shards.test/log/2026"
NEW = "shards.test/log/2027"
OLD_SEED = hashlib.sha256(b"the shard tests' first log note key").digest()
OLD_LOG = tlog.NoteSigner.from_seed(OLD, OLD_SEED)


def cosigned(url: str, path: str, log: tlog.Verifier, w: tlog.Verifier, size: int) -> str:
    """The checkpoint at ``url + path`` once it has ``size`` entries and ``w``'s cosignature."""
    deadline = time.monotonic() + 60
    while True:
        text = httpx.get(url + path).text
        cp, note = tlog.open_checkpoint(text, log, [w])
        if cp.size == size and note.signed_by(w):
            return text
        assert time.monotonic() < deadline, f"{path}: no cosigned checkpoint of {size}: {text}"
        time.sleep(0.2)


def play(urls: list[str], n: int, tag: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """``n`` rng sessions on each URL: (url, session id, its records), each logs 2 entries."""
    out = []
    for u in urls:
        with httpx.Client(base_url=u, timeout=30) as c:
            for i in range(n):
                sid, records = rng_session(c, f"{tag} {u} {i}")
                out.append((u, sid, records))
    return out


def check_offline(
    tmp_path: Path, url: str, sid: str, proof: str, vkey: str, wvkey: str, tag: str
) -> None:
    """The session's transcript and tlog-proof verify offline under the policy (the log's
    key, its witness)."""
    policy = tmp_path / f"policy-{tag}"
    policy.write_text(f"log {vkey}\nwitness w {wvkey}\nquorum w\n")
    keys = tmp_path / f"keys-{tag}.json"
    keys.write_text(httpx.get(url + "/v1/keys").text)
    t = tmp_path / f"t-{tag}.json"
    t.write_text(httpx.get(f"{url}/v1/rng/{sid}/transcript").text)
    p = tmp_path / f"p-{tag}"
    p.write_text(proof)
    code, out = verify(str(t), "--key", str(keys), "--log-proof", str(p), "--policy", str(policy))
    assert code == 0 and out["results"][0]["status"] == "verified", out


def scenario(tmp_path: Path, url: str, hosts: int) -> None:
    shared = {
        **deployment_env(url),
        "QAHWA_SIGNING_KEY": Signer.generate().private_b64(),
        "QAHWA_CHECKPOINT_SECONDS": "0.2",
        "QAHWA_CREATE_RATE_PER_MINUTE": "100000",
    }
    dirs = [tmp_path / f"host{i}" for i in range(hosts)]
    for d in dirs:
        d.mkdir()
    first = {"QAHWA_LOG_ORIGIN": OLD, "QAHWA_LOG_KEY": base64.b64encode(OLD_SEED).decode()}
    with running_witness(tmp_path / "w1", "w1", OLD_LOG.verifier) as (w1, w1_entry):
        w1v = w1.witness.signer.verifier
        w1_vkey = str(w1.witness.signer.vkey)
        env1 = {**shared, "QAHWA_WITNESSES": w1_entry}
        # deploy.md §4: the first host names the log, the others take it from the database
        procs = [Serve(dirs[0], url, {**env1, **first})]
        procs += [Serve(d, url, env1) for d in dirs[1:]]
        try:
            urls = [p.url for p in procs]
            old_sessions = play(urls, 3, "old")
            old_size = 2 * len(old_sessions)  # a lock and a reveal each
            before = cosigned(urls[-1], "/log/checkpoint", OLD_LOG.verifier, w1v, old_size)
            old_proofs = {
                sid: httpx.get(f"{u}/v1/matches/{sid}/log-proof").text
                for u, sid, _ in old_sessions[:2]
            }
            # docs/deploy.md §10 step 3, the hosts still running
            out = qahwa_keys(
                url, {"QAHWA_DATA_DIR": str(dirs[0]), **deployment_env(url)}, "new-log", NEW
            )
            assert f"frozen at {old_size} entries" in out and "/logs/1/log/" in out, out
            new_vkey = out.splitlines()[-1]
            new_log_v = tlog.parse_vkey(new_vkey)
            assert new_log_v.name == NEW
            # Appends go to the new log at once, from index 0, though no host restarted.
            ((_, sid0, _),) = play(urls[:1], 1, "between")
            with running_witness(tmp_path / "w2", "w2", new_log_v) as (w2, w2_entry):
                w2v = w2.witness.signer.verifier
                w2_vkey = str(w2.witness.signer.vkey)
                for p in procs:
                    p.kill()
                env2 = {**shared, "QAHWA_WITNESSES": w2_entry, "QAHWA_LOG_ORIGIN": NEW}
                procs = [Serve(d, url, env2) for d in dirs]
                urls = [p.url for p in procs]
                new_sessions = play(urls, 2, "new")
                new_size = 2 * (1 + len(new_sessions))
                for u in urls:
                    keys = httpx.get(u + "/v1/keys").json()
                    assert keys["log"] == {"origin": NEW, "vkey": new_vkey}
                    assert keys["logs"] == [
                        {
                            "id": 1,
                            "origin": OLD,
                            "vkey": OLD_LOG.vkey,
                            "state": "frozen",
                            "path": "/logs/1/log/",
                        },
                        {
                            "id": 2,
                            "origin": NEW,
                            "vkey": new_vkey,
                            "state": "active",
                            "path": "/logs/2/log/",
                        },
                    ]
                    # the new tree starts at 0: its checkpoint counts the new entries only
                    text = cosigned(u, "/log/checkpoint", new_log_v, w2v, new_size)
                    assert httpx.get(u + "/logs/2/log/checkpoint").text == text
                    assert httpx.get(u + "/v1/log").json()["tree_size"] == new_size
                    # the old log, frozen: its final checkpoint, the one the witness cosigned
                    assert httpx.get(u + "/logs/1/log/checkpoint").text == before
                    assert httpx.get(u + "/logs/3/log/checkpoint").status_code == 404
                # The proofs fetched before the new log still verify; a proof of an old
                # session fetched now comes from the old log, one of a new session from
                # the new log, each under its own key and witness.
                for i, (sid, proof) in enumerate(old_proofs.items()):
                    check_offline(tmp_path, urls[-1], sid, proof, OLD_LOG.vkey, w1_vkey, f"o{i}")
                u0, sid_old, _ = old_sessions[-1]
                proof = httpx.get(f"{urls[0]}/v1/matches/{sid_old}/log-proof")
                assert proof.status_code == 200, proof.text
                tp = tlog.parse_proof(proof.text)
                assert tp.index < old_size
                check_offline(tmp_path, urls[0], sid_old, proof.text, OLD_LOG.vkey, w1_vkey, "old")
                for tag, sid in (("between", sid0), ("new", new_sessions[-1][1])):
                    proof = httpx.get(f"{urls[-1]}/v1/matches/{sid}/log-proof")
                    assert proof.status_code == 200, proof.text
                    check_offline(tmp_path, urls[-1], sid, proof.text, new_vkey, w2_vkey, tag)
                assert (
                    tlog.parse_proof(
                        httpx.get(f"{urls[-1]}/v1/matches/{sid0}/log-proof").text
                    ).index
                    == 0
                )
                # The monitor audits the new log, and the old one by its origin.
                for u in urls:
                    code, res = verify("log", "--server", u, "--no-state")
                    assert code == 0 and res["ok"], res
                    assert res["origin"] == NEW and res["audited"] == new_size
                    code, res = verify("log", "--server", u, "--origin", OLD, "--no-state")
                    assert code == 0 and res["ok"], res
                    assert res["origin"] == OLD and res["audited"] == old_size
                res = CliRunner().invoke(
                    verify_app, ["log", "--server", urls[0], "--origin", "nope.test/log"]
                )
                assert (
                    res.exit_code != 0
                    and f"no log 'nope.test/log' (its logs: '{OLD}', '{NEW}')" in res.output
                ), res.output
        finally:
            for p in procs:
                p.kill()


def test_new_log_from_index_0_on_one_sqlite_host(tmp_path: Path) -> None:
    scenario(tmp_path, f"sqlite:///{tmp_path / 'q.db'}", hosts=1)


@pytest.mark.slow
@needs_pg
def test_new_log_from_index_0_on_two_postgresql_hosts(tmp_path: Path) -> None:
    scenario(tmp_path, fresh_pg("shards"), hosts=2)
