"""An accepted action's answer carries the events it logged (issue 50), and a seat takes them
only when they chain on from the head it signed over to the head the receipt signs: else it
reads the log, as before. A view asked with ``events_after`` carries the log's events after
it, up to the view's.

The server's side: the answer's ``events`` are the log's, as ``GET .../events`` shows them.
The seat's side (``qahwa_client._shared.logged_events``): events that do not chain, skip a
seq, are redacted or come without the ``prev`` they chain from are not taken; a server whose
answers carry altered events gets its log read, and the seat holds the log's events.
"""

from __future__ import annotations

import copy
import json
import os
import random
from typing import Any

import httpx
import pytest

from fairness import chain_next
from qahwa_client import ApiError, Client
from qahwa_client._shared import logged_events
from tests.support.live_server import LiveServer

HOKM = {"players": 4, "target": 1}


def _chain(prev: bytes, events: list[dict[str, Any]]) -> str:
    head = prev
    for ev in events:
        head = chain_next(head, ev)
    return head.hex()


def _answer() -> tuple[dict[str, Any], dict[str, Any]]:
    prev = os.urandom(32)
    events = [
        {"seq": 7, "type": "action", "seat": 1, "action": {"type": "play", "card": "QH"}},
        {"seq": 8, "type": "chance", "label": "x", "result": 3, "at": "2026-12-06T08:00:00.000Z"},
    ]
    body = {"action": {"type": "play", "card": "QH"}, "version": 9, "prev": prev.hex()}
    answer = {"first_seq": 7, "events": events, "state": {"chain": _chain(prev, events)}}
    return body, answer


def test_events_that_chain_to_the_answers_head_are_taken() -> None:
    body, answer = _answer()
    assert logged_events(body, answer) == (6, answer["events"])


def test_events_that_do_not_chain_or_do_not_follow_are_not_taken() -> None:
    body, answer = _answer()
    altered = copy.deepcopy(answer)
    altered["events"][1]["result"] = 4  # not what the head signs
    assert logged_events(body, altered) is None
    skipped = copy.deepcopy(answer)
    skipped["first_seq"] = 6  # the events do not start at first_seq
    assert logged_events(body, skipped) is None
    hidden = copy.deepcopy(answer)
    hidden["events"][1] = {**{k: v for k, v in hidden["events"][1].items()}, "hidden": True}
    del hidden["events"][1]["result"]
    hidden["state"]["chain"] = _chain(bytes.fromhex(body["prev"]), hidden["events"])
    assert logged_events(body, hidden) is None  # a redacted event: the log is read
    assert logged_events({**body, "prev": None}, answer) is None
    assert logged_events({**body, "prev": "zz"}, answer) is None
    assert logged_events(body, {**answer, "events": None}) is None  # an older server
    assert logged_events(body, {**answer, "events": []}) is None
    assert logged_events(body, {**answer, "events": ["x"]}) is None


def _play_some(m: Any, rnd: random.Random, actions: int) -> list[Any]:
    """Play ``actions`` random legal actions; the answers."""
    out = []
    turn = 0
    while len(out) < actions:
        view = m.seats[turn].state()
        assert view.status == "playing"
        if view.turn != view.seat:
            turn = view.turn or 0
            continue
        out.append(m.seats[turn].act(rnd.choice(view.suggested_actions or view.legal_actions)))
    return out


def test_an_answer_carries_the_events_its_action_logged(server: LiveServer) -> None:
    with Client(server.url) as qc:
        m = qc.create_match("hokm", HOKM)
        m.start()
        for out in _play_some(m, random.Random(50), 6):
            assert out.events
            log = qc.events(m.match_id, after=out.first_seq - 1).events
            assert out.events == log[: len(out.events)]
            assert out.events[0]["type"] == "action" and out.events[0]["seat"] == out.seat


class _Altering(httpx.BaseTransport):
    """A server whose action answers carry events altered after the fact (their heads and
    receipts left as signed)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.altered: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        r = self.inner.handle_request(request)
        if request.method != "POST" or not request.url.path.endswith("/actions"):
            return r
        r.read()
        r.close()
        doc = r.json()
        if r.status_code == 200 and doc.get("events"):
            doc["events"][0]["at"] = "2000-01-01T00:00:00.000Z"
            self.altered.append(doc["events"][0])
        headers = {k: v for k, v in r.headers.items() if k.lower() != "content-length"}
        return httpx.Response(r.status_code, headers=headers, content=json.dumps(doc).encode())

    def close(self) -> None:
        self.inner.close()


def test_a_seat_reads_the_log_when_an_answers_events_do_not_chain(server: LiveServer) -> None:
    transport = _Altering()
    http = httpx.Client(transport=transport, timeout=60)
    with Client(server.url, http=http) as qc:
        m = qc.create_match("hokm", HOKM)
        m.start()
        outs = _play_some(m, random.Random(51), 4)
        for s in m.seats:
            s.state()  # the log since each seat's own action, read
        assert len(transport.altered) == 4
        log = {e["seq"]: e for e in qc.events(m.match_id).events}
        for out in outs:
            seat = m.seats[out.seat]
            held = seat.proto.seen[out.first_seq]
            assert held == log[out.first_seq] and held["at"] != "2000-01-01T00:00:00.000Z"
            assert not seat.disputes
    http.close()


def test_a_view_carries_the_log_after_events_after(server: LiveServer) -> None:
    with Client(server.url) as qc:
        m = qc.create_match("hokm", HOKM)
        m.start()
        _play_some(m, random.Random(53), 3)
        seat = m.seats[0]
        log = qc.events(m.match_id).events
        for after in (-1, 0, len(log) - 2, len(log) - 1, 10**6):
            raw = qc.request(
                "GET",
                f"/v1/matches/{m.match_id}/state",
                token=seat.token,
                params={"events_after": after},
            )
            assert raw["events"] == log[after + 1 :], after
            assert raw["head"]["seq"] == len(log) - 1
        plain = qc.request("GET", f"/v1/matches/{m.match_id}/state", token=seat.token)
        assert "events" not in plain
        with pytest.raises(ApiError) as exc:
            qc.request(
                "GET",
                f"/v1/matches/{m.match_id}/state",
                token=seat.token,
                params={"events_after": -2},
            )
        assert exc.value.status == 422
