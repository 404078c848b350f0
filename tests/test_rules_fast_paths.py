"""The rules engines' quicker helpers compute what the plain ones they replace did.

Card ranks and points by table lookup are held to the plain definitions on every card;
shelem's play check without building the trick's led suit or scanning the hand for a
card that follows is held, with wrong plays interleaved, to a replay through the plain
``follow_reason`` (tests/test_turn_check.py holds the backgammon step check).
"""

from __future__ import annotations

import hashlib
import random

import pytest

from fairness import DECK52
from games import cards, shelem
from games.base import Chance
from games.errors import IllegalActionError, MalformedActionError
from games.tricks import follow_reason

ALL_CODES = [*DECK52, "JB", "JR"]


def test_rank_is_the_index_in_the_rank_letters() -> None:
    for c in DECK52:
        assert cards.rank(c) == cards.RANKS.index(c[0])
    for bad in ("JB", "JR", "1S", "XS"):
        with pytest.raises(ValueError):
            cards.rank(bad)


def test_pile_points_is_the_sum_of_card_points() -> None:
    rng = random.Random(7)
    for c in DECK52:
        assert shelem.pile_points([c]) == shelem.card_points(c)
    for _ in range(500):
        pile = rng.sample(DECK52, rng.randint(0, 12))
        assert shelem.pile_points(pile) == sum(shelem.card_points(c) for c in pile)
        assert shelem.pile_points(iter(pile)) == shelem.pile_points(pile)


def test_card_field_accepts_and_refuses_as_before() -> None:
    for c in ALL_CODES + ["", "AS ", "as", 5, None, ["AS"], True]:
        plain_ok = isinstance(c, str) and cards.is_card(c) and c not in ("JB", "JR")
        if plain_ok:
            assert shelem._card_field({"card": c}) == c
        else:
            with pytest.raises(MalformedActionError):
                shelem._card_field({"card": c})


@pytest.mark.parametrize("players", [4, 2])
@pytest.mark.parametrize("seed", range(6))
def test_card_plays_are_judged_as_by_follow_reason(players: int, seed: int) -> None:
    """Every card a seat could name, tried before each play of random matches: accepted
    exactly when the plain rule (in hand or on a top, follows suit per follow_reason)
    allows it, and refused without a change otherwise."""
    rng = random.Random(seed)
    cls = shelem.ShelemEngine
    eng = cls(cls.parse_ruleset({"players": players, "target": 200}),
              Chance(hashlib.sha256(f"plays-{seed}-{players}".encode()).digest()))
    plays = 0
    while eng.outcome is None and plays < 150:
        seat = eng.turn
        assert seat is not None
        if eng.phase == "play":
            led = eng.trick.led
            pile = eng._pile_step()
            source = eng._tops(seat) if pile else eng.hands[seat]
            legal = [str(a["card"]) for a in eng.legal_actions(seat)]
            for c in rng.sample(DECK52, 12) + source[:3] + rng.sample(legal, len(legal)):
                allowed = c in source and follow_reason(source, c, led) is None
                before = (list(map(list, eng.hands)), len(eng.trick))
                try:
                    eng.apply(seat, {"type": "play", "card": c})
                except IllegalActionError:
                    assert not allowed, c
                    assert (list(map(list, eng.hands)), len(eng.trick)) == before
                    continue
                assert allowed, c
                plays += 1
                break
            else:
                raise AssertionError("no card was accepted")
            continue
        eng.apply(seat, rng.choice(eng.bot_actions(seat)))
    assert plays > 0

