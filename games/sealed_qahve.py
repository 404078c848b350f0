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

from collections.abc import Mapping
from typing import ClassVar

from .base import Action
from .errors import IllegalActionError
from .qahve import JB, JB_DEADLINE, JR, QahveEngine
from .sealed_base import SealedTricks


class SealedQahveEngine(SealedTricks, QahveEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "bid", "play")

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

    def _broke(self, hand: list[str], card: str, done: int) -> bool:
        """JB not played at trick 10 while the seat held it."""
        return JB in hand and done == JB_DEADLINE and card != JB

    def _may_play(self, seat: int, action: Action, code: str, hand: Mapping[int, str]) -> bool:
        if code == JR and not self.jb_played:
            return False
        return super()._may_play(seat, action, code, hand)

    def _apply_play(self, seat: int, action: Action) -> None:
        card = self._card(action, "item", "card", "share", "proof")
        if card == JR and not self.jb_played:
            raise IllegalActionError("JR may not be played until JB has been played")
        self._play_card(seat, action, card)
        self._add_to_trick(seat, card)


ENGINE = SealedQahveEngine
