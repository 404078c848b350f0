"""The verifier's quicker paths give the same report as the plain ones they replace.

The board-game end lines and the two-player shelem reveal are made from the engine's own
fields instead of its whole view after every action; the units are counted in one pass.
Each is compared here with the plain computation (the engine's public view after every
event, three passes over the labels) on genuine matches.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from fairness import PROTOCOL, match_key, parse_server_seed
from games.registry import available_games, find_engine
from games.replay import replay
from games.transcript import simulate_match
from verify_cli import render
from verify_cli.replay_core import count_units


def plain_count_units(events: list[Any], game: str) -> dict[str, int]:
    if game == "rng":
        return {
            "draws": sum(1 for e in events if isinstance(e, dict) and e.get("type") == "chance")
        }
    out: dict[str, int] = {}
    for name, rx in (("games", r"^g(\d+)/"), ("hands", r"^h(\d+)/"), ("rounds", r"^r(\d+)/")):
        seen = {
            int(m.group(1))
            for e in events
            if isinstance(e, dict)
            and isinstance(e.get("label"), str)
            and (m := re.match(rx, e["label"]))
        }
        if seen:
            out[name] = len(seen)
    return out


class PlainContext(render.DrawContext):
    """The lines from the engine's public view after every action."""

    def seat_roles(self, engine: Any) -> dict[str, int]:
        try:
            view = engine.view(None)
        except Exception:
            view = {}
        return {
            k: view[k]
            for k in ("dealer", "hakem")
            if isinstance(view.get(k), int) and not isinstance(view.get(k), bool)
        }

    def _note_reveal(self, ev: dict[str, Any], engine: Any) -> None:
        if self.game != "shelem":
            return
        view = engine.view(None)
        hand = view.get("hand_number")
        if not view.get("piles_revealed") or hand == getattr(self, "_seen_reveal", None):
            return
        self._seen_reveal = hand
        self._reveal_line(ev, hand, view)

    def _note_game_end(self, ev: dict[str, Any], engine: Any) -> None:
        if self.game not in render.BOARD_GAMES:
            return
        view = engine.view(None)
        games = view.get("games") or []
        before = getattr(self, "_plain_before", None)
        self._plain_before = render.board_text(view)
        if len(games) <= getattr(self, "_plain_games", 0):
            return
        self._plain_games = len(games)
        raw = ev.get("action")
        self._game_end_line(ev, games[-1], raw if isinstance(raw, dict) else {}, before or "")


def lines(ctx_cls: type[render.DrawContext], doc: dict[str, Any]) -> list[dict[str, Any]]:
    seeds = [s["client_seed"] for s in sorted(doc["seats"], key=lambda s: s["seat"])]
    key = match_key(
        parse_server_seed(doc["server_seed"]), doc["match_id"], doc["game"], doc["ruleset"], seeds
    )
    ctx = ctx_cls(doc)
    cls = find_engine(doc["game"], protocol=doc["protocol"])
    replay(cls, doc["ruleset"], key, doc["events"], on_event=ctx.observe)
    return [
        {**line, "info": info} for line, (_, info) in zip(ctx.lines(None), ctx.entries, strict=True)
    ]


@pytest.mark.parametrize(
    ("game", "ruleset"),
    [
        ("tawla", {"match_length": 3}),
        ("mahbusa", {"match_length": 3}),
        ("shelem", {"players": 2, "target": 300}),
        ("shelem", {}),
        ("hokm", {}),
        ("qahve", {}),
    ],
)
def test_draw_lines_are_those_of_the_engines_view(game: str, ruleset: dict[str, Any]) -> None:
    for seed in (1, 2):
        doc, _ = simulate_match(game, ruleset, seed=seed, max_actions=20_000, protocol=PROTOCOL)
        fast, plain = lines(render.DrawContext, doc), lines(PlainContext, doc)
        assert fast == plain
        kinds = {d["kind"] for d in fast}
        assert ("board" in kinds) == (game in render.BOARD_GAMES)
        assert ("reveal" in kinds) == (ruleset.get("players") == 2)
        if game in render.CARD_GAMES:
            assert any("dealer" in d["info"] for d in fast)


@pytest.mark.parametrize("game", [*available_games(), "rng"])
def test_units_are_counted_as_by_three_passes(game: str) -> None:
    doc, _ = simulate_match(game, seed=3, max_actions=20_000)
    events: list[Any] = [*doc["events"], {"label": "g7/x"}, {"label": "h"}, "junk", {"label": 5}]
    assert count_units(events, game) == plain_count_units(events, game)
    assert count_units(doc["events"], game) == plain_count_units(doc["events"], game)


def test_units_of_random_labels_are_counted_as_by_three_passes() -> None:
    """Labels near the patterns (a head read once per distinct head): other digits,
    missing or doubled slashes, letters among the digits, the same head repeated."""
    rng = random.Random(5)
    parts = ["g", "h", "r", "x", "1", "0", "12", "/", "//", "a", "\u0663", "\u00b2", " "]
    for _ in range(300):
        labels = [
            "".join(rng.choice(parts) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(0, 20))
        ]
        labels += rng.sample(labels, min(5, len(labels)))
        events: list[Any] = [{"label": lab} for lab in labels]
        for game in ("tawla", "rng"):
            assert count_units(events, game) == plain_count_units(events, game), labels
