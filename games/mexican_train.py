"""Mexican Train (double-twelve), spec: rules/mexican_train.md; docs/games/mexican_train.md.

2–8 seats; round r's engine is the double ``12 - r`` (wrapping after 0-0). Round r deals
``shuffle(tiles(12) minus the engine)`` (label ``r{r}/shuffle``): seat s gets
[h·s, h·s+h) (h = 15 / 12 / 10 for 2–4 / 5–6 / 7–8 seats), the rest is the boneyard,
drawn from the front. Round r is started by seat ``r mod n``.

Actions:

- ``{"type": "play", "tile": "3-5", "train": t}`` with ``t`` a seat number (that seat's
  personal train) or ``"mexican"`` (the shared Mexican train).
- ``{"type": "draw"}``: one tile from the boneyard, only when the seat has no legal play
  and has not drawn yet for this obligation; a playable drawn tile must be played at once.
- ``{"type": "pass"}``: when the seat cannot play and cannot draw; puts a marker on its
  train.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fairness import tile_code, tiles

from .base import JSON, Action, Outcome, only_keys
from .errors import IllegalActionError, MalformedActionError
from .tiles import DominoEngine, action_tile, has_number, is_double, orient, pips, sort_tiles

MEXICAN = "mexican"
TOP = 12


def hand_size(players: int) -> int:
    return 15 if players <= 4 else 12 if players <= 6 else 10


def engine_number(round_index: int) -> int:
    """The engine double's number in round ``round_index`` (12, 11, …, 0, 12, …)."""
    return TOP - round_index % (TOP + 1)


