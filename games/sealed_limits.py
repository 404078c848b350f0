"""What a sealed table (qahwa-fair/3) does not hide: its limits, computed from its public facts.

A sealed deal shows nobody a card or tile before it is played, but a party may still work one
out (docs/fairness.md, "The operator at a sealed table"): the operator makes the house seats'
keys, so it knows their hands, and where the whole deck is dealt to the seats, every item that
is not in the hands a party knows is in the others'. :func:`sealed_limits` names the limits of
a table from its game, its number of seats and its house seats; every sealed view carries them
as ``sealed.limits`` (docs/api.md, "Sealed tables"), a list of ``{"code", "text"}`` in the
order of :data:`LIMITS`, the same at every seat and in the public view. The codes and their
sentences are stable: a client keys on the code, shows the text (``/play`` shows them).

The function is pure: no engine, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

#: every limit a sealed table may have: code → the sentence players are shown (the same
#: words in docs/api.md, the OpenAPI and ``/play``; tests/games/test_sealed_limits.py)
LIMITS: Final[Mapping[str, str]] = {
    "house_hands": (
        "The operator plays the house seats: it makes their keys, so it knows their cards or tiles."
    ),
    "one_person_full_deal": (
        "One person among house seats, and the whole deck is dealt: every card or tile not "
        "dealt to a house seat is dealt to that person, so the operator can work out their "
        "hand."
    ),
    "one_person_partial_deal": (
        "One person among house seats, and part of the deck is not dealt: every card or "
        "tile not dealt to a house seat is either that person's or dealt to nobody, so the "
        "operator knows their hand is among those."
    ),
}

#: the table sizes at which a sealed game deals every item of a hand to the seats (a full
#: deal: no stock is left undealt, nothing is thrown away unseen): hokm deals 52 cards to
#: four (13 each) and 51 to three (17 each), but two players throw away cards nobody is
#: dealt; shelem's widow goes to the bid winner; qahve deals 52 to four; Iraqi dominoes deal
#: 28 tiles to four (7 each), but leave a boneyard at two; Mexican Train always leaves one.
#: No sealed game deals a whole deck to two seats: there, two people would each work out
#: the other's hand (a limit to add with such a game; the tests check none exists)
FULL_DEAL: Final[Mapping[str, frozenset[int]]] = {
    "hokm": frozenset({3, 4}),
    "shelem": frozenset({4}),
    "qahve": frozenset({4}),
    "iraqi_domino": frozenset({4}),
    "mexican_train": frozenset(),
}


def full_deal(game: str, n_seats: int) -> bool:
    """Whether a sealed ``game`` at ``n_seats`` deals every item of a hand to the seats."""
    try:
        sizes = FULL_DEAL[game]
    except KeyError:
        raise ValueError(f"{game!r} has no sealed deal whose limits are known") from None
    return n_seats in sizes


def sealed_limits(game: str, n_seats: int, house: Sequence[int]) -> list[dict[str, str]]:
    """The limits of a sealed table of ``game`` with ``n_seats`` seats, ``house`` of them
    played by the operator's house bots: ``[{"code", "text"}]`` in :data:`LIMITS` order (an
    empty list: none beyond what every sealed table shows, each item once it is played and
    every hand when the keys are revealed at the hand's end)."""
    if n_seats < 1:
        raise ValueError(f"a table has at least one seat, got {n_seats}")
    houses = set(house)
    if any(not 0 <= s < n_seats for s in houses):
        raise ValueError(f"house seats {sorted(houses)} outside a table of {n_seats}")
    people = n_seats - len(houses)
    full = full_deal(game, n_seats)
    codes: list[str] = []
    if houses:
        codes.append("house_hands")
        if people == 1:
            codes.append("one_person_full_deal" if full else "one_person_partial_deal")
    return [{"code": c, "text": LIMITS[c]} for c in codes]
