"""End-to-end tests of the HTTP service over a real server (SQLite)."""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from typing import Any

import httpx
import pytest

import tlog
from fairness import V2, canonical_json, chain_start, verify_record
from games.registry import engine_class
from service.matches import MatchService
from tests.support.fake_clock import FakeClock
from tests.support.http_play import (
    GAMES,
    V2Seat,
    auth,
    check_transcript,
    create_match,
    documented_error,
    ok,
    play_actions,
    public_key,
    seed_all,
    short_ruleset,
    started,
)
from tests.support.live_server import LiveServer
from tlog import root_from_inclusion


def _started(
    client: httpx.Client, game: str, keyed: bool = True
) -> tuple[dict[str, Any], list[V2Seat]]:
    return started(client, game, keyed=keyed)


def _turn_state(seats: list[V2Seat]) -> tuple[int, dict[str, Any]]:
    view = seats[0].state()
    seat = view["turn"]
    if seat != 0:
        view = seats[seat].state()
    return seat, view


def _proof_of(client: httpx.Client, leaf: dict[str, Any], index: int) -> None:
    """``leaf`` is entry ``index`` of the log, under a signed head."""
    proof = client.get("/v1/log/proof", params={"index": index}).json()
    assert proof["leaf"] == leaf
    head = proof["tree_head"]
    verify_record(head, public_key(client))
    leaf_h = tlog.leaf_hash(canonical_json(leaf))
    assert leaf_h.hex() == proof["leaf_hash"]
    root = root_from_inclusion(
        proof["index"], proof["tree_size"], leaf_h, [bytes.fromhex(h) for h in proof["audit_path"]]
    )
    assert root.hex() == head["root_hash"]


def _reveal_record(client: httpx.Client, mid: str) -> tuple[int, dict[str, Any]]:
    entries = client.get("/v1/log/entries", params={"start": 0, "limit": 1000}).json()
    found = [
        (e["index"], e["leaf"])
        for e in entries["entries"]
        if e["leaf"].get("match_id") == mid and e["leaf"]["type"] == "reveal"
    ]
    assert len(found) == 1, found
    return found[0]


def _error(r: httpx.Response, status: int) -> dict[str, Any]:
    return documented_error(r, status)


# -- whole matches ---------------------------------------------------------------------------

MAX_PLAYED = 5000  # the bots pick from suggested_actions: short rulesets end well before


@pytest.mark.parametrize("game", GAMES)
def test_full_match_over_http(client: httpx.Client, game: str) -> None:
    created = create_match(client, game, short_ruleset(game))
    mid = created["match_id"]
    seats = seed_all(client, created, prefix="s3")
    play_actions(client, seats, random.Random(3), limit=MAX_PLAYED)
    info = client.get(f"/v1/matches/{mid}").json()
    assert info["status"] == "finished" and info["protocol"] == "qahwa-fair/2"
    r = client.get(f"/v1/matches/{mid}/transcript")
    assert r.status_code == 200
    doc = r.json()
    assert doc["match_id"] == mid and doc["game"] == game
    assert doc["commitment"] == info["commitment"] == V2.commitment(doc["server_seed"])
    assert len(doc["server_seed"]) == 128
    assert [s["client_seed"] for s in doc["seats"]] == [f"s3-{i}" for i in range(len(doc["seats"]))]
    assert doc["lock"] == seats[0].lock and doc["lock_index"] == info["lock_index"]
    assert doc["chain"] == info["chain"]
    receipts = [rc for st in seats for rc in st.receipts]
    engine = check_transcript(client, doc, receipts)
    assert engine is not None and engine.outcome is not None
    assert engine.outcome.reason == "finished"
    # every action of every (keyed) seat was signed; every accepted request receipted
    acts = [e for e in doc["events"] if e["type"] == "action"]
    assert acts and all("sig" in e for e in acts)
    # one for the commit that locked, one per lock check and reveal, one per action
    assert sum(len(st.receipts) for st in seats) == len(acts) + 2 * len(seats) + 1
    # The commit record is signed, not logged; the lock and the reveal record are logged.
    verify_record(info["record"], public_key(client))
    assert info["record"]["type"] == "commit"
    _proof_of(client, doc["lock"], doc["lock_index"])
    idx, reveal = _reveal_record(client, mid)
    _proof_of(client, reveal, idx)
    verify_record(reveal, public_key(client))
    assert reveal["lock_index"] == doc["lock_index"] and reveal["chain"] == doc["chain"]
    assert reveal["server_seed"] == doc["server_seed"] and reveal["result"] == doc["result"]
    assert reveal["transcript_sha256"] == hashlib.sha256(canonical_json(doc)).hexdigest()
    assert reveal["reason"] == "finished" and reveal["house"] == []
    # After the end the public log shows every event whole.
    evs = client.get(f"/v1/matches/{mid}/events").json()
    assert evs["events"] == doc["events"] and evs["chain"] == doc["chain"]


