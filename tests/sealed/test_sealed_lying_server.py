"""A conforming sealed seat against a lying server (issue 46, fairness-v3 "The conforming
sealed seat").

Seat 0 of a sealed hokm table is ``qahwa_client``'s seat, talking to a real server through
a proxy that changes one field of one of its views: ``owed`` naming the seat's own items, a
made-up ``reveal_key`` in mid-hand, a made-up ``open`` step, ``dealt`` lying about whose
positions are whose. Each lie is a view the seat's own deal machine disagrees with: the seat
refuses it and keeps a dispute with the view as evidence. The proxy answers a POST sent
after its lie (before an honest view) with 409 and keeps it: the seat sends none. Over the
whole match no share of the seat's own items (other than each one's opening, as it plays
it), no key before the hand's play is over and no ``open`` step leaves the seat.
"""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from live_server import LiveServer

from qahwa_client import Client
from qahwa_client.sealed import SealedStepRefused

SEALED_HOKM = {"players": 4, "target": 1, "deal": "sealed"}
LIES = ("owed_own_items", "reveal_mid_hand", "open_made_up", "dealt_swapped")
#: every lie at a hokm table; at an Iraqi dominoes table (boneyard draws dealt one by one)
#: the two about whose items are whose
CASES = [("hokm", SEALED_HOKM, lie) for lie in LIES] + [
    ("iraqi_domino", {"players": 2, "target": 1, "deal": "sealed"}, lie)
    for lie in ("owed_own_items", "dealt_swapped")
]


class LyingProxy(httpx.BaseTransport):
    """Seat 0's way to the server: the answers as the server gives them, but the first view
    ``lie`` applies to is changed once; POSTs of actions are kept (with the honest ``owed`` of
    the last view), and one sent after the lie before the next view is answered 409."""

    def __init__(self, lie: str) -> None:
        self.inner = httpx.HTTPTransport()
        self.lie = lie
        self.lied: dict[str, Any] | None = None  # the lying view, once served
        self.after_lie = False
        #: (action, the honest owed then, the hand then)
        self.posts: list[tuple[dict[str, Any], Any, int]] = []
        self.stolen: list[dict[str, Any]] = []
        self.honest_owed: Any = None
        self.hand = -1
        self.dealt0: dict[int, set[int]] = {}  # hand -> every item dealt to seat 0

    def close(self) -> None:
        self.inner.close()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path.endswith("/actions"):
            body = json.loads(request.read())
            if self.after_lie:
                self.stolen.append(body["action"])
                self.after_lie = False
                err = {"error": {"code": "stale_version", "message": "the match moved on"}}
                return httpx.Response(409, json=err, request=request)
            self.posts.append((body["action"], self.honest_owed, self.hand))
        resp = self.inner.handle_request(request)
        if request.method != "GET" or not path.endswith("/state"):
            return resp
        resp.read()
        resp.close()
        view = resp.json()
        sv = view.get("sealed") or {}
        self.honest_owed = sv.get("owed")
        if sv.get("dealt"):
            self.hand = int(sv["hand"])
            self.dealt0.setdefault(self.hand, set()).update(sv["dealt"][0])
        self.after_lie = False
        if self.lied is None and view.get("turn") == 0 and sv:
            changed = self._lie(view)
            if changed is not None:
                self.lied = changed
                self.after_lie = True
                return httpx.Response(200, json=changed, request=request)
        return httpx.Response(resp.status_code, content=resp.content, headers=resp.headers)

    def _lie(self, view: dict[str, Any]) -> dict[str, Any] | None:
        v = json.loads(json.dumps(view))
        sv = v["sealed"]
        owed = sv.get("owed")
        mine = list(sv["dealt"][0])
        plays = any(a.get("type") == "play" for a in v["legal_actions"])
        if self.lie == "owed_own_items" and owed and owed["step"] == "share" and mine:
            sv["owed"] = {**owed, "items": mine}
        elif self.lie == "dealt_swapped" and owed and owed["step"] == "share" and mine:
            # the seat's items said to be seat 1's (and seat 1's its own): its shares asked
            # for are of its own items, which the lying view says are seat 1's
            sv["dealt"][0], sv["dealt"][1] = sv["dealt"][1], sv["dealt"][0]
            v["hand"] = sorted(sv["dealt"][0])
            sv["owed"] = {**owed, "items": mine}
        elif self.lie == "reveal_mid_hand" and plays:
            sv["owed"] = {"seat": 0, "step": "reveal_key"}
            v["legal_actions"] = v["suggested_actions"] = [{"type": "sealed", "step": "reveal_key"}]
        elif self.lie == "open_made_up" and plays:
            sv["owed"] = {"seat": 0, "step": "open", "items": [v["hand"][0]]}
            v["legal_actions"] = v["suggested_actions"] = [{"type": "sealed", "step": "open"}]
        else:
            return None
        return v


@pytest.mark.parametrize(("game", "rules", "lie"), CASES)
def test_a_sealed_seat_gives_a_lying_server_nothing(
    server: LiveServer, game: str, rules: dict[str, Any], lie: str
) -> None:
    rnd = random.Random(lie)
    proxy = LyingProxy(lie)
    with (
        Client(server.url) as qc,
        httpx.Client(transport=proxy, timeout=30) as http,
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
        # before the hand's play was over, no open step
        assert proxy.dealt0 and all(proxy.dealt0.values())
        for action, honest, hand in proxy.posts:
            own = proxy.dealt0.get(hand, set())
            if action.get("type") == "sealed":
                assert action["step"] != "open"
                assert honest is not None and action["step"] == honest["step"]
                if action["step"] == "share":
                    assert not own & {x["item"] for x in action["shares"]}
            elif "share" in action:
                assert action["type"] == "play" and action["item"] in own
        opened = [(h, a["item"]) for a, _, h in proxy.posts if a.get("type") == "play"]
        assert opened and len(set(opened)) == len(opened)  # each item opened once
        assert m.check_transcript()["protocol"] == "qahwa-fair/3"
