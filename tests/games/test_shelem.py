"""Shelem: deals from the spec's vectors, the seed's worked example, scripted rules tests."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from fairness import DECK52, PROTOCOL, V1, Stream
from games import errors
from games.base import V2_RULESET_DEFAULTS as V2_TIMING
from games.base import Chance
from games.registry import engine_class, find_engine
from games.replay import replay
from games.shelem import ShelemEngine, card_points
from tests.support import ScriptedChance, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
ShelemEngineV1 = find_engine("shelem", protocol=V1)

VECTORS = vector("shelem_deal.json")
K = bytes.fromhex(VECTORS["K"])


def new(players: int = 4, target: int = 1200, chance: Chance | None = None) -> ShelemEngine:
    rs = ShelemEngine.parse_ruleset({"players": players, "target": target})
    return ShelemEngineV1(rs, chance or Chance(K))


# -- a deal builder: twelve one-suit tricks -----------------------------------------------
# Each trick is all four cards of one suit, so every seat always follows suit and the highest
# card wins; the plan says which seat wins each trick and which point cards (5, T, A) it holds.


def build_hand(
    dealer: int,
    hakem: int,
    plan: Sequence[tuple[str, int, str]],
    discard: Sequence[str],
    kitty_from_play: bool = False,
) -> tuple[list[str], list[list[tuple[int, str]]], dict[int, list[str]]]:
    """The deck order for the deal, the per-trick cards by seat, and each seat's 12 cards.

    ``plan``: 12 tricks ``(suit, winner, point ranks)``; the leader of trick 0 is the hakem,
    then each winner leads. ``discard``: the hakem's 4 discards; ``kitty``: the 4 dealt kitty
    cards: the discards themselves, or (``kitty_from_play``) four of the cards the hakem
    plays, the discards then being dealt in the hakem's hand.
    """
    assert len(plan) == 12
    pools = {
        s: [r + s for r in "23456789TJQKA" if r + s not in discard and r not in "5TA"]
        for s in "CDHS"
    }
    holding: dict[int, list[str]] = {s: [] for s in range(4)}
    tricks: list[list[tuple[int, str]]] = []
    leader = hakem
    used: set[str] = set(discard)
    for s, winner, pts in plan:
        cards = [r + s for r in pts]
        while len(cards) < 4:
            cards.append(pools[s].pop())
        assert not used & set(cards), cards
        used |= set(cards)
        cards.sort(key=lambda c: "23456789TJQKA".index(c[0]), reverse=True)
        order = [(leader + i) % 4 for i in range(4)]
        by_seat = {winner: cards[0]}
        rest = iter(cards[1:])
        for seat in order:
            if seat != winner:
                by_seat[seat] = next(rest)
        tricks.append([(seat, by_seat[seat]) for seat in order])
        for seat in order:
            holding[seat].append(by_seat[seat])
        leader = winner
    assert len(used) == 52, 52 - len(used)
    kitty = holding[hakem][:4] if kitty_from_play else list(discard)
    sixteen = holding[hakem] + list(discard)
    dealt = [c for c in sixteen if c not in kitty]
    assert len(dealt) == 12 and all(c in sixteen for c in kitty)
    hands = {s: list(holding[s]) for s in range(4)}
    hands[hakem] = dealt
    d = dealer
    deck = hands[(d + 1) % 4] + hands[(d + 2) % 4] + hands[(d + 3) % 4] + kitty + hands[d]
    return deck, tricks, hands


def bids(e: ShelemEngine, script: str) -> None:
    """Drive an auction like 'B 110, C 115, D pass' with seats A-D = 0-3."""
    for part in script.split(","):
        who, what = part.split()
        seat = "ABCD".index(who)
        assert e.turn == seat, (part, e.turn)
        e.apply(seat, {"type": "pass"} if what == "pass" else {"type": "bid", "amount": int(what)})


def play_tricks(e: ShelemEngine, tricks: list[list[tuple[int, str]]]) -> None:
    for trick in tricks:
        for seat, card in trick:
            assert e.turn == seat
            e.apply(seat, {"type": "play", "card": card})


# The four-suit plan: trump spades (first lead), each suit's first trick holds its 5, T and A
# (or the point ranks ``firsts`` names, suit by suit).
def plan_of(
    winners: Sequence[int], firsts: Sequence[str] = ("5TA",) * 4
) -> list[tuple[str, int, str]]:
    out = []
    for i, w in enumerate(winners):
        s = "SHDC"[i // 3]
        out.append((s, w, firsts[i // 3] if i % 3 == 0 else ""))
    return out


LOW_DISCARD = ["2S", "2H", "2D", "2C"]


# -- ruleset -------------------------------------------------------------------------------


def test_ruleset_defaults_and_errors() -> None:
    assert ShelemEngine.parse_ruleset({}, protocol=PROTOCOL) == {"players": 4, "target": 1200}
    assert ShelemEngine.parse_ruleset({}) == {**{"players": 4, "target": 1200}, **V2_TIMING}
    assert ShelemEngine.parse_ruleset({"players": 2, "target": 660}, protocol=PROTOCOL) == {
        "players": 2,
        "target": 660,
    }
    assert ShelemEngine.seat_count({"players": 2, "target": 330}) == 2
    assert engine_class("shelem") is ShelemEngine
    for bad in (
        {"players": 3},
        {"players": True},
        {"target": "1200"},
        {"target": 0},
        {"colour": 1},
        {"players": 4.0},
    ):
        with pytest.raises(errors.RulesetError):
            ShelemEngine.parse_ruleset(bad)


# -- known-answer deals ---------------------------------------------------------------------


def test_vector_shuffle_matches_spec() -> None:
    deck = Stream(K, "h0/shuffle").shuffle(list(DECK52))
    assert deck[:13] == VECTORS["spec_first13"]
    assert Stream(K, "dealer").uniform(4) == 0


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['players']}p")
def test_vector_deal(case: dict[str, Any]) -> None:
    e = new(case["players"])
    events = e.chance.take_events()
    assert events[0] == {
        "type": "chance",
        "label": "dealer",
        "kind": "uniform",
        "args": {"n": case["players"]},
        "result": case["dealer"],
    }
    assert events[1]["label"] == "h0/shuffle" and events[1]["result"] == case["h0_shuffle"]
    assert e.dealer == case["dealer"]
    for seat, cards in case["hands"].items():
        v = e.view(int(seat))
        assert sorted(v["hand"]) == sorted(cards)
        assert e.hands[int(seat)] == cards
    assert e.kitty == case["kitty"]
    if case["players"] == 4:
        # the spec's first 12 cards are D+1's hand; the 13th starts D+2's
        d = case["dealer"]
        assert e.hands[(d + 1) % 4] == VECTORS["spec_first13"][:12]
        assert e.hands[(d + 2) % 4][0] == VECTORS["spec_first13"][12]
        assert e.turn == (d + 1) % 4  # the auction opens at D+1
    else:
        pub = e.view(None)["piles"]
        for seat, piles in case["piles"].items():
            assert e.piles[int(seat)] == piles
            # face down from the deal: the views show pile sizes only
            assert [p["top"] for p in pub[int(seat)]] == [None, None, None]
            assert [p["count"] for p in pub[int(seat)]] == [4, 4, 4]
            assert e.view(None)["piles_revealed"] is False
        assert e.turn == 1 - case["dealer"]  # the non-dealer bids first


# -- the seed's worked example ---------------------------------------------------------------


def test_worked_example_four_hands() -> None:
    # hand 1, dealer A: A hakem at 135; A/C take 130 (B/D: one 30-point trick + one 5).
    h1 = plan_of([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 0, 0])
    # hand 2, dealer B: D hakem at 125; B/D take 150 (A/C: three 5-point tricks).
    h2 = plan_of([3, 1, 0, 3, 2, 1, 3, 0, 1, 3, 1, 3])
    # hand 3, dealer C: A hakem at 150; shelem.
    h3 = plan_of([0, 2, 0, 2, 0, 2, 0, 0, 2, 2, 0, 0])
    # hand 4, dealer D: D hakem at 135; B/D take 135 (A/C: one 30-point trick).
    h4 = plan_of([3, 1, 3, 1, 3, 1, 0, 3, 3, 1, 3, 1])
    decks = []
    built = []
    for h, (dealer, hakem, plan) in enumerate([(0, 0, h1), (1, 3, h2), (2, 0, h3), (3, 3, h4)]):
        deck, tricks, _ = build_hand(dealer, hakem, plan, LOW_DISCARD)
        decks.append((f"h{h}/shuffle", deck))
        built.append(tricks)
    e = new(chance=ScriptedChance({"dealer": 0, **dict(decks)}, K))

    assert e.dealer == 0 and e.turn == 1
    bids(e, "B 110, C 115, D pass, A 125, B 130, C pass, A 135, B pass")
    assert e.hakem == 0 and e.view(0)["bid"] == 135 and e.view(0)["phase"] == "discard"
    e.apply(0, {"type": "discard", "cards": LOW_DISCARD})
    play_tricks(e, built[0])
    last = e.history[-1]
    assert last["points"] == [130, 35] and last["delta"] == [-135, 35]
    assert e.scores == [-135, 35]

    assert e.view(None)["hand_number"] == 1 and e.dealer == 1
    bids(e, "C pass, D 125, A pass, B pass")
    assert e.hakem == 3
    e.apply(3, {"type": "discard", "cards": LOW_DISCARD})
    play_tricks(e, built[1])
    assert e.history[-1]["points"] == [15, 150]
    assert e.scores == [-120, 185]

    assert e.dealer == 2
    bids(e, "D 100, A 120, B 125, C pass, D 130, A 135, B 140, D pass, A 150, B pass")
    assert e.hakem == 0 and e.high_bid == 150
    e.apply(0, {"type": "discard", "cards": LOW_DISCARD})
    play_tricks(e, built[2])
    assert e.history[-1]["shelem"] is True and e.history[-1]["delta"] == [330, 0]
    assert e.scores == [210, 185]

    assert e.dealer == 3
    bids(e, "A 130, B pass, C pass, D 135, A pass")
    assert e.hakem == 3
    e.apply(3, {"type": "discard", "cards": LOW_DISCARD})
    play_tricks(e, built[3])
    assert e.history[-1]["points"] == [30, 135] and e.history[-1]["delta"] == [30, 135]
    assert e.scores == [240, 320]
    assert [h["bid"] for h in e.history] == [135, 125, 150, 135]
    # the match goes on: hand 5 is dealt by A again, from the real stream
    assert e.outcome is None and e.dealer == 0 and e.view(None)["hand_number"] == 4
    assert e.turn == 1 and e.view(None)["scores"] == [240, 320]


# -- scoring cases ---------------------------------------------------------------------------


def scripted_hand(
    winners: Sequence[int],
    hakem: int = 0,
    discard: Sequence[str] = LOW_DISCARD,
    bid: int = 100,
    scores: tuple[int, int] = (0, 0),
    target: int = 1200,
    plan: Sequence[tuple[str, int, str]] | None = None,
) -> ShelemEngine:
    """One hand with dealer 3 (seat 0 bids first): ``hakem`` bids ``bid``, the rest pass."""
    deck, tricks, _ = build_hand(3, hakem, plan or plan_of(winners), discard)
    e = new(target=target, chance=ScriptedChance({"dealer": 3, "h0/shuffle": deck}, K))
    e.set_scores(scores)
    for seat in (0, 1, 2, 3):
        if seat == hakem:
            e.apply(seat, {"type": "bid", "amount": bid})
        else:
            e.apply(seat, {"type": "pass"})
    assert e.hakem == hakem
    e.apply(hakem, {"type": "discard", "cards": list(discard)})
    play_tricks(e, tricks)
    return e


def test_made_bid_scores_points_taken() -> None:
    # A/C take 5 (kitty) + three 30s + five 5s = 120 against 115
    e = scripted_hand([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 1, 3], bid=115)
    assert e.history[-1]["points"] == [120, 45]
    assert e.scores == [120, 45]
    assert e.history[-1]["made"] is True and e.history[-1]["yasa"] is False


def test_failed_bid_not_yasa() -> None:
    # 85 exactly is not yasa: 5 + 30 + 30 + 4 * 5 = 85 against 120 → -120
    e = scripted_hand([0, 1, 0, 1, 0, 2, 0, 1, 2, 3, 3, 3], bid=120)
    assert e.history[-1]["points"] == [85, 80]
    assert e.scores == [-120, 80] and e.history[-1]["yasa"] is False


def test_yasa() -> None:
    # 5 + 30 + 30 + 3 * 5 = 80 < 85: yasa → -165, the other side its 85
    e = scripted_hand([0, 1, 0, 1, 0, 1, 0, 1, 1, 3, 2, 3], bid=100)
    assert e.history[-1]["points"] == [80, 85]
    assert e.scores == [-165, 85] and e.history[-1]["yasa"] is True


def test_shelem_scores_330_and_other_side_zero() -> None:
    e = scripted_hand([1, 3, 1, 3, 1, 1, 3, 3, 1, 1, 3, 1], hakem=1, bid=100)
    assert e.history[-1]["shelem"] is True
    assert e.scores == [0, 330]
    assert e.view(None)["tricks_taken"] == [0, 0]  # a new hand has started


def test_all_tricks_but_not_shelem_when_one_is_lost() -> None:
    e = scripted_hand([1, 3, 1, 3, 1, 1, 3, 3, 1, 1, 3, 0], hakem=1, bid=165)
    # lost the last club trick (5 points): 160 < 165 → -165
    assert e.history[-1]["points"] == [5, 160] and e.history[-1]["shelem"] is False
    assert e.scores == [5, -165]


def test_discard_counts_as_a_trick_with_its_points() -> None:
    # the discard holds 5S, TH, AD and 2C = 25 points; the kitty dealt was other cards
    discard = ["5S", "TH", "AD", "2C"]
    plan = plan_of([2, 0, 1, 1, 3, 3, 3, 0, 2, 2, 2, 1], firsts=("TA", "5A", "5T", "5TA"))
    deck, tricks, hands = build_hand(3, 0, plan, discard, kitty_from_play=True)
    kitty = deck[36:40]
    assert not set(discard) & set(kitty) and set(discard) <= set(hands[0])
    e = new(chance=ScriptedChance({"dealer": 3, "h0/shuffle": deck}, K))
    e.apply(0, {"type": "bid", "amount": 100})
    for s in (1, 2, 3):
        e.apply(s, {"type": "pass"})
    v = e.view(0)
    assert len(v["hand"]) == 16 and v["kitty"] == kitty
    assert set(v["kitty"]) <= set(v["hand"])
    for other in (1, 2, 3):
        assert e.view(other)["kitty"] is None
        assert not set(v["kitty"]) & set(json_cards(e.view(other)))
    e.apply(0, {"type": "discard", "cards": discard})
    assert sorted(e.view(0)["discard"]) == sorted(discard)
    assert e.view(1)["discard"] is None and e.view(None)["discard_count"] == 4
    assert len(e.view(0)["hand"]) == 12
    play_tricks(e, tricks)
    # tricks: A/C won 1 (TA=20+5), 1 (5), 1 (5), 1 (25+5 clubs), 1 (5), = 6 tricks
    won = [t for t, (_, w, _) in zip(tricks, plan, strict=True) if w % 2 == 0]
    trick_pts = sum(5 + sum(card_points(c) for _, c in t) for t in won)
    assert e.history[-1]["points"][0] == trick_pts + 5 + 25
    assert sum(e.history[-1]["points"]) == 165
    assert e.history[-1]["discard"] and sorted(e.history[-1]["discard"]) == sorted(discard)


def json_cards(view: dict[str, Any]) -> set[str]:
    """Every card code anywhere in a view's JSON (legal actions included)."""
    text = json.dumps(view)
    return {c for c in DECK52 if f'"{c}"' in text}


