"""PostgreSQL, two processes: writes NOTIFY only while some process has waiters
(service/watch.py), and no wake-up across processes is lost for it.

- nobody waits: a spy listening on the channel hears nothing of the writes;
- a long poll on one process is woken by a write on the other, promptly, both right after
  it parked (before the writers can have seen its mark: it looks again meanwhile) and
  later (by the notification, which the spy now hears too).
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.watch import CHANNEL, FLAG_SECONDS, MARGIN_SECONDS, WATCHING
from tests.repo.test_deployment import fresh_pg
from tests.support.http_play import GAMES, auth, create_match, seed_all
from tests.support.live_server import Serve

PG_URL = os.environ.get("QAHWA_TEST_PG_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set"),
]


class Spy:
    """A LISTEN connection of the test's own: the notifications it heard."""

    def __init__(self, url: str) -> None:
        import psycopg
        from sqlalchemy.engine import make_url

        info = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self.conn = psycopg.connect(info, autocommit=True, application_name="test-spy")
        self.conn.execute(f"LISTEN {CHANNEL}")
        self.heard: list[str] = []

    def drain(self, seconds: float = 0.3) -> list[str]:
        self.heard += [n.payload for n in self.conn.notifies(timeout=seconds)]
        return self.heard

    def watching(self) -> bool:
        row = self.conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            (WATCHING,),
        ).fetchone()
        return bool(row and row[0])


def _act(c: httpx.Client, mid: str, seats: list[Any], rnd: random.Random) -> int:
    """One legal action by whoever's turn it is; the match's next_seq after it."""
    v = c.get(f"/v1/matches/{mid}/state", headers=auth(seats[0].token)).json()
    if v["turn"] != 0:
        v = c.get(f"/v1/matches/{mid}/state", headers=auth(seats[v["turn"]].token)).json()
    assert v["status"] == "playing", v
    seat = v["seat"]
    body = seats[seat].act_request(v, rnd.choice(v["legal_actions"]))
    r = c.post(f"/v1/matches/{mid}/actions", json=body, headers=auth(seats[seat].token))
    assert r.status_code == 200, r.text
    seats[seat].accepted(body)
    return int(c.get(f"/v1/matches/{mid}/events").json()["next_seq"])


def _woken_after_write(
    cb: httpx.Client, ca: httpx.Client, mid: str, seats: list[Any], rnd: random.Random
) -> float:
    """Park a long poll on B, write on A: seconds from A's answer to B's."""
    after = int(cb.get(f"/v1/matches/{mid}/events").json()["next_seq"]) - 1
    got: dict[str, Any] = {}

    def poll() -> None:
        r = cb.get(f"/v1/matches/{mid}/events", params={"after": after, "wait": 30})
        got["at"], got["events"] = time.monotonic(), r.json()["events"]

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(0.3)  # parked
    _act(ca, mid, seats, rnd)
    wrote = time.monotonic()
    t.join(timeout=40)
    assert got["events"], got
    return float(got["at"] - wrote)


def test_writes_notify_only_while_someone_waits(tmp_path: Path) -> None:
    url = fresh_pg("watch_gate")
    env = {"QAHWA_CREATE_RATE_PER_MINUTE": "100000"}
    a = Serve(tmp_path, url, env)
    try:
        b = Serve(tmp_path, url, env)
        spy = Spy(url)
        try:
            with (
                httpx.Client(base_url=a.url, timeout=60) as ca,
                httpx.Client(base_url=b.url, timeout=60) as cb,
            ):
                created = create_match(ca, GAMES[0], {})
                mid = created["match_id"]
                seats = seed_all(ca, created)
                rnd = random.Random(3)
                time.sleep(FLAG_SECONDS + 0.2)  # the writers' last look is older than now
                spy.drain()
                spy.heard.clear()
                for _ in range(3):
                    _act(ca, mid, seats, rnd)
                assert spy.drain() == [] and not spy.watching()
                # B parks a long poll: the writers cannot know yet, B looks again meanwhile
                assert _woken_after_write(cb, ca, mid, seats, rnd) < 1.5
                deadline = time.monotonic() + 10
                while not spy.watching():
                    assert time.monotonic() < deadline, "B never marked its listener"
                    time.sleep(0.05)
                time.sleep(FLAG_SECONDS + MARGIN_SECONDS + 0.2)  # every writer sees it now
                spy.heard.clear()
                assert _woken_after_write(cb, ca, mid, seats, rnd) < 1.0
                assert any(p.startswith(mid + " ") for p in spy.drain()), spy.heard
        finally:
            spy.conn.close()
            b.kill()
    finally:
        a.kill()
