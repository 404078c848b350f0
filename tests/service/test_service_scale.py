"""Two ``qahwa serve`` processes on one database, requests rotating between them.

Each process caches engines; the other's writes reach it only through the database, so
every request there catches up on what the other process appended. On PostgreSQL an SSE
stream on one process is woken by writes on the other (LISTEN/NOTIFY).
"""

from __future__ import annotations

import json
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
    seed_all,
    short_ruleset,
)
from tests.support.live_server import Serve

PG_URL = os.environ.get("QAHWA_TEST_PG_URL")
GAME = "tawla" if "tawla" in GAMES else (GAMES[0] if GAMES else None)

pytestmark = pytest.mark.skipif(GAME is None, reason="no game engine available yet")


def _url(backend: str, tmp_path: Path) -> str:
    if backend == "postgres":
        if not PG_URL:
            pytest.skip("QAHWA_TEST_PG_URL is not set")
        return PG_URL
    return f"sqlite:///{tmp_path / 'q.db'}"


def _pair(tmp_path: Path, url: str) -> tuple[Serve, Serve]:
    a = Serve(tmp_path, url)
    try:
        return a, Serve(tmp_path, url)
    except BaseException:
        a.kill()
        raise


def _play(
    clients: list[httpx.Client],
    mid: str,
    seats: list[V2Seat],
    rnd: random.Random,
    limit: int = 3000,
) -> int:
    """Random legal play; request i goes to ``clients[i % len(clients)]``."""
    n = 0
    for _ in range(limit):
        tokens = [st.token for st in seats]
        c = clients[n % len(clients)]
        n += 1
        view = c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[0])).json()
        if view["status"] != "playing":
            return n
        seat = view["turn"]
        c = clients[n % len(clients)]
        n += 1
        view = c.get(f"/v1/matches/{mid}/state", headers=auth(tokens[seat])).json()
        c = clients[n % len(clients)]
        n += 1
        body = seats[seat].act_request(view, rnd.choice(view["suggested_actions"]))
        r = c.post(f"/v1/matches/{mid}/actions", json=body, headers=auth(tokens[seat]))
        assert r.status_code == 200, r.text
        seats[seat].accepted(body)
        # the response's own view is the new state, as the other process also sees it
        other = (
            clients[n % len(clients)]
            .get(f"/v1/matches/{mid}/state", headers=auth(tokens[seat]))
            .json()
        )
        head = other.pop("head")  # the signed head of this answer (its own time)
        assert head["chain"] == other["chain"] and head["match_id"] == mid
        assert other == r.json()["state"]
    raise AssertionError("the match did not end")


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
@pytest.mark.slow
def test_match_alternating_between_two_processes(tmp_path: Path, backend: str) -> None:
    assert GAME is not None
    a, b = _pair(tmp_path, _url(backend, tmp_path))
    try:
        with (
            httpx.Client(base_url=a.url, timeout=30) as ca,
            httpx.Client(base_url=b.url, timeout=30) as cb,
        ):
            created = create_match(ca, GAME, short_ruleset(GAME))
            seats = seed_all(cb, created)
            mid = created["match_id"]
            _play([ca, cb], mid, seats, random.Random(11))
            for c in (ca, cb):
                doc = c.get(f"/v1/matches/{mid}/transcript").json()
                check_transcript(c, doc)
            assert (
                ca.get(f"/v1/matches/{mid}/transcript").json()["events"]
                == cb.get(f"/v1/matches/{mid}/transcript").json()["events"]
            )
    finally:
        a.kill()
        b.kill()


@pytest.mark.postgres
def test_stream_on_one_process_sees_writes_on_the_other(tmp_path: Path) -> None:
    assert GAME is not None
    a, b = _pair(tmp_path, _url("postgres", tmp_path))
    try:
        with httpx.Client(base_url=a.url, timeout=30) as ca:
            created = create_match(ca, GAME, short_ruleset(GAME))
            mid = created["match_id"]
            got: list[dict[str, Any]] = []
            opened = threading.Event()

            def watch() -> None:
                with (
                    httpx.Client(base_url=b.url, timeout=60) as cb,
                    cb.stream(
                        "GET", f"/v1/matches/{mid}/events/stream", params={"timeout": 120}
                    ) as s,
                ):
                    opened.set()
                    kind = "message"
                    for line in s.iter_lines():
                        if line.startswith("event: "):
                            kind = line[7:]
                        elif line.startswith("data: "):
                            if kind != "head":  # the signed heads between batches
                                got.append(json.loads(line[6:]))
                            kind = "message"

            th = threading.Thread(target=watch)
            th.start()
            assert opened.wait(30)
            seats = seed_all(ca, created)
            _play([ca], mid, seats, random.Random(12))  # every write on process a
            th.join(timeout=120)
            assert not th.is_alive()
            doc = ca.get(f"/v1/matches/{mid}/transcript").json()
            # the stream on b delivered every event, in order, the start (a status message),
            # then the end of the stream
            events = [e for e in got[:-1] if "seq" in e]
            assert [e["seq"] for e in events] == list(range(len(doc["events"])))
            assert [e["status"] for e in got[:-1] if "seq" not in e] == ["playing"]
            assert got[-1] == {"status": "finished"}
    finally:
        a.kill()
        b.kill()