class MexicanTrainEngine(DominoEngine):
    game: ClassVar[str] = "mexican_train"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"players": 4, "rounds": 13, "blank_double": 0}
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {
        "players": (2, 8),
        "rounds": (1, 13),
        "blank_double": (0, 100),
    }

    def _start_match(self) -> None:
        self.rounds: int = self.ruleset["rounds"]
        self.blank_double: int = self.ruleset["blank_double"]
        self.totals: list[int] = [0] * self.n_seats
        self.round = -1
        self.history: list[dict[str, JSON]] = []
        self._start_round()

    # -- rounds ----------------------------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        n = self.n_seats
        self.engine_n = engine_number(self.round)
        engine = tile_code(self.engine_n, self.engine_n)
        self.hands, self.boneyard = self._deal([t for t in tiles(TOP) if t != engine], hand_size(n))
        # trains[s] is seat s's personal train, trains[n] the Mexican train; each tile is
        # laid as (inner, outer)
        self.trains: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
        self.markers: set[int] = set()
        self.open_doubles: list[int] = []  # train indices ending in an uncovered double
        self.followup = False  # the seat to act has just played a double
        self.drawn: str | None = None  # the tile drawn for the current obligation
        self.passes_in_row = 0  # consecutive passes made with an empty boneyard
        self.current = self.round % n

    def penalty(self, hand: list[str]) -> int:
        return sum(self.blank_double if t == "0-0" else pips(t) for t in hand)

    def _end_round(self, how: str, out_seat: int | None) -> None:
        penalties = [self.penalty(h) for h in self.hands]
        for s, p in enumerate(penalties):
            self.totals[s] += p
        self.history.append(
            {
                "round": self.round,
                "engine": tile_code(self.engine_n, self.engine_n),
                "end": how,
                "out": out_seat,
                "penalties": penalties,
                "hands": [sort_tiles(h) for h in self.hands],
                "totals": list(self.totals),
            }
        )
        if self.round + 1 >= self.rounds:
            low = min(self.totals)
            winners = tuple(s for s in range(self.n_seats) if self.totals[s] == low)
            self.outcome = Outcome(
                "finished", winners, tuple(self.totals), {"rounds": self.round + 1}
            )
            return
        self._start_round()

    # -- helpers ---------------------------------------------------------------------------
    def train_id(self, index: int) -> int | str:
        return MEXICAN if index == self.n_seats else index

    def _index(self, action: Action) -> int:
        """The train a play names (``train``): its index in :attr:`trains`."""
        if "train" not in action:
            raise MalformedActionError("a play needs 'train': a seat number or \"mexican\"")
        train = action["train"]
        if train == MEXICAN:
            return self.n_seats
        if isinstance(train, bool) or not isinstance(train, int):
            raise MalformedActionError("'train' must be a seat number or \"mexican\"")
        if not 0 <= train < self.n_seats:
            raise MalformedActionError(f"no train {train}: seats are 0 to {self.n_seats - 1}")
        return train

    def open_end(self, index: int) -> int:
        train = self.trains[index]
        return train[-1][1] if train else self.engine_n

    @property
    def cover_duty(self) -> int | None:
        """The train whose open double the next tile must cover (None: no duty now)."""
        if self.open_doubles and not self.followup:
            return self.open_doubles[0]
        return None

    def _allowed_trains(self, seat: int) -> list[int]:
        duty = self.cover_duty
        if duty is not None:
            return [duty]
        return [i for i in range(self.n_seats) if i == seat or i in self.markers] + [self.n_seats]

    def _plays(self, seat: int) -> list[Action]:
        hand = [self.drawn] if self.drawn is not None else sort_tiles(self.hands[seat])
        allowed = self._allowed_trains(seat)
        return [
            {"type": "play", "tile": t, "train": self.train_id(i)}
            for t in hand
            for i in allowed
            if has_number(t, self.open_end(i))
        ]

    def _may_draw(self) -> bool:
        """Once per obligation, while the boneyard lasts."""
        return self.drawn is None and bool(self.boneyard)

    # -- interface -------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action["type"]
        if kind == "play":
            self._play(seat, action)
            return
        only_keys(action)
        if self._plays(seat):
            raise IllegalActionError(f"you can play a tile, so you may not {kind}")
        if kind == "draw":
            if self.drawn is not None:
                raise IllegalActionError(f"you have already drawn ({self.drawn}): pass")
            if not self.boneyard:
                raise IllegalActionError("the boneyard is empty: pass")
            self.drawn = self.boneyard.pop(0)
            self.hands[seat].append(self.drawn)
            return
        self._pass(seat)

    def _pass(self, seat: int) -> None:
        """A pass (the seat cannot play, checked): a marker on its train."""
        if self.drawn is None and self.boneyard:
            raise IllegalActionError("you cannot play: draw from the boneyard first")
        self.markers.add(seat)
        self.passes_in_row = 0 if self.boneyard else self.passes_in_row + 1
        self._next_seat(seat)
        if self.passes_in_row >= self.n_seats:
            self._end_round("blocked", None)

    def _next_seat(self, seat: int) -> None:
        self.followup = False
        self.drawn = None
        self.current = (seat + 1) % self.n_seats

    def _play(self, seat: int, action: Action) -> None:
        only_keys(action, "tile", "train")
        tile = action_tile(action, TOP)
        index = self._index(action)
        if tile not in self.hands[seat]:
            raise IllegalActionError(f"you do not hold {tile}")
        if self.drawn is not None and tile != self.drawn:
            raise IllegalActionError(f"you drew {self.drawn}: only it may be played now")
        end = self._check_train(seat, index, tile)
        self.hands[seat].remove(tile)
        self._lay(seat, index, tile, end)

    def _check_train(self, seat: int, index: int, tile: str) -> int:
        """That ``seat`` may lay ``tile`` on train ``index`` now: the open double to cover
        first, a marker on another's train, the train's open end (returned)."""
        name = f"train {self.train_id(index)}"
        duty = self.cover_duty
        if duty is not None and index != duty:
            d = self.open_end(duty)
            raise IllegalActionError(
                f"the open double {d}-{d} on train {self.train_id(duty)} must be covered first"
            )
        if index not in self._allowed_trains(seat):
            raise IllegalActionError(
                f"{name} carries no marker: play on your own train, the Mexican train or a "
                "train with a marker"
            )
        end = self.open_end(index)
        if not has_number(tile, end):
            raise IllegalActionError(f"{tile} does not match {name}'s open end ({end})")
        return end

    def _lay(self, seat: int, index: int, tile: str, end: int) -> None:
        """``tile`` (already out of ``seat``'s hand) laid on train ``index`` at ``end``: the
        markers, open doubles, the round's end and the next seat follow from it."""
        self.trains[index].append(orient(tile, end))
        self.passes_in_row = 0
        self.drawn = None
        if index == seat:
            self.markers.discard(seat)
        if index in self.open_doubles:
            self.open_doubles.remove(index)
        if is_double(tile):
            self.open_doubles.append(index)
        if not self.hands[seat]:
            self._end_round("out", seat)
        elif is_double(tile):
            self.followup = True
        else:
            self._next_seat(seat)

    def _view(self, seat: int | None) -> dict[str, JSON]:
        n = self.n_seats
        duty = self.cover_duty
        out: dict[str, JSON] = {
            "players": n,
            "rounds": self.rounds,
            "blank_double": self.blank_double,
            "round": self.round,
            "engine": tile_code(self.engine_n, self.engine_n),
            "starter": self.round % n,
            "trains": [
                {
                    "train": self.train_id(i),
                    "tiles": [list(p) for p in self.trains[i]],
                    "end": self.open_end(i),
                    "marker": i in self.markers,
                    "open_double": i in self.open_doubles,
                }
                for i in range(n + 1)
            ],
            "markers": sorted(self.markers),
            "open_double": None
            if duty is None
            else {
                "train": self.train_id(duty),
                "tile": tile_code(self.open_end(duty), self.open_end(duty)),
            },
            "open_doubles": [self.train_id(i) for i in self.open_doubles],
            "must_follow_double": self.followup,
            "has_drawn": self.drawn is not None,
            "pile": len(self.boneyard),
            "hand_counts": [len(h) for h in self.hands],
            "passes_in_row": self.passes_in_row,
            "scores": list(self.totals),
            "last_round": self.history[-1] if self.history else None,
            "history": list(self.history),
        }
        if seat is not None:
            out["hand"] = sort_tiles(self.hands[seat])
            out["drawn"] = self.drawn if seat == self.current else None
        return out

    def side_scores(self) -> tuple[int, ...]:
        return tuple(self.totals)


ENGINE = MexicanTrainEngine
