"""Plain dice/shuffle sessions (``/v1/rng``) as a one-seat engine.

fairness-v1.md §5: ``game = "rng"``, ``ruleset = "{}"``, one client seed; draw k has label
``d{k}``; ``shuffle`` of n shuffles the integers 0 … n-1. Actions:
``{"type": "draw", "kind": "dice", "count": c, "sides": s}`` (count 1–100, sides 2–1000,
defaults 1 and 6), ``{"type": "draw", "kind": "uniform", "n": n}`` (1 ≤ n ≤ 2^32),
``{"type": "draw", "kind": "shuffle", "n": n}`` (1 ≤ n ≤ 1000), ``{"type": "close"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import JSON, Action, Engine, Outcome, only_keys
from .errors import MalformedActionError

MAX_DICE = 100
MAX_SIDES = 1000
MAX_SHUFFLE = 1000


def _int_field(action: Mapping[str, Any], key: str, lo: int, hi: int, default: int | None) -> int:
    v = action.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MalformedActionError(f"{key!r} must be an integer")
    if not lo <= v <= hi:
        raise MalformedActionError(f"{key!r} must be {lo} to {hi}, got {v}")
    return v


class RngEngine(Engine):
    game: ClassVar[str] = "rng"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {}
    V2_TIMING: ClassVar[bool] = False  # a plain session's ruleset stays "{}" in v2
    SEATS: ClassVar[int | None] = 1
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("draw", "close")

    def _start_match(self) -> None:
        self.draws: list[JSON] = []

    def _turn(self) -> int | None:
        return 0

    def _legal(self, seat: int) -> list[Action]:
        return [
            {"type": "draw", "kind": "dice", "count": 2, "sides": 6},
            {"type": "draw", "kind": "uniform", "n": 37},
            {"type": "draw", "kind": "shuffle", "n": 52},
            {"type": "close"},
        ]

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "close":
            only_keys(action)
            self.outcome = Outcome("finished", (0,), (len(self.draws),), {"draws": len(self.draws)})
            return
        kind = action.get("kind")
        label = f"d{len(self.draws)}"
        result: JSON
        if kind == "dice":
            only_keys(action, "kind", "count", "sides")
            count = _int_field(action, "count", 1, MAX_DICE, 1)
            sides = _int_field(action, "sides", 2, MAX_SIDES, 6)
            result = self.chance.dice(label, count, sides)
        elif kind == "uniform":
            only_keys(action, "kind", "n")
            n = _int_field(action, "n", 1, 1 << 32, None)
            result = self.chance.uniform(label, n)
        elif kind == "shuffle":
            only_keys(action, "kind", "n")
            n = _int_field(action, "n", 1, MAX_SHUFFLE, None)
            result = self.chance.shuffle(label, list(range(n)))
        else:
            raise MalformedActionError("draw 'kind' must be dice, uniform or shuffle")
        self.draws.append(result)

    def _view(self, seat: int | None) -> dict[str, JSON]:
        return {"draws": list(self.draws)}

    def side_scores(self) -> tuple[int, ...]:
        return (len(self.draws),)

    @classmethod
    def redact(cls, event: dict[str, Any]) -> dict[str, Any]:
        return event  # a session's draws are the session owner's own results


ENGINE = RngEngine
