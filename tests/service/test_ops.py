"""Operating the service (issue 24): operator keys, limits, timeouts and the connection cap,
hostile headers, /metrics, JSON logs and signing-key rotation."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import HTTPException
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from fairness import new_nonce
from qahwa_client import Client, RngSession
from service import operators
from service.app import create_app
from service.keys import RetiredKeyError
from service.settings import Settings
from tests.support import sqlite_settings
from tests.support.fake_clock import FakeClock
from tests.support.http_play import auth, create_match, play_actions, seed_all
from tests.support.live_server import QAHWA, LiveServer, Serve


def _error(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    err: dict[str, Any] = r.json()["error"]
    if code is not None:
        assert err["code"] == code, err
    return err


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "QAHWA_DATA_DIR": str(settings.data_dir),
        "QAHWA_DATABASE_URL": settings.database_url,
    }
    return subprocess.run(
        [str(QAHWA), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _session(qc: Client, client_seed: str) -> RngSession:
    """A seeded (locked) rng session, through the conforming client."""
    sess = qc.rng()
    sess.send_seed(client_seed)
    return sess


def _made(srv: LiveServer) -> int:
    """Matches and sessions in the server's database."""
    with srv.app.state.db.connect(write=False) as conn:
        n: int = conn.execute(text("SELECT count(*) FROM matches")).scalar_one()
    return n


# -- operator keys -------------------------------------------------------------------------------
def test_creation_needs_a_valid_operator_key_and_revoke_is_immediate() -> None:
    with LiveServer(operator_key=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        path = srv.settings.operator_key_path
        key = srv.operator_key
        assert path.read_text(encoding="ascii") == key + "\n"
        assert path.stat().st_mode & 0o777 == 0o600
        made = _made(srv)
        for url, body in (("/v1/matches", {"game": "hokm"}), ("/v1/rng", {})):
            _error(c.post(url, json=body), 401, "unauthorized")
            _error(c.post(url, json=body, headers=auth("qop_" + "x" * 43)), 401, "unauthorized")
            _error(c.post(url, json=body, headers={"Authorization": f"Basic {key}"}), 401)
            assert _made(srv) == made  # a refused creation changes nothing
            assert c.post(url, json=body, headers=auth(key)).status_code == 201
            made += 1
            assert _made(srv) == made
        # another process on the same database: `qahwa operators add` prints the key once,
        # alone on the last line
        out = _cli(srv.settings, "operators", "add", "alice")
        assert out.returncode == 0, out.stderr
        alice = out.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"qop_[A-Za-z0-9_-]{43}", alice) and out.stdout.count(alice) == 1
        assert c.post("/v1/rng", json={}, headers=auth(alice)).status_code == 201
        assert _cli(srv.settings, "operators", "add", "alice").returncode == 1  # name taken
        listed = _cli(srv.settings, "operators", "list").stdout
        assert re.search(r"^alice\t.*\tactive$", listed, re.M) and alice not in listed
        assert _cli(srv.settings, "operators", "revoke", "alice").returncode == 0
        # refused at once by the running server (it reads the key's row on every creation)
        err = _error(c.post("/v1/rng", json={}, headers=auth(alice)), 401, "unauthorized")
        assert "revoked" in err["message"]
        assert c.post("/v1/rng", json={}, headers=auth(key)).status_code == 201
        assert re.search(
            r"^alice\t.*\trevoked ", _cli(srv.settings, "operators", "list").stdout, re.M
        )
        assert _cli(srv.settings, "operators", "revoke", "nobody").returncode == 1
        # stored hashed: neither key is anywhere in the database files
        stored = b"".join(p.read_bytes() for p in srv.settings.data_dir.glob("qahwa.db*"))
        assert operators.hash_key(alice).encode() in stored
        assert alice.encode() not in stored and key.encode() not in stored


