"""The deal machine (games/sealed_deal.py) and the seat's secrets (sealed/seat.py), unit by
unit (issue 46): a machine followed over a match's log agrees with the live engine at every
event; the k-th boneyard draw is position 7·seats + k; the phases come in order; a made-up
chance event stops the machine; the secrets refuse a share of the seat's own item and the
key before the hand's play is over, whatever they are asked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sealed
from fairness import canonical_ruleset
from games.errors import ReplayError
from games.sealed_deal import PHASES, DealMachine
from games.sealed_sim import play_match
from sealed.seat import SeatSecrets, SecretRefused


def _follow(r: Any) -> DealMachine:
    return DealMachine.follow(
        r.ctx.match_id, r.engine.game, canonical_ruleset(r.ruleset), r.ctx.house
    )


@settings(max_examples=3, deadline=None, derandomize=True)
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 10_000))
def test_the_kth_boneyard_draw_is_position_7_seats_plus_k(players: int, seed: int) -> None:
    r = play_match("iraqi_domino", {"players": players, "target": 1}, seed=f"draw-{seed}")
    m = _follow(r)
    phases: list[str] = []
    k = 0
    for ev in r.events:
        before = {s: set(m.dealt(s)) for s in range(players)} if m.started else {}
        m.feed([ev])
        if m.phase not in phases[-1:]:
            phases.append(m.phase)
        act = ev.get("action") or {}
        if ev["type"] == "action" and act.get("type") == "draw":
            seat = ev["seat"]
            new = set(m.dealt(seat)) - before[seat]
            assert new == {7 * players + k}
            assert m.owner(7 * players + k) == seat
            k += 1
    assert m.phase == "over" and m.engine.outcome == r.engine.outcome
    # keys, shuffles, shares, then play (and shares of draws), the keys again, over
    assert phases[:4] == ["keys", "shuffles", "shares", "play"]
    assert [p for p in phases if p in ("reveal", "over")][-2:] == ["reveal", "over"]
    assert set(phases) <= set(PHASES)


def test_a_made_up_chance_event_stops_the_machine() -> None:
    r = play_match("hokm", {"target": 1}, seed="chance")
    events = [dict(e) for e in r.events]
    first = next(e for e in events if e["type"] == "chance")
    first["result"] = list(reversed(first["result"]))[:-1]  # not a shuffle of its items
    with pytest.raises(ReplayError, match="not of its items"):
        _follow(r).feed(events)


def test_the_secrets_refuse_a_share_of_their_own_item_and_an_early_key() -> None:
    secrets = SeatSecrets("m", 0, rng=sealed.FixedRandomness(b"unit"))
    secrets.key_step(0)
    deck = sealed.starting_deck("hokm", ["AS", "KS", "QS"])
    with pytest.raises(SecretRefused, match="dealt to seat 0"):
        secrets.share(0, 1, deck[1], mine=[1, 2])
    assert secrets.share(0, 0, deck[0], mine=[1, 2])["item"] == 0
    with pytest.raises(SecretRefused, match="not dealt to seat 0"):
        secrets.opening(0, 0, deck[0], mine=[1, 2])
    with pytest.raises(SecretRefused, match="play is not over"):
        secrets.reveal(0, play_over=False)
    assert len(secrets.reveal(0, play_over=True)["secret"]) == 64
