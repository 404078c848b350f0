"""What a sealed hand costs the server beyond its crypto (issue 50): the public ``sealed``
block of a view is made once per state of the deal, and every view made from it says what a
view made afresh says, through a whole match, refused steps and all."""

from __future__ import annotations

from typing import Any

import pytest

from games.sealed_hand import Deal
from tests.support.sealed_play import play_match


@pytest.mark.parametrize(
    ("game", "ruleset", "cheat"),
    [
        ("hokm", {"players": 4, "target": 1}, "bad_share"),
        ("iraqi_domino", {"players": 2, "target": 1}, "bad_shuffle"),
    ],
)
def test_a_deals_view_is_made_once_per_state_and_always_current(
    monkeypatch: pytest.MonkeyPatch, game: str, ruleset: dict[str, Any], cheat: str
) -> None:
    made = {"views": 0, "made": 0}
    view, make = Deal.view, Deal._make_view

    def counted_make(self: Deal, running: bool) -> Any:
        made["made"] += 1
        return make(self, running)

    def checked_view(self: Deal, running: bool = True) -> Any:
        made["views"] += 1
        got = view(self, running)
        assert got == make(self, running)  # what a view made now says
        return got

    monkeypatch.setattr(Deal, "_make_view", counted_make)
    monkeypatch.setattr(Deal, "view", checked_view)
    r = play_match(game, ruleset, seed="cost", cheats={1: cheat})
    assert r.engine.outcome is not None and r.refused
    # a view for the seat on turn at each step, each refused one and each one after it
    assert made["views"] > 40
    assert made["made"] < made["views"]