@pytest.mark.parametrize("game", GAMES)
def test_v1_paths_are_gone_for_v2_and_resign(client: httpx.Client, game: str) -> None:
    created = create_match(client, game, short_ruleset(game))
    mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
    # no path to a server-drawn seed: /start and /seed are 404 for a v2 match
    for i, tok in enumerate(tokens):
        assert (
            _error(client.post(f"/v1/matches/{mid}/start", headers=auth(tok)), 404)["code"]
            == "not_found"
        )
        _error(
            client.post(
                f"/v1/matches/{mid}/seats/{i}/seed", json={"client_seed": "x"}, headers=auth(tok)
            ),
            404,
        )
    seats = seed_all(client, created)
    assert client.get(f"/v1/matches/{mid}/transcript").status_code == 409
    _error(client.post(f"/v1/matches/{mid}/start", headers=auth(tokens[0])), 404)
    out = seats[1].resign()
    assert out["result"]["reason"] == "resigned" and out["result"]["forfeited"] == [1]
    assert out["receipt"]["chain"] == out["chain"]
    _error(client.post(f"/v1/matches/{mid}/resign", headers=auth(tokens[0]), json={}), 409)
    doc = client.get(f"/v1/matches/{mid}/transcript").json()
    assert all(s["client_seed"] is not None for s in doc["seats"])
    assert "seed_source" not in doc["seats"][0]
    end = doc["events"][-1]
    assert {k: v for k, v in end.items() if k not in ("sig", "at")} == {
        "seq": len(doc["events"]) - 1,
        "type": "end",
        "reason": "resigned",
        "seat": 1,
    }
    engine = check_transcript(client, doc, seats[1].receipts)
    assert engine is not None and engine.outcome is not None
    assert 1 not in engine.outcome.winners


# -- plain rng sessions ------------------------------------------------------------------


