"""``make bench-api``'s headline pieces and ``make profile-api``: the protocol's crypto timed,
profile samples split by part of the stack, and the counts per action of a live server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from http_play import GAMES

from bench import api, profile_api


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
    event inserted and the row updated once, one thread-pool hand-off per request. Other
    threads of the server (the log's checkpointer) may add a statement now and then."""
    text = profile_api.counts("hokm", 40, top=5)
    got = {k: float(v) for k, v in re.findall(r"^\| ([^|]+?) \| ([\d.]+) \|$", text, re.M)}
    assert 2.0 <= got["transactions (BEGIN)"] <= 2.2
    assert 2.0 <= got["SQL SELECT"] <= 2.2
    assert 1.0 <= got["SQL INSERT"] <= 1.1
    assert 1.0 <= got["SQL UPDATE"] <= 1.1
    assert got["thread-pool hand-offs (anyio.to_thread.run_sync)"] == 2.0
    assert 2.0 <= got["json.dumps (JSONEncoder.encode; canonical JSON not counted)"] <= 8.0
    assert "The service without HTTP (hokm, 40 actions" in text