def test_match_end_one_side_reaches_target() -> None:
    # B/D (the other side) reach 1200 with their 165 - P: they win though A/C made the bid.
    e = scripted_hand([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 1, 3], bid=115, scores=(0, 1160))
    assert e.outcome is not None and e.outcome.winners == (1, 3)
    assert e.outcome.scores == (120, 1205) and e.turn is None
    assert e.legal_actions(0) == [] and e.view(0)["result"]["reason"] == "finished"


def test_match_end_both_reach_higher_wins() -> None:
    e = scripted_hand([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 1, 3], bid=115, scores=(1090, 1160))
    assert e.outcome is not None and e.outcome.winners == (0, 2)
    assert e.outcome.scores == (1210, 1205)


def test_match_end_both_reach_equal_plays_on() -> None:
    e = scripted_hand([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 1, 3], bid=115, scores=(1085, 1160))
    assert e.scores == [1205, 1205]
    assert e.outcome is None and e.view(None)["hand_number"] == 1 and e.dealer == 0
    assert "h1/shuffle" in e.chance.labels


def test_negative_scores_do_not_end() -> None:
    e = scripted_hand([0, 1, 0, 1, 0, 1, 0, 1, 1, 3, 2, 3], bid=100, scores=(-1100, 0), target=330)
    assert e.scores == [-1265, 85] and e.outcome is None


