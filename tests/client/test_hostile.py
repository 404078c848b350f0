"""The conformance suite (tests/support/hostile.py) against the Python client: each lie told by its
fake server (tests/support/fake_http.py, behind ``httpx.MockTransport``), the scenario played with
``qahwa_client``, and the outcome held to what the lie's entry says a conforming client must
do. (clients/ts/harness/hostile.test.ts runs the same list against the TypeScript client.)"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from fairness.records import request_sha256
from qahwa_client import ApiError, Client, Seat
from tests.support.fake_http import SEALED_LIES, FakeC2SP, SealedLiar
from tests.support.hostile import LIES, Lie, Outcome
from tests.support.live_server import LiveServer
from tlog import parse_policy

#: the scenario's steps at most (a sealed hokm match takes some hundreds)
MAX_STEPS = 5000


def _step(seats: list[Seat]) -> bool:
    view = seats[0].state()
    if view.status != "playing" or view.turn is None:
        return False
    me = seats[view.turn]
    mine = me.state()
    me.act(mine.legal_actions[0])
    return True


def _kept(errors: list[str], exc: Exception) -> None:
    errors.append(f"{type(exc).__name__}: {exc}")


def run(fake: FakeC2SP | SealedLiar, lie: Lie) -> tuple[Outcome, list[Seat]]:
    """:data:`hostile.SCENARIO` with the Python client."""
    qc = Client("http://fake", http=httpx.Client(transport=fake.transport()), retry_delay=0)
    # the player's log policy: the log's key as /v1/keys publishes it, no witness pinned
    vkey = qc.request("GET", "/v1/keys")["log"]["vkey"]
    qc.log_policy = parse_policy(f"log {vkey}\nquorum none\n")
    errors: list[str] = []
    seats: list[Seat] = []
    try:
        match = qc.create_match(lie.game, lie.ruleset, lie.names)
        seats = match.seats
        match.start()
    except Exception as exc:  # a table the client refuses: the run ends here
        _kept(errors, exc)
        return _outcome(fake, errors, seats), seats
    for _ in range(MAX_STEPS):
        try:
            if not _step(seats):
                break
        except Exception as exc:  # the lie's error, kept as the scenario says
            _kept(errors, exc)
            if lie.play_on and len(errors) < 3:
                continue
            _wait_for_the_end(seats[0], errors)
            break
    else:
        raise AssertionError(f"the match did not end in {MAX_STEPS} steps")
    for n in lie.checkers:
        try:
            if lie.watch:
                for _ in seats[n].events():
                    pass
            seats[n].check_transcript()
        except Exception as exc:
            _kept(errors, exc)
    return _outcome(fake, errors, seats), seats


def _wait_for_the_end(seat: Seat, errors: list[str]) -> None:
    until = time.monotonic() + 15
    while time.monotonic() < until:
        try:
            if seat.state().status == "finished":
                return
        except Exception as again:
            _kept(errors, again)
            return
        time.sleep(0.25)


def _outcome(fake: FakeC2SP | SealedLiar, errors: list[str], seats: list[Seat]) -> Outcome:
    return Outcome(
        errors,
        [d.kind for s in seats for d in s.disputes],
        committed=sum(s.method == "POST" and s.path.endswith("/commit") for s in fake.sent),
        leaked=fake.leaks(),
    )


def _fake(lie: Lie, upstream: str) -> FakeC2SP | SealedLiar:
    if set(lie.tampers) & set(SEALED_LIES):
        return SealedLiar(set(lie.tampers), upstream)
    return FakeC2SP(tamper=set(lie.tampers))


@pytest.mark.parametrize("lie", LIES, ids=[lie.name for lie in LIES])
def test_the_python_client_against_a_hostile_server(server: LiveServer, lie: Lie) -> None:
    fake = _fake(lie, server.url)
    try:
        out, _ = run(fake, lie)
    finally:
        if isinstance(fake, SealedLiar):
            fake.close()
    assert fake.told == set(lie.tampers), "the fake did not tell the lie"
    assert not lie.failures(out), (lie.must, out)


def _dispute(seats: list[Seat], kind: str) -> Any:
    found = [d for s in seats for d in s.disputes if d.kind == kind]
    assert found, [d.kind for s in seats for d in s.disputes]
    return found[0]


def test_the_censored_dispute_keeps_the_request_and_the_error() -> None:
    lie = next(x for x in LIES if x.tampers == ("unavailable",))
    fake = FakeC2SP(tamper=set(lie.tampers))
    _, seats = run(fake, lie)
    d = _dispute(seats, "censored")
    (held,) = d.evidence["requests"]
    assert held["path"].endswith("/actions") and "sig" in held["body"]
    assert held["error"] == "HTTP 503 unavailable" and "refused" not in held
    assert held["attempts"] == 4  # the identical bytes, sent again after each 503
    assert len({s.content for s in fake.posts("/actions")[-4:]}) == 1


def test_an_honest_signed_refusal_answers_the_request() -> None:
    """The control: the honest fake signs its refusals; a refused request is answered, and
    a timeout after it is no censorship."""
    fake = FakeC2SP()
    qc = Client("http://fake", http=httpx.Client(transport=fake.transport()), retry_delay=0)
    match = qc.create_match("tawla", names=["Layla", "Omar"])
    match.start()
    seat = match.seats[0]  # at a version not yet reached: 409 stale_version, signed
    view = seat.state()
    with pytest.raises(ApiError, match="stale_version"):
        seat.act({"type": "roll_value"}, version=view.version + 5)
    entry = seat.requests[-1]
    assert entry["refused"] == "HTTP 409 stale_version"
    assert entry["refusal"]["request"] == request_sha256(fake.posts("/actions")[-1].content)
    assert entry not in seat.unreceipted


def test_the_backdated_dispute_holds_both_signed_records() -> None:
    lie = next(x for x in LIES if x.tampers == ("backdate",))
    _, seats = run(FakeC2SP(tamper=set(lie.tampers)), lie)
    d = _dispute(seats, "backdated")
    head, after = d.evidence["head"], d.evidence["signed_after"]
    assert head["type"] == "head" and "signature" in head
    assert after["type"] in ("head", "receipt") and after["seq"] >= d.evidence["events"][-1]["seq"]
    assert d.evidence["events"][-1]["at"] < head["at"]
