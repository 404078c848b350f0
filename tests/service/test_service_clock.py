"""service/clock.py: the app's one clock reaches every deadline, rate and timestamp."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.app import create_app
from service.clock import SYSTEM_CLOCK, Clock, SystemClock, epoch_of, iso_of
from service.matches import MatchService
from service.settings import Settings
from tests.support import commit_all, sqlite_settings
from tests.support.fake_clock import FakeClock
from tests.support.http_play import GAMES, short_ruleset


def _settings(tmp_path: Path) -> Settings:
    return sqlite_settings(tmp_path)


def test_the_system_clock_is_the_machines() -> None:
    assert isinstance(SYSTEM_CLOCK, SystemClock) and isinstance(SYSTEM_CLOCK, Clock)
    before, mono = time.time(), time.monotonic()
    assert before <= SYSTEM_CLOCK.now() <= time.time()
    assert mono <= SYSTEM_CLOCK.monotonic() <= time.monotonic()


def test_the_fake_clock_moves_only_forward_and_only_when_told() -> None:
    clock = FakeClock(1_000.0)
    assert isinstance(clock, Clock)
    mono = clock.monotonic()
    assert clock.now() == 1_000.0 and clock.now() == 1_000.0
    clock.advance(2.5)
    assert clock.now() == 1_002.5 and clock.monotonic() == mono + 2.5
    clock.set(1_010.0)
    assert clock.now() == 1_010.0
    with pytest.raises(ValueError, match="does not go back"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="does not go back"):
        clock.set(1_000.0)
    assert clock.now() == 1_010.0


def test_the_app_hands_its_clock_to_every_part_that_measures_time(tmp_path: Path) -> None:
    clock = FakeClock()
    app = create_app(_settings(tmp_path), clock=clock)
    try:
        assert app.state.clock is clock
        assert app.state.service.store.clock is clock
        assert app.state.operators.clock is clock
        assert app.state.address_limit.clock is clock
    finally:
        app.state.db.dispose()
    default = create_app(_settings(tmp_path))
    try:
        assert default.state.clock is SYSTEM_CLOCK
        assert default.state.service.store.clock is SYSTEM_CLOCK
    finally:
        default.state.db.dispose()


@pytest.mark.skipif("hokm" not in GAMES, reason="needs the hokm engine")
def test_deadlines_and_timestamps_are_the_clocks(tmp_path: Path) -> None:
    """A v2 match on a clock that stands still: its lock's deadlines, its turn deadline and
    its timestamps are exactly the clock's time plus the ruleset's seconds."""
    clock = FakeClock(1_800_000_000.25)
    app = create_app(_settings(tmp_path), clock=clock)
    svc: MatchService = app.state.service
    try:
        ruleset = {
            **short_ruleset("hokm"),
            "reveal_seconds": 30,
            "turn_seconds": 45,
            "max_seconds": 600,
        }
        created = svc.create_match("hokm", ruleset=ruleset, names=None)
        assert created["created_at"] == iso_of(clock.now()) == "2027-01-15T08:00:00.250Z"
        mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
        clock.advance(10)
        nonces = commit_all(svc, mid, tokens, lambda seat: f"s{seat}")
        lock = svc.lock(mid)["lock"]
        locked = clock.now()
        assert lock["locked_at"] == iso_of(locked)
        assert lock["reveal_by"] == iso_of(locked + 30)
        assert lock["end_by"] == iso_of(locked + 600)
        clock.advance(29)  # one second before reveal_by: still in time
        for seat, tok in enumerate(tokens):
            svc.reveal(mid, seat=seat, token=tok, client_seed=f"s{seat}", nonce=nonces[seat])
        public = svc.public(mid, kind="match")
        assert public["status"] == "playing" and public["started_at"] == iso_of(clock.now())
        with svc.store.read(mid, kind="match") as tx:
            # the first step after the reveals is owed from locked_at (fairness-v2.md §7)
            assert tx.m.deadline == locked + 45 and tx.m.last_activity == clock.now()
        clock.advance(46)
        assert svc.sweep() == 1  # the seat on turn missed its deadline
        doc = svc.transcript(mid, kind="match")
        assert doc["result"]["reason"] == "timeout"
        assert doc["ended_at"] == iso_of(clock.now())
        assert {k: doc["events"][-1][k] for k in ("type", "reason")} == {
            "type": "end",
            "reason": "timeout",
        }
    finally:
        app.state.db.dispose()


@pytest.mark.parametrize(
    "ts",
    [1765051234.1239996, 1765051234.9999998, 1765051234.0009997, 1_000.0, 1765051234.123],
)
def test_a_timestamp_is_cut_down_to_its_millisecond_never_rounded_past_it(ts: float) -> None:
    """``….1239996`` was written ``….124Z``: after the time it stamps."""
    text = iso_of(ts)
    assert epoch_of(text) <= ts < epoch_of(text) + 0.001, text
    assert text == datetime.fromtimestamp(math.floor(ts * 1000) / 1000, UTC).isoformat(
        timespec="milliseconds"
    ).replace("+00:00", "Z")


def test_an_app_starts_on_a_clock_stopped_just_before_a_millisecond(tmp_path: Path) -> None:
    """A FakeClock stopped half a microsecond before a millisecond: the signing key
    registered at that time is in force at that time (it was written a millisecond later,
    and the app refused to start with RetiredKeyError, one test run in about two thousand)."""
    clock = FakeClock(1765051234.1239996)
    app = create_app(_settings(tmp_path), clock=clock)
    try:
        assert app.state.service.signer.current() is not None
    finally:
        app.state.db.dispose()