# -- auction ---------------------------------------------------------------------------------


def test_void_hand_deals_again_and_counts() -> None:
    e = new()
    d = e.dealer
    first = [e.hands[s][:] for s in range(4)]
    drawn: list[dict[str, Any]] = []
    for i in range(4):
        assert e.turn == (d + 1 + i) % 4
        drawn += e.apply(e.turn, {"type": "pass"})[1:]
    evs = e.chance.take_events() + drawn  # the start's draws, then the passes
    assert [x["label"] for x in evs] == ["dealer", "h0/shuffle", "h1/shuffle"]
    assert e.scores == [0, 0] and e.history[-1]["void"] is True
    assert e.dealer == (d + 1) % 4 and e.view(None)["hand_number"] == 1
    assert e.turn == (d + 2) % 4 and e.view(None)["bids"] == []
    assert [e.hands[s] for s in range(4)] != first
    deck = evs[2]["result"]
    assert e.hands[(d + 2) % 4] == deck[:12] and e.hands[(d + 1) % 4] == deck[40:]


def test_auction_rules_and_errors() -> None:
    e = new()
    d = e.dealer
    s1, s2, s3 = (d + 1) % 4, (d + 2) % 4, (d + 3) % 4
    la = e.legal_actions(s1)
    assert la[0] == {"type": "bid", "amount": 100} and la[-2] == {"type": "bid", "amount": 165}
    assert len(la) == 15 and la[-1] == {"type": "pass"}
    assert e.legal_actions(s2) == []
    before = e.view(s1)
    cases: list[tuple[dict[str, Any], type[Exception]]] = [
        ({"type": "bid", "amount": 95}, errors.IllegalActionError),
        ({"type": "bid", "amount": 170}, errors.IllegalActionError),
        ({"type": "bid", "amount": 102}, errors.IllegalActionError),
        ({"type": "bid", "amount": "110"}, errors.MalformedActionError),
        ({"type": "bid", "amount": True}, errors.MalformedActionError),
        ({"type": "bid"}, errors.MalformedActionError),
        ({"type": "bid", "amount": 110, "x": 1}, errors.MalformedActionError),
        ({"type": "pass", "amount": 110}, errors.MalformedActionError),
        ({"type": "discard", "cards": []}, errors.IllegalActionError),
        ({"type": "play", "card": e.hands[s1][0]}, errors.IllegalActionError),
        ({"type": "double"}, errors.MalformedActionError),
    ]
    for bad, err in cases:
        with pytest.raises(err):
            e.apply(s1, bad)
    with pytest.raises(errors.NotYourTurnError):
        e.apply(s2, {"type": "bid", "amount": 100})
    assert e.view(s1) == before and e.chance.take_events()[-1]["label"] == "h0/shuffle"
    e.apply(s1, {"type": "bid", "amount": 120})
    with pytest.raises(errors.IllegalActionError, match="higher"):
        e.apply(s2, {"type": "bid", "amount": 120})
    assert e.legal_actions(s2)[0] == {"type": "bid", "amount": 125}
    e.apply(s2, {"type": "pass"})
    e.apply(s3, {"type": "bid", "amount": 165})
    assert e.legal_actions(d) == [{"type": "pass"}]
    e.apply(d, {"type": "pass"})
    assert e.turn == s1  # s2 passed and is skipped
    e.apply(s1, {"type": "pass"})
    assert e.hakem == s3 and e.turn == s3 and e.view(None)["bid"] == 165
    assert e.view(None)["bids"] == [
        {"seat": s1, "bid": 120},
        {"seat": s2, "bid": "pass"},
        {"seat": s3, "bid": 165},
        {"seat": d, "bid": "pass"},
        {"seat": s1, "bid": "pass"},
    ]