def test_creation_rate_per_key_answers_429_with_retry_after() -> None:
    clock = FakeClock(1_000_020.0)  # 20 s into a minute: no minute ends mid-test
    with (
        LiveServer(create_rate_per_minute=3, clock=clock) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        for _ in range(3):
            assert c.post("/v1/rng", json={}).status_code == 201
        made = _made(srv)
        r = c.post("/v1/matches", json={"game": "hokm"})
        _error(r, 429, "rate_limited")
        assert 1 <= int(r.headers["Retry-After"]) <= 120
        assert _made(srv) == made
        # the limit is per key: another operator still creates
        other = operators.add(srv.app.state.db, "other")
        assert c.post("/v1/rng", json={}, headers=auth(other)).status_code == 201


def test_retry_after_is_when_the_sliding_window_lets_one_more_in() -> None:
    assert operators.retry_after(prev=0, cur=10, elapsed=30, limit=10) == 36
    assert operators.retry_after(prev=10, cur=5, elapsed=30, limit=10) == 6
    clock = FakeClock(1_000_020.0)  # 20 s into a minute
    with LiveServer(create_rate_per_minute=10, clock=clock) as srv:
        ops: operators.Operators = srv.app.state.operators
        key = srv.operator_key
        made = 0
        for step in (0.0, 15.0, 50.0, 7.0):  # at several points of a minute and the next
            clock.advance(step)
            while True:  # fill the window
                try:
                    ops.authorize(key)
                    made += 1
                except HTTPException as exc:
                    assert exc.status_code == 429 and exc.headers is not None
                    wait = int(exc.headers["Retry-After"])
                    break
            clock.advance(wait - 1)
            with pytest.raises(HTTPException):
                ops.authorize(key)  # a second earlier it still does not fit
            clock.advance(1)
            ops.authorize(key)  # after Retry-After it does
            made += 1
        assert made >= 10


# -- limits ---------------------------------------------------------------------------------------
def test_rate_per_address_answers_429_and_spares_health() -> None:
    clock = FakeClock()  # the bucket refills only as told
    with (
        LiveServer(rate_per_second_per_ip=5, clock=clock) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        codes = [c.get("/v1/keys").status_code for _ in range(5)]
        r = c.get("/v1/keys")
        assert codes == [200] * 5 and r.status_code == 429, (codes, r.text)
        assert r.json()["error"]["code"] == "rate_limited"
        assert r.headers["Retry-After"] == "1"
        assert all(c.get("/healthz").status_code == 200 for _ in range(20))  # not counted
        assert c.post("/v1/rng", json={}).status_code == 201  # creation: limited per key
        clock.advance(0.2)  # one request's worth
        assert [c.get("/v1/keys").status_code for _ in range(2)] == [200, 429]


def test_session_draw_cap_is_409_session_full() -> None:
    with LiveServer(max_session_draws=3) as srv, Client(srv.url) as qc:
        sess = _session(qc, "cap test")
        for _ in range(3):
            sess.dice(2, 6)
        events = f"{srv.url}/v1/rng/{sess.session_id}/events"
        before = httpx.get(events).json()
        r = httpx.post(
            f"{srv.url}/v1/rng/{sess.session_id}/draws",
            headers=auth(sess.token),
            json={"kind": "dice", "count": 2, "sides": 6},
        )
        _error(r, 409, "session_full")
        assert httpx.get(events).json() == before
        closed = sess.close()  # closing stays possible
        assert closed.status == "finished"
        assert qc.verify(sess.transcript())["status"] == "verified"


def test_transcript_bytes_cap_refuses_the_draw_and_changes_nothing() -> None:
    with LiveServer(max_transcript_bytes=4096) as srv, Client(srv.url) as qc:
        sess = _session(qc, "bytes test")
        events = f"/v1/rng/{sess.session_id}/events"
        big = {"kind": "shuffle", "n": 1000}  # about 3.9 kB of results
        sess.draw(big)
        before = httpx.get(srv.url + events).json()
        r = httpx.post(
            f"{srv.url}/v1/rng/{sess.session_id}/draws", headers=auth(sess.token), json=big
        )
        err = _error(r, 409, "session_full")
        assert "4096 bytes" in err["message"]
        assert httpx.get(srv.url + events).json() == before
        n = 0
        while True:
            r = httpx.post(
                f"{srv.url}/v1/rng/{sess.session_id}/draws",
                headers=auth(sess.token),
                json={"kind": "shuffle", "n": 52},
            )
            if r.status_code != 200:
                break
            n += 1
            before = httpx.get(srv.url + events).json()
        _error(r, 409, "session_full")
        assert 1 <= n <= 2, n  # 52 numbers are about 140 bytes of JSON
        assert httpx.get(srv.url + events).json() == before
        sess.close()
        assert qc.verify(sess.transcript())["status"] == "verified"


# -- timeouts, the connection cap, hostile headers ------------------------------------------------
def _recv_all(sock: socket.socket) -> bytes:
    out = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return out
        out += chunk


def test_header_and_body_read_timeouts() -> None:
    with LiveServer(header_timeout_seconds=0.5, body_timeout_seconds=0.5) as srv:
        host, port = "127.0.0.1", int(srv.url.rsplit(":", 1)[1])
        with socket.create_connection((host, port), timeout=10) as slow:
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
            t0 = time.monotonic()
            answer = _recv_all(slow)
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert b"request_timeout" in answer and time.monotonic() - t0 < 8
        with socket.create_connection((host, port), timeout=10) as silent:
            assert _recv_all(silent) == b""  # nothing sent: closed without an answer
        with socket.create_connection((host, port), timeout=10) as slow_body:
            slow_body.sendall(
                b"POST /v1/matches/m_x/actions HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                b'{"action":'
            )
            answer = _recv_all(slow_body)
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert b"request_timeout" in answer
        assert httpx.get(srv.url + "/healthz").status_code == 200


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_300_slow_loris_sockets_do_not_stop_healthz_with_256_file_descriptors(
    tmp_path: Path,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    srv = Serve(
        tmp_path, f"sqlite:///{tmp_path / 'q.db'}", args=("--no-access-log",), preexec_fn=_limit_fds
    )
    url, port, proc = srv.url, srv.port, srv.proc
    socks: list[socket.socket] = []
    try:
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(s)
        for s in socks:  # keep trickling: a byte each, as a slow-loris client does
            try:
                s.sendall(b"a")
            except OSError:
                pass  # already dropped by the cap
        for _ in range(5):
            t0 = time.monotonic()
            r = httpx.get(url + "/healthz", timeout=10)  # without the guard: no answer at all
            assert r.status_code == 200 and time.monotonic() - t0 < 10
        assert proc.poll() is None
        m = {
            s.name: s.value
            for f in text_string_to_metric_families(httpx.get(url + "/metrics", timeout=5).text)
            for s in f.samples
        }
        assert m["qahwa_connections_dropped_total"] >= 300 - (256 - 64)
    finally:
        for s in socks:
            s.close()
        srv.kill()


def test_hostile_headers_get_4xx_never_5xx() -> None:
    with LiveServer() as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        mid = create_match(c, "hokm")["match_id"]
        stream = f"/v1/matches/{mid}/events/stream?timeout=0.2"
        # "²" is a digit to str.isdigit, not to int(): ignored, as any other bad id
        r = c.get(stream, headers={"Last-Event-ID": "²".encode()})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert c.get(stream, headers={"Last-Event-ID": "1" * 40}).status_code == 422
        r = c.post(
            "/v1/matches", json={"game": "hokm"}, headers={"Authorization": b"Bearer \xb2\xff"}
        )
        _error(r, 401, "unauthorized")
        r = c.get("/v1/keys", headers={"X-Request-ID": "bad id ²".encode()})
        assert r.status_code == 200 and re.fullmatch(r"[0-9a-f]{16}", r.headers["x-request-id"])
        r = c.get("/v1/keys", headers={"X-Request-ID": "trace-1.a_b"})
        assert r.headers["x-request-id"] == "trace-1.a_b"
        host, port = "127.0.0.1", int(srv.url.rsplit(":", 1)[1])
        for raw in (
            b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Length: \xc2\xb2\r\n\r\n",
            b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n",
            b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
        ):
            with socket.create_connection((host, port), timeout=10) as s:
                try:
                    s.sendall(raw)
                except OSError:
                    pass
                answer = _recv_all(s)
            status = int(answer.split(b" ", 2)[1])
            assert 400 <= status < 500, answer[:200]


# -- metrics ----------------------------------------------------------------------------------------
def _metrics(
    url: str,
) -> tuple[dict[str, Any], dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    r = httpx.get(url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    return families, samples


def test_metrics_parse_with_prometheus_clients_own_parser() -> None:
    with LiveServer(sweep_interval_seconds=0.1) as srv, Client(srv.url) as qc:
        sess = _session(qc, "metrics")
        for _ in range(4):
            sess.dice(1, 6)
        match = qc.create_match("hokm")
        httpx.get(srv.url + "/no/such/path/" + "9" * 30)
        # a method no route has (one HTTP parsers know: llhttp refuses an unknown one)
        httpx.request("PURGE", srv.url + "/pot")
        families, samples = _metrics(srv.url)
        assert families["qahwa_http_request_duration_seconds"].type == "histogram"
        routes = {
            dict(labels).get("route")
            for (name, labels) in samples
            if name.startswith("qahwa_http_request")
        }
        assert {"/v1/rng/{session_id}/draws", "/v1/matches", "/v1/rng", "unmatched"} <= routes
        assert all("9" * 30 not in str(r) and "r_" not in str(r) for r in routes)
        methods = {
            dict(labels).get("method")
            for (name, labels) in samples
            if name.startswith("qahwa_http_request")
        }
        assert "other" in methods and "PURGE" not in methods
        assert (
            samples[
                (
                    "qahwa_http_request_duration_seconds_count",
                    (("method", "POST"), ("route", "/v1/rng/{session_id}/draws")),
                )
            ]
            == 4
        )
        assert samples[("qahwa_actions_total", (("kind", "rng"),))] == 4
        assert samples[("qahwa_created_total", (("kind", "match"),))] == 1
        assert samples[("qahwa_matches", (("kind", "rng"), ("status", "playing")))] == 1
        assert samples[("qahwa_matches", (("kind", "match"), ("status", "seating")))] == 1
        assert samples[("qahwa_log_entries", ())] == 1  # the session's lock (v2 logs locks)
        assert samples[("qahwa_operator_keys", (("state", "active"),))] == 1
        assert samples[("qahwa_database_up", ())] == 1
        assert families["qahwa_witness_lag_entries"].type == "gauge"
        assert not families["qahwa_witness_lag_entries"].samples  # no witness yet
        assert "process_cpu_seconds_total" in {n for n, _ in samples}
        srv.app.state.metrics.witness_lag.labels(witness="w1").set(3)
        deadline = time.monotonic() + 20
        while samples[("qahwa_sweep_runs_total", (("outcome", "ok"),))] < 1:
            assert time.monotonic() < deadline, "no sweep ran"
            time.sleep(0.05)
            _, samples = _metrics(srv.url)
        _, samples = _metrics(srv.url)
        assert samples[("qahwa_witness_lag_entries", (("witness", "w1"),))] == 3
        assert match.match_id


# -- JSON logs --------------------------------------------------------------------------------------
def test_json_logs_have_request_ids_and_no_secrets(tmp_path: Path) -> None:
    srv = Serve(tmp_path, f"sqlite:///{tmp_path / 'q.db'}", args=("--log-format", "json"))
    secrets: list[str] = []
    try:
        key = (tmp_path / "operator.key").read_text().strip()
        secrets.append(key)
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            created = create_match(c, "tawla", {"match_length": 1})
            seats = seed_all(c, created, prefix="client-seed-secret")
            tokens = [st.token for st in seats]
            secrets += tokens + [st.client_seed for st in seats] + [st.nonce for st in seats]
            play_actions(c, seats, random.Random(3), limit=6)
            s = c.post("/v1/rng", json={}).json()
            nonce = new_nonce().hex()
            secrets += [s["token"], "dice-seed-secret-1234", nonce]
            r = c.post(
                f"/v1/rng/{s['session_id']}/seed",
                headers=auth(s["token"]),
                json={"client_seed": "dice-seed-secret-1234", "nonce": nonce},
            )
            assert r.status_code == 200, r.text
            c.post(
                f"/v1/rng/{s['session_id']}/draws", headers=auth(s["token"]), json={"kind": "dice"}
            )
            closed = c.post(f"/v1/rng/{s['session_id']}/close", headers=auth(s["token"])).json()
            secrets.append(closed["server_seed"])
            c.get("/v1/keys", headers={"X-Request-ID": "trace-42"})
            c.get("/v1/matches/m_nope/state", headers=auth(tokens[1]))  # 404 with a token
            # (an access line is written before its response is sent)
    finally:
        srv.kill()
    text = (tmp_path / f"serve-{srv.port}.log").read_text()
    assert f"operator key 'default' written to {tmp_path / 'operator.key'}" in text
    lines = [json.loads(line) for line in text.splitlines() if not line.startswith("qahwa: ")]
    access = [rec for rec in lines if rec["logger"] == "uvicorn.access"]
    assert len(access) >= 10
    assert all(re.fullmatch(r"[0-9a-f]{16}|trace-42", rec["request_id"]) for rec in access)
    assert len({rec["request_id"] for rec in access}) == len(access)
    assert any(
        rec["request_id"] == "trace-42" and rec["path"] == "/v1/keys" and rec["status"] == 200
        for rec in access
    )
    for secret in secrets:
        assert secret not in text, secret


# -- key rotation ------------------------------------------------------------------------------------
def test_a_transcript_signed_before_a_rotation_verifies_after_it(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path)
    with LiveServer(settings) as a, Client(a.url) as qc:
        sess = _session(qc, "before rotation")
        sess.shuffle(10)
        sess.close()
        saved = sess.transcript()  # as its player keeps it
        [old] = qc.keys().keys
    assert saved["signature"]["key_id"] == old.key_id
    (tmp_path / "saved.json").write_text(json.dumps(saved))
    out = _cli(settings, "keys", "rotate", "--in", "0")
    assert out.returncode == 0, out.stderr
    assert f"Announced by {old.key_id} (a signed key_announcement" in out.stdout
    retired_file = tmp_path / f"signing.key.retired-{old.key_id}"
    assert retired_file.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "signing.key").stat().st_mode & 0o777 == 0o600
    with LiveServer(settings) as b, Client(b.url) as qc:
        keys = {k.key_id: k for k in qc.keys().keys}
        assert set(keys) > {old.key_id} and len(keys) == 2
        assert not keys[old.key_id].current and keys[old.key_id].retired_at is not None
        [new] = [k for k in keys.values() if k.key_id != old.key_id]
        assert new.current and new.retired_at is None and new.key_id in out.stdout
        fresh = _session(qc, "after rotation")
        assert fresh.created.record["signature"]["key_id"] == new.key_id
        assert qc.verify(saved)["status"] == "verified"  # with the keys /v1/keys lists now
        check = subprocess.run(
            [
                sys.executable,
                "-m",
                "verify_cli",
                "check",
                "--server",
                b.url,
                "--jobs",
                "1",
                str(tmp_path / "saved.json"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert check.returncode == 0, check.stdout + check.stderr
    # a process started with the retired key and a master key that opens no key in force
    # in the database refuses to run
    other_master = base64.b64encode(bytes(32)).decode()
    with pytest.raises(RetiredKeyError):
        create_app(
            settings.model_copy(
                update={"signing_key_file": retired_file, "master_key": other_master}
            )
        )
