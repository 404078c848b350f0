"""Iraqi café dominoes (double-six), spec: rules/iraqi_domino.md; docs/games/iraqi_domino.md.

2, 3 or 4 seats; with 4, seats 0 & 2 and 1 & 3 are partners. Round r deals
``shuffle(tiles(6))`` (label ``r{r}/shuffle``): seat s gets positions [7s, 7s+7), the rest
(2–3 seats) is the draw pile, drawn from the front.

Actions:

- ``{"type": "play", "tile": "3-5", "end": "left" | "right"}``; the first tile of a round
  has no ``end``: ``{"type": "play", "tile": "6-6"}``.
- ``{"type": "draw"}`` (2–3 seats): one tile from the pile, only when the seat cannot play;
  the seat keeps the turn and draws again or plays.
- ``{"type": "pass"}`` ("بس"): only when the seat cannot play and the pile is empty.

The round is blocked (تسكير) as soon as the pile is empty and no seat can play.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fairness import tiles

from .base import JSON, Action, only_keys
from .errors import IllegalActionError, MalformedActionError
from .tiles import (
    DominoEngine,
    action_tile,
    has_number,
    opening_rank,
    orient,
    sort_tiles,
    total_pips,
)

HAND = 7
ENDS = ("left", "right")


def round_to_nearest(points: int, step: int) -> int:
    """``points`` to the nearest multiple of ``step``; an exact half rounds up (22 → 20,
    23 → 25 with step 5)."""
    if step <= 1:
        return points
    low = points - points % step
    return low + step if 2 * (points % step) >= step else low


class IraqiDominoEngine(DominoEngine):
    game: ClassVar[str] = "iraqi_domino"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"players": 4, "target": 151, "round_to": 5}
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {
        "players": (2, 4),
        "target": (1, 10_000),
        "round_to": (1, 50),
    }
    PARTNERS: ClassVar[bool] = True

    def _start_match(self) -> None:
        self.target: int = self.ruleset["target"]
        self.round_to: int = self.ruleset["round_to"]
        self.scores: list[int] = [0] * self.n_sides
        self.round = -1
        self.history: list[dict[str, JSON]] = []
        self._start_round(None)

    # -- rounds ----------------------------------------------------------------------------
    def _start_round(self, opener: int | None) -> None:
        """Deal round ``self.round + 1``; ``opener`` None: the forced opening of round 0."""
        self.round += 1
        self.hands, self.pile = self._deal(tiles(6), HAND)
        self.line: list[tuple[int, int]] = []
        self.left = self.right = -1
        self.plays = 0
        self.last_play = [-1] * self.n_seats
        self.opener = self.current = self._opener(opener)

    def _opener(self, opener: int | None) -> int:
        """The round's opener; None: the forced opening (round 0, or after a tie)."""
        self.opening_tile: str | None = None
        if opener is not None:
            return opener
        tile = self.opening_tile = self.forced_opening_tile(self.hands)
        return next(s for s in range(self.n_seats) if tile in self.hands[s])

    @staticmethod
    def forced_opening_tile(hands: list[list[str]]) -> str:
        """6-6 if dealt, else the highest double dealt, else the heaviest tile dealt."""
        return max((t for h in hands for t in h), key=opening_rank)

    def _end_round(self, how: str, winner_seat: int | None) -> None:
        n = self.n_seats
        pips = [total_pips(h) for h in self.hands]
        side_pips = [0] * self.n_sides
        for s in range(n):
            side_pips[self.side_of(s)] += pips[s]
        next_opener: int | None
        if how == "domino":
            assert winner_seat is not None
            win_side: int | None = self.side_of(winner_seat)
            next_opener = winner_seat
        else:
            low = min(side_pips)
            lowest = [side for side in range(self.n_sides) if side_pips[side] == low]
            win_side = lowest[0] if len(lowest) == 1 else None
            if win_side is None:
                next_opener = None
            else:
                mine = self.seats_of(win_side)
                # fewest pips; equal → the one who played last (then the lower seat)
                next_opener = min(mine, key=lambda s: (pips[s], -self.last_play[s], s))
        raw = points = 0
        if win_side is not None:
            raw = sum(side_pips[side] for side in range(self.n_sides) if side != win_side)
            points = round_to_nearest(raw, self.round_to)
            self.scores[win_side] += points
        self.history.append(
            {
                "round": self.round,
                "end": how,
                "winner_side": win_side,
                "winners": [] if win_side is None else list(self.seats_of(win_side)),
                "domino_seat": winner_seat,
                "pips": pips,
                "side_pips": side_pips,
                "raw": raw,
                "points": points,
                "hands": [sort_tiles(h) for h in self.hands],
                "scores": list(self.scores),
            }
        )
        if not self.finish_at_target(self.target, {"rounds": self.round + 1}):
            self._start_round(next_opener)

    # -- helpers ---------------------------------------------------------------------------
    def _end_number(self, end: str) -> int:
        return self.left if end == "left" else self.right

    def _plays(self, seat: int) -> list[Action]:
        hand = sort_tiles(self.hands[seat])
        if not self.line:
            if self.opening_tile is not None:
                return [{"type": "play", "tile": self.opening_tile}]
            return [{"type": "play", "tile": t} for t in hand]
        return [
            {"type": "play", "tile": t, "end": e}
            for t in hand
            for e in ENDS
            if has_number(t, self._end_number(e))
        ]

    def _can_play(self, seat: int) -> bool:
        if not self.line:
            return True
        return any(has_number(t, self.left) or has_number(t, self.right) for t in self.hands[seat])

    def _blocked(self) -> bool:
        return not self.pile and not any(self._can_play(s) for s in range(self.n_seats))

    def _may_draw(self) -> bool:
        return bool(self.pile)

    # -- interface -------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action["type"]
        if kind == "play":
            self._play(seat, action)
            return
        only_keys(action)
        if self._can_play(seat):
            raise IllegalActionError(f"you can play a tile, so you may not {kind}")
        if kind == "draw":
            if not self.pile:
                raise IllegalActionError("the draw pile is empty: pass instead")
            self.hands[seat].append(self.pile.pop(0))
            if self._blocked():
                self._end_round("blocked", None)
        else:
            if self.pile:
                raise IllegalActionError("you cannot play: draw from the pile first")
            self.current = (seat + 1) % self.n_seats

    def _play(self, seat: int, action: Action) -> None:
        only_keys(action, "tile", "end")
        tile = action_tile(action, 6)
        end = self._action_end(action)
        hand = self.hands[seat]
        if tile not in hand:
            raise IllegalActionError(f"you do not hold {tile}")
        if end is None:
            if self.opening_tile is not None and tile != self.opening_tile:
                raise IllegalActionError(f"this round must open with {self.opening_tile}")
        else:
            self._check_end(tile, end)
        hand.remove(tile)
        self._lay(seat, tile, end)

    def _action_end(self, action: Action) -> str | None:
        """The play's ``end``, checked (None: the round's first tile, which takes none)."""
        end = action.get("end")
        if not self.line:
            if "end" in action:
                raise MalformedActionError("the first tile of a round takes no 'end'")
            return None
        if end not in ENDS:
            raise MalformedActionError('\'end\' must be "left" or "right"')
        return str(end)

    def _check_end(self, tile: str, end: str) -> None:
        number = self._end_number(end)
        if not has_number(tile, number):
            raise IllegalActionError(f"{tile} does not match the {end} end ({number})")

    def _lay(self, seat: int, tile: str, end: str | None) -> None:
        """``tile`` (checked, already out of ``seat``'s hand) laid at ``end`` (None: the
        round's first tile); the round's end or the next seat follows from it."""
        if end is None:
            a, b = (int(x) for x in tile.split("-"))
            self.line = [(a, b)]
            self.left, self.right = a, b
        else:
            inner, outer = orient(tile, self._end_number(end))
            if end == "left":
                self.line.insert(0, (outer, inner))
                self.left = outer
            else:
                self.line.append((inner, outer))
                self.right = outer
        self.last_play[seat] = self.plays
        self.plays += 1
        if not self.hands[seat]:
            self._end_round("domino", seat)
        elif self._blocked():
            self._end_round("blocked", None)
        else:
            self.current = (seat + 1) % self.n_seats

    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "players": self.n_seats,
            "target": self.target,
            "round_to": self.round_to,
            "round": self.round,
            "sides": [self.side_of(s) for s in range(self.n_seats)],
            "scores": list(self.scores),
            "line": [list(p) for p in self.line],
            "ends": {"left": self.left, "right": self.right} if self.line else None,
            "pile": len(self.pile),
            "hand_counts": [len(h) for h in self.hands],
            "opener": self.opener,
            "must_open_with": self.opening_tile if not self.line else None,
            "last_round": self.history[-1] if self.history else None,
            "rounds": list(self.history),
        }
        if seat is not None:
            out["hand"] = sort_tiles(self.hands[seat])
        return out


ENGINE = IraqiDominoEngine