def test_last_seat_bidding_after_three_passes_becomes_hakem() -> None:
    e = new()
    d = e.dealer
    for i in range(3):
        e.apply((d + 1 + i) % 4, {"type": "pass"})
    e.apply(d, {"type": "bid", "amount": 100})
    assert e.hakem == d and e.view(d)["phase"] == "discard"


# -- discard and play ----------------------------------------------------------------------


def to_play(e: ShelemEngine, hakem_seat: int | None = None) -> int:
    """Auction won by the first bidder at 100; returns the hakem."""
    h = e.turn
    assert h is not None
    e.apply(h, {"type": "bid", "amount": 100})
    for _ in range(e.n - 1):
        assert e.turn is not None
        e.apply(e.turn, {"type": "pass"})
    assert e.hakem == h
    return h


def test_discard_errors_change_nothing() -> None:
    e = new()
    h = to_play(e)
    hand = sort_codes(e.hands[h])
    assert len(hand) == 16 and len(e.legal_actions(h)) == 1820
    other = next(c for c in DECK52 if c not in hand)
    before = copy.deepcopy(e.view(h))
    cases: list[tuple[dict[str, Any], type[Exception]]] = [
        ({"type": "discard", "cards": hand[:3]}, errors.MalformedActionError),
        ({"type": "discard", "cards": hand[:5]}, errors.MalformedActionError),
        ({"type": "discard", "cards": [hand[0]] * 4}, errors.MalformedActionError),
        ({"type": "discard", "cards": hand[:3] + ["JR"]}, errors.MalformedActionError),
        ({"type": "discard", "cards": hand[:3] + ["XX"]}, errors.MalformedActionError),
        ({"type": "discard", "cards": "".join(hand[:4])}, errors.MalformedActionError),
        ({"type": "discard", "cards": hand[:3] + [other]}, errors.IllegalActionError),
        ({"type": "play", "card": hand[0]}, errors.IllegalActionError),
        ({"type": "pass"}, errors.IllegalActionError),
    ]
    for bad, err in cases:
        with pytest.raises(err):
            e.apply(h, bad)
    assert e.view(h) == before
    # any order of the four cards is accepted
    e.apply(h, {"type": "discard", "cards": list(reversed(hand[4:8]))})
    assert sorted(e.discard) == sorted(hand[4:8]) and len(e.hands[h]) == 12
    assert e.turn == h and e.view(None)["phase"] == "play"


