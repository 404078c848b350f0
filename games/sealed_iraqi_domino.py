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
from typing import Any, ClassVar

from fairness import tiles

from .base import JSON, Action, Chance, MatchContext, only_keys
from .errors import IllegalActionError, MalformedActionError
from .iraqi_domino import ENDS, HAND, IraqiDominoEngine
from .sealed_base import SealedGame
from .tiles import check_tile_code, has_number, is_double, orient, pips


def _call_order() -> tuple[str, ...]:
    every = tiles(6)
    doubles = sorted((t for t in every if is_double(t)), key=pips, reverse=True)
    others = sorted(
        (t for t in every if not is_double(t)),
        key=lambda t: (pips(t), max(int(x) for x in t.split("-"))),
        reverse=True,
    )
    return tuple(doubles + others)


#: the tiles the opening call names, in order (the forced opening of iraqi_domino)
CALL_ORDER = _call_order()


class SealedIraqiDominoEngine(SealedGame, IraqiDominoEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "play", "draw", "pass")

    def __init__(
        self, ruleset: Mapping[str, Any], chance: Chance, ctx: MatchContext | None = None
    ) -> None:
        #: the rules to check at the round's end, in play order: (what, seat, the items the
        #: seat held then, the line's ends or the tile called)
        self.checks: list[tuple[str, int, tuple[int, ...], tuple[int, int] | str]] = []
        self.call: int | None = None  #: index in CALL_ORDER while the opening call runs
        self.passes = 0
        self._ended: tuple[str, int | None] | None = None
        super().__init__(ruleset, chance, ctx)

    # -- rounds ----------------------------------------------------------------------------
    def _start_round(self, opener: int | None) -> None:
        if self.round < 0:  # the match starts (IraqiDominoEngine.__init__)
            self._sealed_init(self.ctx)
        self.round += 1
        items = tiles(6)
        self._begin_hand(items)
        n = self.n_seats
        self.hands = [[str(p) for p in range(HAND * s, HAND * s + HAND)] for s in range(n)]
        self.pile = [str(p) for p in range(HAND * n, len(items))]
        self._deal_items({s: [int(p) for p in h] for s, h in enumerate(self.hands)})
        self.line = []
        self.left = self.right = -1
        self.plays = 0
        self.last_play = [-1] * n
        self.checks = []
        self.passes = 0
        self._ended = None
        self.opening_tile = None
        if opener is None:
            self.call = 0
            opener = 0
        else:
            self.call = None
        self.opener = opener
        self.current = opener

    def _finish(self, how: str, seat: int | None) -> None:
        """The round's play is over: the keys are revealed before it is scored."""
        self._ended = (how, seat)
        self._hand_over()

    def _after_reveal(self) -> None:
        assert self._ended is not None
        codes = self._hand().codes
        assert codes is not None
        how, seat = self._ended
        self._ended = None
        self.hands = [[codes[int(p)] for p in h] for h in self.hands]
        self._end_round(how, seat)

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
    def _held(self, seat: int) -> tuple[int, ...]:
        return tuple(sorted(int(p) for p in self.hands[seat]))

    def _play_legal(self, seat: int) -> list[Action]:
        opened = self._hand().opened
        mine = [i for i in self._held(seat) if i not in opened]
        if self.call is not None:
            return [{"type": "play", "item": i} for i in mine] + [{"type": "pass"}]
        if not self.line:
            return [{"type": "play", "item": i} for i in mine]
        plays: list[Action] = [{"type": "play", "item": i, "end": e} for i in mine for e in ENDS]
        return plays + [{"type": "draw"} if self.pile else {"type": "pass"}]

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "sealed" or self.owed:
            super()._apply(seat, action)
            return
        kind = action["type"]
        if kind == "play":
            self._sealed_play(seat, action)
        elif kind == "draw":
            only_keys(action)
            if self.call is not None or not self.line:
                raise IllegalActionError("no draw now: the round is being opened")
            if not self.pile:
                raise IllegalActionError("the draw pile is empty: pass instead")
            self.checks.append(("draw", seat, self._held(seat), (self.left, self.right)))
            taken = self.pile.pop(0)
            self.hands[seat].append(taken)
            self.passes = 0
            self._deal_items({seat: [int(taken)]})
        else:
            only_keys(action)
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
                self._finish("blocked", None)

    def _sealed_play(self, seat: int, action: Action) -> None:
        only_keys(action, "item", "tile", "end", "share", "proof")
        try:
            tile = check_tile_code(action.get("tile"), 6)
        except ValueError as exc:
            raise MalformedActionError(str(exc)) from None
        end = action.get("end")
        if not self.line:
            if "end" in action:
                raise MalformedActionError("the first tile of a round takes no 'end'")
        elif end not in ENDS:
            raise MalformedActionError('\'end\' must be "left" or "right"')
        if self.call is not None and tile != CALL_ORDER[self.call]:
            raise IllegalActionError(f"the call is for {CALL_ORDER[self.call]}, not {tile}")
        if self.line:
            assert isinstance(end, str)
            number = self._end_number(end)
            if not has_number(tile, number):
                raise IllegalActionError(f"{tile} does not match the {end} end ({number})")
        item, share = self._check_open(seat, action, tile)
        if str(item) not in self.hands[seat]:
            raise IllegalActionError(f"item {item} is not in seat {seat}'s hand")
        self._commit_open(seat, item, tile, share, bytes.fromhex(action["proof"]))
        if not self.line:
            a, b = (int(x) for x in tile.split("-"))
            self.line = [(a, b)]
            self.left, self.right = a, b
            if self.call is not None:
                self.opening_tile = tile
                self.opener = seat
                self.call = None
        else:
            assert isinstance(end, str)
            inner, outer = orient(tile, self._end_number(end))
            if end == "left":
                self.line.insert(0, (outer, inner))
                self.left = outer
            else:
                self.line.append((inner, outer))
                self.right = outer
        self.hands[seat].remove(str(item))
        self.last_play[seat] = self.plays
        self.plays += 1
        self.passes = 0
        if not self.hands[seat]:
            self._finish("domino", seat)
        else:
            self.current = (seat + 1) % self.n_seats

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        held = self.hands
        self.hands = [[] for _ in held]
        try:
            out = super()._view(None)
        finally:
            self.hands = held
        out["hand_counts"] = [len(h) for h in held]
        out["calling"] = CALL_ORDER[self.call] if self.call is not None else None
        out["must_open_with"] = out["calling"]
        if seat is not None:
            # positions while the match runs; once it is over the last round's tiles are
            # known to all (its history shows them)
            out["hand"] = [] if self.outcome is not None else sorted(int(p) for p in held[seat])
        return out


ENGINE = SealedIraqiDominoEngine