def test_rng_session(client: httpx.Client) -> None:
    # the seed comes after the signed commit record, never with the creating request
    assert (
        _error(client.post("/v1/rng", json={"client_seed": "my dice"}), 422)["code"]
        == "validation_error"
    )
    s = ok(client.post("/v1/rng", json={}), 201)
    sid, tok = s["session_id"], s["token"]
    verify_record(s["record"], public_key(client))
    assert s["record"]["type"] == "commit" and s["status"] == "seating"
    assert (
        _error(client.post(f"/v1/rng/{sid}/draws", json={"kind": "dice"}, headers=auth(tok)), 409)[
            "code"
        ]
        == "not_started"
    )
    nonce = "ab" * 32
    _error(
        client.post(f"/v1/rng/{sid}/seed", json={"client_seed": "my dice"}, headers=auth(tok)), 422
    )
    _error(
        client.post(
            f"/v1/rng/{sid}/seed", json={"client_seed": "", "nonce": nonce}, headers=auth(tok)
        ),
        422,
    )
    _error(
        client.post(
            f"/v1/rng/{sid}/seed", json={"client_seed": "x", "nonce": "AB" * 32}, headers=auth(tok)
        ),
        422,
    )
    assert client.get(f"/v1/rng/{sid}").json()["lock"] is None  # refusals changed nothing
    seeded = ok(
        client.post(
            f"/v1/rng/{sid}/seed",
            json={"client_seed": "my dice", "nonce": nonce},
            headers=auth(tok),
        )
    )
    lock = seeded["lock"]
    verify_record(lock, public_key(client))
    assert lock["reveal_by"] == lock["locked_at"] and seeded["status"] == "playing"
    assert seeded["receipt"]["seq"] == -1 and seeded["receipt"]["chain"] == chain_start(lock).hex()
    _proof_of(client, lock, seeded["log_index"])
    _error(
        client.post(
            f"/v1/rng/{sid}/seed", json={"client_seed": "again", "nonce": nonce}, headers=auth(tok)
        ),
        409,
    )
    draws: list[dict[str, Any]] = [
        {"kind": "dice", "count": 2, "sides": 6},
        {"kind": "uniform", "n": 37},
        {"kind": "shuffle", "n": 52},
        {"kind": "dice"},
    ]
    got: list[Any] = []
    receipts: list[dict[str, Any]] = [seeded["receipt"]]
    for i, d in enumerate(draws):
        r = client.post(f"/v1/rng/{sid}/draws", json=d, headers=auth(tok))
        assert r.status_code == 200, r.text
        assert r.json()["label"] == f"d{i}" and r.json()["kind"] == d["kind"]
        got.append(r.json()["result"])
        receipts.append(r.json()["receipt"])
    assert len(got[0]) == 2 and all(1 <= x <= 6 for x in got[0])
    assert 0 <= got[1] < 37 and sorted(got[2]) == list(range(52)) and len(got[3]) == 1
    _error(
        client.post(f"/v1/rng/{sid}/draws", json={"kind": "dice", "count": 0}, headers=auth(tok)),
        422,
    )
    _error(client.post(f"/v1/rng/{sid}/draws", json={"kind": "coin"}, headers=auth(tok)), 422)
    _error(client.post(f"/v1/rng/{sid}/draws", json={"kind": "dice"}), 401)
    assert client.get(f"/v1/rng/{sid}/transcript").status_code == 409
    r = client.post(f"/v1/rng/{sid}/close", headers=auth(tok))
    assert r.status_code == 200
    closed = r.json()
    doc = closed["transcript"]
    assert doc["server_seed"] == closed["server_seed"] and doc["game"] == "rng"
    assert doc["seats"][0]["client_seed"] == "my dice" and doc["seats"][0]["nonce"] == nonce
    check_transcript(client, doc, receipts + [closed["receipt"]])
    results = [e["result"] for e in doc["events"] if e["type"] == "chance"]
    assert results == got
    _error(client.post(f"/v1/rng/{sid}/draws", json={"kind": "dice"}, headers=auth(tok)), 409)
    assert client.get(f"/v1/rng/{sid}/transcript").json() == doc
    idx, reveal = _reveal_record(client, sid)
    assert reveal["transcript_sha256"] == hashlib.sha256(canonical_json(doc)).hexdigest()


# -- concurrency -------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES[:2])
def test_race_two_actions_one_version(server: LiveServer, game: str) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        created, seats = _started(c, game)
        mid = created["match_id"]
        seat, view = _turn_state(seats)
        legal = view["legal_actions"]
        bodies = [seats[seat].act_request(view, a) for a in (legal[0], legal[-1])]
    barrier = threading.Barrier(2)
    results: list[httpx.Response] = []

    def send(body: dict[str, Any]) -> None:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            barrier.wait()
            results.append(
                c.post(f"/v1/matches/{mid}/actions", json=body, headers=auth(seats[seat].token))
            )

    threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in results)
    assert codes == [200, 409], [r.text for r in results]
    loser = next(r for r in results if r.status_code == 409)
    assert loser.json()["error"]["code"] == "stale_version"
    with httpx.Client(base_url=server.url, timeout=30) as c:
        evs = c.get(f"/v1/matches/{mid}/events").json()
        actions_logged = [e for e in evs["events"] if e["type"] == "action"]
        assert len(actions_logged) == 1
        assert evs["version"] == view["version"] + 1


# -- bad input ---------------------------------------------------------------------------


