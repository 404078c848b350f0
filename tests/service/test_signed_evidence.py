"""Signed evidence against a real server (fairness-v2.md §7, refusals and heads): every 4xx
answer to a seat's request carries the server's signed refusal of that request's hash, and
every seat view and event-stream answer the signed head it stands at."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from fairness import chain_start, parse_time_us
from fairness.protocol import canonical_json
from fairness.records import request_sha256
from fairness.seat import trusted_keys
from qahwa_client import Client
from tests.support.fake_clock import FakeClock
from tests.support.http_play import auth, check_signed_record, create_match, ok, seed_all
from verify_cli.main import app

CLOCK = FakeClock(1_800_000_000.0)
pytestmark = pytest.mark.live_server(sweep_interval_seconds=1000.0, clock=CLOCK)


def keys(client: httpx.Client) -> dict[str, str]:
    return trusted_keys(client.get("/v1/keys").json())


def test_a_refused_seat_request_carries_a_signed_refusal_of_its_hash(
    client: httpx.Client,
) -> None:
    created = create_match(client, "tawla", {"match_length": 1})
    seats = seed_all(client, created)
    view = seats[0].state()
    turn = view["turn"]
    other = seats[1 - turn]
    mid = created["match_id"]
    # the seat not on turn acts: 409 not_your_turn, signed over the exact bytes sent
    body = canonical_json(other.act_request(view, {"type": "roll_value"}))
    r = client.post(
        f"/v1/matches/{mid}/actions",
        content=body,
        headers={**auth(other.token), "Content-Type": "application/json"},
    )
    assert r.status_code == 409, r.text
    doc = r.json()
    assert doc["error"]["code"] == "not_your_turn"
    refusal = check_signed_record(doc["refusal"], keys(client), what="refusal", rtype="refusal")
    assert refusal["match_id"] == mid
    assert refusal["request"] == request_sha256(body)
    assert (refusal["status"], refusal["reason"]) == (409, "not_your_turn")
    assert parse_time_us(refusal["at"]) == int(CLOCK.now() * 1000) * 1000
    # a body the schema refuses (422) and a wrong token (401) are signed too
    bad = b'{"action": 5}'
    r = client.post(
        f"/v1/matches/{mid}/actions",
        content=bad,
        headers={**auth(other.token), "Content-Type": "application/json"},
    )
    assert r.status_code == 422 and r.json()["refusal"]["request"] == request_sha256(bad)
    r = client.post(
        f"/v1/matches/{mid}/resign",
        content=b"{}",
        headers={**auth("nope"), "Content-Type": "application/json"},
    )
    assert r.status_code == 401 and r.json()["refusal"]["reason"] == "unauthorized"
    # what is not a seat's request carries none, nor does an accepted one
    r = client.get(f"/v1/matches/{mid}/transcript")
    assert r.status_code == 409 and "refusal" not in r.json()
    mine = seats[turn]
    out = mine.act(view, view["legal_actions"][0])
    assert "refusal" not in out


def test_views_and_the_stream_carry_the_signed_head(client: httpx.Client) -> None:
    created = create_match(client, "tawla", {"match_length": 1})
    seats = seed_all(client, created)
    mid = created["match_id"]
    view = seats[0].state()
    head = check_signed_record(view["head"], keys(client), what="head", rtype="head")
    assert (head["seq"], head["chain"]) == (-1, chain_start(seats[0].lock or {}).hex())
    assert head["chain"] == view["chain"]
    rnd = random.Random(3)
    for _ in range(3):
        CLOCK.advance(2)
        v = seats[view["turn"]].state()
        seats[view["turn"]].act(v, rnd.choice(v["legal_actions"]))
        view = seats[0].state()
    head = view["head"]
    events = ok(client.get(f"/v1/matches/{mid}/events"))["events"]
    assert head["seq"] == events[-1]["seq"] and head["chain"] == view["chain"]
    assert parse_time_us(head["at"]) >= parse_time_us(events[-1]["at"])
    with client.stream("GET", f"/v1/matches/{mid}/events/stream", params={"timeout": 0.5}) as r:
        text = "".join(r.iter_text())
    heads = [
        json.loads(block.split("data: ", 1)[1])
        for block in text.split("\n\n")
        if block.startswith("event: head\n")
    ]
    assert heads, text
    check_signed_record(heads[0], keys(client), what="head", rtype="head")
    assert (heads[0]["seq"], heads[0]["chain"]) == (head["seq"], head["chain"])


def test_a_back_dated_move_is_disputed_and_fails_verify_with_the_seat_file(
    server: Any, tmp_path: Path
) -> None:
    """The operator steps its clock back 50 s for the house's move (turn_seconds 60): the
    person's seat, which saw a signed head before it, keeps a backdated dispute with both
    signed records, and ``verify --seat`` with its seat file fails the transcript that
    verifies without it."""
    with Client(server.url, operator_key=server.operator_key, clock=CLOCK.now) as qc:
        match = qc.create_match(
            "tawla", {"match_length": 1, "turn_seconds": 60}, names=["Layla", "House"]
        )
        match.start()
        rnd = random.Random(11)

        def play(seat: Any) -> None:  # a roll or a move: nobody doubles or resigns yet
            acts = seat.state().legal_actions
            seat.act(rnd.choice([a for a in acts if a["type"] in ("move", "roll", "roll_value")]))

        person, house = match.seats
        for _ in range(10):
            CLOCK.advance(1.5)
            play(match.seats[person.state().turn])
        while person.state().turn != 1:
            CLOCK.advance(1.5)
            play(person)
        CLOCK.advance(55)  # the house thinks; the person looks at the table: a signed head
        person.state()
        CLOCK.step_back(50)  # the operator stamps the house's move 50 s in the past
        play(house)
        CLOCK.advance(50.5)
        person.state()  # the move appears: the events since the head are read and held to it
        found = [d for d in person.disputes if d.kind == "backdated"]
        assert found, person.disputes
        d = found[0]
        assert d.evidence["head"]["type"] == "head"
        assert d.evidence["signed_after"]["seq"] >= d.evidence["events"][-1]["seq"]
        person.resign()
        doc = match.check_transcript()
        transcript, keys, seat_file = (
            tmp_path / "t.json",
            tmp_path / "keys.json",
            tmp_path / "s.json",
        )
        transcript.write_text(json.dumps(doc))
        keys.write_text(json.dumps(httpx.get(server.url + "/v1/keys").json()))
        person.save(seat_file)
        ok_ = CliRunner().invoke(app, [str(transcript), "--key", str(keys)])
        assert ok_.exit_code == 0, ok_.output  # the transcript alone cannot tell
        res = CliRunner().invoke(
            app, [str(transcript), "--key", str(keys), "--seat", str(seat_file)]
        )
        assert res.exit_code == 1, res.output
        assert "signed proof the server back-dated it" in res.output
