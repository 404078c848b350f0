"""Random full Qahve matches: invariants at every step (joker rules too), replay, tampering.

``simulate_match`` bots pick from ``QahveEngine.bot_actions``: every legal play, and the two
lowest legal bids (bids drawn from all of 2..13 make contracts no side can take).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fairness import DECK_QAHVE, V1
from games.base import Chance
from games.cards import is_joker, suit
from games.errors import ReplayError
from games.qahve import QahveEngine, hand_points
from games.registry import find_engine
from games.replay import replay
from games.transcript import simulate_match, transcript_key
from tests.support import examples, walk_transcript

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
QahveEngineV1 = find_engine("qahve", protocol=V1)

#: the default ruleset as a qahwa-fair/2 transcript carries it: every rule, timing included
QAHVE_V2_DEFAULT = (
    '{"max_seconds":86400,"min_bid":2,"reveal_seconds":120,"target":501,"turn_seconds":300}'
)


def assert_no_leak(e: QahveEngine) -> None:
    """No view (public or a seat's) shows a card in another seat's hand."""
    for s in (None, 0, 1, 2, 3):
        v = {k: x for k, x in e.view(s).items() if k != "history"}
        if v["last_trick"] and v["last_trick"]["hand"] != e.hand_number:
            del v["last_trick"]  # a trick of an earlier deal: its cards are dealt anew
        text = json.dumps(v)
        hidden = {c for t in range(4) if t != s for c in e.hands[t]}
        assert not [c for c in hidden if f'"{c}"' in text], f"seat {s} sees hidden cards"


def qahve_check(e: QahveEngine, seat: int, action: dict[str, Any]) -> None:
    every = [c for h in e.hands for c in h] + e.trick.cards()
    every += [c for t in e.tally.cards for c in t]
    assert sorted(every) == sorted(DECK_QAHVE)
    if e.phase == "bid":
        assert action["type"] == "bid" and e.min_bid <= action["tricks"] <= 13
        return
    card = action["card"]
    hand = e.hands[seat]
    played = {c for t in e.tally.cards for c in t} | set(e.trick.cards())
    assert e.jb_played == ("JB" in played)
    if card == "JR":
        assert "JB" in played, "JR before JB"
    if "JB" in hand and e.tricks_done == 9:
        assert card == "JB", "JB not played at trick 10"
    if e.tricks_done >= 10:
        assert "JB" in played
    led = e.trick.led
    if led is not None and not is_joker(card) and suit(card) != led:
        assert not any(suit(c) == led for c in hand), "follow suit violated"


def walk(doc: dict[str, Any], *, leaks: bool = False) -> QahveEngine:
    """Re-run the transcript checking the rules at every step (``leaks``: and every view)."""

    def check(e: QahveEngine, seat: int, action: dict[str, Any]) -> None:
        qahve_check(e, seat, action)
        if leaks:
            assert_no_leak(e)

    engine = walk_transcript(doc, QahveEngine, check)
    assert isinstance(engine, QahveEngine)
    return engine


def check_history(e: QahveEngine, first_dealer: int) -> None:
    totals = [0, 0]
    dealer = first_dealer
    for h in e.history:
        assert h["dealer"] == dealer
        assert sum(h["tricks"]) == 13
        b = h["bids"]
        assert h["contracts"] == [b[0] + b[2], b[1] + b[3]]
        pts = [hand_points(h["contracts"][i], h["tricks"][i]) for i in range(2)]
        assert h["points"] == pts
        totals = [totals[0] + pts[0], totals[1] + pts[1]]
        assert h["scores"] == totals
        if totals[dealer % 2] > totals[1 - dealer % 2]:
            dealer = (dealer + 1) % 4
        assert h["next_dealer"] == dealer
    assert e.scores == totals and e.dealer == dealer


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10**9), target=st.integers(40, 250), min_bid=st.integers(1, 3))
# the bots once bid 3 or 4 under min_bid 3: this match was still below zero after 100,000
# actions (the bots now bid 3 there, games.qahve.QahveEngine.bot_actions)
@example(seed=23354, target=228, min_bid=3)
def test_random_full_matches(seed: int, target: int, min_bid: int) -> None:
    doc, e = simulate_match("qahve", {"target": target, "min_bid": min_bid}, seed=seed)
    assert isinstance(e, QahveEngine)
    assert e.outcome is not None and e.outcome.reason == "finished"
    first_dealer = doc["events"][0]["result"]
    check_history(e, first_dealer)
    s = e.scores
    win = e.side_of(e.outcome.winners[0])
    assert s[win] >= target and (s[1 - win] < target or s[win] > s[1 - win])
    for h in e.history[:-1]:  # no earlier hand ended the match
        t = h["scores"]
        assert not (max(t) >= target and (min(t) < target or t[0] != t[1]))
    walked = walk(doc)
    assert walked.outcome == e.outcome
    again = replay(
        find_engine("qahve", protocol=doc["protocol"]),
        doc["ruleset"],
        transcript_key(doc),
        doc["events"],
    )
    assert again.outcome == e.outcome
    for seat in (None, 0, 1, 2, 3):
        assert again.view(seat) == e.view(seat)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 10**9), resign_at=st.integers(0, 400))
def test_simulated_partial_matches_replay(seed: int, resign_at: int) -> None:
    doc, e = simulate_match("qahve", seed=seed, resign_at=resign_at)
    assert e.outcome is not None and e.outcome.reason == "resigned"
    assert doc["ruleset"] == QAHVE_V2_DEFAULT
    assert isinstance(e, QahveEngine)
    check_history(e, doc["events"][0]["result"])
    walked = walk(doc)
    assert walked.outcome == e.outcome
    again = replay(
        find_engine("qahve", protocol=doc["protocol"]),
        doc["ruleset"],
        transcript_key(doc),
        doc["events"],
    )
    assert again.outcome == e.outcome and again.view(None) == e.view(None)


def test_replay_rejects_an_illegal_jr() -> None:
    doc, _ = simulate_match("qahve", {"target": 60}, seed=5)
    key = transcript_key(doc)
    events = doc["events"]
    # find the first action of a seat holding JR before JB is out, and make it play JR
    for i, ev in enumerate(events):
        if ev["type"] != "action" or ev["action"]["type"] != "play":
            continue
        e = replay(find_engine("qahve", protocol=doc["protocol"]), doc["ruleset"], key, events[:i])
        assert isinstance(e, QahveEngine)
        if "JR" in e.hands[ev["seat"]] and not e.jb_played:
            bad = copy.deepcopy(events)
            bad[i]["action"] = {"type": "play", "card": "JR"}
            with pytest.raises(ReplayError, match="JR may not") as info:
                replay(find_engine("qahve", protocol=doc["protocol"]), doc["ruleset"], key, bad)
            assert info.value.seq == i
            return
    pytest.fail("no seat held JR before JB in this match")


def test_a_full_match_to_the_default_501() -> None:
    doc, e = simulate_match("qahve", seed=2026)
    assert isinstance(e, QahveEngine)
    assert doc["ruleset"] == QAHVE_V2_DEFAULT
    assert e.outcome is not None and max(e.scores) >= 501
    check_history(e, doc["events"][0]["result"])
    assert (
        replay(
            find_engine("qahve", protocol=doc["protocol"]),
            doc["ruleset"],
            transcript_key(doc),
            doc["events"],
        ).outcome
        == e.outcome
    )


def test_bot_actions_are_legal_and_never_empty() -> None:
    # the two lowest bids while they are at most 3 tricks, else the lowest alone
    for min_bid, bids in ((1, [1, 2]), (2, [2, 3]), (3, [3]), (6, [6])):
        e = QahveEngineV1(QahveEngine.parse_ruleset({"min_bid": min_bid}), Chance(bytes(32)))
        seat = e.turn
        assert seat is not None
        bot = e.bot_actions(seat)
        assert bot and all(a in e.legal_actions(seat) for a in bot)
        assert [a["tricks"] for a in bot] == bids
        for _ in range(4):
            e.apply(e.turn, {"type": "bid", "tricks": min_bid})  # type: ignore[arg-type]
        assert e.bot_actions(e.turn) == e.legal_actions(e.turn)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [3, 4])
def test_views_never_show_hidden_cards(seed: int) -> None:
    doc, e = simulate_match("qahve", {"target": 120}, seed=seed)
    assert e.outcome is not None and e.outcome.reason == "finished" and len(e.history) >= 2
    assert walk(doc, leaks=True).outcome == e.outcome
