"""qahwa-fair/2 over HTTP: each lever of issue 20 and the service's part of issue 21 — a
refused request changes nothing — and the ends of fairness-v2 §3 and §7 on a moved clock."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from fairness import V2, Signer, chain_head, seat_sig_message, verify_record
from games.base import MatchContext
from games.registry import engine_class
from games.replay import replay
from service.matches import MatchService
from tests.support import untimed
from tests.support.fake_clock import FakeClock
from tests.support.http_play import (
    GAMES,
    V2Seat,
    auth,
    check_transcript,
    create_match,
    locked_seats,
    ok,
    public_key,
    seats_of,
    seed_all,
    short_ruleset,
)
from tests.support.live_server import LiveServer

SWEEP = 1000.0  # the sweeper runs once at start; the tests sweep after moving the clock
CLOCK = FakeClock()  # one clock for the module: it only moves forward, as the heartbeat assumes
pytestmark = pytest.mark.live_server(sweep_interval_seconds=SWEEP, clock=CLOCK)


@pytest.fixture()
def svc(server: LiveServer) -> MatchService:
    service: MatchService = server.app.state.service
    assert service.store.clock is CLOCK  # the app's injected clock
    service.sweep()  # a heartbeat on the test's clock
    return service


def advance(svc: MatchService, seconds: float) -> None:
    clock = svc.store.clock
    assert isinstance(clock, FakeClock)
    clock.advance(seconds)


def error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code, r.text


def snapshot(client: httpx.Client, mid: str) -> tuple[Any, ...]:
    """What a refused request must leave alone: the public record, the events and the log."""
    return (
        client.get(f"/v1/matches/{mid}").json(),
        client.get(f"/v1/matches/{mid}/events").json(),
        client.get("/v1/log").json()["tree_size"],
    )


def to_turn(
    seats: list[V2Seat], wanted: Any, rnd: random.Random, limit: int = 500
) -> tuple[int, dict[str, Any]]:
    """Play random legal actions until ``wanted(seat, view)`` holds for the seat on turn."""
    for _ in range(limit):
        view = seats[0].state()
        assert view["status"] == "playing"
        seat = view["turn"]
        if seat != 0:
            view = seats[seat].state()
        if wanted(seat, view):
            return seat, view
        seats[seat].act(view, rnd.choice(view.get("suggested_actions") or view["legal_actions"]))
    raise AssertionError("never reached the wanted state")


# -- seating levers ------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_missing_reveal_is_a_no_reveal_forfeit(
    client: httpx.Client, svc: MatchService, game: str
) -> None:
    created = create_match(client, game, short_ruleset(game))
    mid = created["match_id"]
    seats = locked_seats(client, created)
    for st in seats[:-1]:
        st.reveal()
    late = seats[-1]
    advance(svc, 121)  # past reveal_by (reveal_seconds: 120)
    # the late reveal finds the match ended: no_reveal, nothing drawn
    error(
        client.post(
            late.url(f"seats/{late.seat}/reveal"),
            headers=auth(late.token),
            json={"client_seed": late.client_seed, "nonce": late.nonce},
        ),
        409,
        "match_over",
    )
    doc = ok(client.get(f"/v1/matches/{mid}/transcript"))
    missing = [late.seat]
    assert [untimed(e) for e in doc["events"]] == [
        {"seq": 0, "type": "end", "reason": "no_reveal", "seats": missing}
    ]
    assert not any(e["type"] == "chance" for e in doc["events"])
    for st in seats[:-1]:
        assert doc["seats"][st.seat]["client_seed"] == st.client_seed
        assert doc["seats"][st.seat]["nonce"] == st.nonce
    assert doc["seats"][late.seat]["client_seed"] is None
    assert doc["seats"][late.seat]["nonce"] is None
    result = doc["result"]
    assert result["reason"] == "no_reveal" and result["forfeited"] == missing
    assert 0 in result["winners"] and late.seat not in result["winners"]
    assert check_transcript(client, doc, [r for st in seats for r in st.receipts]) is None
    reveal = next(
        e["leaf"]
        for e in client.get("/v1/log/entries", params={"start": 0, "limit": 1000}).json()["entries"]
        if e["leaf"]["match_id"] == mid and e["leaf"]["type"] == "reveal"
    )
    assert reveal["reason"] == "no_reveal" and reveal["forfeited"] == missing


def test_the_sweep_ends_a_match_nobody_revealed(client: httpx.Client, svc: MatchService) -> None:
    created = create_match(client, "hokm", {"target": 1})
    seats = seats_of(client, created, keyed=False)
    for st in seats:
        st.commit()
    advance(svc, 119)
    svc.sweep()
    assert seats[0].state()["status"] == "seating"  # before reveal_by: nothing happens
    advance(svc, 2)
    assert svc.sweep() >= 1
    doc = ok(client.get(f"/v1/matches/{created['match_id']}/transcript"))
    assert doc["result"]["forfeited"] == list(range(len(seats)))
    assert doc["result"]["winners"] == []


def test_house_seats_are_declared(client: httpx.Client, svc: MatchService) -> None:
    created = create_match(
        client,
        "hokm",
        {"players": 4, "target": 1},
        names=["ann", "bot", "cy", "bot2"],
        house=[False, True, False, True],
    )
    assert [s["house"] for s in created["record"]["seats"]] == [False, True, False, True]
    assert [s["house"] for s in created["seats"]] == [False, True, False, True]
    seats = seed_all(client, created)
    assert [s["house"] for s in seats[0].lock["seats"]] == [False, True, False, True]  # type: ignore[index]
    seats[0].resign()
    reveal = next(
        e["leaf"]
        for e in client.get("/v1/log/entries", params={"start": 0, "limit": 1000}).json()["entries"]
        if e["leaf"]["match_id"] == created["match_id"] and e["leaf"]["type"] == "reveal"
    )
    assert reveal["house"] == [1, 3] and reveal["forfeited"] == [0]
    assert reveal["result"]["winners"] == [1, 3]  # seat 0's side (0 and 2) lost


# -- play levers -----------------------------------------------------------------------------


def test_keyed_seat_needs_its_signature_over_the_head(
    client: httpx.Client, svc: MatchService
) -> None:
    created = create_match(client, "hokm", {"target": 1})
    mid = created["match_id"]
    seats = seed_all(client, created, keyed=[True, True, True, False])
    seat, view = to_turn(seats, lambda s, v: s != 3, random.Random(1))
    st = seats[seat]
    action = view["legal_actions"][0]
    event = {"type": "action", "seat": seat, "action": action}
    url = f"/v1/matches/{mid}/actions"
    before = snapshot(client, mid)
    body = {"action": action, "version": view["version"]}
    # no signature
    error(client.post(url, json=body, headers=auth(st.token)), 422, "bad_signature")
    # a signature over a stale head (prev given: 409; not given: the signature fails)
    stale = "00" * 32
    sig_stale = st.sign(event, stale)
    error(
        client.post(url, json={**body, "sig": sig_stale, "prev": stale}, headers=auth(st.token)),
        409,
        "stale_chain",
    )
    error(
        client.post(url, json={**body, "sig": sig_stale}, headers=auth(st.token)),
        422,
        "bad_signature",
    )
    # another seat's key, and a key nobody registered
    other = seats[(seat + 1) % 3]
    error(
        client.post(
            url, json={**body, "sig": other.sign(event, view["chain"])}, headers=auth(st.token)
        ),
        422,
        "bad_signature",
    )
    stranger = Signer.generate().sign_bytes(seat_sig_message(mid, view["chain"], event))
    error(
        client.post(url, json={**body, "sig": stranger}, headers=auth(st.token)),
        422,
        "bad_signature",
    )
    # a signature over another action
    wrong = {"type": "action", "seat": seat, "action": {"type": "pass"}}
    error(
        client.post(
            url, json={**body, "sig": st.sign(wrong, view["chain"])}, headers=auth(st.token)
        ),
        422,
        "bad_signature",
    )
    assert snapshot(client, mid) == before  # every refusal changed nothing
    out = ok(
        client.post(
            url,
            json={**body, "sig": st.sign(event, view["chain"]), "prev": view["chain"]},
            headers=auth(st.token),
        )
    )
    receipt = out["receipt"]
    verify_record(receipt, public_key(client))
    evs = ok(client.get(f"/v1/matches/{mid}/events"))
    assert receipt["seq"] == evs["next_seq"] - 1 >= out["first_seq"]
    assert receipt["chain"] == out["chain"] == out["state"]["chain"] == evs["chain"]
    assert receipt["chain"] != view["chain"]
    # an unkeyed seat's request must carry no signature
    seat, view = to_turn(seats, lambda s, v: s == 3, random.Random(2))
    act = view["legal_actions"][0]
    unkeyed = {
        "action": act,
        "version": view["version"],
        "sig": seats[0].sign({"type": "action", "seat": 3, "action": act}, view["chain"]),
    }
    before = snapshot(client, mid)
    error(client.post(url, json=unkeyed, headers=auth(seats[3].token)), 422, "bad_signature")
    assert snapshot(client, mid) == before
    # a keyed seat's resignation is signed too
    error(
        client.post(f"/v1/matches/{mid}/resign", headers=auth(seats[0].token), json={}),
        422,
        "bad_signature",
    )
    assert snapshot(client, mid) == before
    out = seats[0].resign()
    doc = ok(client.get(f"/v1/matches/{mid}/transcript"))
    assert doc["events"][-1]["sig"] and doc["events"][-1]["reason"] == "resigned"
    check_transcript(client, doc, [r for s in seats for r in s.receipts])


def test_hokm_cut_is_drawn(client: httpx.Client, svc: MatchService) -> None:
    created = create_match(client, "hokm", {"players": 4, "target": 1})
    mid = created["match_id"]
    seats = seed_all(client, created)
    seat, view = to_turn(
        seats, lambda s, v: {"type": "cut"} in v["legal_actions"], random.Random(3)
    )
    before = snapshot(client, mid)
    url = f"/v1/matches/{mid}/actions"
    for chosen in ({"type": "cut", "k": 17}, {"type": "tap"}):
        r = client.post(
            url, json=seats[seat].act_request(view, chosen), headers=auth(seats[seat].token)
        )
        assert r.status_code == 422, r.text
    assert snapshot(client, mid) == before
    out = seats[seat].act(view, {"type": "cut"})
    evs = ok(client.get(f"/v1/matches/{mid}/events", params={"after": out["first_seq"]}))
    cut = [e for e in evs["events"] if e.get("label", "").endswith("/cut")]
    assert cut and cut[0]["kind"] == "uniform"


def test_fresh_roll_values(client: httpx.Client, svc: MatchService) -> None:
    created = create_match(client, "tawla", {"match_length": 1})
    assert '"fresh_rolls":true' in created["ruleset"]
    mid = created["match_id"]
    seats = seed_all(client, created)
    url = f"/v1/matches/{mid}/actions"
    view = seats[0].state()
    assert view["turn"] == 0 and view["fresh_roll"]["owes"][0] == 0
    before = snapshot(client, mid)
    # the opening: seat 1 before seat 0, and a value off seat 0's chain, are refused
    v1 = seats[1].state()
    r = client.post(
        url, json=seats[1].act_request(v1, {"type": "roll_value"}), headers=auth(seats[1].token)
    )
    assert r.status_code == 409, r.text
    wrong = seats[0].act_request(view, {"type": "roll_value"})
    wrong["action"]["value"] = seats[1].complete({"type": "roll_value"})["value"]
    wrong["sig"] = seats[0].sign(
        {"type": "action", "seat": 0, "action": wrong["action"]}, view["chain"]
    )
    assert client.post(url, json=wrong, headers=auth(seats[0].token)).status_code == 422
    skipped = dict(wrong)
    skipped["action"] = {"type": "roll_value", "value": seats[0]._chain[2].hex()}  # type: ignore[index]
    skipped["sig"] = seats[0].sign(
        {"type": "action", "seat": 0, "action": skipped["action"]}, view["chain"]
    )
    assert client.post(url, json=skipped, headers=auth(seats[0].token)).status_code == 422
    assert snapshot(client, mid) == before
    # a later roll: the opponent's value before the roller's roll is refused (409)
    rnd = random.Random(4)
    seat, view = to_turn(seats, lambda s, v: {"type": "roll"} in v["legal_actions"], rnd)
    opp = seats[1 - seat]
    before = snapshot(client, mid)
    ov = opp.state()
    r = client.post(url, json=opp.act_request(ov, {"type": "roll_value"}), headers=auth(opp.token))
    assert r.status_code == 409, r.text
    assert snapshot(client, mid) == before
    out = seats[seat].act(view, {"type": "roll"})
    assert out["state"]["turn"] == opp.seat and out["state"]["fresh_roll"]["owes"] == [opp.seat]
    opp.act(opp.state(), {"type": "roll_value"})
    assert seats[seat].state()["dice"]


# -- ends (§7) on the moved clock ----------------------------------------------------------


@pytest.mark.parametrize("game", ["tawla", "hokm", "iraqi_domino"])
def test_idle_seat_loses_by_timeout(client: httpx.Client, svc: MatchService, game: str) -> None:
    created = create_match(client, game, {**short_ruleset(game), "turn_seconds": 60})
    mid = created["match_id"]
    seats = seed_all(client, created)
    to_turn(seats, lambda s, v: True, random.Random(5))
    staller = seats[0].state()["turn"]
    advance(svc, 59)
    svc.sweep()
    assert seats[0].state()["status"] == "playing"
    advance(svc, 2)
    view = seats[0].state()  # lazily: the first access after the deadline ends it
    assert view["status"] == "finished"
    doc = ok(client.get(f"/v1/matches/{mid}/transcript"))
    assert {k: v for k, v in untimed(doc["events"][-1]).items() if k != "seq"} == {
        "type": "end",
        "reason": "timeout",
        "seat": staller,
    }
    assert doc["result"]["reason"] == "timeout" and staller in doc["result"]["forfeited"]
    assert staller not in doc["result"]["winners"] and doc["result"]["winners"]
    engine = check_transcript(client, doc, [r for st in seats for r in st.receipts])
    assert engine is not None and engine.outcome is not None
    assert engine.outcome.to_json() == doc["result"]  # the replay reproduces the result


def test_deadline_passed_while_not_serving_is_extended(
    client: httpx.Client, svc: MatchService
) -> None:
    created = create_match(client, "tawla", {"match_length": 1, "turn_seconds": 60})
    mid = created["match_id"]
    seats = seed_all(client, created)
    advance(svc, svc.outage_seconds + 100)  # nothing swept or served for that long
    assert seats[0].state()["status"] == "playing"  # a stale heartbeat ends nothing lazily
    svc.sweep()  # the first sweep after the outage extends the deadline instead
    assert seats[0].state()["status"] == "playing"
    advance(svc, 59)
    svc.sweep()
    assert seats[0].state()["status"] == "playing"
    advance(svc, 2)
    svc.sweep()
    doc = ok(client.get(f"/v1/matches/{mid}/transcript"))
    assert doc["result"]["reason"] == "timeout"


def swept_expired(client: httpx.Client, svc: MatchService, path: str) -> dict[str, Any]:
    """A sweep; then the transcript at ``path`` ends with its ``expired`` end event."""
    svc.sweep()
    doc = ok(client.get(path))
    assert untimed(doc["events"][-1]) == {
        "seq": len(doc["events"]) - 1,
        "type": "end",
        "reason": "expired",
    }
    return doc


def test_expired_at_end_by(client: httpx.Client, svc: MatchService) -> None:
    created = create_match(client, "hokm", {"target": 1})
    mid = created["match_id"]
    seats = seed_all(client, created, keyed=False)
    lock = seats[0].lock
    assert lock is not None
    rnd = random.Random(6)
    for _ in range(3):
        seat, view = to_turn(seats, lambda s, v: True, rnd)
        seats[seat].act(view, rnd.choice(view["suggested_actions"]))
        advance(svc, 250)
        svc.sweep()
    advance(svc, 86_400)
    doc = swept_expired(client, svc, f"/v1/matches/{mid}/transcript")
    assert doc["result"]["reason"] == "expired"
    assert doc["result"]["winners"] == [] and doc["result"]["forfeited"] == []
    check_transcript(client, doc)


def test_no_started_match_is_abandoned(client: httpx.Client, svc: MatchService) -> None:
    """The v1 idle timeout does not apply to a started v2 match: only §7's ends do."""
    created = create_match(client, "hokm", {"target": 1, "turn_seconds": 86_400})
    seats = seed_all(client, created, keyed=False)
    advance(svc, svc.settings.idle_timeout_seconds + 10)
    svc.sweep()
    assert seats[0].state()["status"] == "playing"


