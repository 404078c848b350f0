"""Faults survived: the database locked or gone (503, nothing half-done, resumes alone), and
``kill -9`` of the server while 16 clients play (nothing acknowledged is lost).

The kill and PostgreSQL tests are ``slow``. The PostgreSQL outage runs on a throwaway
cluster of its own (``pg_createcluster 15 qahwa_fault --port 5499``), never the shared one.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import service.db
from qahwa_client import ApiError, Client, Seat, Unanswered
from tests.support.http_play import GAMES, check_transcript, client_moves, short_ruleset
from tests.support.live_server import LiveServer, Serve

PG_URL = os.environ.get("QAHWA_TEST_PG_URL")


def _sqlite_path(srv: LiveServer) -> Path:
    return Path(srv.settings.database_url.removeprefix("sqlite:///"))


def test_database_file_is_created_private() -> None:
    with LiveServer() as srv:
        path = _sqlite_path(srv)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for key in (srv.settings.master_key_path, srv.settings.signing_key_path):
            assert stat.S_IMODE(key.stat().st_mode) == 0o600


def _log_size(qc: Client) -> int:
    return qc.tree_head().tree_size


def _expect_503(call: Any) -> ApiError:
    with pytest.raises(ApiError) as exc:
        call()
    assert exc.value.status == 503 and exc.value.code == "unavailable", exc.value
    assert "database" in exc.value.message
    return exc.value


def test_sqlite_locked_answers_503_changes_nothing_and_resumes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.db, "SQLITE_BUSY_MS", 300)  # wait 0.3 s for a lock, not 10
    with LiveServer() as srv, Client(srv.url, retry_delay=0) as qc:
        match = qc.create_match("tawla", {"match_length": 1})
        match.start()  # commit, lock (logged), reveal
        view = match.seats[0].state()
        mover = match.seats[view.turn if view.turn is not None else 0]
        view = mover.state()
        before = qc.events(match.match_id)
        size = _log_size(qc)
        holder = sqlite3.connect(_sqlite_path(srv), isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            _expect_503(lambda: mover.act(view.legal_actions[0]))  # resent, identically
            sent = mover.requests[-1]
            assert sent["attempts"] == qc.retries + 1 and sent["receipt"] is None
            _expect_503(lambda: qc.create_match("hokm"))
            _expect_503(lambda: qc.rng())
            # reads still answer (WAL), and show that nothing changed
            assert qc.events(match.match_id) == before
            assert _log_size(qc) == size
        finally:
            holder.rollback()
            holder.close()
        out = mover.act(view.legal_actions[0], version=view.version)
        assert out.version == view.version + 1
        assert mover.requests[-1]["body"] == sent["body"]  # the same value, the same signature
        created = qc.create_match("hokm")
        assert _log_size(qc) == size  # the refused creation left no trace (and a v2
        created.start()  # creation logs nothing: its lock is logged)
        assert _log_size(qc) == size + 1 and created.seats[0].log_index == size


# -- kill -9 while 16 clients play -------------------------------------------------------------


class Player(threading.Thread):
    """One client playing one match until the server disappears; records every 2xx action."""

    def __init__(self, url: str, game: str, n: int) -> None:
        super().__init__(daemon=True)
        self.url, self.game, self.n = url, game, n
        self.acks: list[tuple[int, int, dict[str, Any]]] = []  # first_seq, seat, request
        self.match_id = ""
        self.seats: list[Seat] = []
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with Client(self.url, timeout=10) as qc:
                match = qc.create_match(self.game, short_ruleset(self.game))
                self.match_id = match.match_id
                self.seats = match.seats
                match.start()
                self.ready.set()
                self._play(match.seats, random.Random(self.n))
        except (httpx.TransportError, Unanswered):
            pass  # the server was killed: expected (the client resent, then gave up)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.ready.set()

    def _play(self, seats: list[Seat], rnd: random.Random) -> None:
        for turn, _, out in client_moves(seats, rnd):
            self.acks.append((out.first_seq, turn, seats[turn].requests[-1]["body"]))


def _kill_while_playing(tmp_path: Path, database_url: str) -> None:
    srv = Serve(tmp_path, database_url)
    games = [g for g in GAMES for _ in range(3)][:16]
    players = [Player(srv.url, games[i % len(games)], i) for i in range(16)]
    try:
        for p in players:
            p.start()
        for p in players:
            assert p.ready.wait(60)
        deadline = time.monotonic() + 30
        while sum(len(p.acks) for p in players) < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        srv.kill()  # SIGKILL, mid-request for most players
    for p in players:
        p.join(30)
        assert not p.is_alive()
        assert p.error is None, p.error
    acked = sum(len(p.acks) for p in players)
    assert acked >= 50, acked
    srv = Serve(tmp_path, database_url)
    try:
        with httpx.Client(base_url=srv.url, timeout=60) as c, Client(srv.url, http=c) as qc:
            for p in players:
                if not p.match_id or not all(s.lock is not None for s in p.seats):
                    continue  # killed before every seat revealed
                for seat in p.seats:  # the same seats (their keys and chains), the new server
                    seat.client = qc
                    seat.view = None
                for _ in client_moves(p.seats, random.Random(100 + p.n)):
                    pass
                doc = c.get(f"/v1/matches/{p.match_id}/transcript").json()
                events = doc["events"]
                for first_seq, n, sent in p.acks:
                    logged = dict(events[first_seq])
                    assert isinstance(logged.pop("at"), str)  # its time (fairness-v2 §7)
                    assert logged == {
                        "seq": first_seq,
                        "type": "action",
                        "seat": n,
                        "action": sent["action"],
                        "sig": sent["sig"],
                    }
                check_transcript(c, doc, [r for s in p.seats for r in s.receipts])
                for seat in p.seats:
                    seat.check_transcript(doc)
                assert qc.verify(doc)["status"] == "verified"
    finally:
        srv.kill()


@pytest.mark.slow
def test_kill_9_while_16_clients_play_sqlite(tmp_path: Path) -> None:
    _kill_while_playing(tmp_path, f"sqlite:///{tmp_path / 'q.db'}")


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set")
def test_kill_9_while_16_clients_play_postgres(tmp_path: Path) -> None:
    assert PG_URL is not None
    _kill_while_playing(tmp_path, PG_URL)


# -- PostgreSQL goes away (a throwaway cluster of this test's own) ------------------------------

CLUSTER = ("15", "qahwa_fault")
PORT = 5499
SOCKETS = "/var/run/postgresql"


def _run(*args: str) -> str:
    return subprocess.run(
        list(args), check=True, capture_output=True, text=True, timeout=120
    ).stdout


def _psql(sql: str) -> None:
    _run(
        "psql",
        "-h",
        SOCKETS,
        "-p",
        str(PORT),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        sql,
    )


@pytest.fixture()
def fault_cluster() -> Iterator[str]:
    tools = [
        shutil.which(t) for t in ("pg_createcluster", "pg_ctlcluster", "pg_dropcluster", "psql")
    ]
    if not all(tools) or os.geteuid() != 0:
        pytest.skip("needs the PostgreSQL cluster tools (pg_createcluster …) as root")
    if CLUSTER[1] not in _run("pg_lsclusters", "-h"):
        _run(
            "pg_createcluster",
            *CLUSTER,
            "--port",
            str(PORT),
            "--",
            "--auth-local=trust",
            "--auth-host=trust",
        )
    _run("pg_ctlcluster", *CLUSTER, "start")
    try:
        _psql("DROP DATABASE IF EXISTS qahwa_fault")
        _psql("CREATE DATABASE qahwa_fault")
        yield f"postgresql+psycopg://postgres@/qahwa_fault?host={SOCKETS}&port={PORT}"
    finally:
        _run("pg_dropcluster", "--stop", *CLUSTER)


@pytest.mark.slow
@pytest.mark.postgres
def test_postgres_goes_away_answers_503_and_resumes(fault_cluster: str) -> None:
    with LiveServer(database_url=fault_cluster) as srv, Client(srv.url, retry_delay=0) as qc:
        match = qc.create_match("hokm", {"target": 1})
        match.start()
        play_seats = match.seats
        view = play_seats[0].state()
        mover = play_seats[view.turn if view.turn is not None else 0]
        view = mover.state()
        size = _log_size(qc)
        _run("pg_ctlcluster", *CLUSTER, "stop", "-m", "fast")
        try:
            started = time.monotonic()
            _expect_503(lambda: mover.act(view.legal_actions[0]))
            _expect_503(lambda: qc.create_match("hokm"))
            _expect_503(lambda: qc.match(match.match_id))
            _expect_503(lambda: mover.state())
            assert httpx.get(srv.url + "/healthz").status_code == 503
            assert time.monotonic() - started < 20  # refused promptly, not hung
            time.sleep(2)
        finally:
            _run("pg_ctlcluster", *CLUSTER, "start")
        deadline = time.monotonic() + 30
        while httpx.get(srv.url + "/healthz").status_code != 200:
            assert time.monotonic() < deadline, "the service did not resume"
            time.sleep(0.2)
        assert _log_size(qc) == size  # the refused creation left nothing behind
        out = mover.act(view.legal_actions[0], version=view.version)
        assert out.version == view.version + 1
        created = qc.create_match("hokm")
        created.start()
        assert created.seats[0].log_index == size
