"""A deployment of several processes on one database (docs/deploy.md §4, §10): one
transparency log whatever the number of hosts, and signing keys rotated in two phases
without a restart.

- Two ``qahwa serve`` hosts (separate data dirs) on one PostgreSQL under load from both:
  every checkpoint is signed by the one log key, the witness cosigns, the monitor audits,
  tlog-proofs verify; a host with another log key or origin refuses to start (one line).
- ``qahwa keys rotate --in S`` stages a key that ``/v1/keys`` lists as ``next`` before
  anything is signed with it; the running processes switch at its ``activates_at``; no
  record is signed by a key at or after its ``retired_at`` and every record verifies.
- ``verify`` fails a record signed at or after its key's ``retired_at``.
- A process holding only a retired key refuses to start with one line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import subprocess
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import tlog
from fairness import Signer, signed_time
from tests.support.deploy_support import (
    fresh_pg,
    needs_pg,
    qahwa_keys,
    rng_session,
    url_of,
    verify,
    witness_fixture,
)
from tests.support.live_server import QAHWA, LiveServer, Serve, deployment_env, reserve_port
from verify_cli.witness import WitnessServer

LOG_SEED = hashlib.sha256(b"the deployment tests' log note key").digest()
ORIGIN = "deploy.test/log"
LOG = tlog.NoteSigner.from_seed(ORIGIN, LOG_SEED)

witness = witness_fixture(LOG)


def serve_refusal(data_dir: Path, database_url: str, env: dict[str, str]) -> str:
    """``qahwa serve`` that must refuse to start: its output (one line, no traceback)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with reserve_port() as held:
        port = str(held.getsockname()[1])
    out = subprocess.run(
        [str(QAHWA), "serve", "--port", port, "--database-url", database_url],
        env={**os.environ, "QAHWA_DATA_DIR": str(data_dir), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "serving on" not in out.stdout
    (line,) = out.stderr.splitlines()
    assert line.startswith("qahwa: not serving: ")
    return line


class Load:
    """Rng sessions played on each URL in a thread of its own until stopped; every signed
    record they were given is kept."""

    def __init__(self, urls: list[str]) -> None:
        self.records: list[dict[str, Any]] = []
        self.sessions: list[tuple[str, str]] = []  # (url, session id)
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(u, i), daemon=True) for i, u in enumerate(urls)
        ]

    def _run(self, url: str, n: int) -> None:
        try:
            with httpx.Client(base_url=url, timeout=30) as c:
                i = 0
                while not self._stop.is_set():
                    sid, records = rng_session(c, f"load {n} {i}")
                    self.records.extend(records)
                    self.sessions.append((url, sid))
                    i += 1
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def __enter__(self) -> Load:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=60)

    def check(self) -> None:
        assert not self.errors, self.errors