def test_resignation_while_seating_draws_no_seed(client: httpx.Client, svc: MatchService) -> None:
    # before the lock: the match closes; nothing is drawn, revealed or logged
    created = create_match(client, "hokm", {"target": 1})
    mid = created["match_id"]
    V2Seat(client, created, 0).commit()
    size = client.get("/v1/log").json()["tree_size"]
    out = ok(
        client.post(
            f"/v1/matches/{mid}/resign", json={}, headers=auth(created["seats"][1]["token"])
        )
    )
    assert out["status"] == "finished" and out["result"]["reason"] == "not_locked"
    error(client.get(f"/v1/matches/{mid}/transcript"), 409, "not_locked")
    assert client.get(f"/v1/matches/{mid}").json()["public_state"] is None
    assert client.get("/v1/log").json()["tree_size"] == size
    # after the lock and before the start: refused, nothing changes
    created = create_match(client, "hokm", {"target": 1})
    mid = created["match_id"]
    seats = seats_of(client, created)
    for st in seats:
        st.commit()
    seats[0].check_lock()
    seats[0].reveal()
    before = snapshot(client, mid)
    error(
        client.post(f"/v1/matches/{mid}/resign", json={}, headers=auth(seats[1].token)),
        409,
        "not_started",
    )
    assert snapshot(client, mid) == before


