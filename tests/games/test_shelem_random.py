"""Shelem: random full matches (four and two players) through simulate_match and replay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import DECK52
from games.base import Chance
from games.registry import find_engine
from games.replay import replay
from games.shelem import HAND_POINTS, ShelemEngine, hand_score
from games.transcript import simulate_match, transcript_key
from tests.support import examples


def all_cards(e: ShelemEngine) -> list[str]:
    out = [c for h in e.hands for c in h] + e.kitty + e.discard
    out += e.trick.cards() + [c for t in e.tally.cards for c in t]
    out += [c for ps in e.piles for p in ps for c in p]
    return out


def check_hand_record(h: dict[str, Any], n: int) -> None:
    if h["void"]:
        assert all(b["bid"] == "pass" for b in h["bids"]) and len(h["bids"]) == n
        return
    pts = h["points"]
    assert sum(pts) == HAND_POINTS and all(p >= 0 for p in pts)
    hs = h["hakem"] % 2
    mine, theirs, yasa = hand_score(h["bid"], pts[hs], h["shelem"])
    assert h["delta"][hs] == mine and h["delta"][1 - hs] == theirs and h["yasa"] == yasa
    if h["shelem"]:
        assert h["delta"] == ([330, 0] if hs == 0 else [0, 330])
    elif pts[hs] < h["bid"]:
        assert mine == (-165 if pts[hs] < 85 else -h["bid"])
    else:
        assert mine == pts[hs]
    assert len(h["discard"]) == 4


def assert_no_leak(e: ShelemEngine) -> None:
    """No view shows another seat's hand, the face-down kitty, a pile card under its top, or
    (to anyone but the hakem) the four cards laid down."""
    face_down = set(e.kitty) | {
        c for ps in e.piles for p in ps for c in (p[:-1] if e.revealed else p)
    }
    for s in (None, *range(e.n)):
        v = {k: x for k, x in e.view(s).items() if k != "history"}
        if v["last_trick"] and v["last_trick"]["hand"] != e.hand_number:
            del v["last_trick"]  # a trick of an earlier deal: its cards are dealt anew
        hidden = face_down | {c for t in range(e.n) if t != s for c in e.hands[t]}
        if s != e.hakem:
            hidden |= set(e.discard)
        text = json.dumps(v)
        assert not [c for c in hidden if f'"{c}"' in text], f"seat {s} sees hidden cards"


def redrive(doc: dict[str, Any], *, leaks: bool = False) -> ShelemEngine:
    """Re-apply the transcript's actions one by one, checking the rules at every step."""
    parsed = json.loads(doc["ruleset"])
    key = transcript_key(doc)
    chance = Chance(key)
    e = ShelemEngine(ShelemEngine.parse_ruleset(parsed, protocol=doc["protocol"]), chance)
    n = e.n
    pending = chance.take_events()
    first_dealer = e.dealer
    for ev in doc["events"]:
        if ev["type"] == "chance":
            assert {k: v for k, v in ev.items() if k != "seq"} == pending.pop(0)
            continue
        assert not pending
        if ev["type"] == "end":
            e.end_match(ev["reason"], ev.get("seat"))
            continue
        seat, action = ev["seat"], ev["action"]
        if leaks:
            assert_no_leak(e)
        v = e.view(seat)
        assert action in v["legal_actions"]
        if action["type"] == "play":
            card = action["card"]
            trick = v["trick"]
            if n == 2 and len(trick) >= 2:
                pool = [p["top"] for p in v["piles"][seat] if p["top"]]
            else:
                pool = v["hand"]
            assert card in pool
            if trick:  # follow suit never violated
                led = trick[0]["card"][1]
                assert card[1] == led or not any(c[1] == led for c in pool)
            elif v["tricks_taken"] == [0, 0] and v["trump"] is None:
                assert seat == v["hakem"]
        before = len(e.history)
        pending = e.apply(seat, action)[1:]
        if pending:
            assert pending[0]["label"] == f"h{len(e.history)}/shuffle"
        assert sorted(all_cards(e)) == sorted(DECK52)
        if action["type"] == "play" and e.trump is not None and len(e.history) == before:
            assert e.view(None)["trump"] == e.trump
        for h in e.history[before:]:
            check_hand_record(h, n)
    assert not pending
    for i, h in enumerate(e.history):
        assert h["hand"] == i and h["dealer"] == (first_dealer + i) % n
    return e


def check_match(players: int, target: int, seed: int, resign_at: int = 1500) -> ShelemEngine:
    doc, e = simulate_match(
        "shelem", {"players": players, "target": target}, seed=seed, resign_at=resign_at
    )
    assert isinstance(e, ShelemEngine) and e.outcome is not None
    labels = [ev["label"] for ev in doc["events"] if ev["type"] == "chance"]
    assert labels[0] == "dealer"
    assert labels[1:] == [f"h{h}/shuffle" for h in range(len(labels) - 1)]
    r = redrive(doc)
    assert r.outcome == e.outcome
    key = transcript_key(doc)
    again = replay(
        find_engine("shelem", protocol=doc["protocol"]), doc["ruleset"], key, doc["events"]
    )
    assert again.outcome == e.outcome
    for s in (None, *range(players)):
        assert again.view(s) == e.view(s)
    # scores add up from the hand records
    totals = [0, 0]
    for h in e.history:
        if not h["void"]:
            totals = [totals[i] + h["delta"][i] for i in (0, 1)]
        assert h["scores"] == totals
    assert list(e.outcome.scores) == totals
    if e.outcome.reason == "finished":
        w = e.outcome.winners[0] % 2
        assert totals[w] >= target and (totals[1 - w] < target or totals[w] > totals[1 - w])
        assert set(e.outcome.winners) == {s for s in range(players) if s % 2 == w}
    else:
        assert e.outcome.reason == "resigned"
        assert max(totals) < target or totals[0] == totals[1]
    # the public log never shows a discard
    for ev in doc["events"]:
        red = ShelemEngine.redact(ev)
        if ev["type"] == "action" and ev["action"]["type"] == "discard":
            assert "cards" not in red["action"] and red["hidden"] is True
        if ev["type"] == "chance" and ev["kind"] == "shuffle":
            assert "result" not in red
    return e


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10**6), target=st.sampled_from([100, 330, 660]))
def test_random_four_player_matches(seed: int, target: int) -> None:
    check_match(4, target, seed)


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10**6), target=st.sampled_from([100, 330, 660]))
def test_random_two_player_matches(seed: int, target: int) -> None:
    check_match(2, target, seed)


@pytest.mark.parametrize("players", [4, 2])
def test_random_matches_to_the_default_target(players: int) -> None:
    outcomes = [check_match(players, 1200, seed, resign_at=10_000).outcome for seed in (1, 2)]
    assert all(o is not None and o.reason == "finished" for o in outcomes)


@pytest.mark.parametrize("players", [4, 2])
def test_views_never_show_hidden_cards(players: int) -> None:
    doc, e = simulate_match("shelem", {"players": players, "target": 330}, seed=11, resign_at=400)
    assert e.outcome is not None and len(e.history) >= 2
    assert redrive(doc, leaks=True).outcome == e.outcome