# -- one log, two hosts --------------------------------------------------------------------------
@pytest.mark.slow
@needs_pg
def test_two_hosts_serve_one_log_that_the_witness_cosigns_and_the_monitor_audits(
    tmp_path: Path, witness: WitnessServer
) -> None:
    url = fresh_pg("deploy_log")
    wv = witness.witness.signer.vkey
    shared = {  # docs/deploy.md §4: the same secrets on every host
        **deployment_env(url),
        "QAHWA_SIGNING_KEY": Signer.generate().private_b64(),
        "QAHWA_WITNESSES": f"w1 {wv} {url_of(witness)}",
        "QAHWA_CHECKPOINT_SECONDS": "0.2",
        "QAHWA_CREATE_RATE_PER_MINUTE": "100000",  # the load creates sessions fast
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # The first host names the log; the second is configured with neither key nor origin
    # (its own data dir, another host name) and takes both from the database.
    a = Serve(
        tmp_path / "a",
        url,
        {
            **shared,
            "QAHWA_LOG_ORIGIN": ORIGIN,
            "QAHWA_LOG_KEY": base64.b64encode(LOG_SEED).decode(),
        },
    )
    try:
        b = Serve(tmp_path / "b", url, shared)
        try:
            assert not (tmp_path / "b" / "log-note.key").exists()
            for srv in (a, b):
                assert httpx.get(srv.url + "/v1/keys").json()["log"] == {
                    "origin": ORIGIN,
                    "vkey": LOG.vkey,
                }
            with Load([a.url, b.url, a.url, b.url]) as load:
                time.sleep(4)
            load.check()
            assert len(load.sessions) >= 8
            size = len(load.sessions) * 2  # a lock and a reveal each
            # Both hosts serve the same checkpoint of the whole log, signed by the one log
            # key and cosigned by the witness (each host submits; the witness refuses
            # nothing it cannot check).
            deadline = time.monotonic() + 60
            w = tlog.parse_vkey(wv)
            while True:
                texts = {httpx.get(s.url + "/log/checkpoint").text for s in (a, b)}
                cps = [tlog.open_checkpoint(t, LOG.verifier, [w]) for t in texts]
                if len(texts) == 1 and all(cp.size == size and n.signed_by(w) for cp, n in cps):
                    break
                assert time.monotonic() < deadline, f"not one cosigned checkpoint: {texts}"
                time.sleep(0.2)
            assert witness.witness.state[ORIGIN][0] == size
            # The monitor audits the log through either host.
            for srv in (a, b):
                code, out = verify("log", "--server", srv.url, "--no-state")
                assert code == 0 and out["ok"], out
                assert out["origin"] == ORIGIN and out["audited"] == size
            # A tlog-proof of a session played on one host, fetched from the other, verifies
            # offline under the policy (the log key, the witness, its quorum).
            policy = tmp_path / "policy"
            policy.write_text(f"log {LOG.vkey}\nwitness w1 {wv}\nquorum w1\n")
            (tmp_path / "k.json").write_text(httpx.get(a.url + "/v1/keys").text)
            for i, (played_on, sid) in enumerate(load.sessions[:4]):
                other = b.url if played_on == a.url else a.url
                proof = httpx.get(f"{other}/v1/matches/{sid}/log-proof")
                assert proof.status_code == 200, proof.text
                t = httpx.get(f"{other}/v1/rng/{sid}/transcript").json()
                (tmp_path / f"t{i}.json").write_text(json.dumps(t))
                (tmp_path / f"p{i}").write_text(proof.text)
                code, out = verify(
                    str(tmp_path / f"t{i}.json"),
                    "--key",
                    str(tmp_path / "k.json"),
                    "--log-proof",
                    str(tmp_path / f"p{i}"),
                    "--policy",
                    str(policy),
                )
                assert code == 0 and out["results"][0]["status"] == "verified", out
            # A third host with another log key, or another origin, refuses to start.
            line = serve_refusal(
                tmp_path / "c",
                url,
                {**shared, "QAHWA_LOG_KEY": base64.b64encode(bytes(32)).decode()},
            )
            assert "is not this deployment's log key" in line and LOG.vkey in line
            line = serve_refusal(
                tmp_path / "d", url, {**shared, "QAHWA_LOG_ORIGIN": "elsewhere.test/log"}
            )
            assert "'elsewhere.test/log'" in line and repr(ORIGIN) in line
        finally:
            b.kill()
    finally:
        a.kill()


# -- rotation in two phases ----------------------------------------------------------------------
def _signed_by(records: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        kid = r["signature"]["key_id"]
        out[kid] = out.get(kid, 0) + 1
    return out


def _check_rotation(urls: list[str], rotate: Any, tmp_path: Path) -> None:
    """Rotate under load on ``urls``: staged (listed as next, signing nothing), then in
    force on every process without a restart; every record verifies."""
    with httpx.Client() as c:
        before = {u: c.get(u + "/v1/keys").json()["keys"] for u in urls}
    [old] = [k for k in before[urls[0]] if k["current"]]
    with Load(urls * 2) as load:
        time.sleep(1)
        rotate()
        with httpx.Client() as c:
            staged = {u: c.get(u + "/v1/keys").json()["keys"] for u in urls}
        # (staged 15 s ahead: time enough for the command to exit on a loaded machine)
        [new] = [k for k in staged[urls[0]] if k["next"]]
        # announced by the key in force, the same bytes from every process (fairness-v2 §11)
        assert [a["signature"]["key_id"] for a in new["announcements"]] == [old["key_id"]]
        for u in urls:
            listed = {k["key_id"]: k for k in staged[u]}
            assert listed[new["key_id"]]["announcements"] == new["announcements"]
            assert listed[new["key_id"]]["next"] and not listed[new["key_id"]]["current"]
            assert listed[old["key_id"]]["current"]
            assert listed[old["key_id"]]["retired_at"] == new["activates_at"]
        # nothing is signed with the staged key before its activation
        assert new["key_id"] not in _signed_by(load.records)
        deadline = time.monotonic() + 30
        while not _in_force(urls[0], new["key_id"]):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(2)  # the load goes on past the switch
    load.check()
    # Every process switched (none restarted): each signs with the new key now.
    for u in urls:
        with httpx.Client(base_url=u) as c:
            _, records = rng_session(c, "after")
        assert _signed_by(records) == {new["key_id"]: 3}, u
        assert _in_force(u, new["key_id"]) and not _in_force(u, old["key_id"])
    counts = _signed_by(load.records)
    assert counts.get(old["key_id"], 0) > 0 and counts.get(new["key_id"], 0) > 0, counts
    # Nothing was signed by the old key at or after its retired_at (by the record's time)...
    listed = {k["key_id"]: k for k in httpx.get(urls[0] + "/v1/keys").json()["keys"]}
    limit = datetime.fromisoformat(listed[old["key_id"]]["retired_at"].replace("Z", "+00:00"))
    for r in load.records:
        own = signed_time(r)
        if r["signature"]["key_id"] == old["key_id"] and own is not None:
            assert own[1] < limit.timestamp(), (r.get("type"), own)
    # ...and every transcript (with its lock) verifies with the keys /v1/keys lists now,
    # retirement times included.
    paths = []
    for i, t in enumerate(r for r in load.records if "events" in r):
        p = tmp_path / f"tr{i}.json"
        p.write_text(json.dumps(t))
        paths.append(str(p))
    code, out = verify("check", "--server", urls[0], "--no-state", "--jobs", "1", *paths)
    assert code == 0, [r for r in out["results"] if r["status"] != "verified"][:2]
    assert len(out["results"]) == len(paths) == len(load.sessions)


def _in_force(url: str, key_id: str) -> bool:
    listed = {k["key_id"]: k for k in httpx.get(url + "/v1/keys").json()["keys"]}
    return bool(listed[key_id]["current"])


@pytest.mark.slow
def test_rotation_is_staged_then_switched_without_a_restart(tmp_path: Path) -> None:
    with LiveServer(key_poll_seconds=0.2, create_rate_per_minute=100_000) as srv:
        env = {"QAHWA_DATA_DIR": str(srv.settings.data_dir)}

        def rotate() -> None:
            out = qahwa_keys(srv.settings.database_url, env, "rotate", "--in", "15")
            assert "staged" in out and "no restart" in out

        _check_rotation([srv.url], rotate, tmp_path)


@pytest.mark.slow
@needs_pg
def test_rotation_under_load_on_two_hosts(tmp_path: Path) -> None:
    url = fresh_pg("deploy_rotate")
    shared = {
        **deployment_env(url),
        "QAHWA_SIGNING_KEY": Signer.generate().private_b64(),
        "QAHWA_KEY_POLL_SECONDS": "0.3",
        "QAHWA_CREATE_RATE_PER_MINUTE": "100000",  # the load creates sessions fast
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = Serve(tmp_path / "a", url, shared)
    try:
        b = Serve(tmp_path / "b", url, shared)
        try:
            pids = (a.proc.pid, b.proc.pid)

            def rotate() -> None:
                out = qahwa_keys(url, shared, "rotate", "--in", "15")
                assert out.splitlines()[-1].strip()  # the new private key for the store

            _check_rotation([a.url, b.url], rotate, tmp_path)
            assert (a.proc.poll(), b.proc.poll()) == (None, None)  # never restarted
            assert (a.proc.pid, b.proc.pid) == pids
        finally:
            b.kill()
    finally:
        a.kill()


# -- verify and retired keys ---------------------------------------------------------------------
def test_verify_fails_a_record_signed_after_its_key_was_retired(tmp_path: Path) -> None:
    with LiveServer() as srv, httpx.Client(base_url=srv.url) as c:
        _, (_, _, transcript) = rng_session(c, "late")
        path = tmp_path / "t.json"
        path.write_text(json.dumps(transcript))
        code, out = verify("check", "--server", srv.url, "--jobs", "1", str(path))
        assert code == 0 and out["results"][0]["status"] == "verified"
        # The server kept signing after the key was retired (as before this change): the
        # key's retired_at is earlier than the transcript's ended_at.
        kid = transcript["signature"]["key_id"]
        with sqlite3.connect(srv.settings.data_dir / "qahwa.db") as db:
            db.execute(
                "UPDATE signing_keys SET retired_at = ? WHERE key_id = ?",
                ("2020-01-01T00:00:00.000Z", kid),
            )
        code, out = verify("check", "--server", srv.url, "--jobs", "1", str(path))
        (rep,) = out["results"]
        assert code == 1 and rep["status"] != "verified", rep
        failed = {ch["name"]: ch["detail"] for ch in rep["checks"] if ch["ok"] is False}
        assert f"signed by key {kid} at {transcript['ended_at']} (ended_at)" in failed["signature"]
        assert "retired (2020-01-01T00:00:00.000Z)" in failed["signature"]


# -- a process holding only a retired key --------------------------------------------------------
def test_a_process_holding_only_a_retired_key_refuses_to_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    old = Signer.generate().private_b64()
    env = {"QAHWA_DATA_DIR": str(tmp_path), "QAHWA_SIGNING_KEY": old}
    srv = Serve(tmp_path, url, {"QAHWA_SIGNING_KEY": old})
    srv.kill()
    # rotated at once, the new key kept out of the database: only the secret store has it
    out = qahwa_keys(url, env, "rotate", "--in", "0", "--no-seal")
    new = out.splitlines()[-1]
    line = serve_refusal(tmp_path, url, {"QAHWA_SIGNING_KEY": old})
    assert "was retired at" in line and "QAHWA_SIGNING_KEY" in line
    # with the new key it serves, and signs with it
    srv = Serve(tmp_path, url, {"QAHWA_SIGNING_KEY": new})
    try:
        with httpx.Client(base_url=srv.url) as c:
            _, records = rng_session(c, "new key")
        assert {r["signature"]["key_id"] for r in records} == {Signer.from_seed_b64(new).key_id}
    finally:
        srv.kill()