def test_bad_input_changes_nothing(client: httpx.Client, server: LiveServer) -> None:
    game = GAMES[0]
    created, seats = _started(client, game)
    tokens = [st.token for st in seats]
    mid = created["match_id"]
    seat, view = _turn_state(seats)
    before = client.get(f"/v1/matches/{mid}/events").json()
    url = f"/v1/matches/{mid}/actions"
    hdr = auth(tokens[seat])
    good = seats[seat].act_request(view, view["legal_actions"][0])
    assert (
        _error(
            client.post(
                url, content=b"{not json", headers={**hdr, "Content-Type": "application/json"}
            ),
            400,
        )["code"]
        == "malformed_json"
    )
    assert _error(client.post(url, json=[1, 2], headers=hdr), 400)["code"] == "bad_request"
    assert (
        "unknown field"
        in _error(client.post(url, json={**good, "extra": 1}, headers=hdr), 422)["message"]
    )
    _error(client.post(url, json={"action": good["action"]}, headers=hdr), 422)
    _error(client.post(url, json={**good, "version": "1"}, headers=hdr), 422)
    big = {"action": {"type": "x" * (server.settings.max_body_bytes + 10)}, "version": 1}
    assert _error(client.post(url, json=big, headers=hdr), 413)["code"] == "body_too_large"
    _error(client.post(url, json=good), 401)
    _error(client.post(url, json=good, headers=auth("not-a-token")), 401)
    other_match = create_match(client, game, short_ruleset(game))
    _error(client.post(url, json=good, headers=auth(other_match["seats"][0]["token"])), 401)
    assert (
        _error(client.post(url, json={**good, "version": view["version"] - 1}, headers=hdr), 409)[
            "code"
        ]
        == "stale_version"
    )
    assert (
        _error(client.post(url, json={**good, "version": view["version"] + 5}, headers=hdr), 409)[
            "code"
        ]
        == "stale_version"
    )
    other = next(i for i in range(len(tokens)) if i != seat)
    assert (
        _error(client.post(url, json=good, headers=auth(tokens[other])), 422)["code"]
        == "bad_signature"
    )  # the other seat's key did not sign it
    assert (
        _error(
            client.post(
                url,
                json=seats[other].act_request(view, good["action"]),
                headers=auth(tokens[other]),
            ),
            409,
        )["code"]
        == "not_your_turn"
    )
    assert _error(
        client.post(url, json=seats[seat].act_request(view, {"type": "no-such-move"}), headers=hdr),
        422,
    )
    bogus = {"type": view["legal_actions"][0]["type"], "bogus": [1]}
    assert _error(client.post(url, json=seats[seat].act_request(view, bogus), headers=hdr), 422)
    # fairness-v2 §1: a repeated key is refused on input
    dup = (
        b'{"action": {"type": "x"}, "action": '
        + json.dumps(good["action"]).encode()
        + b', "version": %d}' % view["version"]
    )
    assert (
        _error(
            client.post(url, content=dup, headers={**hdr, "Content-Type": "application/json"}), 400
        )["code"]
        == "malformed_json"
    )
    _error(
        client.post(
            f"/v1/matches/{mid}/seats/0/seed", json={"client_seed": "x"}, headers=auth(tokens[1])
        ),
        403,
    )
    _error(client.get("/v1/matches/m_nope/state", headers=hdr), 404)
    _error(client.get("/v1/matches/m_nope"), 404)
    _error(client.post("/v1/matches", json={"game": "chess"}), 422)
    _error(client.post("/v1/matches", json={"game": game, "ruleset": {"no_such_key": 1}}), 422)
    _error(client.post("/v1/matches", json={"game": game, "seats": [{"name": "solo"}]}), 422)
    _error(client.post("/v1/matches", json={"game": game, "colour": "red"}), 422)
    _error(
        client.post("/v1/matches", content=b"", headers={"Content-Type": "application/json"}), 400
    )
    after = client.get(f"/v1/matches/{mid}/events").json()
    assert after == before
    # ... and the good action still goes through at the same version.
    r = client.post(url, json=good, headers=hdr)
    assert r.status_code == 200 and r.json()["version"] == view["version"] + 1


