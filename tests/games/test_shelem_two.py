"""Shelem for two players: the auction between two, the face-up piles, four-card tricks."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from fairness import DECK52, V1
from games.base import Chance
from games.errors import IllegalActionError, NotYourTurnError
from games.registry import find_engine
from games.shelem import ShelemEngine, card_points, hand_score

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
ShelemEngineV1 = find_engine("shelem", protocol=V1)

ORDER = "23456789TJQKA"


def new(key: int = 1, target: int = 1200) -> ShelemEngine:
    rs = ShelemEngine.parse_ruleset({"players": 2, "target": target})
    return ShelemEngineV1(rs, Chance(bytes([key]) * 32))


def cards_in(view: dict[str, Any]) -> set[str]:
    text = json.dumps(view)
    return {c for c in DECK52 if f'"{c}"' in text}


def test_auction_non_dealer_first_until_one_passes() -> None:
    e = new()
    d = e.dealer
    o = 1 - d
    assert e.turn == o and e.n_sides == 2 and e.view(None)["sides"] == [[0], [1]]
    e.apply(o, {"type": "bid", "amount": 100})
    e.apply(d, {"type": "bid", "amount": 105})
    e.apply(o, {"type": "bid", "amount": 140})
    e.apply(d, {"type": "pass"})
    assert e.hakem == o and e.view(o)["bid"] == 140 and len(e.hands[o]) == 16


def test_auction_first_pass_leaves_the_dealer_to_bid_or_void() -> None:
    e = new()
    d = e.dealer
    e.apply(1 - d, {"type": "pass"})
    assert e.turn == d
    e.apply(d, {"type": "bid", "amount": 120})
    assert e.hakem == d and e.turn == d and e.view(None)["phase"] == "discard"

    e = new()
    d = e.dealer
    e.apply(1 - d, {"type": "pass"})
    e.apply(d, {"type": "pass"})
    assert e.history[-1]["void"] is True and e.scores == [0, 0]
    assert e.dealer == 1 - d and e.view(None)["hand_number"] == 1
    assert e.turn == d  # the new non-dealer bids first
    assert "h1/shuffle" in e.chance.labels


def start_play(e: ShelemEngine, discard_index: int = 0) -> int:
    o = 1 - e.dealer
    e.apply(o, {"type": "bid", "amount": 100})
    e.apply(e.dealer, {"type": "pass"})
    e.apply(o, e.legal_actions(o)[discard_index])
    return o


def test_first_trick_pile_rules() -> None:
    e = new(3)
    h = start_play(e)
    other = 1 - h
    assert len(e.hands[h]) == 12 and e.turn == h
    # a pile card may not be led
    top = e.piles[h][0][-1]
    with pytest.raises(IllegalActionError, match="not in your hand"):
        e.apply(h, {"type": "play", "card": top})
    # the seed: the piles lie face down through the auction, the kitty exchange and the
    # hakem's first lead, and turn up once the other player has answered that lead
    for s in (None, 0, 1):
        v = e.view(s)
        assert v["piles_revealed"] is False
        assert all(p == {"count": 4, "top": None} for ps in v["piles"] for p in ps)
        text = json.dumps({k: x for k, x in v.items() if k != "history"})
        own = set(e.hands[s]) if s is not None else set()
        if s == h:
            own |= set(e.discard) | set(e.kitty_taken)
        assert not [c for ps in e.piles for p in ps for c in p if f'"{c}"' in text and c not in own]
    lead = e.hands[h][0]
    e.apply(h, {"type": "play", "card": lead})
    assert e.view(None)["trump"] == lead[1] and e.turn == other
    assert e.view(None)["piles_revealed"] is False
    legal = [a["card"] for a in e.legal_actions(other)]
    follow = [c for c in e.hands[other] if c[1] == lead[1]]
    assert sorted(legal) == sorted(follow or e.hands[other])
    e.apply(other, {"type": "play", "card": legal[0]})
    pub = e.view(None)
    assert pub["piles_revealed"] is True
    assert [[p["top"] for p in ps] for ps in pub["piles"]] == [
        [p[-1] for p in e.piles[s]] for s in (0, 1)
    ]
    # third card: the leader's face-up pile card, of the led suit if it has one
    assert e.turn == h
    tops = [p[-1] for p in e.piles[h]]
    legal = [a["card"] for a in e.legal_actions(h)]
    same = [c for c in tops if c[1] == lead[1]]
    assert sorted(legal) == sorted(same or tops)
    with pytest.raises(IllegalActionError, match="face-up pile"):
        e.apply(h, {"type": "play", "card": e.hands[h][0]})
    buried = e.piles[h][0][0]
    with pytest.raises(IllegalActionError):
        e.apply(h, {"type": "play", "card": buried})
    if same and len(same) < len(tops):
        wrong = next(c for c in tops if c[1] != lead[1])
        with pytest.raises(IllegalActionError, match="led suit"):
            e.apply(h, {"type": "play", "card": wrong})
    with pytest.raises(NotYourTurnError):
        e.apply(other, {"type": "play", "card": e.piles[other][0][-1]})
    pick = legal[0]
    idx = tops.index(pick)
    under = e.piles[h][idx][-2]
    e.apply(h, {"type": "play", "card": pick})
    pub = e.view(None)["piles"][h][idx]
    assert pub == {"count": 3, "top": under}  # the card under it is turned face up
    assert e.view(None)["trick"][2] == {"seat": h, "card": pick, "from": "pile"}
    legal = [a["card"] for a in e.legal_actions(other)]
    otops = [p[-1] for p in e.piles[other]]
    assert sorted(legal) == sorted([c for c in otops if c[1] == lead[1]] or otops)
    e.apply(other, {"type": "play", "card": legal[-1]})
    last = e.view(None)["last_trick"]
    plays = [(t["seat"], t["card"]) for t in last["plays"]]
    want = winner(plays, lead[1])
    assert last["winner"] == want and len(plays) == 4
    assert e.turn == want and e.view(None)["tricks_taken"][want] == 1
    pts = 5 + sum(card_points(c) for _, c in plays)
    assert e.view(None)["points_taken"][want] == pts


def winner(plays: list[tuple[int, str]], trump: str) -> int:
    led = plays[0][1][1]
    trumps = [(ORDER.index(c[0]), s) for s, c in plays if c[1] == trump]
    if trumps:
        return max(trumps)[1]
    return max((ORDER.index(c[0]), s) for s, c in plays if c[1] == led)[1]


@pytest.mark.parametrize("key", [5, 6, 7, 8])
def test_whole_hands_random_play(key: int) -> None:
    """Random legal play for two hands, every rule checked against the views."""
    e = new(key)
    rng = random.Random(key)
    hands_done = 0
    trump: str | None = None
    while hands_done < 2:
        seat = e.turn
        assert seat is not None
        v = e.view(seat)
        # what this seat may see: its hand, all face-up tops, played cards, the kitty if hakem
        visible = set(v["hand"]) | {p["top"] for ps in v["piles"] for p in ps if p["top"]}
        visible |= {t["card"] for t in v["trick"]}
        if v["last_trick"]:
            visible |= {t["card"] for t in v["last_trick"]["plays"]}
        for h in v["history"]:
            visible |= set(h.get("discard", []))
        if v["kitty"]:  # the hakem alone: the kitty it took and the cards it laid down
            assert seat == v["hakem"]
            visible |= set(v["kitty"]) | set(v["discard"] or [])
        else:
            assert v["discard"] is None
        assert cards_in(v) <= visible
        legal = e.legal_actions(seat)
        if v["phase"] == "play":
            trick = v["trick"]
            cards = [a["card"] for a in legal]
            if len(trick) < 2:
                pool = v["hand"]
            else:
                pool = [p["top"] for p in v["piles"][seat] if p["top"]]
            if trick:
                led = trick[0]["card"][1]
                same = [c for c in pool if c[1] == led]
                assert sorted(cards) == sorted(same or pool)
            else:
                assert sorted(cards) == sorted(pool)
            lead_seat = v["leader"]
            order = [lead_seat, 1 - lead_seat, lead_seat, 1 - lead_seat]
            assert [t["seat"] for t in trick] == order[: len(trick)]
            assert [t["from"] for t in trick] == ["hand", "hand", "pile", "pile"][: len(trick)]
        action = rng.choice(legal)
        before = len(e.history)
        if v["phase"] == "play" and not v["trick"] and v["tricks_taken"] == [0, 0]:
            trump = action["card"][1]
        e.apply(seat, action)
        if len(e.history) > before:
            hands_done += 1
            h = e.history[-1]
            if h["void"]:
                continue
            assert sum(h["points"]) == 165 and h["trump"] == trump
            hs = h["hakem"]
            mine, theirs, _ = hand_score(h["bid"], h["points"][hs], h["shelem"])
            assert h["delta"][hs] == mine and h["delta"][1 - hs] == theirs
        # conservation: 52 distinct cards
        allc = [c for hd in e.hands for c in hd] + e.kitty + e.discard
        allc += e.trick.cards() + [c for t in e.tally.cards for c in t]
        allc += [c for ps in e.piles for p in ps for c in p]
        assert sorted(allc) == sorted(DECK52)


def test_pile_card_must_follow_suit_when_a_face_up_one_does() -> None:
    checked = 0
    for key in range(20, 30):
        e = new(key)
        rng = random.Random(key)
        while not e.history and checked < 5:
            seat = e.turn
            assert seat is not None
            if e.view(None)["phase"] == "play" and len(e.trick) >= 2:
                led = e.trick.led
                tops = [p[-1] for p in e.piles[seat] if p]
                if any(c[1] == led for c in tops) and any(c[1] != led for c in tops):
                    wrong = next(c for c in tops if c[1] != led)
                    before = e.view(seat)
                    with pytest.raises(IllegalActionError, match="led suit"):
                        e.apply(seat, {"type": "play", "card": wrong})
                    assert e.view(seat) == before
                    checked += 1
            e.apply(seat, rng.choice(e.legal_actions(seat)))
    assert checked == 5
