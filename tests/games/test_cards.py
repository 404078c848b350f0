"""games.cards: card codes, follow suit, trick winners, packet deals, cuts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness import DECK52, DECK_QAHVE, Stream, deck52
from games.cards import (
    Tally,
    Trick,
    follow_reason,
    is_card,
    is_joker,
    playable,
    rank,
    sort_hand,
    suit,
    trick_winner,
)
from games.deals import HOKM_ROUNDS, cut_deck, deal_packets, first_ace_seat, packets

VECTORS = Path(__file__).parents[1] / "vectors"
K = bytes.fromhex("cf9eafb8f682735a4b8fe572db33a228af676e4a54ef202366ceaf8a3e4ef474")


def test_codes_suits_ranks() -> None:
    assert suit("AS") == "S" and suit("TD") == "D" and suit("JB") is None
    assert rank("2C") == 0 and rank("AH") == 12 and rank("TD") == 8
    with pytest.raises(ValueError):
        rank("JR")
    assert is_joker("JB") and is_joker("JR") and not is_joker("JS")
    assert all(is_card(c) for c in DECK_QAHVE) and all(is_card(c) for c in DECK52)
    for bad in ("1S", "AX", "", None, 5, "as"):
        assert not is_card(bad)


def test_sort_hand_and_holds() -> None:
    assert sort_hand(["2S", "AC", "JR", "KC", "5D", "JB"]) == ["JR", "JB", "AC", "KC", "5D", "2S"]
    assert follow_reason(["2S", "JB", "3H"], "3H", "S") is not None
    assert follow_reason(["2S", "JB", "3H"], "JB", "S") is None  # a joker is free
    assert follow_reason(["JB", "3H"], "3H", "S") is None


def test_playable() -> None:
    hand = ["2S", "AH", "3H", "KC"]
    assert playable(hand, None) == hand
    assert playable(hand, "H") == ["AH", "3H"]
    assert playable(hand, "D") == hand


def test_trick_winner_trump_led_and_offsuit() -> None:
    # led suit wins without trump; off-suit aces never win
    assert trick_winner([(0, "5H"), (1, "AD"), (2, "9H"), (3, "AC")], None) == 2
    # lowest trump beats every other card
    assert trick_winner([(0, "AH"), (1, "2S"), (2, "KH"), (3, "AD")], "S") == 1
    assert trick_winner([(1, "AH"), (2, "2S"), (3, "3S"), (0, "KH")], "S") == 3
    # reversed order (nars): the 2 is highest
    assert trick_winner([(0, "AH"), (1, "2H"), (2, "5H"), (3, "KD")], "S", reverse=True) == 1
    assert trick_winner([(0, "2H"), (1, "AS"), (2, "3S"), (3, "KD")], "S", reverse=True) == 2
    with pytest.raises(ValueError):
        trick_winner([], "S")


def test_trick_winner_jokers() -> None:
    order = ("JB", "JR")
    assert trick_winner([(0, "AS"), (1, "JB"), (2, "KS"), (3, "2S")], "S", joker_order=order) == 1
    assert trick_winner([(0, "JB"), (1, "AS"), (2, "JR"), (3, "2S")], "S", joker_order=order) == 2
    # a led joker still wins over suited cards
    assert trick_winner([(0, "JB"), (1, "AS"), (2, "AH"), (3, "2S")], "S", joker_order=order) == 0


def test_packets_cover_the_deck_once() -> None:
    """The packets of a 52-card deal to four: ``[0,5)``→F, ``[5,10)``→F+1, …, ``[48,52)``→F+3."""
    PACKETS = packets(4, HOKM_ROUNDS[4])
    covered = [i for start, stop, _ in PACKETS for i in range(start, stop)]
    assert covered == list(range(52))
    counts = [sum(stop - start for start, stop, o in PACKETS if o == s) for s in range(4)]
    assert counts == [13, 13, 13, 13]


@pytest.mark.parametrize("name", ["hokm_deals.json", "qahve_deals.json"])
def test_deal_packets_known_answers(name: str) -> None:
    vec = json.loads((VECTORS / name).read_text())
    deck = vec["h0_shuffle"]
    assert deck[:13] == vec["h0_shuffle_first13_spec"]
    for deal in vec["deals"]:
        first = (deal["hakem"] if "hakem" in deal else deal["dealer"] + 1) % 4
        d = cut_deck(deck, deal["cut"]) if deal.get("cut") else deck
        hands = deal_packets(d, first)
        assert {str(s): h for s, h in enumerate(hands)} == deal["hands"]


def test_deal_packets_spec_prefix_by_hand() -> None:
    # fairness-v1.md §7 printed prefix: the first packet of 5 to the first seat, and so on.
    deck = Stream(K, "h0/shuffle").shuffle(deck52())
    hands = deal_packets(deck, 2)
    assert hands[2][:5] == ["TD", "AH", "8C", "TC", "5C"]
    assert hands[3][:5] == ["JH", "5D", "JS", "7C", "9D"]
    assert hands[0][:3] == ["3H", "AS", "KD"]
    assert hands[2][5:9] == deck[20:24] and hands[1][9:13] == deck[48:52]


def test_deal_packets_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        deal_packets(deck52()[:51], 0)
    with pytest.raises(ValueError):
        deal_packets(deck52(), 4)


def test_cut_deck() -> None:
    deck = deck52()
    assert cut_deck(deck, 17) == deck[17:] + deck[:17]
    assert cut_deck(deck, 1)[-1] == "2C" and cut_deck(deck, 51)[0] == "AS"
    for bad in (0, 52, -1, True, "3"):
        with pytest.raises(ValueError):
            cut_deck(deck, bad)  # type: ignore[arg-type]


def test_first_ace_seat() -> None:
    assert first_ace_seat(["2C", "3C", "AS"]) == 2
    assert first_ace_seat(["2C", "3C", "4C", "5C", "AD"]) == 0
    with pytest.raises(ValueError):
        first_ace_seat(["2C", "JB"])


def test_packet_plans_cover_each_deck_once() -> None:
    for n, rounds, total in ((4, (5, 4, 4), 52), (3, (5, 4, 4, 4), 51), (2, (5,), 10)):
        plan = packets(n, rounds)
        assert [i for a, b, _ in plan for i in range(a, b)] == list(range(total))
        per_seat = [sum(b - a for a, b, o in plan if o == s) for s in range(n)]
        assert per_seat == [total // n] * n


def test_trick_and_tally() -> None:
    t = Trick(leader=1)
    assert t.led is None and len(t) == 0
    for seat, card in ((1, "5H"), (2, "AD"), (3, "9H"), (0, "2S")):
        t.add(seat, card)
    assert t.led == "H" and t.cards() == ["5H", "AD", "9H", "2S"]
    assert t.winner(None) == 3 and t.winner("S") == 0
    assert t.to_json(4, 0) == {
        "hand": 4,
        "leader": 1,
        "winner": 0,
        "plays": [
            {"seat": 1, "card": "5H"},
            {"seat": 2, "card": "AD"},
            {"seat": 3, "card": "9H"},
            {"seat": 0, "card": "2S"},
        ],
    }
    tally = Tally(4)
    tally.take(0, t)
    assert tally.by_side(lambda s: s % 2, 2) == [1, 0] and tally.played == 1
    assert tally.side_cards(lambda s: s % 2, 2)[0] == t.cards()