def test_commit_and_reveal_rules(client: httpx.Client) -> None:
    game = "tawla"  # fresh rolls: a roll-chain tip is required
    created = create_match(client, game, short_ruleset(game))
    mid = created["match_id"]
    seats = [V2Seat(client, created, i) for i in range(2)]
    url = f"/v1/matches/{mid}/seats/0/commit"
    hdr = auth(seats[0].token)
    good = {
        "seed_commitment": seats[0].seed_commitment,
        "key": seats[0].key,
        "roll_chain": seats[0].tip,
    }
    before = client.get(f"/v1/matches/{mid}").json()
    for bad, code in (
        ({"seed_commitment": "AB" * 32}, "bad_commitment"),
        ({"seed_commitment": "ab" * 31}, "bad_commitment"),
        ({"key": "not base64!"}, "bad_key"),
        ({"key": "AAAA"}, "bad_key"),
        ({"roll_chain": None}, "bad_roll_chain"),
        ({"roll_chain": "zz" * 32}, "bad_roll_chain"),
    ):
        assert _error(client.post(url, json={**good, **bad}, headers=hdr), 422)["code"] == code
    _error(client.post(url, json={**good, "extra": 1}, headers=hdr), 422)
    _error(client.post(f"/v1/matches/{mid}/seats/9/commit", json=good, headers=hdr), 404)
    _error(client.post(f"/v1/matches/{mid}/seats/1/commit", json=good, headers=hdr), 403)
    # no reveal before the lock
    assert (
        _error(
            client.post(
                f"/v1/matches/{mid}/seats/0/reveal",
                headers=hdr,
                json={"client_seed": seats[0].client_seed, "nonce": seats[0].nonce},
            ),
            409,
        )["code"]
        == "not_locked"
    )
    assert _error(client.get(f"/v1/matches/{mid}/lock"), 409)["code"] == "not_locked"
    assert client.get(f"/v1/matches/{mid}").json() == before  # every refusal changed nothing
    first = seats[0].commit()
    assert first["receipt"] is None and first["lock"] is None and first["status"] == "seating"
    # a second commit by a seat, and a copied commitment, are refused
    other_nonce = {**good, "seed_commitment": V2Seat(client, created, 0).seed_commitment}
    assert (
        _error(client.post(url, json=other_nonce, headers=hdr), 409)["code"] == "already_committed"
    )
    assert (
        _error(client.post(url, json={**good, "key": seats[1].key}, headers=hdr), 409)["code"]
        == "already_committed"
    )
    # the identical request again (a resend after a lost answer) gets the same answer
    again = client.post(url, json=good, headers=hdr).json()
    assert again == {**first, "receipt": None}
    copied = {
        "seed_commitment": seats[0].seed_commitment,
        "key": seats[1].key,
        "roll_chain": seats[1].tip,
    }
    assert (
        _error(
            client.post(
                f"/v1/matches/{mid}/seats/1/commit", json=copied, headers=auth(seats[1].token)
            ),
            409,
        )["code"]
        == "duplicate_commitment"
    )
    view = seats[0].state()
    assert view["status"] == "seating" and view["legal_actions"] == [] and view["lock"] is None
    assert [s["committed"] for s in view["seats"]] == [True, False]
    _error(
        client.post(
            f"/v1/matches/{mid}/actions",
            json={"action": {"type": "x"}, "version": view["version"]},
            headers=hdr,
        ),
        409,
    )
    last = seats[1].commit()
    assert last["receipt"]["seq"] == -1 and last["lock"] is not None
    lock = seats[0].check_lock()
    seats[1].check_lock()
    assert [st["house"] for st in lock["seats"]] == [False, False]
    assert _error(client.post(url, json=other_nonce, headers=hdr), 409)["code"] == "not_seating"
    resent = client.post(url, json=good, headers=hdr).json()
    assert resent["version"] == seats[0].state()["version"] and resent["receipt"]["seq"] == -1
    # a reveal that does not match the commitment is refused and changes nothing
    before = client.get(f"/v1/matches/{mid}").json()
    rurl = f"/v1/matches/{mid}/seats/0/reveal"
    for body in (
        {"client_seed": seats[0].client_seed + "x", "nonce": seats[0].nonce},
        {"client_seed": seats[0].client_seed, "nonce": seats[1].nonce},
        {"client_seed": seats[1].client_seed, "nonce": seats[1].nonce},
        {"client_seed": seats[0].client_seed, "nonce": "00"},
    ):
        assert _error(client.post(rurl, json=body, headers=hdr), 422)["code"] == "bad_reveal"
    assert client.get(f"/v1/matches/{mid}").json() == before
    seats[0].reveal()
    assert seats[0].reveal()["receipt"]["seq"] == -1  # an identical resend: the same answer
    assert seats[0].state()["status"] == "seating"
    seats[1].reveal()
    assert seats[0].state()["status"] == "playing"


