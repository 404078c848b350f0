"""A lock appended to the log is checkpointed without waiting for any event: a conforming
client proves the lock under a checkpoint before it reveals (fairness-v2.md §3a.4), and
until the reveals no event is appended anywhere on a quiet server."""

from __future__ import annotations

import time

import httpx

from qahwa_client import Client
from tests.support.live_server import LiveServer


def test_a_lock_is_checkpointed_before_any_event() -> None:
    with LiveServer(checkpoint_seconds=0.05) as srv, Client(srv.url) as qc:
        m = qc.create_match("tawla", {"match_length": 1})
        for seat in m.seats:
            seat.commit()
        assert qc.events(m.match_id).events == []
        deadline = time.monotonic() + 10
        while True:
            r = httpx.get(f"{srv.url}/v1/matches/{m.match_id}/log-proof")
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        assert r.text.startswith("c2sp.org/tlog-proof@v1\n")
