"""Random full Hokm matches (simulate_match): invariants at every step, replay, tampering."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import DECK52, PROTOCOL, PROTOCOL_V2
from games.base import Chance
from games.cards import suit
from games.deals import hokm_deck
from games.errors import ReplayError
from games.hokm import HokmEngine
from games.registry import find_engine
from games.replay import replay
from games.transcript import replay_transcript, simulate_match, transcript_key
from tests.support import examples, walk_transcript


def leaked(view: dict[str, Any], hidden: set[str], hand_number: int) -> list[str]:
    """Hidden cards that appear in a view (outside the deals of earlier hands)."""
    v = {k: x for k, x in view.items() if k not in ("history", "first_hakem_deal")}
    if v.get("last_trick") and v["last_trick"]["hand"] != hand_number:
        del v["last_trick"]  # a trick of an earlier deal: its cards are dealt anew
    text = json.dumps(v)
    return sorted(c for c in hidden if f'"{c}"' in text)


def assert_no_leak(e: HokmEngine) -> None:
    """No view shows another seat's cards, the undealt rest, the stock or the uncut deck."""
    undealt = {c for r in e.rest for c in r} | set(e.stock)
    undealt |= set(e.deck) if e.phase == "cut" else set()
    for s in (None, *range(e.n)):
        hidden = undealt | {c for t in range(e.n) if t != s for c in e.hands[t]}
        hidden |= {c for t in range(e.n) if t != s for c in e.thrown[t]}
        if s is not None:
            hidden -= set(e.hands[s]) | set(e.thrown[s])
            if e.view(s).get("drawn"):
                hidden.discard(e.stock[0])
        assert not leaked(e.view(s), hidden, e.hand_number), f"seat {s} sees hidden cards"


def hokm_check(e: HokmEngine, seat: int, action: dict[str, Any]) -> None:
    assert_no_leak(e)
    deck = sorted(hokm_deck(e.n))
    # every card of the deck is somewhere, once
    if e.phase == "cut":
        assert sorted(e.deck) == deck and all(not h for h in e.hands)
    else:
        every = [c for h in e.hands for c in h] + [c for h in e.rest for c in h] + e.stock
        every += [c for t in e.thrown for c in t]
        every += e.trick.cards() + [c for t in e.tally.cards for c in t]
        assert sorted(every) == deck
    if e.phase == "trump":
        assert all(len(h) == 5 for h in e.hands)
    if e.phase == "play":
        assert len({len(h) for h in e.hands}) <= 2
    if action["type"] == "play":
        led = e.trick.led
        card = action["card"]
        if led is not None and suit(card) != led:
            assert not any(suit(c) == led for c in e.hands[seat]), "follow suit violated"
        assert sum(e.side_tricks()) == e.tally.played
        assert max(e.side_tricks()) < 7


def check_hokm_result(doc: dict[str, Any], engine: HokmEngine) -> None:
    assert engine.outcome is not None and engine.outcome.reason == "finished"
    n, target = engine.n, engine.target
    sides = engine.n_sides
    totals = [0] * sides
    hakem = engine.history[0]["hakem"]
    for h in engine.history:
        assert h["hakem"] == hakem
        w = h["winner_side"]
        hakem_side = engine.side_of(hakem)
        if w is None:  # three players, 6-6-5
            assert n == 3 and sorted(h["tricks"]) == [5, 6, 6] and h["points"] == 0
        else:
            assert h["tricks"][w] == 7 and all(t < 7 for i, t in enumerate(h["tricks"]) if i != w)
            kot = all(t == 0 for i, t in enumerate(h["tricks"]) if i != w)
            expect = (3 if w != hakem_side else 2) if kot else 1
            assert h["points"] == expect and h["kot"] == kot
            totals[w] += expect
        assert h["scores"] == totals
        hakem = hakem if w == hakem_side else (hakem + 1) % n
    assert engine.hakem == hakem
    assert list(engine.outcome.scores) == totals
    win = engine.side_of(engine.outcome.winners[0])
    assert totals[win] >= target and all(t < target for i, t in enumerate(totals) if i != win)
    assert doc["result"] == engine.outcome.to_json()
    labels = [e["label"] for e in doc["events"] if e["type"] == "chance"]
    # qahwa-fair/2 draws every cut (fairness-v2.md §5) right after its hand's shuffle
    drawn_cut = doc["protocol"] == PROTOCOL_V2 and engine.ruleset["cut"]
    per_hand = [["h{i}/shuffle", "h{i}/cut"] if drawn_cut else ["h{i}/shuffle"]]
    assert labels == ["hakem"] + [
        lab.format(i=i) for i in range(len(engine.history)) for lab in per_hand[0]
    ]
    for h in engine.history:
        if drawn_cut:  # k = 1 + the drawn uniform(len(deck) - 1)
            cut_ev = next(e for e in doc["events"] if e.get("label") == f"h{h['hand']}/cut")
            assert cut_ev["kind"] == "uniform" and cut_ev["args"] == {
                "n": (51 if n == 3 else 52) - 1
            }
            assert h["cut"] == 1 + cut_ev["result"] and h["tap"] is False
        else:
            assert h["cut"] is None


