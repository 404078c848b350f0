"""Sealed shelem for four players (fairness-v3 §9a; the rules of :mod:`games.shelem`).

The first dealer is drawn from the match key as in seeded shelem (``dealer``). Each hand:
every seat's ``key``, the ``shuffle`` chain over deck52, then the deal of the final deck's
positions by :func:`games.deals.shelem_layout` (twelve a seat; every seat owes its shares of
the others' cards); the auction; the widow (the kitty, four positions) dealt to the bid
winner alone (the others owe their shares); its discard; the tricks. The two-player game
(face-up piles) has no sealed form yet.

Actions beyond the steps: ``{"type": "bid", "amount": 120}``, ``{"type": "pass"}``,
``{"type": "discard", "items": [4 item positions]}`` (what the hakem lays away stays sealed
until the hand's keys are revealed; its points count then) and ``{"type": "play", "item": i,
"card": "AS", "share": "<hex>", "proof": "<hex>"}``. Following suit is checked when the
hand's keys are revealed (:meth:`SealedShelemEngine._breach`); a hand is scored then, and a
hand every seat passed is revealed before the next one is dealt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fairness import V2, FairProtocol

from .base import JSON, Action
from .cards import Phase
from .errors import RulesetError
from .sealed_base import SealedTricks
from .shelem import DISCARD_SIZE, ShelemEngine


class SealedShelemEngine(SealedTricks, ShelemEngine):
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "bid", "pass", "discard", "play")

    @classmethod
    def parse_ruleset(
        cls, raw: Mapping[str, Any] | None, *, protocol: str | FairProtocol = V2
    ) -> dict[str, Any]:
        out = super().parse_ruleset(raw, protocol=protocol)
        if out["players"] != 4:
            raise RulesetError("sealed shelem is for four players (two-player piles lie face up)")
        return out

    _void: bool  #: the hand every seat passed, revealed before the next one is dealt

    def _deal(self) -> None:
        self.plays = []
        self._void = False
        super()._deal()
        self._dealt(self.hands)

    # -- hand ends: keys first -----------------------------------------------------------------
    def _void_hand(self) -> None:
        self._void = True
        self._hand_over()

    def _score_hand(self) -> None:
        self._hand_over()

    def _after_reveal(self) -> None:
        codes = self._hand().codes
        assert codes is not None
        if self._void:
            self._void = False
            ShelemEngine._void_hand(self)
            return
        self.discard = [codes[int(p)] for p in self.discard]
        ShelemEngine._score_hand(self)

    def _take_kitty(self, hakem: int) -> None:
        kitty = [int(p) for p in self.kitty]
        ShelemEngine._take_kitty(self, hakem)
        self._deal_items({hakem: kitty})

    # -- actions ---------------------------------------------------------------------------
    def bot_actions(self, seat: int) -> list[Action]:
        legal = self.legal_actions(seat)
        if self.phase == Phase.BID and not self.owed and len(legal) > 1:
            return [legal[0], legal[-1]]
        return legal[:1] if self.phase == Phase.DISCARD and not self.owed else legal

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "play" and not self.owed:
            self._sealed_play(seat, action)
        else:  # the deal's steps, then shelem's own dispatch (a discard: by items, below)
            super()._apply(seat, action)

    def _apply_discard(self, seat: int, action: Action) -> None:
        self._need_phase(Phase.DISCARD, "discard")
        self._lay_away_items(seat, self._discarded(action, DISCARD_SIZE))

    def _sealed_play(self, seat: int, action: Action) -> None:
        self._need_phase(Phase.PLAY, "card play")
        card = self._card_of(action, "item", "card", "share", "proof")
        self._play_card(seat, action, card)
        if self.trump is None:
            self.trump = card[1]  # the hakem's first card names trump
        self.trick.add(seat, card)
        if len(self.trick) == 4:
            self._finish_trick()

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        held, kitty, discard = self.hands, self.kitty_taken, self.discard
        self.hands, self.kitty_taken, self.discard = [[] for _ in held], [], []
        try:
            out = super()._view(None)
        finally:
            self.hands, self.kitty_taken, self.discard = held, kitty, discard
        unopened = self.outcome is None and self._hand().codes is None
        out["hand_counts"] = [len(h) for h in held]
        out["discard_count"] = len(discard)
        out["kitty_items"] = [int(p) for p in kitty] if unopened else None
        out["discard_items"] = [int(p) for p in discard] if unopened else None
        if seat is not None:
            out["hand"] = sorted(int(p) for p in held[seat]) if unopened else []
        return out


ENGINE = SealedShelemEngine
