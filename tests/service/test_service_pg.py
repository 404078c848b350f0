"""PostgreSQL: a whole match, and two server processes sharing one database."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.http_play import (
    GAMES,
    V2Seat,
    auth,
    check_transcript,
    create_match,
    play_actions,
    seed_all,
    started,
)
from tests.support.live_server import LiveServer, Serve

PG_URL = os.environ.get("QAHWA_TEST_PG_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set"),
]


def test_match_on_postgres() -> None:
    assert PG_URL is not None
    with LiveServer(database_url=PG_URL) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        game = GAMES[0]
        created, seats = started(c, game)
        play_actions(c, seats, random.Random(4), limit=200)
        if c.get(f"/v1/matches/{created['match_id']}").json()["status"] != "finished":
            seats[0].resign()
        doc = c.get(f"/v1/matches/{created['match_id']}/transcript").json()
        check_transcript(c, doc, [r for st in seats for r in st.receipts])
        head = c.get("/v1/log").json()
        assert head["tree_size"] >= doc["lock_index"] + 2  # the lock and the reveal record


def _turn(c: httpx.Client, mid: str, seats: list[V2Seat]) -> tuple[int, dict[str, Any]]:
    v = c.get(f"/v1/matches/{mid}/state", headers=auth(seats[0].token)).json()
    if v["turn"] != 0:
        v = c.get(f"/v1/matches/{mid}/state", headers=auth(seats[v["turn"]].token)).json()
    return v["seat"], v


def test_two_processes_one_database(tmp_path: Path) -> None:
    assert PG_URL is not None
    game = GAMES[0]
    # Both processes share the keys (as two replicas would) through the same data dir.
    a = Serve(tmp_path, PG_URL)
    try:
        b = Serve(tmp_path, PG_URL)
    except BaseException:
        a.kill()
        raise
    try:
        with (
            httpx.Client(base_url=a.url, timeout=30) as ca,
            httpx.Client(base_url=b.url, timeout=30) as cb,
        ):
            assert ca.get("/v1/keys").json() == cb.get("/v1/keys").json()
            # the default (long) ruleset: the match is still running for the race and resign
            created = create_match(ca, game, {})
            mid = created["match_id"]
            seats = seed_all(cb, created)
            rnd = random.Random(6)
            # Alternate the processes move by move: each sees the other's writes.
            for i in range(12):
                c = (ca, cb)[i % 2]
                seat, view = _turn(c, mid, seats)
                if view["status"] != "playing":
                    break
                body = seats[seat].act_request(view, rnd.choice(view["legal_actions"]))
                r = c.post(f"/v1/matches/{mid}/actions", json=body, headers=auth(seats[seat].token))
                assert r.status_code == 200, r.text
                seats[seat].accepted(body)
                other = (cb, ca)[i % 2]
                assert _turn(other, mid, seats)[1]["version"] == view["version"] + 1
            # The race across processes: one version, two different actions.
            seat, view = _turn(ca, mid, seats)
            assert view["status"] == "playing"
            legal = view["legal_actions"]
            results: list[httpx.Response] = []
            barrier = threading.Barrier(2)

            def send(url: str, action: dict[str, Any]) -> None:
                body = seats[seat].act_request(view, action)
                with httpx.Client(base_url=url, timeout=30) as c:
                    barrier.wait()
                    results.append(
                        c.post(
                            f"/v1/matches/{mid}/actions", json=body, headers=auth(seats[seat].token)
                        )
                    )

            ts = [
                threading.Thread(target=send, args=(a.url, legal[0])),
                threading.Thread(target=send, args=(b.url, legal[-1])),
            ]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert sorted(r.status_code for r in results) == [200, 409]
            seats[0].resign()
            doc = ca.get(f"/v1/matches/{mid}/transcript").json()
            check_transcript(ca, doc)
            # Concurrent locks on both processes get distinct log indices.
            idx: list[int] = []

            def make(url: str) -> None:
                with httpx.Client(base_url=url, timeout=30) as c:
                    for _ in range(3):
                        made, _ = started(c, game, keyed=False)
                        idx.append(
                            c.get(f"/v1/matches/{made['match_id']}/lock").json()["log_index"]
                        )

            ts = [threading.Thread(target=make, args=(u,)) for u in (a.url, b.url)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert len(set(idx)) == 6
    finally:
        a.kill()
        b.kill()
