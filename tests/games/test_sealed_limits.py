"""A sealed table's limits (games.sealed_limits, issue 46): what it does not hide, computed
from its public facts and carried in every sealed view as ``sealed.limits``.

The table of full deals is checked against the engines themselves: each sealed game is dealt
by simulated seats up to its first play, and the deck is wholly dealt exactly where the
table says so.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from games.base import Chance, MatchContext
from games.registry import SEALED_GAMES, find_engine
from games.sealed_limits import FULL_DEAL, LIMITS, full_deal, sealed_limits
from games.sealed_sim import SimSeat
from qahwa_wire.models import SEALED_LIMITS

ROOT = Path(__file__).resolve().parents[2]


def codes(game: str, n: int, house: tuple[int, ...]) -> list[str]:
    return [x["code"] for x in sealed_limits(game, n, house)]


def test_one_person_among_house_seats_at_a_full_deal() -> None:
    assert codes("hokm", 4, (1, 2, 3)) == ["house_hands", "one_person_full_deal"]
    assert codes("iraqi_domino", 4, (0, 1, 3)) == ["house_hands", "one_person_full_deal"]
    assert sealed_limits("qahve", 4, (0, 1, 2)) == [
        {"code": "house_hands", "text": LIMITS["house_hands"]},
        {"code": "one_person_full_deal", "text": LIMITS["one_person_full_deal"]},
    ]


def test_one_person_among_house_seats_with_part_of_the_deck_undealt() -> None:
    assert codes("iraqi_domino", 2, (1,)) == ["house_hands", "one_person_partial_deal"]
    assert codes("hokm", 2, (0,)) == ["house_hands", "one_person_partial_deal"]
    assert codes("mexican_train", 4, (0, 1, 2)) == ["house_hands", "one_person_partial_deal"]


def test_where_no_limit_applies_none_is_said() -> None:
    for game in SEALED_GAMES:
        assert sealed_limits(game, 4, ()) == []  # four people
    assert codes("hokm", 4, (1, 3)) == ["house_hands"]  # two people, two house seats
    assert codes("hokm", 3, (2,)) == ["house_hands"]
    assert codes("iraqi_domino", 2, ()) == []
    assert codes("hokm", 4, (0, 1, 2, 3)) == ["house_hands"]  # nobody to protect


def test_bad_facts_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="no sealed deal"):
        sealed_limits("tawla", 2, ())
    with pytest.raises(ValueError, match="outside a table of 4"):
        sealed_limits("hokm", 4, (4,))


def test_every_sealed_game_has_its_full_deals_and_none_deals_a_whole_deck_to_two() -> None:
    assert sorted(FULL_DEAL) == sorted(SEALED_GAMES)
    # two people would each work out the other's hand there: a limit this module lacks
    assert not any(2 in sizes for sizes in FULL_DEAL.values())


def dealt_up_to_the_first_play(game: str, ruleset: dict[str, Any]) -> tuple[int, int]:
    """(items dealt to a seat, items of the hand) when the first play is owed."""
    raw = {**ruleset, "deal": "sealed"}
    cls = find_engine(game, raw)
    key = hashlib.sha512(f"limits/{game}/{ruleset}".encode()).digest()
    engine = cls(cls.parse_ruleset(raw), Chance(key), MatchContext(f"limits-{game}"))
    seats = [SimSeat(s, f"limits/{game}") for s in range(engine.n_seats)]
    for _ in range(5000):
        seat = engine.turn
        assert seat is not None
        view = engine.view(seat)
        sv = view["sealed"]
        if sv["owed"] is None and any(a["type"] == "play" for a in view["legal_actions"]):
            return sum(len(d) for d in sv["dealt"]), len(sv["items"])
        action = seats[seat].act(view, engine)
        assert action is not None
        engine.apply(seat, action)
    raise AssertionError("no play was owed")


CONFIGS = [
    ("hokm", {"players": 4}),
    ("hokm", {"players": 3}),
    ("hokm", {"players": 2}),
    ("shelem", {}),
    ("qahve", {}),
    ("iraqi_domino", {"players": 4}),
    ("iraqi_domino", {"players": 2}),
    ("mexican_train", {"players": 2}),
]


@pytest.mark.parametrize(("game", "ruleset"), CONFIGS)
def test_the_full_deals_are_the_engines_own(game: str, ruleset: dict[str, Any]) -> None:
    n = ruleset.get("players", 4)
    dealt, items = dealt_up_to_the_first_play(game, ruleset)
    assert (dealt == items) is full_deal(game, n), (dealt, items)


def test_every_sealed_view_carries_the_tables_limits() -> None:
    raw = {"players": 4, "deal": "sealed"}
    cls = find_engine("hokm", raw)
    engine = cls(cls.parse_ruleset(raw), Chance(bytes(64)), MatchContext("m", house=(1, 2, 3)))
    want = sealed_limits("hokm", 4, (1, 2, 3))
    assert [x["code"] for x in want] == ["house_hands", "one_person_full_deal"]
    for seat in (None, 0, 1):
        assert engine.view(seat)["sealed"]["limits"] == want
    people = cls(cls.parse_ruleset(raw), Chance(bytes(64)), MatchContext("m", house=()))
    assert people.view(0)["sealed"]["limits"] == []


def test_the_wire_models_say_the_same_words() -> None:
    # qahwa_wire imports only pydantic: its copy is checked here, the OpenAPI text below
    assert SEALED_LIMITS == dict(LIMITS)


def _flat(text: str) -> str:
    """Text with its line breaks, indentation, string quotes and markdown folded away."""
    text = re.sub(r'"\s*\n\s*"', "", text)  # Python's implicit string concatenation
    text = re.sub(r"\\\s*\n\s*", "", text)
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize(
    "path",
    [
        "docs/api.md",
        "clients/ts/src/api.d.ts",
        "clients/ts/play/i18n.ts",
        "qahwa_page/static/play.js",
    ],
)
def test_players_read_the_same_words_where_they_look(path: str) -> None:
    text = _flat((ROOT / path).read_text(encoding="utf-8"))
    for code, sentence in LIMITS.items():
        assert code in text, (path, code)
        assert sentence in text, (path, code)
    assert "the operator included, sees" not in text
    assert "hidden even from the operator" not in text
