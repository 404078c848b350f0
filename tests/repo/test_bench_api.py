"""``make bench-api``'s headline pieces and ``make profile-api``: the protocol's crypto timed,
profile samples split by part of the stack, and the counts per action of a live server."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bench import api, profile_api
from tests.support.http_play import GAMES


def test_the_protocols_crypto_is_timed_in_cpu_ms() -> None:
    ms = api.crypto_ms(50)
    assert 0.0 < ms < 50.0


def test_a_row_leads_with_server_cpu_and_its_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    bare = {"cpu": 1.5, "rate": 400.0, "p50": 10.0, "p99": 40.0}
    qahwa = {"cpu": 2.0, "rate": 300.0, "p50": 12.0, "p99": 60.0}
    api._row("qahwa", qahwa, bare, "bare", floor=1.6)
    line = capsys.readouterr().out.strip()
    assert line == "| qahwa | **2.00** | 0.75× bare | 0.80× | 300.0 | 12.0 | 60.0 | 0.75× | 1.50× |"


def test_profile_samples_split_by_part_and_scaled_to_the_cpu(tmp_path: Path) -> None:
    raw = tmp_path / "profile.txt"
    loop = "process 1:qahwa serve;thread (0x1);run (uvicorn/main.py:1);_run_once (asyncio/base_events.py:9)"
    worker = "thread (0x2);WorkerThread.run (anyio/_backends/_asyncio.py:5)"
    raw.write_text(
        f"{loop};select (selectors.py:3);EpollSelector.select (selectors.py:4) 50\n"
        f"{loop};h11 (h11/_connection.py:3) 30\n"
        f"{worker};act (service/routes/matches.py:9);execute (sqlalchemy/engine/base.py:1) 40\n"
        f"{worker};act (service/routes/matches.py:9);_verify_seat_sig (service/matches.py:193)"
        ";verify (cryptography/x.py:1) 10\n"
        f"{worker};act (service/routes/matches.py:9);view (games/hokm.py:400) 20\n"
        f"{worker};get (queue.py:1);Condition.wait (threading.py:320) 70\n"
    )
    stacks, idle = profile_api.read_collapsed(raw)
    assert idle == 120  # the event loop's select and the idle worker's wait
    text = profile_api.table(stacks, idle, cpu_ms=2.0, actions=100, top=5)
    rows = dict(re.findall(r"^\| ([^|`]+?) \| ([\d.]+) \| [\d.]+% \|$", text, re.M))
    assert rows["SQL (SQLAlchemy Core, the sqlite3 driver)"] == "0.800"  # 40 of 100 samples
    assert rows["HTTP server and event loop (uvicorn, h11, asyncio)"] == "0.600"
    assert rows["engine (apply, legal moves, seat view, catch-up)"] == "0.400"
    crypto = next(k for k in rows if k.startswith("protocol crypto"))
    assert rows[crypto] == "0.200"
    assert "2.00 ms" in text and "120 more" in text


@pytest.mark.skipif("hokm" not in GAMES, reason="needs the hokm engine")
def test_a_live_server_runs_two_transactions_and_six_statements_per_action() -> None:
    """GET state + POST action on a keyed hokm match: one read and one write transaction,
    BEGIN twice, the match row read twice (the second locked, with any new events), the
    event inserted and the row updated once, no thread-pool hand-off but now and then (on
    SQLite both run on the event loop when their locks are free, and one client's are but
    while the log's checkpointer, woken by a new match's lock, writes: then the request
    waits in the pool, as it must; the tree before ran every request there, 2 an action).
    Other threads of the server (the checkpointer) may add a statement now and then."""
    text = profile_api.counts("hokm", 40, top=5)
    got = {k: float(v) for k, v in re.findall(r"^\| ([^|]+?) \| ([\d.]+) \|$", text, re.M)}
    assert 2.0 <= got["transactions (BEGIN)"] <= 2.2
    assert 2.0 <= got["SQL SELECT"] <= 2.2
    assert 1.0 <= got["SQL INSERT"] <= 1.1
    assert 1.0 <= got["SQL UPDATE"] <= 1.1
    assert got.get("thread-pool hand-offs (anyio.to_thread.run_sync)", 0.0) <= 0.1
    assert (
        2.0
        <= got[
            "json.dumps (the service's dumps and JSONEncoder.encode; canonical JSON not counted)"
        ]
        <= 8.0
    )
    assert "The service without HTTP (hokm, 40 actions" in text


# -- the anchors: what someone writes instead of qahwa, never qahwa's own layer -------------

ANCHORS = ("create_raw_app", "create_sqlmodel_app")


def test_the_anchors_import_nothing_of_the_service() -> None:
    """bench/bare_app.py names no module of the service, and importing it (and building both
    anchors) loads none: an anchor through service/db.py measured qahwa against itself."""
    import ast
    import subprocess
    import sys

    src = Path(__file__).resolve().parents[2] / "bench" / "bare_app.py"
    tree = ast.parse(src.read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    first_party = {"service", "fairness", "games", "qahwa_wire", "qahwa_client", "bench"}
    assert not [n for n in names if n.split(".")[0] in first_party], names
    probe = (
        "import os, sys, tempfile\n"
        "os.environ['BARE_DATABASE_URL'] = 'sqlite:///' + tempfile.mkdtemp() + '/b.db'\n"
        "from bench import bare_app\n"
        "bare_app.create_raw_app(); bare_app.create_sqlmodel_app()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'service', 'fairness', 'games', 'qahwa_wire'}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=src.parents[1],
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_the_anchors_pragmas_are_the_services() -> None:
    """The floor runs SQLite as the service does: the same pragmas, read back from a
    connection of each."""
    import sqlite3

    from bench import bare_app
    from service.db import Database

    def settings(conn: Any) -> list[Any]:
        return [
            conn.execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
            + ("mmap_size", "cache_size")
        ]

    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/q.db")
        try:
            with db.write_engine.connect() as c:
                theirs = settings(c.connection.dbapi_connection)
        finally:
            db.dispose()
        raw = sqlite3.connect(f"{tmp}/b.db")
        for p in bare_app.SQLITE_PRAGMAS:
            raw.execute(p)
        assert settings(raw) == theirs
        raw.close()


@pytest.mark.parametrize("factory", ANCHORS)
def test_an_anchor_plays_reads_and_refuses_stale_writes(
    factory: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each anchor stores what it says: a match, its version bumped once per action with
    one event each (a stale version gets 409, an unknown match 404), to BARE_ACTIONS."""
    import sqlite3

    import anyio
    import httpx

    from bench import bare_app

    monkeypatch.setenv("BARE_DATABASE_URL", f"sqlite:///{tmp_path}/b.db")
    monkeypatch.setenv("BARE_ACTIONS", "3")
    app = getattr(bare_app, factory)()

    async def play() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as client:
            mid = (await client.post("/v1/matches")).json()["match_id"]
            assert (await client.get("/v1/matches/nope/state")).status_code == 404
            for v in range(3):
                view = (await client.get(f"/v1/matches/{mid}/state")).json()
                assert (view["version"], view["status"]) == (v, "playing")
                body = {"action": {"type": "go", "n": v}, "version": v}
                out = (await client.post(f"/v1/matches/{mid}/actions", json=body)).json()
                assert out["version"] == v + 1
            assert out["status"] == "finished"
            stale = await client.post(f"/v1/matches/{mid}/actions", json=body)
            assert stale.status_code == 409

    anyio.run(play)
    db = sqlite3.connect(tmp_path / "b.db")
    assert db.execute("SELECT version FROM bare_matches").fetchall() == [(3,)]
    events = db.execute("SELECT seq, body FROM bare_events ORDER BY seq").fetchall()
    assert [(s, json.loads(b)["action"]["n"]) for s, b in events] == [(0, 0), (1, 1), (2, 2)]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
