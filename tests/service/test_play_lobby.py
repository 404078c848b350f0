"""The built-in lobby (``POST /play/tables``, service/play.py): it answers only on the
server's own machine unless the operator turns it on, limits its tables a minute and its
house seats at once for every address together, and a table nobody plays closes before
its lock, so nothing reaches the log."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from qahwa_client import Client, Seat, Terms
from service.play import refused_because
from tests.support import sqlite_settings
from tests.support.fake_clock import FakeClock
from tests.support.live_server import LiveServer

TAWLA = {"game": "tawla", "ruleset": {"match_length": 1}}


def _log_size(c: httpx.Client) -> int:
    return int(c.get("/v1/log").json()["tree_size"])


def _house_threads() -> int:
    return sum(t.name.startswith("house-") and t.is_alive() for t in threading.enumerate())


def _counted(url: str, limit: str) -> float:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(f'qahwa_rate_limited_total{{limit="{limit}"}}'):
            return float(line.split()[-1])
    raise AssertionError(f"no qahwa_rate_limited_total for {limit}")


def test_the_lobby_refuses_strangers_in_deploy_md_setup() -> None:
    """Behind deploy.md's proxy (nginx on this host sets X-Forwarded-For; uvicorn takes the
    player's address from it) the lobby refuses, and so does QAHWA_PLAY_LOBBY=0 — the
    env file's line — even from loopback."""
    with LiveServer() as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        before = _log_size(c)
        r = c.post("/play/tables", json=TAWLA, headers={"X-Forwarded-For": "198.51.100.7"})
        assert r.status_code == 403, r.text
        assert "QAHWA_PLAY_LOBBY=1" in r.json()["error"]["message"]
        # the same request straight from this machine is served
        assert c.post("/play/tables", json=TAWLA).status_code == 201
        assert _log_size(c) == before  # and nothing is logged before its person plays
    env = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in env.splitlines() if ln.startswith("QAHWA_PLAY_LOBBY=")]
    assert line == "QAHWA_PLAY_LOBBY=0"  # deploy.md's env file turns it off
    with LiveServer(play_lobby=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        r = c.post("/play/tables", json=TAWLA)
        assert r.status_code == 403 and "off on this server" in r.json()["error"]["message"]
        assert c.get("/play").status_code == 200  # the table page and seat links still work


@pytest.mark.parametrize(
    ("server", "client", "headers", "on", "open_"),
    [
        (("192.0.2.10", 8000), ("127.0.0.1", 5000), [], None, False),  # listens beyond lo
        (("192.0.2.10", 8000), ("192.0.2.99", 5000), [], None, False),
        (("127.0.0.1", 8000), ("203.0.113.5", 5000), [], None, False),
        (("/run/qahwa.sock", None), ("127.0.0.1", 5000), [], None, False),  # a unix socket
        (("127.0.0.1", 8000), ("127.0.0.1", 5000), [], None, True),
        (("::1", 8000), ("::1", 5000), [], None, True),
        (("127.0.0.1", 8000), ("127.0.0.1", 5000), [(b"forwarded", b"for=x")], None, False),
        (("192.0.2.10", 8000), ("198.51.100.1", 5000), [], True, True),  # QAHWA_PLAY_LOBBY=1
        (("127.0.0.1", 8000), ("127.0.0.1", 5000), [], False, False),  # QAHWA_PLAY_LOBBY=0
    ],
)
def test_the_lobby_opens_on_loopback_or_when_told(
    tmp_path: Path,
    server: tuple[str, int | None],
    client: tuple[str, int],
    headers: list[tuple[bytes, bytes]],
    on: bool | None,
    open_: bool,
) -> None:
    request = Request(
        {"type": "http", "method": "POST", "server": server, "client": client, "headers": headers}
    )
    why = refused_because(request, sqlite_settings(tmp_path, play_lobby=on))
    assert (why is None) == open_, why


def test_the_lobby_has_one_rate_for_every_address() -> None:
    """197 tables in 100 s from one address was the issue: at 4 a minute (a burst of one)
    the second table is refused, from any address, until the bucket refills."""
    clock = FakeClock()
    with (
        LiveServer(clock=clock, play_lobby=True, play_lobby_per_minute=4) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        assert c.post("/play/tables", json=TAWLA).status_code == 201
        refused = [c.post("/play/tables", json=TAWLA) for _ in range(20)]
        assert {r.status_code for r in refused} == {429}
        r = refused[0]
        assert r.headers["qahwa-limit"] == "lobby" and r.headers["retry-after"] == "15"
        assert "QAHWA_PLAY_LOBBY_PER_MINUTE" in r.json()["error"]["message"]
        assert _counted(srv.url, "lobby") == 20
        assert _counted(srv.url, "address") == 0
        clock.advance(15)
        assert c.post("/play/tables", json=TAWLA).status_code == 201


def test_the_lobby_caps_its_house_seats() -> None:
    """At most QAHWA_PLAY_LOBBY_BOTS house seats at once, waiting or playing: a 4-seat
    hokm table (three house seats) does not fit beside a tawla table under a cap of 3,
    and threads stay within the cap however many tables are asked for."""
    with (
        LiveServer(play_lobby=True, play_lobby_bots=3, play_lobby_per_minute=6000) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        base = threading.active_count()
        assert c.post("/play/tables", json=TAWLA).status_code == 201
        full = c.post("/play/tables", json={"game": "hokm", "ruleset": {"players": 4}})
        assert full.status_code == 503 and full.headers["qahwa-limit"] == "lobby_bots"
        assert "QAHWA_PLAY_LOBBY_BOTS" in full.json()["error"]["message"]
        made = [c.post("/play/tables", json=TAWLA) for _ in range(40)]
        assert [r.status_code for r in made].count(201) == 2  # three tawla tables: 3 seats
        # their people play: the three house seats start, and no more
        with Client(srv.url) as qc:
            for r in made[:2]:
                _commit_person(qc, r.json())
        deadline = time.monotonic() + 30
        while _house_threads() < 2:
            assert time.monotonic() < deadline, "the house seats did not start"
            time.sleep(0.05)
        assert _house_threads() <= 3
        # the house seats, the lobby's watcher, and the server's worker threads serving
        # them (issue 49 saw 637 threads after 197 tables)
        assert threading.active_count() <= base + 3 + 1 + 16


def _commit_person(qc: Client, table: dict[str, Any]) -> Seat:
    person = table["people"][0]
    seat = Seat(qc, table["match_id"], person["seat"], person["token"], terms=Terms(game="tawla"))
    seat.commit()
    return seat


@pytest.mark.slow
def test_an_unplayed_table_closes_before_its_lock_and_logs_nothing() -> None:
    clock = FakeClock()
    with (
        LiveServer(clock=clock, play_lobby=True, play_lobby_seat_seconds=120) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
        Client(srv.url) as qc,
    ):
        before = _log_size(c)
        idle = c.post("/play/tables", json=TAWLA).json()
        friends = c.post("/play/tables", json={**TAWLA, "friend": True}).json()  # no house
        played = c.post("/play/tables", json=TAWLA).json()
        seat = _commit_person(qc, played)
        seat.reveal(wait=30)  # the house seat commits once the person has: the lock
        assert _log_size(c) == before + 1
        clock.advance(121)
        for table in (idle, friends):
            deadline = time.monotonic() + 30
            mid = table["match_id"]
            while (m := c.get(f"/v1/matches/{mid}").json())["status"] != "finished":
                assert time.monotonic() < deadline, "the unplayed table did not close"
                time.sleep(0.05)
            assert m["result"]["reason"] == "not_locked" and m["lock"] is None
        assert _log_size(c) == before + 1  # the played table's lock only
        assert sorted(srv.app.state.play_lobby.closed) == sorted(
            [idle["match_id"], friends["match_id"]]
        )


@pytest.mark.parametrize("header", ["X-Forwarded-For", "Forwarded"])
def test_a_proxied_request_is_a_stranger(header: str) -> None:
    with LiveServer() as srv:
        r = httpx.post(f"{srv.url}/play/tables", json=TAWLA, headers={header: "for=127.0.0.1"})
        assert r.status_code == 403


def test_the_lobby_seats_a_sealed_table_only_where_it_protects() -> None:
    """Issue 47: a sealed table of a game the page deals, where it protects the people (two
    of them, or a deal that leaves stock undealt), is created sealed with house seats; one
    person among house seats at a full deal, a game the page does not deal sealed, and an
    unknown deal are refused with words that say why, and nothing is created for them."""
    with LiveServer() as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        ok = [
            ("iraqi_domino", {"players": 2}, False),  # a boneyard
            ("hokm", {"players": 2}, False),  # two-player hokm leaves cards undealt
            ("hokm", {"players": 4}, True),  # two people
        ]
        for game, rules, friend in ok:
            r = c.post(
                "/play/tables",
                json={"game": game, "ruleset": {**rules, "deal": "sealed"}, "friend": friend},
            )
            assert r.status_code == 201, (game, rules, r.text)
            doc = r.json()
            assert len(doc["people"]) == (2 if friend else 1)
            public = c.get(f"/v1/matches/{doc['match_id']}").json()
            assert '"deal":"sealed"' in public["ruleset"], public["ruleset"]
        refused = [
            ({"game": "hokm", "ruleset": {"players": 4, "deal": "sealed"}}, "would not protect"),
            ({"game": "qahve", "ruleset": {"deal": "sealed"}}, "would not protect"),
            ({"game": "shelem", "ruleset": {"deal": "sealed"}, "friend": True}, "does not deal"),
            ({"game": "iraqi_domino", "ruleset": {"deal": "dealt"}}, "'seeded' or 'sealed'"),
        ]
        for body, words in refused:
            r = c.post("/play/tables", json=body)
            assert r.status_code == 422, (body, r.text)
            assert words in r.json()["error"]["message"], r.text