def sort_codes(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=DECK52.index)


def test_trump_by_first_lead_and_follow_suit() -> None:
    rng = random.Random(7)
    seen_ruff = False
    for attempt in range(12):
        e = new(chance=Chance(bytes([attempt]) * 32))
        h = to_play(e)
        e.apply(h, rng.choice(e.legal_actions(h)))
        lead = rng.choice(e.hands[h])
        e.apply(h, {"type": "play", "card": lead})
        trump = lead[1]
        assert e.view(None)["trump"] == trump
        while e.hakem is not None and e.history == []:
            seat = e.turn
            assert seat is not None
            led = e.trick.led
            hand = e.hands[seat]
            legal = [a["card"] for a in e.legal_actions(seat)]
            if led and any(c[1] == led for c in hand):
                assert all(c[1] == led for c in legal)
                off = [c for c in hand if c[1] != led]
                if off:
                    with pytest.raises(errors.IllegalActionError, match="follow"):
                        e.apply(seat, {"type": "play", "card": off[0]})
            else:
                assert sorted(legal) == sorted(hand)
            trick = list(e.trick.plays)
            card = rng.choice(legal)
            e.apply(seat, {"type": "play", "card": card})
            if len(trick) == 3:
                plays = [*trick, (seat, card)]
                want = expected_winner(plays, trump)
                assert e.last_trick is not None and e.last_trick["winner"] == want
                if plays[0][1][1] != trump and any(c[1] == trump for _, c in plays):
                    seen_ruff = True
                if e.history == []:
                    assert e.turn == want and e.view(None)["trump"] == trump
                else:  # the 12th trick: the hand is scored, the next one dealt
                    assert e.history[-1]["trump"] == trump and e.view(None)["trump"] is None
                    assert e.view(None)["last_trick"]["hand"] == 0
    assert seen_ruff