# -- secrecy -----------------------------------------------------------------------------


def _hidden_items(view: dict[str, Any]) -> set[str]:
    """The codes of the cards or tiles in a seat's own hand."""
    hand = view.get("hand")
    return {x for x in hand if isinstance(x, str)} if isinstance(hand, list) else set()


@pytest.mark.parametrize("game", GAMES)
def test_no_leaks(server: LiveServer, game: str) -> None:
    """No response before the end holds the server seed; no seat sees another's hand."""
    bodies: list[tuple[str, str]] = []
    before_end: list[str] = []  # bodies answered while the match was still being played
    mid = ""

    def record(r: httpx.Response) -> None:
        bodies.append((r.request.headers.get("authorization", ""), r.text))
        # Asked right after each response (the requests are sequential): a body whose
        # match was still unfinished afterwards was served before the end.
        if c_status.get(f"/v1/matches/{mid}").json()["status"] != "finished":
            before_end.append(r.text)

    with (
        httpx.Client(
            base_url=server.url, timeout=30, event_hooks={"response": [lambda r: r.read() and None]}
        ) as c,
        httpx.Client(base_url=server.url, timeout=30) as c_status,
    ):
        created = create_match(c, game, short_ruleset(game))
        mid = created["match_id"]
        seats = seed_all(c, created)
        tokens = [st.token for st in seats]
        rnd = random.Random(5)
        hands_seen: list[tuple[int, str, set[str]]] = []  # seat, view text, hand
        for _ in range(8):
            if play_actions(c, seats, rnd, limit=1, on_response=record) == 0:
                break
            public = c.get(f"/v1/matches/{mid}").json()["public_state"] or {}
            for seat, tok in enumerate(tokens):
                r = c.get(f"/v1/matches/{mid}/state", headers=auth(tok))
                record(r)
                view = r.json()
                # The seat-specific part of the view: fields that differ from the public view.
                private = {k: v for k, v in view.items() if public.get(k) != v}
                hands_seen.append((seat, json.dumps(private), _hidden_items(view)))
            for path in ("", "/events", "/transcript"):
                record(c.get(f"/v1/matches/{mid}{path}"))
            record(c.get("/v1/log/entries"))
        final = c.get(f"/v1/matches/{mid}").json()
        if final["status"] != "finished":
            seats[0].resign()
        full = c.get(f"/v1/matches/{mid}/transcript").json()
        seed = full["server_seed"]
    # Whether or not the match ended within the moves played, nothing served before the
    # end names the seed.
    assert before_end, "no response was recorded before the end"
    for text in before_end:
        assert seed not in text
        assert seed.upper() not in text
    if final["status"] != "finished":
        assert len(before_end) == len(bodies)
    if not any(items for _, _, items in hands_seen):
        assert game in ("tawla", "mahbusa"), f"{game}: no seat view showed a hand"
    # At each moment, no seat's view names a card or tile another seat holds.
    n = len(tokens)
    for i in range(0, len(hands_seen), n):
        group = hands_seen[i : i + n]
        for seat, text, _items in group:
            for other, _t, other_items in group:
                if other != seat:
                    for item in other_items:
                        assert f'"{item}"' not in text, (game, seat, other, item)
    # Public responses (no token) during play: no hand, no shuffle result.
    for h, t in bodies:
        if h:
            continue
        body = json.loads(t)
        state = body.get("public_state") if isinstance(body, dict) else None
        if isinstance(state, dict) and state.get("status") != "finished":
            assert not state.get("hand"), (game, state.get("hand"))
        if isinstance(body, dict) and body.get("status") == "playing":
            for ev in body.get("events", []):
                assert ev == engine_class(game).redact(full["events"][ev["seq"]])


# -- events, abandonment, pages ----------------------------------------------------------


