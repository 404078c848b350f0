"""The conforming client after the 2026-12-03 revision (fairness-v2.md §3a.3, §3a.8): it
refuses rolls the operator could compute unless asked, checks the server's clock, keeps its
unreceipted signed requests with their local send times, and reports a match the server ended
by timeout while it held one sent before the deadline as disputed, with the evidence.

Against the fake server (tests/support/fake_server.py) on fake clocks (tests/support/fake_clock.py): nothing
sleeps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairness.protocol import parse_time_us
from qahwa_client import (
    AsyncClient,
    Client,
    FreshRollsRefused,
    NotOurMatch,
    Seat,
    Terms,
    Unanswered,
)
from qahwa_client.aio import AsyncSeat
from tests.support.fake_clock import FakeClock
from tests.support.fake_server import RULESET, FakeServer

ASKED = {"match_length": 1}
START = 1_800_000_000.0


# -- §3a.3: "fresh_rolls": false is refused unless asked for ----------------------------------


def test_a_seat_refuses_computable_rolls_unless_asked() -> None:
    fake = FakeServer(ruleset={**RULESET, "fresh_rolls": False})
    qc = Client("http://fake", **fake.client_args())
    seat = Seat(qc, fake.match_id, 0, fake.tokens[0], record=fake.record)
    with pytest.raises(FreshRollsRefused, match='"fresh_rolls": false') as exc:
        seat.commit()
    assert isinstance(exc.value, NotOurMatch) and "computable_rolls=True" in str(exc.value)
    assert fake.posts("/commit") == []  # nothing was committed to
    # asked for: explicitly, or by creating the match with that ruleset
    asked = Seat(
        qc, fake.match_id, 0, fake.tokens[0], record=fake.record,
        terms=Terms(computable_rolls=True),
    )  # fmt: skip
    assert asked.commit() is not None
    other = FakeServer(ruleset={**RULESET, "fresh_rolls": False})
    match = Client("http://fake", **other.client_args()).create_match(
        "tawla", {"fresh_rolls": False}, names=other.names
    )
    for s in match.seats:
        s.commit()
    assert len(other.posts("/commit")) == 2
    # the default (fresh rolls) needs no asking
    plain = FakeServer()
    Seat(Client("http://fake", **plain.client_args()), plain.match_id, 1, plain.tokens[1],
         record=plain.record).commit()  # fmt: skip
    assert len(plain.posts("/commit")) == 1


def test_the_async_seat_refuses_computable_rolls_too() -> None:
    async def main() -> None:
        fake = FakeServer(ruleset={**RULESET, "fresh_rolls": False})
        async with AsyncClient(
            "http://fake", http=httpx.AsyncClient(transport=fake.transport())
        ) as ac:
            seat = AsyncSeat(ac, fake.match_id, 1, fake.tokens[1], record=fake.record)
            with pytest.raises(FreshRollsRefused):
                await seat.commit()
        assert fake.posts("/commit") == []

    asyncio.run(main())


# -- §3a.8: clock checks and disputes -----------------------------------------------------------


def playing(clock: FakeClock, server_clock: FakeClock | None = None) -> tuple[FakeServer, Any]:
    """A started match on the fake server; the opening's two values sent (seat 0 owes a
    move), the clock moving a second before each request."""
    fake = FakeServer(clock=server_clock or clock)
    qc = Client("http://fake", **fake.client_args(), clock=clock.now)
    match = qc.create_match("tawla", ASKED, names=fake.names)
    match.start()
    for n in (0, 1):
        clock.advance(1)
        if server_clock is not None:
            server_clock.advance(1)
        seat = match.seats[n]
        seat.act(seat.state().legal_actions[0])
    return fake, match


def test_a_timeout_while_the_seat_holds_an_unreceipted_request_is_disputed(
    tmp_path: Path,
) -> None:
    clock = FakeClock(START)
    fake, match = playing(clock)
    seat = match.seats[0]
    view = seat.state()
    assert view.turn == 0 and view.deadline is not None and view.deadline.seat == 0
    due = parse_time_us(view.deadline.due)
    # the seat's move is read and never accepted (every copy lost): no receipt
    fake.faults["/actions"] = ["drop"] * 4
    clock.advance(60)
    with pytest.raises(Unanswered):
        seat.act(view.legal_actions[0])
    (held,) = seat.unreceipted
    assert held in seat.requests and held["receipt"] is None and held["attempts"] == 4
    assert held["body"]["sig"] and parse_time_us(held["sent_at"]) < due
    assert not seat.disputed
    # the server declares the seat's timeout, at its deadline
    clock.set(due / 1e6 + 1)
    end = fake.end_by_timeout()
    assert parse_time_us(end["at"]) == due
    assert seat.state().status == "finished"
    (d,) = seat.disputes
    assert seat.disputed and d.kind == "censored" and d.seat == 0
    assert "while the seat holds its signed request sent at" in d.message
    assert d.evidence["requests"] == [held]
    assert d.evidence["events"][-1] == end
    assert d.evidence["times"]["deadline"] == view.deadline.due
    # the other seat held nothing: nothing to dispute
    assert match.seats[1].state().status == "finished" and not match.seats[1].disputed
    # the evidence is kept with what the seat saves
    saved = json.loads(seat.save(tmp_path / "seat0.json").read_text())
    assert saved["disputes"] == [d.to_json()]
    assert saved["disputes"][0]["evidence"]["requests"][0]["sent_at"] == held["sent_at"]


def test_a_timeout_without_a_pending_request_is_no_dispute() -> None:
    clock = FakeClock(START)
    fake, match = playing(clock)
    seat = match.seats[0]
    due = parse_time_us(seat.state().deadline.due)
    clock.set(due / 1e6 + 2)
    fake.end_by_timeout()
    assert seat.state().status == "finished"
    assert not seat.disputed and not match.seats[1].disputed


def test_an_early_timeout_is_disputed_from_the_events_alone() -> None:
    clock = FakeClock(START)
    fake, match = playing(clock)
    seat = match.seats[1]
    due = parse_time_us(seat.state().deadline.due)
    clock.set(due / 1e6 - 10)
    fake.end_by_timeout(early=10)  # ten seconds before the deadline
    assert seat.state().status == "finished"
    (d,) = seat.disputes
    assert d.kind == "early_timeout" and "before its deadline" in d.message
    assert "signed proof" in d.message


def test_a_server_clock_off_by_more_than_max_skew_is_disputed() -> None:
    clock = FakeClock(START)
    server = FakeClock(START + 60)  # a minute ahead
    fake, match = playing(clock, server)
    kinds = {d.kind for s in match.seats for d in s.disputes}
    assert kinds == {"clock"}
    d = match.seats[0].disputes[0]
    assert "60 s ahead of this client's clock" in d.message
    assert d.evidence["times"]["client"] < d.evidence["times"]["server"]
    # within max_skew: no dispute
    near = FakeClock(START + 20)
    _, fine = playing(FakeClock(START), near)
    assert not any(s.disputed for s in fine.seats)


def test_the_async_seat_reports_the_dispute_too() -> None:
    async def main() -> None:
        clock = FakeClock(START)
        fake = FakeServer(clock=clock)
        async with AsyncClient(
            "http://fake",
            http=httpx.AsyncClient(transport=fake.transport()),
            retry_delay=0,
            clock=clock.now,
        ) as ac:
            match = await ac.create_match("tawla", ASKED, names=fake.names)
            await match.start()
            for n in (0, 1):
                clock.advance(1)
                s = match.seats[n]
                await s.act((await s.state()).legal_actions[0])
            seat = match.seats[0]
            view = await seat.state()
            assert view.deadline is not None
            fake.faults["/actions"] = ["drop"] * 4
            with pytest.raises(Unanswered):
                await seat.act(view.legal_actions[0])
            clock.set(parse_time_us(view.deadline.due) / 1e6 + 1)
            fake.end_by_timeout()
            assert (await seat.state()).status == "finished"
            assert [d.kind for d in seat.disputes] == ["censored"]

    asyncio.run(main())