def expected_winner(plays: Sequence[tuple[int, str]], trump: str) -> int:
    order = "23456789TJQKA"
    led = plays[0][1][1]
    trumps = [(order.index(c[0]), s) for s, c in plays if c[1] == trump]
    if trumps:
        return max(trumps)[1]
    return max((order.index(c[0]), s) for s, c in plays if c[1] == led)[1]


def test_play_errors() -> None:
    e = new()
    h = to_play(e)
    e.apply(h, e.legal_actions(h)[0])
    nxt = (h + 1) % 4
    with pytest.raises(errors.NotYourTurnError):
        e.apply(nxt, {"type": "play", "card": e.hands[nxt][0]})
    not_mine = e.hands[nxt][0]
    before = e.view(h)
    cases: list[tuple[dict[str, Any], type[Exception]]] = [
        ({"type": "play", "card": not_mine}, errors.IllegalActionError),
        ({"type": "play", "card": e.discard[0]}, errors.IllegalActionError),
        ({"type": "play", "card": "ZZ"}, errors.MalformedActionError),
        ({"type": "play", "card": 5}, errors.MalformedActionError),
        ({"type": "play"}, errors.MalformedActionError),
        ({"type": "play", "card": e.hands[h][0], "from": "pile"}, errors.MalformedActionError),
        ({"type": "bid", "amount": 120}, errors.IllegalActionError),
    ]
    for bad, err in cases:
        with pytest.raises(err):
            e.apply(h, bad)
    assert e.view(h) == before