def test_events_redacted_and_long_poll(client: httpx.Client, server: LiveServer) -> None:
    game = next(g for g in GAMES if g not in ("tawla", "mahbusa"))
    created, seats = _started(client, game)
    mid = created["match_id"]
    evs = client.get(f"/v1/matches/{mid}/events").json()
    shuffles = [e for e in evs["events"] if e.get("kind") == "shuffle"]
    for e in shuffles:
        assert "result" not in e and e["hidden"] is True
    nxt = evs["next_seq"]
    t0 = time.monotonic()
    empty = client.get(f"/v1/matches/{mid}/events", params={"after": nxt - 1, "wait": 0.6})
    assert empty.json()["events"] == [] and time.monotonic() - t0 >= 0.5
    seat, view = _turn_state(seats)
    body = seats[seat].act_request(view, view["legal_actions"][0])

    hub = server.app.state.watch.hub

    def later() -> None:
        deadline = time.monotonic() + 30  # act once the long poll below is parked
        while not _counted(lambda: hub.waiting > 0):
            assert time.monotonic() < deadline, "the long poll never waited"
            time.sleep(0.01)
        with httpx.Client(base_url=server.url, timeout=30) as c2:
            c2.post(f"/v1/matches/{mid}/actions", json=body, headers=auth(seats[seat].token))

    th = threading.Thread(target=later)
    th.start()
    r = client.get(f"/v1/matches/{mid}/events", params={"after": nxt - 1, "wait": 10})
    th.join()
    got = r.json()["events"]
    assert got and got[0]["seq"] == nxt and got[0]["type"] == "action"
    # the long-poll answer carries the chain head; so does every server-sent event
    head = r.json()["chain"]
    assert head == seats[0].state()["chain"] == client.get(f"/v1/matches/{mid}").json()["chain"]
    with client.stream(
        "GET", f"/v1/matches/{mid}/events/stream", params={"after": -1, "timeout": 1}
    ) as stream:
        text = "".join(stream.iter_text())
    blocks = [b.splitlines() for b in text.split("\n\n") if "data: " in b]
    # the events, then the signed head the server stands at (fairness-v2 §7, heads)
    assert [b[0] for b in blocks[-1:]] == ["event: head"]
    sent = [json.loads(b[-1][6:]) for b in blocks[:-1]]
    assert [e["seq"] for e in sent] == list(range(nxt + len(got)))
    assert all(len(e["chain"]) == 64 for e in sent) and sent[-1]["chain"] == head
    signed = json.loads(blocks[-1][-1][6:])
    assert (signed["seq"], signed["chain"]) == (sent[-1]["seq"], head)
    _error(client.get("/v1/matches/m_nope/events"), 404)


def _counted(pred: Any) -> bool:
    """``pred()``, False while another thread changed what it counts."""
    try:
        return bool(pred())
    except RuntimeError:
        return False


