"""A conforming sealed seat against a lying server (issue 46, fairness-v3 "The conforming
sealed seat").

Seat 0 of a sealed hokm table is ``qahwa_client``'s seat, talking to a real server through
a proxy that changes one field of one of its views (tests/support/fake_http.py's SealedLiar, which
tells tests/support/hostile.py's sealed lies too): ``owed`` naming the seat's own items, a
made-up ``reveal_key`` in mid-hand, a made-up ``open`` step, ``dealt`` lying about whose
positions are whose. Each lie is a view the seat's own deal machine disagrees with: the seat
refuses it and keeps a dispute with the view as evidence. The proxy answers a POST sent
after its lie (before an honest view) with 409 and keeps it: the seat sends none. Over the
whole match no share of the seat's own items (other than each one's opening, as it plays
it), no key before the hand's play is over and no ``open`` step leaves the seat.
"""

from __future__ import annotations

import random
from contextlib import closing
from typing import Any

import httpx
import pytest

from qahwa_client import Client
from qahwa_client.sealed import SealedStepRefused
from tests.support.fake_http import SealedLiar
from tests.support.live_server import LiveServer

SEALED_HOKM = {"players": 4, "target": 1, "deal": "sealed"}
LIES = ("owed_own_items", "reveal_mid_hand", "open_made_up", "dealt_swapped")
#: every lie at a hokm table; at an Iraqi dominoes table (boneyard draws dealt one by one)
#: the two about whose items are whose
CASES = [("hokm", SEALED_HOKM, lie) for lie in LIES] + [
    ("iraqi_domino", {"players": 2, "target": 1, "deal": "sealed"}, lie)
    for lie in ("owed_own_items", "dealt_swapped")
]


@pytest.mark.parametrize(("game", "rules", "lie"), CASES)
def test_a_sealed_seat_gives_a_lying_server_nothing(
    server: LiveServer, game: str, rules: dict[str, Any], lie: str
) -> None:
    rnd = random.Random(lie)
    proxy = SealedLiar({f"sealed_{lie}"}, server.url)
    with (
        closing(proxy),
        Client(server.url) as qc,
        httpx.Client(transport=proxy.transport(), timeout=30) as http,
        Client(server.url, http=http) as liar,
    ):
        m = qc.create_match(game, rules)
        m.start()
        m.seats[0].client = liar  # seat 0 now reads and sends through the proxy
        refused: list[str] = []
        turn = 0
        for _ in range(3000):
            seat = m.seats[turn]
            try:
                view = seat.state()
            except SealedStepRefused as exc:  # the lie: nothing is sent; read again
                refused.append(str(exc))
                continue
            if view.status != "playing":
                break
            if view.turn != view.seat:
                turn = view.turn or 0
                continue
            seat.act(rnd.choice(view.suggested_actions or view.legal_actions))
        else:
            raise AssertionError("the match did not end")
        assert proxy.lied is not None, "the lie was never served"
        assert view.result["reason"] == "finished"
        # the seat refused the lying view, kept a dispute with it, and sent nothing after it
        assert len(refused) == 1 and "the view disagrees with the log" in refused[0]
        disputes = m.seats[0].disputes
        assert [d.kind for d in disputes] == ["sealed_view"]
        assert disputes[0].evidence["view"]["sealed"] == proxy.lied["sealed"]
        assert proxy.stolen == []
        # over the whole match: no share of its own items but each one's opening, no key
        # before the hand's play was over, no open step, each item opened once
        assert proxy.dealt0 and all(proxy.dealt0.values())
        assert any(a.get("type") == "play" for a, _, _ in proxy.posts)
        assert proxy.leaks() == []
        assert m.check_transcript()["protocol"] == "qahwa-fair/3"
