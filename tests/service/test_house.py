"""House bots (service/house.py, ``qahwa house``): an operator's declared house seats played
by conforming clients to the end of every game, each transcript verified; the bots choose
only legal actions, and better than random where it is cheap."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from qahwa_client import Client
from service.cli import app
from service.house import House, choose, play_seat, read_seats
from tests.support.live_server import LiveServer

SHORT: dict[str, dict[str, Any]] = {
    "tawla": {"match_length": 1},
    "mahbusa": {"match_length": 1},
    "iraqi_domino": {"players": 2, "target": 1},
    "mexican_train": {"players": 3, "rounds": 1},
    "qahve": {"target": 1},
    "hokm": {"players": 4, "target": 1},
    "shelem": {"players": 4, "target": 5},
}
SEATS = {"qahve": 4, "hokm": 4, "shelem": 4, "mexican_train": 3}


def tawla_view(points: list[int], legal: list[dict[str, Any]], seat: int = 0) -> dict[str, Any]:
    return {"game": "tawla", "seat": seat, "points": points, "legal_actions": legal}


def test_tawla_hits_a_blot_and_keeps_its_checkers_safe() -> None:
    points = [0] * 24
    points[23] = 2  # two of seat 0's checkers on its 24 point
    points[20] = -1  # a lone opponent checker on seat 0's 21 point
    points[18] = 2
    hit = {"type": "move", "steps": [[24, 21]]}
    quiet = {"type": "move", "steps": [[19, 16]]}  # leaves two blots
    assert choose(tawla_view(points, [quiet, hit])) == hit
    # seat 1 counts from its own side: its 4 point is seat 0's 21 point
    p1 = [-p for p in reversed(points)]
    assert choose(tawla_view(p1, [quiet, hit], seat=1)) == hit
    safe = {"type": "move", "steps": [[24, 20], [24, 20]]}  # makes a point, leaves no blot
    blots = {"type": "move", "steps": [[24, 22], [19, 17]]}
    assert choose(tawla_view(points, [blots, safe])) == safe


def test_the_cube_is_never_offered_and_always_taken() -> None:
    assert choose({"legal_actions": [{"type": "double"}, {"type": "roll"}]}) == {"type": "roll"}
    assert choose({"legal_actions": [{"type": "drop"}, {"type": "take"}]}) == {"type": "take"}


def trick_view(trick: list[tuple[int, str]], hand: list[str], seat: int = 0) -> dict[str, Any]:
    return {
        "game": "hokm",
        "seat": seat,
        "trump": "S",
        "hand_sizes": [13, 13, 13, 13],
        "trick": [{"seat": s, "card": c} for s, c in trick],
        "legal_actions": [{"type": "play", "card": c} for c in hand],
    }


def test_a_trick_is_won_as_cheaply_as_it_can_be() -> None:
    # seat 3 leads the 9 of hearts; seat 0 holds the ten, the king and the ace of hearts
    assert choose(trick_view([(3, "9H")], ["AH", "TH", "KH"]))["card"] == "TH"
    # nothing wins: the cheapest card goes
    assert choose(trick_view([(3, "AH")], ["5H", "QH"]))["card"] == "5H"
    # void in the led suit: the smallest trump that wins
    assert choose(trick_view([(3, "AH")], ["2S", "KS", "3C"]))["card"] == "2S"
    # the partner (seat 2) wins it already: the cheapest card, no trump wasted
    assert choose(trick_view([(1, "5H"), (2, "AH"), (3, "2H")], ["2S", "3C"]))["card"] == "3C"


def test_dominoes_play_their_heaviest_tile() -> None:
    legal = [
        {"type": "play", "tile": "1-2", "end": "left"},
        {"type": "play", "tile": "6-6", "end": "left"},
    ]
    assert choose({"game": "iraqi_domino", "legal_actions": legal})["tile"] == "6-6"


def test_every_choice_is_legal() -> None:
    rng = random.Random(3)
    for _ in range(200):
        legal = [{"type": t} for t in rng.sample(["pass", "draw", "double", "drop"], 2)]
        assert choose({"legal_actions": legal}, rng) in legal
    with pytest.raises(ValueError):
        choose({"legal_actions": []})


def test_bad_inbox_files_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text(json.dumps([{"match_id": "m", "seat": True, "token": "t"}]))
    with pytest.raises(ValueError, match="match_id, seat, token"):
        read_seats(f)


def test_qahwa_house_plays_every_game_to_a_verified_end(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "junk.json").write_text("{not json")
    with LiveServer(checkpoint_seconds=0.05) as srv, Client(srv.url) as qc:
        matches = []
        for game, rules in SHORT.items():
            n = SEATS.get(game, 2)
            m = qc.create_match(game, rules, [f"house-{i}" for i in range(n)], [True] * n)
            matches.append(m)
            seats = [{"match_id": m.match_id, "seat": s.seat, "token": s.token} for s in m.seats]
            (inbox / f"{game}.json").write_text(json.dumps(seats))
        res = CliRunner().invoke(
            app, ["house", "--server", srv.url, "--inbox", str(inbox), "--once", "--seed", "5"]
        )
        assert "house seat(s) played to the end" in res.output, res.output
        assert res.exit_code == 1  # the junk file is reported
        assert "junk.json" in res.output and (inbox / "bad" / "junk.json").exists()
        assert sorted(p.name for p in (inbox / "taken").iterdir()) == sorted(
            f"{g}.json" for g in SHORT
        )
        for m in matches:
            doc = qc.transcript(m.match_id)
            assert [s["house"] for s in doc["lock"]["seats"]] == [True] * len(m.seats)
            assert all(s["key"] for s in doc["lock"]["seats"])  # conforming: keyed seats
            report = qc.verify(doc)
            assert report["status"] == "verified", (m.match_id, report)


def test_a_house_seat_takes_its_next_view_from_its_actions_answer() -> None:
    """Issue 50: an action's answer carries the seat's next view, checked as a read one is:
    a house seat reads no view after its own action (it acts again, or waits for news)."""
    sent: list[tuple[str, str]] = []
    http = httpx.Client(
        timeout=60,
        event_hooks={"request": [lambda r: sent.append((r.method, r.url.path.split("/")[-1]))]},
    )
    with LiveServer() as srv, Client(srv.url) as qc, Client(srv.url, http=http) as hc:
        m = qc.create_match("tawla", {"match_length": 1}, ["you", "house"], [False, True])
        house = m.seats[1]
        played: list[Any] = []
        t = threading.Thread(
            target=lambda: played.append(
                play_seat(hc, m.match_id, 1, house.token, wait=30, rng=random.Random(1))
            )
        )
        t.start()
        try:
            _play_you(m.seats[0], pause=0.01)
        finally:
            t.join(60)
        http.close()
        assert played and qc.verify(qc.transcript(m.match_id))["status"] == "verified"
    acts = [i for i, r in enumerate(sent) if r == ("POST", "actions")]
    assert len(acts) > 5
    # (after its last one, the match over, it reads its view once to check the transcript)
    after = [sent[i + 1] for i in acts[:-1]]
    assert ("GET", "state") not in after, after


def test_idle_house_seats_read_only_when_the_turn_passes_to_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 50: the house seats of a table share what they read. One of them waits on the
    match's events for all, and a seat reads its own view only when the turn has passed to it
    (or the match's status changed): not every idle seat twice at every event, as before."""
    sent: Counter[tuple[str, str]] = Counter()
    real_send = httpx.Client.send

    def send(self: httpx.Client, request: httpx.Request, **kw: Any) -> httpx.Response:
        if threading.current_thread().name.startswith("house-"):
            sent[(request.method, request.url.path.split("/")[-1])] += 1
        return real_send(self, request, **kw)

    monkeypatch.setattr(httpx.Client, "send", send)
    with LiveServer() as srv, Client(srv.url) as qc:
        names = ["you", "h1", "h2", "h3"]
        m = qc.create_match("hokm", SHORT["hokm"], names, [False, True, True, True])
        house = House(srv.url, seed=1)
        try:
            for s in m.seats[1:]:
                house.start_seat(m.match_id, s.seat, s.token)
            _play_you(m.seats[0], pause=0.02)
            for t in house.threads:
                t.join(60)
        finally:
            house.close()
        assert not house.errors and len(house.done) == 3
        doc = qc.transcript(m.match_id)
        assert qc.verify(doc)["status"] == "verified"
    actions = sum(1 for e in doc["events"] if e["type"] == "action")
    theirs = sum(1 for e in doc["events"] if e["type"] == "action" and e["seat"] != 0)
    assert sent[("POST", "actions")] == theirs
    # before, each idle seat read the events and its view at every event (4.3 reads an
    # action at this table); now one seat reads the events for the table and a seat its
    # view when its turn comes (about 2 an action, with the start's and the end's reads)
    reads = sent[("GET", "state")] + sent[("GET", "events")]
    assert reads <= 2.5 * actions + 12, (reads, actions, sent)


def _play_you(you: Any, *, pause: float) -> None:
    """Seat 0 (a person's client) commits, reveals and plays random legal moves till the
    match is finished, reading its view every ``pause`` seconds while it waits."""
    you.commit()
    you.reveal(wait=30)
    rnd = random.Random(2)
    view = you.state()
    while view.status != "finished":
        if view.status == "playing" and view.turn == 0:
            view = you.act(choose(view.model_dump(mode="json"), rnd)).state
        else:
            time.sleep(pause)
            view = you.state()