def test_session_ends_at_end_by_and_unseeded_closes(
    client: httpx.Client, svc: MatchService
) -> None:
    seeded = ok(client.post("/v1/rng", json={}), 201)
    tok = auth(seeded["token"])
    sid = seeded["session_id"]
    out = ok(
        client.post(
            f"/v1/rng/{sid}/seed", headers=tok, json={"client_seed": "mine", "nonce": "cd" * 32}
        )
    )
    ok(client.post(f"/v1/rng/{sid}/draws", headers=tok, json={"kind": "uniform", "n": 6}))
    unseeded = ok(client.post("/v1/rng", json={}), 201)
    size = client.get("/v1/log").json()["tree_size"]
    advance(svc, svc.settings.idle_timeout_seconds + 1)  # past end_by and the idle expiry
    doc = swept_expired(client, svc, f"/v1/rng/{sid}/transcript")
    assert doc["lock"] == out["lock"] and doc["result"]["reason"] == "expired"
    check_transcript(client, doc, [out["receipt"]])
    # the expired session's reveal record is logged; the unseeded session closed with
    # nothing logged, nothing revealed
    leaves = [
        e["leaf"]
        for e in client.get("/v1/log/entries", params={"start": size, "limit": 1000}).json()[
            "entries"
        ]
    ]
    assert [(x["type"], x["reason"]) for x in leaves if x["match_id"] == sid] == [
        ("reveal", "expired")
    ]
    assert not [x for x in leaves if x["match_id"] == unseeded["session_id"]]
    error(client.get(f"/v1/rng/{unseeded['session_id']}/transcript"), 409, "not_locked")


