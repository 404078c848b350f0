"""Sealed Mexican Train (fairness-v3 §9a; the rules of :mod:`games.mexican_train`).

Each round: every seat's ``key``, the ``shuffle`` chain over the round's 90 tiles (the
double-twelve set without the round's engine, in canonical order), then the deal of the
final deck: seat s gets positions h·s..h·s+h−1 (shares owed), the rest is the boneyard,
drawn from the front; a tile drawn is dealt to the drawer alone (the others owe their shares).

Actions beyond the steps: ``{"type": "play", "item": i, "tile": "3-5", "train": t,
"share": "<hex>", "proof": "<hex>"}`` (after a draw, only the drawn item), ``{"type":
"draw"}`` and ``{"type": "pass"}``. Which train a tile may go on, the open double to cover
and that the tile matches the train's end are checked at once; that a seat drew or passed
only when it could not play (after a draw: that the drawn tile could not be played) is
checked when the round's keys are revealed (:meth:`SealedMexicanTrainEngine._breach`). A
round is scored once every key is revealed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fairness import tile_code, tiles

from .base import JSON, Action, Chance, MatchContext, only_keys
from .errors import IllegalActionError, MalformedActionError
from .mexican_train import TOP, MexicanTrainEngine, engine_number, hand_size
from .sealed_base import SealedGame
from .tiles import check_tile_code, has_number


class SealedMexicanTrainEngine(SealedGame, MexicanTrainEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "play", "draw", "pass")

    def __init__(
        self, ruleset: Mapping[str, Any], chance: Chance, ctx: MatchContext | None = None
    ) -> None:
        #: (seat, the items it could have played, the open ends it could have played on) of
        #: every draw and pass, checked at the round's end
        self.checks: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        self._ended: tuple[str, int | None] | None = None
        super().__init__(ruleset, chance, ctx)

    def _start_round(self) -> None:
        if self.round < 0:
            self._sealed_init(self.ctx)
        self.round += 1
        n = self.n_seats
        self.engine_n = engine_number(self.round)
        engine = tile_code(self.engine_n, self.engine_n)
        items = [t for t in tiles(TOP) if t != engine]
        self._begin_hand(items)
        h = hand_size(n)
        self.hands = [[str(p) for p in range(h * s, h * s + h)] for s in range(n)]
        self.boneyard = [str(p) for p in range(h * n, len(items))]
        self._deal_items({s: [int(p) for p in hand] for s, hand in enumerate(self.hands)})
        self.trains = [[] for _ in range(n + 1)]
        self.markers = set()
        self.open_doubles = []
        self.followup = False
        self.drawn = None
        self.passes_in_row = 0
        self.current = self.round % n
        self.checks = []
        self._ended = None

    def _end_round(self, how: str, out_seat: int | None) -> None:
        """The round's play is over: the keys are revealed before it is scored
        (:meth:`_after_reveal`)."""
        self._ended = (how, out_seat)
        self._hand_over()

    def _after_reveal(self) -> None:
        assert self._ended is not None
        codes = self._hand().codes
        assert codes is not None
        how, seat = self._ended
        self._ended = None
        self.hands = [[codes[int(p)] for p in h] for h in self.hands]
        MexicanTrainEngine._end_round(self, how, seat)

    def _breach(self, codes: Sequence[str]) -> int | None:
        for seat, items, ends in self.checks:
            if any(has_number(codes[i], e) for i in items for e in ends):
                return seat
        return None

    # -- actions ---------------------------------------------------------------------------
    def _candidates(self, seat: int) -> tuple[int, ...]:
        """The items the seat may lay now: the drawn one after a draw, else its unopened ones."""
        if self.drawn is not None:
            return (int(self.drawn),)
        opened = self._hand().opened
        return tuple(sorted(int(p) for p in self.hands[seat] if int(p) not in opened))

    def _open_ends(self, seat: int) -> tuple[int, ...]:
        return tuple(self.open_end(i) for i in self._allowed_trains(seat))

    def _play_legal(self, seat: int) -> list[Action]:
        plays: list[Action] = [
            {"type": "play", "item": i, "train": self.train_id(t)}
            for i in self._candidates(seat)
            for t in self._allowed_trains(seat)
        ]
        extra: Action = (
            {"type": "draw"} if self.drawn is None and self.boneyard else {"type": "pass"}
        )
        return [*plays, extra]

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "sealed" or self.owed:
            super()._apply(seat, action)
            return
        kind = action["type"]
        if kind == "play":
            self._sealed_play(seat, action)
            return
        only_keys(action)
        if kind == "draw":
            if self.drawn is not None:
                raise IllegalActionError("you have already drawn: play the drawn tile or pass")
            if not self.boneyard:
                raise IllegalActionError("the boneyard is empty: pass")
            self.checks.append((seat, self._candidates(seat), self._open_ends(seat)))
            self.drawn = self.boneyard.pop(0)
            self.hands[seat].append(self.drawn)
            self._deal_items({seat: [int(self.drawn)]})
            return
        if self.drawn is None and self.boneyard:
            raise IllegalActionError("you cannot play: draw from the boneyard first")
        self.checks.append((seat, self._candidates(seat), self._open_ends(seat)))
        self.markers.add(seat)
        self.passes_in_row = 0 if self.boneyard else self.passes_in_row + 1
        self._next_seat(seat)
        if self.passes_in_row >= self.n_seats:
            self._end_round("blocked", None)

    def _sealed_play(self, seat: int, action: Action) -> None:
        only_keys(action, "item", "tile", "train", "share", "proof")
        try:
            tile = check_tile_code(action.get("tile"), TOP)
        except ValueError as exc:
            raise MalformedActionError(str(exc)) from None
        if tile not in self._hand().items:
            raise MalformedActionError(f"{tile} is the engine: it is not dealt this round")
        if "train" not in action:
            raise MalformedActionError("a play needs 'train': a seat number or \"mexican\"")
        index = self._index(action["train"])
        name = f"train {self.train_id(index)}"
        item = action.get("item")
        if self.drawn is not None and item != int(self.drawn):
            raise IllegalActionError(f"you drew item {self.drawn}: only it may be played now")
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
        item, share = self._check_open(seat, action, tile)
        if str(item) not in self.hands[seat]:
            raise IllegalActionError(f"item {item} is not in seat {seat}'s hand")
        self._commit_open(seat, item, tile, share, bytes.fromhex(action["proof"]))
        self.hands[seat].remove(str(item))
        self._lay(seat, index, tile, end)

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        held = self.hands
        self.hands = [[] for _ in held]
        try:
            out = super()._view(None)
        finally:
            self.hands = held
        out["hand_counts"] = [len(h) for h in held]
        out["drawn_item"] = int(self.drawn) if self.drawn is not None else None
        if seat is not None:
            out["hand"] = [] if self.outcome is not None else sorted(int(p) for p in held[seat])
            out["drawn"] = None
        return out


ENGINE = SealedMexicanTrainEngine
