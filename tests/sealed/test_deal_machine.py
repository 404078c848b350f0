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
from sealed.seat import SeatSecrets, SecretRefused
from tests.support.sealed_play import play_match


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


def test_a_seat_refuses_a_step_its_machine_does_not_owe() -> None:
    """Whatever the caller asks (not only what a view says): its key mid-hand, an open step,
    a share step it does not owe, shares of its own items: refused, a dispute each."""
    from games.base import Chance, MatchContext
    from games.registry import find_engine
    from games.sealed_sim import SimSeat
    from qahwa_client.sealed import SealedSeat, SealedStepRefused

    cls = find_engine("hokm", {"deal": "sealed"})
    parsed = cls.parse_ruleset({"deal": "sealed"})
    e = cls(parsed, Chance(bytes(range(64))), MatchContext("ask"))
    sims = [SimSeat(s, "ask") for s in range(4)]
    events = [{"seq": i, **ev} for i, ev in enumerate(e.chance.take_events())]
    disputes: list[str] = []
    asked = 0  # shares of its own items asked for
    seat = None
    while True:
        s = e.turn
        assert s is not None
        owed = e.owed[0] if e.owed else None
        plays = any(a["type"] == "play" for a in e.legal_actions(s))
        if s == 0 and ((owed is None and plays) or (owed is not None and owed.step == "share")):
            side = sims[0].side
            assert side is not None
            seat = SealedSeat.follow(
                "ask",
                0,
                "hokm",
                canonical_ruleset(parsed),
                keys=side.keys,
                on_dispute=lambda kind, msg, ev: disputes.append(kind),
            )
            seat.take_events(events)
            if owed is None:
                break
            mine = seat.machine.dealt(0)
            made = seat.wire({"type": "sealed", "step": "share"})
            assert not set(mine) & {x["item"] for x in made["shares"]}
            own_shares = {**made, "shares": [{**made["shares"][0], "item": mine[0]}]}
            with pytest.raises(SealedStepRefused, match="other than those owed"):
                seat.wire(own_shares)
            asked += 1
        action = sims[s].act(e.view(s), e)
        assert action is not None
        events += [{"seq": len(events) + i, **ev} for i, ev in enumerate(e.apply(s, action))]
    assert seat is not None and seat.machine.phase == "play"
    for step in ("reveal_key", "open", "share", "key"):
        with pytest.raises(SealedStepRefused, match="does not owe"):
            seat.wire({"type": "sealed", "step": step})
    with pytest.raises(SealedStepRefused, match="does not owe"):
        seat.wire({"type": "sealed", "step": "reveal_key", "secret": "00" * 32})
    assert asked >= 1 and disputes == ["sealed_step"] * (asked + 5)
    # its plays are its own cards, by its machine, and the play carries its opening
    play = seat.view({**e.view(0), "deal": "sealed"})["legal_actions"][0]
    sent = seat.wire(play)
    assert sent["item"] in seat.machine.held(0) and "share" in sent