# -- hidden information ----------------------------------------------------------------------


def test_views_show_only_own_hand() -> None:
    e = new()
    for seat in range(4):
        mine = set(e.hands[seat])
        others = set(DECK52) - mine
        v = e.view(seat)
        assert set(v["hand"]) == mine and v["hand_counts"] == [12, 12, 12, 12]
        assert not json_cards(v) & others
        assert v["kitty_count"] == 4 and v["kitty"] is None
    assert json_cards(e.view(None)) == set()
    pub = e.view(None)
    for key in (
        "hand",
        "trick",
        "trump",
        "tricks_taken",
        "points_taken",
        "bids",
        "auction",
        "scores",
        "hakem",
        "dealer",
        "hand_number",
        "phase",
        "legal_actions",
    ):
        assert key in pub
    assert pub["hand"] is None and pub["legal_actions"] == []


def test_redact_hides_the_discard() -> None:
    e = new()
    h = to_play(e)
    act = e.legal_actions(h)[0]
    ev = {"seq": 9, "type": "action", "seat": h, "action": act}
    red = ShelemEngine.redact(ev)
    assert red["action"] == {"type": "discard", "count": 4} and red["hidden"] is True
    assert not set(act["cards"]) & set(json.dumps(red).replace('"', " ").split())
    assert ev["action"] == act  # the original event is left alone
    play = {"seq": 10, "type": "action", "seat": h, "action": {"type": "play", "card": "AS"}}
    assert ShelemEngine.redact(play) == play
    bid = {"seq": 2, "type": "action", "seat": 1, "action": {"type": "bid", "amount": 100}}
    assert ShelemEngine.redact(bid) == bid
    dealer_ev, deal = e.chance.take_events()
    assert "result" not in ShelemEngine.redact(deal) and ShelemEngine.redact(deal)["hidden"]
    assert ShelemEngine.redact(dealer_ev) == dealer_ev  # the first dealer is public