def test_never_locked_match_closes_with_no_log_entry() -> None:
    """fairness-v2 §3: a match that never locks ends with nothing to reveal, no log entry
    and no seed drawn for anyone (lazily, and by the sweep), once the idle timeout passed
    on the app's clock."""
    game = GAMES[0]
    clock = FakeClock()
    with (
        LiveServer(sweep_interval_seconds=1000.0, clock=clock) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        svc: MatchService = srv.app.state.service
        swept = create_match(c, game, short_ruleset(game))["match_id"]
        lazy = create_match(c, game, short_ruleset(game))
        V2Seat(c, lazy, 0).commit()
        size = c.get("/v1/log").json()["tree_size"]
        clock.advance(srv.settings.idle_timeout_seconds - 1)
        assert svc.sweep() == 0  # not idle long enough yet
        clock.advance(2)
        view = c.get(
            f"/v1/matches/{lazy['match_id']}/state", headers=auth(lazy["seats"][0]["token"])
        ).json()
        assert view["status"] == "finished" and view["result"]["reason"] == "not_locked"
        assert svc.sweep() == 1  # the other one (not read since the lazy one ended)
        assert c.get(f"/v1/matches/{swept}").json()["status"] == "finished"
        for m in (swept, lazy["match_id"]):
            assert _error(c.get(f"/v1/matches/{m}/transcript"), 409)["code"] == "not_locked"
            assert c.get(f"/v1/matches/{m}").json()["public_state"] is None
        assert c.get("/v1/log").json()["tree_size"] == size


def test_keys_log_and_pages(client: httpx.Client) -> None:
    _started(client, GAMES[0])  # the log holds at least one entry (the lock)
    keys = client.get("/v1/keys").json()["keys"]
    assert keys and keys[0]["alg"] == "ed25519"
    head = client.get("/v1/log").json()
    verify_record(head, public_key(client))
    entries = client.get("/v1/log/entries", params={"start": 0, "limit": 1000}).json()["entries"]
    assert len(entries) == head["tree_size"] >= 1
    hashes = [bytes.fromhex(e["leaf_hash"]) for e in entries]
    assert (
        tlog.tree_hash(len(hashes), tlog.ListHashReader.from_leaf_hashes(hashes)).hex()
        == head["root_hash"]
    )
    _error(client.get("/v1/log/proof", params={"index": head["tree_size"]}), 404)
    _error(client.get("/v1/log/proof", params={"index": -1}), 422)
    r = client.get("/verify")
    if r.status_code == 200:
        assert "text/html" in r.headers["content-type"]
    else:
        assert "verify page" in _error(r, 404)["message"]
    _error(client.get("/no/such/path"), 404)
    _error(client.delete("/v1/keys"), 405)
    assert client.get("/openapi.json").json()["paths"]["/v1/matches"]


def test_inclusion_proofs_all_sizes() -> None:
    hashes = [tlog.leaf_hash(bytes([i])) for i in range(13)]
    reader = tlog.ListHashReader.from_leaf_hashes(hashes)
    for n in range(1, 14):
        r = tlog.tree_hash(n, reader)
        for m in range(n):
            path = tlog.prove_record(n, m, reader)
            assert root_from_inclusion(m, n, hashes[m], path) == r
            if path:
                bad = [bytes(32)] + path[1:]
                assert root_from_inclusion(m, n, hashes[m], bad) != r


# -- the forms of issue 15: hokm for 2, 3 and 4 (cut on), two-player shelem, mahbusa ----------

FORMS: list[tuple[str, dict[str, Any]]] = [
    ("hokm", {"players": 4, "target": 1}),
    ("hokm", {"players": 3, "target": 1}),
    ("hokm", {"players": 2, "target": 1}),
    ("shelem", {"players": 2, "target": 5}),
    ("mahbusa", {"match_length": 1}),
]


def hidden_piles_check(r: httpx.Response) -> bool:
    """Every shelem view before the reveal shows pile sizes only (True: it was one)."""
    body = r.json()
    view = body.get("view", body) if isinstance(body, dict) else {}
    if isinstance(view, dict) and view.get("piles_revealed") is False:
        assert all(p["top"] is None for ps in view["piles"] for p in ps)
        assert all(p["count"] == 4 for ps in view["piles"] for p in ps)
        return True
    return False


@pytest.mark.parametrize(("game", "ruleset"), FORMS, ids=lambda x: str(x))
def test_form_plays_to_the_end_and_verifies(
    client: httpx.Client, game: str, ruleset: dict[str, Any]
) -> None:
    created = create_match(client, game, ruleset)
    mid = created["match_id"]
    seats = seed_all(client, created, prefix="f")
    seen: list[bool] = []

    def on_response(r: httpx.Response) -> None:
        seen.append(hidden_piles_check(r))

    play_actions(client, seats, random.Random(5), limit=5000, on_response=on_response)
    assert client.get(f"/v1/matches/{mid}").json()["status"] == "finished"
    doc = client.get(f"/v1/matches/{mid}/transcript").json()
    engine = check_transcript(client, doc, [r for st in seats for r in st.receipts])
    assert engine is not None and engine.outcome is not None
    assert engine.outcome.reason == "finished"
    assert any(seen) == (game == "shelem")  # the piles were seen face down before the reveal
    actions = [e["action"] for e in doc["events"] if e["type"] == "action"]
    kinds = [a["type"] for a in actions]
    if game == "hokm":
        # v2: the cut is drawn (no k, no tap), at h{h}/cut
        assert {"type": "cut"} in actions and "tap" not in kinds
        assert all("k" not in a for a in actions if a["type"] == "cut")
        assert any(e.get("label", "").endswith("/cut") for e in doc["events"])
        assert len(doc["seats"]) == ruleset["players"]
    if game == "mahbusa":  # fresh rolls, on by default: every roll carries a value
        assert all("value" in a for a in actions if a["type"] in ("roll", "roll_value"))
        assert "roll_value" in kinds
    if game == "hokm" and ruleset["players"] == 2:
        assert "draw" in kinds and "discard" in kinds
