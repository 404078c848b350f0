"""qahwa_client against a real server, qahwa-fair/2: every game and form from creation
through commit, the lock check and reveal, signed play with fresh-roll values, to a transcript
that ``verify`` passes with the seats' receipts; typed views, versions, SSE, rng, async."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from fairness import chain_head, seed_commitment
from qahwa_client import (
    ApiError,
    AsyncClient,
    Client,
    ClientError,
    NotOurMatch,
    Seat,
    StaleVersion,
    Terms,
    TranscriptMismatch,
)
from qahwa_client.models import ACTIONS, SeatingView
from tests.support.http_play import GAMES, check_transcript, client_moves, short_ruleset
from tests.support.live_server import LiveServer

# Every game in each of its forms (short targets), tawla and mahbusa with fresh rolls (the
# default) and without.
FORMS: list[tuple[str, dict[str, Any]]] = [
    *(("hokm", {"players": p, "cut": c, "target": 1}) for p in (4, 3, 2) for c in (True, False)),
    ("qahve", {"target": 1}),
    ("shelem", {"players": 4, "target": 5}),
    ("shelem", {"players": 2, "target": 5}),
    *(("iraqi_domino", {"players": p, "target": 1}) for p in (2, 3, 4)),
    *(("mexican_train", {"players": p, "rounds": 1}) for p in (2, 5, 8)),
    ("tawla", {"match_length": 1}),
    ("tawla", {"match_length": 1, "fresh_rolls": False}),
    ("mahbusa", {"match_length": 1}),
    ("mahbusa", {"match_length": 1, "fresh_rolls": False}),
]
FORM_IDS = [f"{g}-{'-'.join(f'{k}{v}' for k, v in rs.items())}" for g, rs in FORMS]


@pytest.fixture()
def qc(server: LiveServer) -> Iterator[Client]:
    with Client(server.url) as c:
        yield c


def test_every_game_is_a_form_listed() -> None:
    assert {g for g, _ in FORMS} == set(GAMES)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "ruleset"), FORMS, ids=FORM_IDS)
def test_a_v2_match_of_every_game_and_form_through_the_client_verifies(
    qc: Client, game: str, ruleset: dict[str, Any], tmp_path: Path
) -> None:
    match = qc.create_match(game, ruleset)
    first = match.seats[0].state()
    assert isinstance(first, SeatingView) and first.legal_actions == []
    match.start()
    for seat in match.seats:
        assert seat.lock is not None and seat.lock == match.seats[0].lock
        assert seat.log_index is not None
        lock_seat = seat.lock["seats"][seat.seat]
        assert lock_seat["key"] == seat.key and lock_seat["seed_commitment"] == seed_commitment(
            match.match_id, seat.seat, seat.nonce or "", seat.client_seed or ""
        )
    view = match.seats[0].state()
    assert view.game == game and view.chain is not None
    adapter: TypeAdapter[Any] = TypeAdapter(ACTIONS[game])
    for action in view.legal_actions:  # every legal action has the published shape
        assert adapter.validate_python(action).model_dump(mode="json", exclude_unset=True) == action
    played = sum(1 for _ in client_moves(match.seats, random.Random(7)))
    assert played > 0 and match.public().status == "finished"
    doc = match.check_transcript()  # the lock each seat revealed against, every receipt
    assert doc["protocol"] == "qahwa-fair/2"
    receipts = [r for s in match.seats for r in s.receipts]
    assert len(receipts) >= played
    with httpx.Client(base_url=qc.base_url) as h:
        check_transcript(h, doc, receipts)
    # every action event carries its seat's signature; fresh rolls carry the seat's values
    fresh = json.loads(doc["ruleset"]).get("fresh_rolls") is True
    sent_values: dict[int, list[str]] = {s.seat: [] for s in match.seats}
    for ev in doc["events"]:
        if ev["type"] == "action":
            assert "sig" in ev
            if ev["action"]["type"] in ("roll", "roll_value") and "value" in ev["action"]:
                sent_values[ev["seat"]].append(ev["action"]["value"])
    for seat in match.seats:
        chain = seat.proto.roll_chain
        assert (chain is not None) == fresh
        if chain is not None:
            assert sent_values[seat.seat] == [
                seat.proto.roll_value(k) for k in range(len(sent_values[seat.seat]))
            ]
    if game in ("tawla", "mahbusa"):
        assert bool(sum(len(v) for v in sent_values.values())) == fresh
    report = match.verify()
    assert report["status"] == "verified", report
    # the player's own files: seed and nonce, lock, requests and receipts
    saved = json.loads(match.seats[0].save(tmp_path / "seat0.json").read_text())
    assert (saved["client_seed"], saved["nonce"]) == (
        match.seats[0].client_seed,
        match.seats[0].nonce,
    )
    assert saved["lock"] == doc["lock"] and saved["receipts"] == match.seats[0].receipts


def test_a_tampered_transcript_fails_verification_and_the_seats_checks(qc: Client) -> None:
    match = qc.create_match("iraqi_domino", short_ruleset("iraqi_domino"))
    match.start()
    mover = match.seats[match.seats[0].state().turn or 0]
    mover.act(mover.state().legal_actions[0])
    match.seats[0].resign()
    doc = match.transcript()
    match.check_transcript(doc)
    bad = json.loads(json.dumps(doc))
    bad["seats"][0]["client_seed"] = "not what was given"
    assert qc.verify(bad)["status"] == "failed"
    with pytest.raises(TranscriptMismatch, match="seat 0's client seed"):
        match.seats[0].check_transcript(bad)
    cut = json.loads(json.dumps(doc))
    cut["events"] = cut["events"][:1]
    with pytest.raises(TranscriptMismatch, match="chain does not recompute"):
        match.seats[0].check_transcript(cut)
    cut["chain"] = chain_head(cut["lock"], cut["events"]).hex()  # a consistent rewrite
    with pytest.raises(TranscriptMismatch, match=r"receipt for seq \d+ is beyond .* short"):
        match.seats[0].check_transcript(cut)


def test_versions_and_stale_retries(qc: Client) -> None:
    match = qc.create_match("tawla", {"match_length": 3, "fresh_rolls": False})
    match.start()
    view = match.seats[0].state()
    assert view.status == "playing" and view.turn is not None
    with pytest.raises(ApiError) as gone:
        qc.request("POST", f"/v1/matches/{match.match_id}/start", token=match.seats[1].token)
    assert (gone.value.status, gone.value.code) == (404, "not_found")  # no /start in v2
    mover, other = match.seats[view.turn], match.seats[1 - view.turn]
    old = other.state()
    mover.act(mover.state().legal_actions[0])
    with pytest.raises(StaleVersion) as exc:  # chosen from a view the match has left
        other.act({"type": "double"}, version=old.version)
    assert exc.value.status == 409 and exc.value.code == "stale_version"
    now = other.state()
    assert now.turn == other.seat and now.legal_actions
    other.view = old  # stale again, but retried on request: signed over the new head
    out = other.act(now.legal_actions[0], retry_stale=True)
    assert out.version == now.version + 1
    assert out.receipt is not None and out.receipt.chain == out.state.chain
    assert [e["attempts"] for e in other.requests[-2:]] == [1, 1]


def test_errors_carry_the_documented_codes(qc: Client, server: LiveServer) -> None:
    with pytest.raises(ApiError) as exc:
        qc.create_match("chess")
    assert (exc.value.status, exc.value.code) == (422, "unknown_game")
    match = qc.create_match("hokm")
    assert [s.name for s in match.created.seats] == ["Seat 0", "Seat 1", "Seat 2", "Seat 3"]
    # a seed a conforming client would not send is refused here, before any request
    with pytest.raises(ClientError, match="1-128 UTF-8 bytes"):
        match.seats[0].commit("é" * 65)
    with pytest.raises(ApiError) as exc:
        qc.transcript(match.match_id)
    assert (exc.value.status, exc.value.code) == (409, "not_finished")
    stranger = Seat(qc, match.match_id, 0, qc.create_match("hokm").seats[0].token)
    with pytest.raises(ApiError) as exc:
        stranger.state()
    assert (exc.value.status, exc.value.code) == (401, "unauthorized")
    with pytest.raises(ApiError) as exc:
        match.seats[0].act({"type": "play", "card": "AS"}, version=0)
    assert exc.value.code == "not_started"
    with pytest.raises(ApiError) as exc:  # a reveal before the lock is not even tried
        match.seats[0].commit()
        match.seats[0].reveal()
    assert exc.value.code == "not_locked"


def test_a_seat_joining_by_token_checks_the_public_record(qc: Client) -> None:
    match = qc.create_match("hokm", {"target": 1, "players": 2})
    tokens = [s.token for s in match.created.seats]
    wrong = Seat(qc, match.match_id, 0, tokens[0], terms=Terms(game="hokm", ruleset={"target": 2}))
    with pytest.raises(NotOurMatch, match="target=1, not the 2 asked for"):
        wrong.commit()
    assert qc.match(match.match_id).seats[0].committed is False
    seats = [
        Seat(qc, match.match_id, i, tok, terms=Terms(game="hokm", ruleset={"target": 1}))
        for i, tok in enumerate(tokens)
    ]
    for seat in seats:
        seat.commit()
    for seat in seats:
        seat.reveal()
    assert seats[0].lock == seats[1].lock and seats[0].state().status == "playing"


def test_a_lost_answer_is_resent_identically_and_the_action_found(server: LiveServer) -> None:
    lose = {"/reveal": 1, "/actions": 1}
    sent: list[tuple[str, bytes]] = []

    class Losing(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            resp = super().handle_request(request)
            if request.method == "POST":
                sent.append((request.url.path, request.read()))
                for tail, n in lose.items():
                    if request.url.path.endswith(tail) and n:
                        lose[tail] = n - 1
                        resp.read()
                        raise httpx.ReadTimeout("the answer was lost", request=request)
            return resp

    with (
        httpx.Client(transport=Losing()) as http,
        Client(server.url, http=http, retry_delay=0) as qc,
    ):
        match = qc.create_match("tawla", {"match_length": 1})
        match.start()
        reveals = [c for p, c in sent if p.endswith("/seats/0/reveal")]
        assert len(reveals) == 2 and reveals[0] == reveals[1]
        turn = match.seats[0].state().turn
        assert turn is not None
        seat = match.seats[turn]
        out = seat.act(seat.state().legal_actions[0])
        acts = [c for p, c in sent if p.endswith("/actions")]
        assert len(acts) == 2 and acts[0] == acts[1]  # identical bytes: same value, same sig
        assert out.first_seq == 0 and out.receipt is None  # its answer was lost
        assert seat.requests[-1]["attempts"] == 2


def test_events_stream_in_order_to_the_end(qc: Client) -> None:
    match = qc.create_match("tawla", {"match_length": 1})
    match.start()
    for _ in client_moves(match.seats, random.Random(3)):
        pass
    seqs = [ev["seq"] for ev in match.seats[0].events()]
    total = qc.events(match.match_id).next_seq
    assert seqs == list(range(total))
    tail = [ev["seq"] for ev in match.events(after=total - 3)]
    assert tail == [total - 2, total - 1]


def test_rng_session(qc: Client) -> None:
    sess = qc.rng()
    sess.send_seed()
    assert sess.lock is not None and sess.client_seed is not None and sess.nonce is not None
    d = sess.dice(3, 20)
    assert d.label == "d0" and isinstance(d.result, list) and len(d.result) == 3
    assert sess.shuffle(10).label == "d1"
    closed = sess.close()
    assert closed.transcript.commitment == sess.created.commitment
    sess.check_transcript()
    assert qc.verify(sess.transcript())["status"] == "verified"


def test_async_client_plays_and_verifies(server: LiveServer) -> None:
    async def main() -> tuple[int, str, list[int]]:
        async with AsyncClient(server.url) as ac:
            match = await ac.create_match("iraqi_domino", short_ruleset("iraqi_domino"))
            await match.start()
            rnd, played, turn = random.Random(1), 0, 0
            while True:
                view = await match.seats[turn].state()
                if view.status != "playing":
                    break
                assert view.turn is not None
                if view.turn != view.seat:
                    turn = view.turn
                    continue
                await match.seats[turn].act(
                    rnd.choice(view.suggested_actions or view.legal_actions)
                )
                played += 1
            seqs = [ev["seq"] async for ev in match.events()]
            await match.check_transcript()
            report = await match.verify()
            sess = await ac.rng()
            await sess.send_seed()
            assert (await sess.dice(2, 6)).label == "d0"
            assert (await sess.shuffle(5)).label == "d1"
            await sess.close()
            await sess.check_transcript(await sess.transcript())
            assert (await ac.verify(await sess.transcript()))["status"] == "verified"
            return played, report["status"], seqs

    played, status, seqs = asyncio.run(main())
    assert played > 0 and status == "verified" and seqs == list(range(len(seqs)))
