"""qahwa_client against a real server: typed views, version handling, SSE, rng, verify."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import pytest
from http_play import GAMES, client_moves, short_ruleset
from live_server import LiveServer

from qahwa_client import ApiError, AsyncClient, Client, Seat, StaleVersion
from qahwa_client.models import ACTIONS, SeatingView


@pytest.fixture()
def qc(server: LiveServer) -> Iterator[Client]:
    with Client(server.url) as c:
        yield c


def _play(seats: list[Seat], rnd: random.Random) -> int:
    played = 0
    for _, _, out in client_moves(seats, rnd):
        assert out.state.version == out.version
        played += 1
    return played


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_match_through_the_client_verifies(qc: Client, game: str) -> None:
    match = qc.create_match(game, short_ruleset(game))
    assert [s.seat for s in match.seats] == list(range(len(match.seats)))
    first = match.seats[0].state()
    assert isinstance(first, SeatingView) and first.legal_actions == []
    for seat in match.seats:
        seat.send_seed(f"client-{seat.seat}")
    view = match.seats[0].state()
    assert view.game == game and type(view).__name__.lower().startswith(game.replace("_", ""))
    # every legal action has the shape the published schema gives for this game
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(ACTIONS[game])
    for action in view.legal_actions:
        assert adapter.validate_python(action).model_dump(mode="json", exclude_unset=True) == action
    assert _play(match.seats, random.Random(7)) > 0
    assert match.public().status == "finished"
    report = match.verify()
    assert report["status"] == "verified", report
    assert qc.verify(match.match_id)["status"] == "verified"


def test_a_tampered_transcript_fails_verification(qc: Client) -> None:
    match = qc.create_match(GAMES[0], short_ruleset(GAMES[0]))
    match.seats[0].resign()
    doc = match.transcript()
    doc["seats"][0]["client_seed"] = "not what was given"
    assert qc.verify(doc)["status"] == "failed"


def test_versions_and_stale_retries(qc: Client) -> None:
    match = qc.create_match("tawla", {"match_length": 3})
    assert [s.send_seed().version for s in match.seats] == [1, 2]  # the last seed starts it
    view = match.seats[0].state()
    assert view.status == "playing" and view.version == 2
    with pytest.raises(ApiError) as conflict:
        match.seats[1].start()
    assert (conflict.value.status, conflict.value.code) == (409, "not_seating")
    mover = match.seats[view.turn if view.turn is not None else 0]
    other = Seat(qc, match.match_id, mover.seat, mover.token)  # a second handle, same seat
    mine = mover.state()
    other.state()
    action = mine.legal_actions[0]
    mover.act(action)  # the other handle's version is now stale
    with pytest.raises(StaleVersion) as exc:
        other.act(action)
    assert exc.value.status == 409 and exc.value.code == "stale_version"
    after = mover.state()
    if after.turn == mover.seat and after.legal_actions:
        other.version = mine.version  # stale again, but retried on request
        out = other.act(after.legal_actions[0], retry_stale=True)
        assert out.version == after.version + 1


def test_errors_carry_the_documented_codes(qc: Client, server: LiveServer) -> None:
    with pytest.raises(ApiError) as exc:
        qc.create_match("chess")
    assert (exc.value.status, exc.value.code) == (422, "unknown_game")
    match = qc.create_match("hokm")
    assert [s.name for s in match.created.seats] == ["Seat 0", "Seat 1", "Seat 2", "Seat 3"]
    for token in ("", "not-a-token", qc.create_match("hokm").seats[0].token):
        with pytest.raises(ApiError) as exc:
            Seat(qc, match.match_id, 0, token).start()  # /start needs this match's seat token
        assert (exc.value.status, exc.value.code) == (401, "unauthorized")
    with pytest.raises(ApiError) as exc:
        match.seats[0].send_seed("é" * 65)
    assert (exc.value.status, exc.value.code) == (422, "bad_client_seed")
    # one code for every bad length, counted in UTF-8 bytes: 65 × 2 bytes, 129, 0
    for seed in ("x" * 129, "x" * 500, ""):
        with pytest.raises(ApiError) as exc:
            qc.rng(seed)
        assert (exc.value.status, exc.value.code) == (422, "bad_client_seed"), seed
    assert qc.rng("x" * 128).created.status == "playing"
    with pytest.raises(ApiError) as exc:
        qc.transcript(match.match_id)
    assert (exc.value.status, exc.value.code) == (409, "not_finished")
    with pytest.raises(ApiError) as exc:
        match.seats[0].act({"type": "play", "card": "AS"}, version=0)
    assert exc.value.code == "not_started"


def test_events_stream_in_order_to_the_end(qc: Client) -> None:
    match = qc.create_match("tawla", {"match_length": 1})
    for seat in match.seats:
        seat.send_seed()
    _play(match.seats, random.Random(3))
    seqs = [ev["seq"] for ev in match.seats[0].events()]
    total = qc.events(match.match_id).next_seq
    assert seqs == list(range(total))
    tail = [ev["seq"] for ev in match.events(after=total - 3)]
    assert tail == [total - 2, total - 1]


def test_rng_session(qc: Client) -> None:
    sess = qc.rng()
    sess.send_seed("after the commitment")
    d = sess.dice(3, 20)
    assert d.label == "d0" and isinstance(d.result, list) and len(d.result) == 3
    assert sess.shuffle(10).label == "d1"
    closed = sess.close()
    assert closed.transcript.commitment == sess.created.commitment
    assert qc.verify(sess.transcript())["status"] == "verified"


def test_async_client_plays_and_verifies(server: LiveServer) -> None:
    async def main() -> tuple[int, str, list[int]]:
        async with AsyncClient(server.url) as ac:
            match = await ac.create_match("iraqi_domino", short_ruleset("iraqi_domino"))
            await asyncio.gather(*(s.send_seed() for s in match.seats))
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
                    rnd.choice(view.suggested_actions or view.legal_actions))
                played += 1
            seqs = [ev["seq"] async for ev in match.events()]
            report = await match.verify()
            sess = await ac.rng("async seed")
            assert (await sess.dice(2, 6)).label == "d0"
            assert (await sess.shuffle(5)).label == "d1"
            await sess.close()
            assert (await ac.verify(await sess.transcript()))["status"] == "verified"
            return played, report["status"], seqs

    played, status, seqs = asyncio.run(main())
    assert played > 0 and status == "verified" and seqs == list(range(len(seqs)))