@settings(max_examples=examples(40), deadline=None)
@given(
    seed=st.integers(0, 10**9),
    cut=st.booleans(),
    nars=st.booleans(),
    target=st.integers(1, 5),
    players=st.sampled_from([2, 3, 4]),
    protocol=st.sampled_from([PROTOCOL, PROTOCOL_V2]),
)
def test_random_full_matches(
    seed: int, cut: bool, nars: bool, target: int, players: int, protocol: str
) -> None:
    ruleset = {"cut": cut, "nars": nars, "target": target, "players": players}
    doc, engine = simulate_match("hokm", ruleset, seed=seed, protocol=protocol)
    assert isinstance(engine, HokmEngine)
    check_hokm_result(doc, engine)
    walked = walk_transcript(doc, HokmEngine, hokm_check)
    assert walked.outcome == engine.outcome
    again = replay_transcript(doc)
    assert again.outcome == engine.outcome
    for s in (None, *range(players)):
        assert again.view(s) == engine.view(s)


def test_default_ruleset_match_and_resignation_replay() -> None:
    doc, engine = simulate_match("hokm", seed=7, protocol=PROTOCOL)
    assert isinstance(engine, HokmEngine)
    assert doc["ruleset"] == '{"cut":true,"nars":false,"players":4,"target":7}'
    cuts = [
        e["action"]
        for e in doc["events"]
        if e["type"] == "action" and e["action"]["type"] in ("cut", "tap")
    ]
    assert cuts and all(a == {"type": "tap"} for a in cuts)  # a v1 bot taps
    check_hokm_result(doc, engine)
    doc, engine = simulate_match("hokm", seed=7)  # qahwa-fair/2: the only cut is drawn
    assert doc["ruleset"] == (
        '{"cut":true,"max_seconds":86400,"nars":false,"players":4,'
        '"reveal_seconds":120,"target":7,"turn_seconds":300}'
    )
    cuts = [
        e["action"]
        for e in doc["events"]
        if e["type"] == "action" and e["action"]["type"] in ("cut", "tap")
    ]
    assert cuts and all(a == {"type": "cut"} for a in cuts)
    check_hokm_result(doc, engine)  # type: ignore[arg-type]
    doc2, e2 = simulate_match("hokm", {"cut": True}, seed=3, resign_at=40, protocol=PROTOCOL)
    assert e2.outcome is not None and e2.outcome.reason == "resigned"
    assert e2.outcome.winners == (1, 3)
    assert (
        replay(
            find_engine("hokm", protocol=doc2["protocol"]),
            doc2["ruleset"],
            transcript_key(doc2),
            doc2["events"],
        ).outcome
        == e2.outcome
    )
    doc2, e2 = simulate_match("hokm", {"cut": True}, seed=3, resign_at=40)
    assert doc2["result"]["reason"] == "resigned" and doc2["result"]["forfeited"] == [0]
    assert e2.outcome is not None and e2.outcome.winners == (1, 3)
    assert replay_transcript(doc2).outcome == e2.outcome


def test_replay_rejects_a_tampered_transcript() -> None:
    doc, _ = simulate_match("hokm", {"cut": True}, seed=11)
    key = transcript_key(doc)
    events = copy.deepcopy(doc["events"])
    i = next(
        i for i, e in enumerate(events) if e["type"] == "action" and e["action"]["type"] == "play"
    )
    seat = events[i]["seat"]
    e = replay(find_engine("hokm", protocol=doc["protocol"]), doc["ruleset"], key, events[:i])
    held = set(e.view(seat)["hand"])
    other = next(c for c in DECK52 if c not in held)
    events[i]["action"] = {"type": "play", "card": other}
    with pytest.raises(ReplayError) as info:
        replay(find_engine("hokm", protocol=doc["protocol"]), doc["ruleset"], key, events)
    assert info.value.seq == i
    events = copy.deepcopy(doc["events"])
    events[1]["result"] = list(reversed(events[1]["result"]))
    with pytest.raises(ReplayError):
        replay(find_engine("hokm", protocol=doc["protocol"]), doc["ruleset"], key, events)


def test_a_transcript_of_the_old_three_key_ruleset_still_replays() -> None:
    """Before ``players`` and the default cut, hokm rulesets had three keys; such a
    transcript replays as the four-player game it was (``players`` defaults to 4)."""
    old = '{"cut":false,"nars":false,"target":1}'
    key = bytes(range(32))
    hokm = find_engine("hokm", protocol=PROTOCOL)
    e = hokm(hokm.parse_ruleset(json.loads(old), protocol=PROTOCOL), Chance(key))
    events = list(e.chance.take_events())
    bots = random.Random(1)
    while e.outcome is None:
        seat = e.turn
        assert seat is not None
        events += e.apply(seat, bots.choice(e.bot_actions(seat)))
    again = replay(hokm, old, key, [{"seq": i, **ev} for i, ev in enumerate(events)])
    assert again.outcome == e.outcome and again.n == 4
    assert not [ev for ev in events if ev.get("action", {}).get("type") in ("cut", "tap")]