def test_replay_reproduces_a_scripted_start() -> None:
    e = new()
    events = e.chance.take_events()
    h = to_play(e)
    discard = e.legal_actions(h)[3]
    e.apply(h, discard)
    lead = e.legal_actions(h)[5]
    e.apply(h, lead)
    actions = [
        {"type": "action", "seat": s, "action": a}
        for s, a in [
            (h, {"type": "bid", "amount": 100}),
            *[((h + i) % 4, {"type": "pass"}) for i in (1, 2, 3)],
            (h, discard),
            (h, lead),
        ]
    ]
    seq = [{"seq": i, **x} for i, x in enumerate(events + actions)]
    r = replay(ShelemEngineV1, '{"players":4,"target":1200}', K, seq)
    assert isinstance(r, ShelemEngine)
    assert r.view(h) == e.view(h)


def test_resign_and_finished_views() -> None:
    e = new()
    e.end_match("resigned", 1)
    assert e.outcome is not None and e.outcome.winners == (0, 2)
    assert e.view(0)["phase"] == "over" and e.view(0)["legal_actions"] == []
    # the auction is over with the match: no lowest bid is offered any more
    assert e.view(None)["auction"]["min_bid"] is None and e.view(1)["auction"]["min_bid"] is None
    e = scripted_hand([0, 2, 0, 1, 0, 2, 0, 0, 3, 2, 1, 3], bid=115, scores=(1100, 0))
    assert e.outcome is not None and e.outcome.winners == (0, 2)
    v = e.view(None)
    assert v["phase"] == "over" and v["status"] == "finished" and v["turn"] is None
    assert v["result"]["scores"] == [1220, 45] and v["result"]["hands"] == 1
    assert "h1/shuffle" not in e.chance.labels  # no hand is dealt after the end


def test_bot_actions_are_legal() -> None:
    e = new()
    rng = random.Random(3)
    for _ in range(200):
        seat = e.turn
        assert seat is not None
        legal = e.legal_actions(seat)
        bot = e.bot_actions(seat)
        assert bot and all(a in legal for a in bot)
        assert e.bot_actions((seat + 1) % 4) == []
        if e.phase == "bid":
            assert bot == [legal[0], {"type": "pass"}] or bot == [{"type": "pass"}]
        elif e.phase == "discard":
            pts = sorted((card_points(c) for c in e.hands[seat]), reverse=True)
            assert sum(card_points(c) for c in bot[0]["cards"]) == sum(pts[:4])
        else:
            assert bot == legal
        e.apply(seat, rng.choice(bot))


def test_vector_two_player_piles_turn_up_after_the_answer_to_the_first_lead() -> None:
    """The 2-player vector's piles, face down (sizes only) through the auction, the kitty
    exchange and the hakem's lead, then the six tops of the vector's piles."""
    case = next(c for c in VECTORS["cases"] if c["players"] == 2)
    e = new(2)
    d = case["dealer"]
    o = 1 - d
    hidden = [[{"count": 4, "top": None}] * 3] * 2
    e.apply(o, {"type": "bid", "amount": 100})
    assert e.view(None)["piles"] == hidden
    e.apply(d, {"type": "pass"})
    e.apply(o, e.bot_actions(o)[0])  # the hakem lays 4 away
    assert e.view(None)["piles"] == hidden and e.view(d)["piles"] == hidden
    e.apply(o, e.legal_actions(o)[0])  # the hakem's first lead
    assert e.view(o)["piles"] == hidden and not e.view(None)["piles_revealed"]
    e.apply(d, e.legal_actions(d)[0])  # the other answers from its hand
    tops = [[{"count": 4, "top": p[-1]} for p in case["piles"][str(s)]] for s in (0, 1)]
    assert e.view(None)["piles"] == tops and e.view(None)["piles_revealed"] is True
