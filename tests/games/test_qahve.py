"""Qahve engine: known-answer deals, bidding, every joker rule, scoring, dealer rule, end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fairness import DECK_QAHVE, V1
from games import errors
from games.base import Chance
from games.deals import deal_packets, qahve_deal
from games.qahve import QahveEngine, hand_points
from games.registry import find_engine
from tests.support import assert_defaults, rejects, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
QahveEngineV1 = find_engine("qahve", protocol=V1)

VEC = vector("qahve_deals.json")
K = bytes.fromhex(VEC["key"])


def make(ruleset: dict[str, Any] | None = None, key: bytes = K) -> QahveEngine:
    return QahveEngineV1(QahveEngine.parse_ruleset(ruleset or {}), Chance(key))


def setup_play(
    e: QahveEngine,
    hands: list[list[str]],
    *,
    leader: int = 0,
    tricks_done: int = 0,
    jb_played: bool = False,
    bids: list[int] | None = None,
    tricks_by_seat: list[int] | None = None,
    dealer: int | None = None,
    scores: list[int] | None = None,
) -> QahveEngine:
    """A scripted situation in the play phase, through the engine's public constructor
    (``tricks_done`` tricks already taken, by seat 0 unless ``tricks_by_seat`` says)."""
    return QahveEngineV1.position(
        e.ruleset,
        Chance(e.chance.key),
        hands=hands,
        bids=bids or [2, 2, 2, 2],
        leader=leader,
        jb_played=jb_played,
        tricks_by_seat=tricks_by_seat or [tricks_done, 0, 0, 0],
        dealer=dealer,
        scores=scores,
    )


def cards(e: QahveEngine, seat: int) -> list[str]:
    return [a["card"] for a in e.legal_actions(seat)]


def play(e: QahveEngine, *plays: tuple[int, str]) -> list[dict[str, Any]]:
    """Play the cards; return the chance events the plays drew."""
    drawn: list[dict[str, Any]] = []
    for s, c in plays:
        drawn += e.apply(s, {"type": "play", "card": c})[1:]
    return drawn


# -- ruleset ------------------------------------------------------------------------------


def test_registry_and_ruleset() -> None:
    assert_defaults("qahve", QahveEngine, {"target": 501, "min_bid": 2})
    assert QahveEngine.parse_ruleset({"target": 1001})["target"] == 1001
    for bad in (
        {"target": 0},
        {"min_bid": 0},
        {"min_bid": 14},
        {"target": "501"},
        {"min_bid": 2.0},
        {"nars": True},
    ):
        with pytest.raises(errors.RulesetError):
            QahveEngine.parse_ruleset(bad)


@pytest.mark.parametrize("min_bid", range(7, 14))
def test_a_min_bid_no_side_could_ever_make_is_refused(min_bid: int) -> None:
    # Two bids of at least 7 make a contract of 14 or more: with 13 tricks no side can ever
    # make it, every hand scores negative for both sides and the match could never end.
    assert hand_points(2 * min_bid, 13) < 0
    with pytest.raises(errors.RulesetError, match="min_bid"):
        QahveEngine.parse_ruleset({"min_bid": min_bid})


@pytest.mark.parametrize("min_bid", range(1, 7))
def test_every_accepted_min_bid_leaves_a_makeable_contract(min_bid: int) -> None:
    assert QahveEngine.parse_ruleset({"min_bid": min_bid})["min_bid"] == min_bid
    assert hand_points(2 * min_bid, 13) > 0  # a side taking every trick makes the least contract


# -- known-answer deal ------------------------------------------------------------------------


def test_known_answer_dealer_and_deal() -> None:
    e = make()
    events = e.chance.take_events()
    assert [ev["label"] for ev in events] == ["dealer", "h0/shuffle"]
    assert events[0]["kind"] == "uniform" and events[0]["args"] == {"n": 4}
    assert e.dealer == VEC["dealer"] == 0  # fairness-v1.md §7: uniform(4) of dealer = 0
    assert events[1]["result"] == VEC["h0_shuffle"]
    assert events[1]["result"][:13] == VEC["h0_shuffle_first13_spec"]
    deal = next(d for d in VEC["deals"] if d["dealer"] == 0)
    assert {str(s): e.hands[s] for s in range(4)} == deal["hands"]
    # by hand from the spec's printed prefix: packets of 5 from dealer+1 = seat 1
    assert e.hands[1][:5] == ["JD", "3S", "8C", "TC", "5C"]
    assert e.hands[2][:5] == ["KH", "6D", "KS", "7C", "TD"]
    assert e.hands[3][:3] == ["5H", "JR", "AD"]
    assert sorted(c for h in e.hands for c in h) == sorted(DECK_QAHVE)
    assert e.phase == "bid" and e.turn == 1


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_known_answer_deal_for_every_dealer(dealer: int) -> None:
    # the engine deals with games.deals.qahve_deal: the same function, for every dealer
    deal = next(d for d in VEC["deals"] if d["dealer"] == dealer)
    dealt = qahve_deal(VEC["h0_shuffle"], dealer)
    assert {str(s): dealt[s] for s in range(4)} == deal["hands"]


# -- bidding ------------------------------------------------------------------------------


def test_bidding_order_range_and_contracts() -> None:
    e = make({"min_bid": 3})
    assert e.legal_actions(1) == [{"type": "bid", "tricks": n} for n in range(3, 14)]
    assert e.legal_actions(2) == []
    rejects(e, 1, {"type": "bid", "tricks": 2}, errors.IllegalActionError, "3 to 13")
    rejects(e, 1, {"type": "bid", "tricks": 14}, errors.IllegalActionError, "3 to 13")
    for bad in (
        {"type": "bid"},
        {"type": "bid", "tricks": "4"},
        {"type": "bid", "tricks": True},
        {"type": "bid", "tricks": 4, "suit": "S"},
        {"type": "trump", "suit": "S"},
    ):
        rejects(e, 1, bad, errors.MalformedActionError)
    rejects(e, 2, {"type": "bid", "tricks": 4}, errors.NotYourTurnError)
    rejects(e, 1, {"type": "play", "card": e.hands[1][0]}, errors.IllegalActionError, "bid")
    for s, n in [(1, 4), (2, 3), (3, 5), (0, 6)]:
        assert e.turn == s and e.contracts() is None
        e.apply(s, {"type": "bid", "tricks": n})
    assert e.bids == [6, 4, 3, 5] and e.contracts() == [9, 9]
    assert e.phase == "play" and e.turn == 1 and e.trick.leader == 1
    v = e.view(None)
    assert v["bids"] == [6, 4, 3, 5] and v["contracts"] == [9, 9]
    rejects(e, 1, {"type": "bid", "tricks": 4}, errors.IllegalActionError, "over")


# -- the joker rules ----------------------------------------------------------------------


def test_a_joker_may_be_played_while_holding_the_led_suit() -> None:
    e = make()
    e = setup_play(e, [["5H", "2C"], ["AH", "JB", "3D"], ["KH", "JR"], ["4H", "AS"]])
    play(e, (0, "5H"))
    assert sorted(cards(e, 1)) == ["AH", "JB"]
    rejects(e, 1, {"type": "play", "card": "3D"}, errors.IllegalActionError, "follow suit")
    play(e, (1, "JB"))
    assert e.jb_played
    # JB played earlier in the same trick: JR may now be played, even holding hearts
    assert sorted(cards(e, 2)) == ["JR", "KH"]
    play(e, (2, "JR"), (3, "4H"))
    assert e.last_trick is not None and e.last_trick["winner"] == 2
    assert e.trick.leader == 2


def test_jr_waits_for_jb() -> None:
    e = make()
    e = setup_play(e, [["JR", "5C", "6D"], ["JB", "2C"], ["3C"], ["4C"]])
    assert sorted(cards(e, 0)) == ["5C", "6D"]  # JR cannot lead before JB is out
    rejects(e, 0, {"type": "play", "card": "JR"}, errors.IllegalActionError, "JR may not")
    play(e, (0, "6D"))
    # seat 1 has no diamond: anything but (no JR here) — JB any time
    assert sorted(cards(e, 1)) == ["2C", "JB"]
    play(e, (1, "JB"), (2, "3C"), (3, "4C"))
    assert e.last_trick is not None and e.last_trick["winner"] == 1
    # JB played earlier in the hand: JR may be led in a later trick
    e = setup_play(e, e.hands, leader=0, jb_played=e.jb_played, tricks_by_seat=e.tally.tricks)
    assert e.turn == 0 and sorted(cards(e, 0)) == ["5C", "JR"]


def test_jr_after_jb_earlier_in_the_hand_and_a_led_joker_leads_no_suit() -> None:
    e = make()
    e = setup_play(
        e, [["JR", "5C"], ["AH", "2C"], ["KS", "3C"], ["4C", "QD"]], jb_played=True, tricks_done=3
    )
    assert sorted(cards(e, 0)) == ["5C", "JR"]
    play(e, (0, "JR"))
    # a led joker leads no suit: every card is playable, even with clubs in hand
    assert sorted(cards(e, 1)) == ["2C", "AH"]
    play(e, (1, "AH"))
    assert sorted(cards(e, 2)) == ["3C", "KS"]
    play(e, (2, "KS"))
    assert sorted(cards(e, 3)) == ["4C", "QD"]
    play(e, (3, "QD"))
    assert e.last_trick is not None and e.last_trick["winner"] == 0


def test_led_jb_wins_unless_jr_follows() -> None:
    e = make()
    e = setup_play(e, [["JB", "6D"], ["AS", "3D"], ["AH", "4D"], ["KS", "5D"]])
    play(e, (0, "JB"), (1, "AS"), (2, "AH"), (3, "KS"))
    assert e.last_trick is not None and e.last_trick["winner"] == 0


def test_jb_must_be_played_at_trick_ten() -> None:
    e = make()
    hands = [
        ["JB", "AH", "KH", "QH"],
        ["2C", "3C", "4C", "5C"],
        ["6C", "7C", "8C", "9C"],
        ["TC", "JC", "QC", "KC"],
    ]
    e = setup_play(e, hands, leader=1, tricks_done=9)
    play(e, (1, "2C"))
    assert e.view(0)["trick_number"] == 9
    play(e, (2, "6C"), (3, "TC"))
    # seat 0 holds no club, and still holds JB at trick 10: JB is its only legal card
    assert cards(e, 0) == ["JB"]
    rejects(e, 0, {"type": "play", "card": "AH"}, errors.IllegalActionError, "trick 10")
    play(e, (0, "JB"))
    assert e.last_trick is not None and e.last_trick["winner"] == 0


def test_jb_holder_leading_trick_ten_must_lead_it_and_not_before() -> None:
    e = make()
    hands = [
        ["JB", "AH", "KH", "QH", "JH"],
        ["2C", "3C", "4C", "5C", "AC"],
        ["6C", "7C", "8C", "9C", "3D"],
        ["TC", "JC", "QC", "KC", "4D"],
    ]
    e = setup_play(e, hands, leader=0, tricks_done=8)
    assert sorted(cards(e, 0)) == ["AH", "JB", "JH", "KH", "QH"]  # trick 9: free choice
    play(e, (0, "AH"), (1, "2C"), (2, "6C"), (3, "TC"))
    assert e.tricks_done == 9 and e.trick.leader == 0
    assert cards(e, 0) == ["JB"]


def test_jokers_belong_to_no_suit() -> None:
    e = make()
    # seat 1 holds only jokers and clubs: it has no heart, so any card may follow a heart lead
    e = setup_play(e, [["3H"], ["JB", "JR", "2C"], ["5H"], ["4H"]])
    play(e, (0, "3H"))
    assert sorted(cards(e, 1)) == ["2C", "JB"]  # JR still waits for JB
    play(e, (1, "2C"), (2, "5H"), (3, "4H"))
    assert e.last_trick is not None and e.last_trick["winner"] == 2


def test_trick_winner_order() -> None:
    e = make()
    e = setup_play(e, [["AH"], ["2S"], ["KH"], ["AD"]])
    play(e, (0, "AH"), (1, "2S"), (2, "KH"), (3, "AD"))
    assert e.last_trick is not None and e.last_trick["winner"] == 1  # spades always trump
    e = setup_play(e, [["5D"], ["9D"], ["AC"], ["3D"]], leader=0)
    play(e, (0, "5D"), (1, "9D"), (2, "AC"), (3, "3D"))
    assert e.last_trick is not None and e.last_trick["winner"] == 1  # off-suit ace never wins
    e = setup_play(e, [["AS"], ["JB"], ["KS"], ["JR"]], jb_played=False, leader=0)
    play(e, (0, "AS"), (1, "JB"), (2, "KS"), (3, "JR"))
    assert e.last_trick is not None and e.last_trick["winner"] == 3


def test_bad_card_codes() -> None:
    e = make()
    e = setup_play(e, [["5H"], ["AH"], ["KH"], ["QH"]])
    for bad in (
        {"type": "play"},
        {"type": "play", "card": "2D"},
        {"type": "play", "card": "2H"},
        {"type": "play", "card": "J"},
        {"type": "play", "card": None},
        {"type": "play", "card": "5H", "tricks": 2},
    ):
        rejects(e, 0, bad, errors.MalformedActionError)
    rejects(e, 0, {"type": "play", "card": "AH"}, errors.IllegalActionError, "not in")


# -- scoring, dealer, end -------------------------------------------------------------------


def test_hand_points_examples() -> None:
    assert hand_points(6, 8) == 62
    assert hand_points(6, 5) == -60
    assert hand_points(4, 4) == 40
    assert hand_points(14, 13) == -140


def last_trick(
    e: QahveEngine,
    *,
    bids: list[int],
    tricks_by_seat: list[int],
    winner: int,
    dealer: int | None = None,
    scores: list[int] | None = None,
) -> tuple[QahveEngine, list[dict[str, Any]]]:
    """Play the 13th trick, won by ``winner`` with the ace of spades; returns the engine and
    the chance events drawn (the next hand's shuffle, if any)."""
    hands = [["2C"], ["3C"], ["4C"], ["5C"]]
    hands[winner] = ["AS"]
    e = setup_play(
        e,
        hands,
        leader=0,
        tricks_done=12,
        jb_played=True,
        bids=bids,
        tricks_by_seat=tricks_by_seat,
        dealer=dealer,
        scores=scores,
    )
    return e, play(e, *[(s, e.hands[s][0]) for s in range(4)])


def test_scoring_made_and_failed() -> None:
    e = make()
    e, drawn = last_trick(e, dealer=1, bids=[3, 2, 3, 3], tricks_by_seat=[4, 3, 3, 2], winner=0)
    # side 0: contract 6, took 8 → +62; side 1: contract 5, took 5 → +50
    h = e.history[-1]
    assert h["contracts"] == [6, 5] and h["tricks"] == [8, 5] and h["points"] == [62, 50]
    assert e.scores == [62, 50]
    last = e.view(None)["last_trick"]
    assert last is not None and last["hand"] == 0 and last["winner"] == 0
    # dealer 1's side is behind: the deal stays with seat 1
    assert e.dealer == 1 and e.hand_number == 1 and e.phase == "bid" and e.turn == 2
    events = drawn
    assert [ev["label"] for ev in events] == ["h1/shuffle"]
    assert e.hands == deal_packets(events[0]["result"], 2)
    e2 = make()
    e2.dealer = 0
    e2, _ = last_trick(e2, bids=[4, 2, 3, 2], tricks_by_seat=[2, 4, 4, 2], winner=1)
    # side 0: contract 7, took 6 → −70; side 1: contract 4, took 7 → +43
    assert e2.history[-1]["points"] == [-70, 43] and e2.scores == [-70, 43]


def test_dealer_passes_only_when_strictly_ahead() -> None:
    e = make()
    e, _ = last_trick(
        e, dealer=2, scores=[10, 14], bids=[2, 2, 2, 2], tricks_by_seat=[2, 4, 2, 4], winner=0
    )
    assert e.scores == [10 + 41, 14 + 44] and e.dealer == 2  # behind: keeps the deal
    e = make()
    e, _ = last_trick(
        e, dealer=2, scores=[3, 0], bids=[2, 2, 2, 2], tricks_by_seat=[2, 4, 2, 4], winner=0
    )
    assert e.scores == [44, 44] and e.dealer == 2  # level: keeps the deal
    e = make()
    e, _ = last_trick(e, dealer=3, bids=[2, 2, 2, 2], tricks_by_seat=[2, 4, 2, 4], winner=1)
    assert e.scores == [40, 45] and e.dealer == 0  # ahead: passes to dealer+1 (wraps)
    assert e.history[-1]["dealer"] == 3 and e.history[-1]["next_dealer"] == 0
    assert e.turn == 1  # the new dealer's right hand bids first


def test_match_end_first_to_target() -> None:
    e = make({"target": 100})
    e, drawn = last_trick(
        e, scores=[70, 30], bids=[2, 2, 2, 2], tricks_by_seat=[4, 2, 2, 4], winner=0
    )
    assert e.outcome is not None and e.outcome.winners == (0, 2)
    assert e.outcome.scores == (70 + 43, 30 + 42) and e.turn is None
    assert drawn == []
    with pytest.raises(errors.MatchOverError):
        e.apply(0, {"type": "bid", "tricks": 2})


def test_match_end_both_reach_higher_wins() -> None:
    e = make({"target": 100})
    e, _ = last_trick(e, scores=[60, 70], bids=[2, 2, 2, 2], tricks_by_seat=[4, 2, 2, 4], winner=0)
    assert e.scores == [103, 112]
    assert e.outcome is not None and e.outcome.winners == (1, 3)


def test_match_end_both_reach_equal_plays_on() -> None:
    e = make({"target": 100})
    e, drawn = last_trick(
        e, scores=[61, 62], bids=[2, 2, 2, 2], tricks_by_seat=[4, 2, 2, 4], winner=0
    )
    assert e.scores == [104, 104]
    assert e.outcome is None and e.phase == "bid" and e.hand_number == 1
    assert [ev["label"] for ev in drawn] == ["h1/shuffle"]


# -- views --------------------------------------------------------------------------------


def test_views() -> None:
    e = make()
    pub = e.view(None)
    assert "hand" not in pub and pub["legal_actions"] == [] and pub["trump"] == "S"
    assert pub["dealer"] == 0 and pub["bids"] == [None] * 4 and pub["contracts"] is None
    assert pub["hand_sizes"] == [13] * 4 and pub["scores"] == [0, 0]
    for s in range(4):
        v = e.view(s)
        assert sorted(v["hand"]) == sorted(e.hands[s])
        others = {c for t in range(4) if t != s for c in e.hands[t]}
        assert all(f'"{c}"' not in json.dumps(v) for c in others)
    assert e.view(1)["legal_actions"] == e.legal_actions(1) and e.view(2)["legal_actions"] == []
    # the deal is secret in the public log; the dealer lot is public
    dealer_ev, shuffle_ev = make().chance.take_events()
    assert QahveEngine.redact(dealer_ev) == dealer_ev
    assert "result" not in QahveEngine.redact(shuffle_ev)


@pytest.mark.parametrize("bids", [0, 4])
def test_an_ended_match_shows_phase_over(bids: int) -> None:
    # docs/games/qahve.md: phase is `over` once the match has ended, however it ended
    e = make()
    for _ in range(bids):
        seat = e.turn
        assert seat is not None
        e.apply(seat, {"type": "bid", "tricks": 3})
    assert e.view(None)["phase"] == ("play" if bids == 4 else "bid")
    e.end_match("resigned", 2)
    for s in (None, 0, 1, 2, 3):
        v = e.view(s)
        assert v["phase"] == "over" and v["status"] == "finished" and v["turn"] is None
        assert v["legal_actions"] == [] and v["result"]["winners"] == [1, 3]
