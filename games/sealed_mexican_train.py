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
from typing import ClassVar

from .base import JSON, Action, only_keys
from .errors import IllegalActionError, MalformedActionError
from .mexican_train import TOP, MexicanTrainEngine
from .sealed_base import SealedTiles
from .tiles import action_tile, has_number


class SealedMexicanTrainEngine(SealedTiles, MexicanTrainEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "play", "draw", "pass")

    #: (seat, the items it could have played, the open ends it could have played on) of
    #: every draw and pass, checked at the round's end
    checks: list[tuple[int, tuple[int, ...], tuple[int, ...]]]

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
        return tuple(self._unopened(seat))

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

    def _may_play(self, seat: int, action: Action, code: str, hand: Mapping[int, str]) -> bool:
        try:
            return has_number(code, self.open_end(self._index(action)))
        except MalformedActionError:
            return False

    def _may_do(self, seat: int, action: Action, hand: Mapping[int, str]) -> bool:
        """A draw or a pass only when no tile it may lay matches an open end (what
        :meth:`_breach` checks)."""
        if action.get("type") not in ("draw", "pass"):
            return True
        tiles = [hand[i] for i in self._candidates(seat) if i in hand]
        return not any(has_number(t, e) for t in tiles for e in self._open_ends(seat))

    def _draw_or_pass(self, seat: int, kind: str) -> None:
        if kind == "draw":
            if self.drawn is not None:
                raise IllegalActionError("you have already drawn: play the drawn tile or pass")
            if not self.boneyard:
                raise IllegalActionError("the boneyard is empty: pass")
            self.checks.append((seat, self._candidates(seat), self._open_ends(seat)))
            self.drawn = self._draw_item(seat, self.boneyard)
            return
        check = (seat, self._candidates(seat), self._open_ends(seat))
        self._pass(seat)
        self.checks.append(check)

    def _sealed_play(self, seat: int, action: Action) -> None:
        only_keys(action, "item", "tile", "train", "share", "proof")
        tile = action_tile(action, TOP)
        if tile not in self._hand().items:
            raise MalformedActionError(f"{tile} is the engine: it is not dealt this round")
        index = self._index(action)
        if self.drawn is not None and action.get("item") != int(self.drawn):
            raise IllegalActionError(f"you drew item {self.drawn}: only it may be played now")
        end = self._check_train(seat, index, tile)
        self._play_item(seat, action, tile)
        self._lay(seat, index, tile, end)

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out = super()._view(seat)
        out["drawn_item"] = int(self.drawn) if self.drawn is not None else None
        if seat is not None:
            out["drawn"] = None
        return out


ENGINE = SealedMexicanTrainEngine
