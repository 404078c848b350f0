"""Sealed qahve (fairness-v3 §9a; the rules of :mod:`games.qahve`).

The first dealer is drawn from the match key as in seeded qahve (``dealer``); nothing else
is. Each hand: every seat's ``key``, the ``shuffle`` chain over ``deck_qahve``, then the deal
of the final deck's positions by :func:`games.deals.qahve_deal` (packets 5-4-4 from
dealer+1; every seat owes its shares of the others' cards), the bids, the tricks.

Actions beyond the steps: ``{"type": "bid", "tricks": n}`` and ``{"type": "play", "item": i,
"card": "JR", "share": "<hex>", "proof": "<hex>"}``. ``JR`` before ``JB`` is refused at once
(both are public once played); following suit and playing ``JB`` at trick 10 when still
holding it are checked when the hand's keys are revealed
(:meth:`SealedQahveEngine._breach`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from .base import JSON, Action
from .errors import IllegalActionError
from .qahve import JB, JB_DEADLINE, JR, QahveEngine
from .sealed_base import SealedGame
from .tricks import Phase, follow_reason


class SealedQahveEngine(SealedGame, QahveEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "bid", "play")

    #: (seat, item, led suit, the items it held then, tricks done then) of every play
    plays: list[tuple[int, int, str | None, tuple[int, ...], int]]

    def _start_hand(self) -> None:
        self.plays = []
        super()._start_hand()
        self._dealt(self.hands)

    def _finish_hand(self) -> None:
        """Thirteen tricks are played: the keys are revealed before the hand is scored
        (:meth:`_after_reveal`)."""
        self._hand_over()

    def _after_reveal(self) -> None:
        QahveEngine._finish_hand(self)

    def _breach(self, codes: Sequence[str]) -> int | None:
        for seat, item, led, held, done in self.plays:
            hand = [codes[i] for i in held]
            card = codes[item]
            if JB in hand and done == JB_DEADLINE and card != JB:
                return seat
            if follow_reason(hand, card, led) is not None:
                return seat
        return None

    def _play_legal(self, seat: int) -> list[Action]:
        if self.phase == Phase.BID:
            return QahveEngine.legal_actions(self, seat)
        return [{"type": "play", "item": i} for i in self._unopened(seat)]

    def _apply_play(self, seat: int, action: Action) -> None:
        card = self._card(action, "item", "card", "share", "proof")
        if card == JR and not self.jb_played:
            raise IllegalActionError("JR may not be played until JB has been played")
        item, held = self._play_item(seat, action, card)
        self.plays.append((seat, item, self.trick.led, held, self.tricks_done))
        self._add_to_trick(seat, card)

    def _view(self, seat: int | None) -> dict[str, JSON]:
        out = super()._view(None)
        out["led"] = self.trick.led
        if seat is not None:
            out["hand"] = list(self._held(seat))
        return out


ENGINE = SealedQahveEngine
