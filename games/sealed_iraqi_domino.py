"""Sealed Iraqi dominoes for 2, 3 or 4 players (fairness-v3 §9a; the rules of
:mod:`games.iraqi_domino`).

Each round: every seat's ``key``, the ``shuffle`` chain, then the deal of the final deck:
seat s gets positions 7s..7s+6 (shares owed), the rest is the boneyard, drawn from the front;
a tile drawn is dealt to the drawer alone (the other seats owe their shares of it).

The opening call of the first round (and of a round after a tie) is made tile by tile:
the call names 6-6, 5-5, … 0-0, then the other tiles heaviest first (:data:`CALL_ORDER`);
for each, the seats answer in seat order, the holder by opening with it
(``{"type": "play", "item": i, "tile": "6-6", "share": …, "proof": …}``), the others with
``{"type": "pass"}``; when every seat passed, the call names the next tile.

Actions beyond the steps: ``{"type": "play", "item": i, "tile": "3-5", "end": "left" |
"right", "share": "<hex>", "proof": "<hex>"}`` (the first tile of a round has no ``end``),
``{"type": "draw"}`` (the pile not empty) and ``{"type": "pass"}`` (the pile empty). The
tile must match its end (checked at once: refused otherwise); that a seat drew or passed
only when it could not play, and passed a call only when it did not hold the tile called,
is checked when the round's keys are revealed (:meth:`SealedIraqiDominoEngine._breach`).
A round ends by a domino (a seat lays its last tile) or blocked (the pile empty, every seat
passed in a row); it is scored once every key is revealed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from fairness import tiles

from .base import JSON, Action, only_keys
from .errors import IllegalActionError
from .iraqi_domino import ENDS, IraqiDominoEngine
from .sealed_base import SealedTiles
from .tiles import action_tile, has_number, opening_rank

#: the tiles the opening call names, in order (the forced opening of iraqi_domino): the
#: doubles from 6-6 down, then the others heaviest first (equal pips: the higher end first)
CALL_ORDER = tuple(sorted(tiles(6), key=opening_rank, reverse=True))


class SealedIraqiDominoEngine(SealedTiles, IraqiDominoEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "play", "draw", "pass")

    #: the rules to check at the round's end, in play order: (what, seat, the items the
    #: seat held then, the line's ends or the tile called)
    checks: list[tuple[str, int, tuple[int, ...], tuple[int, int] | str]]
    call: int | None  #: index in CALL_ORDER while the opening call runs
    passes: int  #: the passes in a row since the last tile laid or drawn

    # -- rounds ----------------------------------------------------------------------------
    def _opener(self, opener: int | None) -> int:
        """No forced opening over hidden hands: the opening call (:data:`CALL_ORDER`) runs
        from seat 0 instead."""
        self.opening_tile = None
        self.passes = 0
        self.call = 0 if opener is None else None
        return 0 if opener is None else opener

    def _blocked(self) -> bool:
        return False  # hidden hands: a round is blocked when every seat passed in a row

    def _breach(self, codes: Sequence[str]) -> int | None:
        for what, seat, held, data in self.checks:
            hand = [codes[i] for i in held]
            if what == "call":
                if data in hand:
                    return seat
            else:
                assert isinstance(data, tuple)
                left, right = data
                if any(has_number(t, left) or has_number(t, right) for t in hand):
                    return seat
        return None

    # -- actions ---------------------------------------------------------------------------
    def _play_legal(self, seat: int) -> list[Action]:
        mine = self._unopened(seat)
        if self.call is not None:
            return [{"type": "play", "item": i} for i in mine] + [{"type": "pass"}]
        if not self.line:
            return [{"type": "play", "item": i} for i in mine]
        plays: list[Action] = [{"type": "play", "item": i, "end": e} for i in mine for e in ENDS]
        return plays + [{"type": "draw"} if self.pile else {"type": "pass"}]

    def _may_play(self, seat: int, action: Action, code: str, hand: Mapping[int, str]) -> bool:
        if self.call is not None:
            return code == CALL_ORDER[self.call]
        end = action.get("end")
        return not isinstance(end, str) or has_number(code, self._end_number(end))

    def _may_do(self, seat: int, action: Action, hand: Mapping[int, str]) -> bool:
        """A pass of the call only without the tile called; a draw or a pass only when no
        tile of the hand matches an end (what :meth:`_breach` checks)."""
        if self.call is not None:
            return CALL_ORDER[self.call] not in hand.values()
        if action.get("type") in ("draw", "pass") and self.line:
            ends = (self.left, self.right)
            return not any(has_number(t, e) for t in hand.values() for e in ends)
        return True

    def _draw_or_pass(self, seat: int, kind: str) -> None:
        if kind == "draw":
            if self.call is not None or not self.line:
                raise IllegalActionError("no draw now: the round is being opened")
            if not self.pile:
                raise IllegalActionError("the draw pile is empty: pass instead")
            self.checks.append(("draw", seat, self._held(seat), (self.left, self.right)))
            self._draw_item(seat, self.pile)
            self.passes = 0
        else:
            if self.call is not None:
                nxt = (seat + 1) % self.n_seats
                if nxt == 0 and self.call + 1 >= len(CALL_ORDER):
                    raise IllegalActionError("every tile was called: someone holds one")
                self.checks.append(("call", seat, self._held(seat), CALL_ORDER[self.call]))
                if nxt == 0:
                    self.call += 1
                self.current = nxt
                return
            if not self.line:
                raise IllegalActionError("the opener must lay a tile")
            if self.pile:
                raise IllegalActionError("you cannot play: draw from the pile first")
            self.checks.append(("pass", seat, self._held(seat), (self.left, self.right)))
            self.passes += 1
            self.current = (seat + 1) % self.n_seats
            if self.passes == self.n_seats:
                self._end_round("blocked", None)

    def _sealed_play(self, seat: int, action: Action) -> None:
        only_keys(action, "item", "tile", "end", "share", "proof")
        tile = action_tile(action, 6)
        end = self._action_end(action)
        if self.call is not None and tile != CALL_ORDER[self.call]:
            raise IllegalActionError(f"the call is for {CALL_ORDER[self.call]}, not {tile}")
        if end is not None:
            self._check_end(tile, end)
        self._play_item(seat, action, tile)
        if self.call is not None:
            self.opening_tile = tile
            self.opener = seat
            self.call = None
        self.passes = 0
        self._lay(seat, tile, end)

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out = super()._view(seat)
        out["calling"] = CALL_ORDER[self.call] if self.call is not None else None
        out["must_open_with"] = out["calling"]
        return out


ENGINE = SealedIraqiDominoEngine