def test_receipts_catch_a_rewritten_match(
    server: LiveServer, client: httpx.Client, svc: MatchService
) -> None:
    """The operator cuts a genuine match short, appends a resignation, replays to the new
    result and re-signs with the server's key: the seat's receipts disagree with it."""
    created = create_match(client, "tawla", {"match_length": 1})
    seats = seed_all(client, created, keyed=False)
    rnd = random.Random(8)
    for _ in range(12):
        seat, view = to_turn(seats, lambda s, v: True, rnd)
        seats[seat].act(view, rnd.choice(view["suggested_actions"]))
    seats[0].resign()
    doc = ok(client.get(f"/v1/matches/{created['match_id']}/transcript"))
    receipts = [r for st in seats for r in st.receipts]
    check_transcript(client, doc, receipts)  # the genuine transcript agrees with them
    cut = next(i for i, e in enumerate(doc["events"]) if e["type"] == "action" and i > 6)
    forged = {k: v for k, v in doc.items() if k != "signature"}
    forged["events"] = doc["events"][:cut] + [
        {"seq": cut, "type": "end", "reason": "resigned", "seat": 1}
    ]
    key = V2.match_key(
        doc["server_seed"],
        doc["match_id"],
        "tawla",
        doc["ruleset"],
        [(s["client_seed"], s["nonce"]) for s in doc["seats"]],
    )
    engine = replay(
        engine_class("tawla"),
        doc["ruleset"],
        key,
        forged["events"],
        protocol="qahwa-fair/2",
        ctx=MatchContext(doc["match_id"], tuple(s["roll_chain"] for s in doc["lock"]["seats"])),
    )
    assert engine.outcome is not None
    forged["result"] = engine.outcome.to_json()
    forged["chain"] = chain_head(doc["lock"], forged["events"]).hex()
    forged = server.app.state.signer.signed(forged)
    check_transcript(client, forged)  # without receipts the forgery checks out ...
    with pytest.raises(AssertionError, match="receipt"):
        check_transcript(client, forged, receipts)  # ... the seat's receipts catch it
