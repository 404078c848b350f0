"""Sealed hokm for 4, 3 or 2 players (fairness-v3 §9a; the rules of :mod:`games.hokm`).

The first hakem is drawn face up from the match key as in seeded hokm (``hakem``); nothing
else is drawn from it: there is no cut (every seat shuffles the deck itself). Each hand:
every seat's ``key``, then the ``shuffle`` chain, then the deal of the final deck by
:func:`games.deals.hokm_deal` over its positions: the first five of each seat (shares owed),
the hakem's ``trump``, then the rest of each hand (shares owed; two players: each draw's top
card is dealt to the drawer, and the next one too when the drawer throws the first away).

Actions beyond the steps: ``{"type": "trump", "suit": "S"}`` (``"nars": true`` with ruleset
``nars``); ``{"type": "play", "item": i, "card": "QH", "share": "<hex>", "proof": "<hex>"}``
(the card's opening: the player's own share of item ``i`` and its proof); two players
``{"type": "draw", "keep": true|false}`` and ``{"type": "discard", "items": [i, …]}``.
``legal_actions`` lists plays as ``{"type": "play", "item": i}`` for every unopened item the
seat holds: the server cannot know which follow suit; the seat's client adds the card and
its opening. Following suit is checked when the hand's keys are revealed
(:meth:`SealedHokmEngine._breach`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import JSON, Action, Chance, MatchContext
from .cards import Phase
from .errors import IllegalActionError, MalformedActionError
from .hokm import HokmEngine
from .sealed_base import SealedTricks


class SealedHokmEngine(SealedTricks, HokmEngine):
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"players": 4, "target": 7, "nars": False}
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("sealed", "trump", "draw", "discard", "play")

    def __init__(
        self, ruleset: Mapping[str, Any], chance: Chance, ctx: MatchContext | None = None
    ) -> None:
        super().__init__({**ruleset, "cut": False}, chance, ctx)

    # -- hands -----------------------------------------------------------------------------
    def _start_hand(self) -> None:
        self.plays = []
        self._scored: tuple[list[int], int | None] | None = None
        super()._start_hand()  # no cut: the first five of each seat are dealt at once
        self._dealt(self.hands)

    def _apply_trump(self, action: Action) -> None:
        rest = [[int(p) for p in r] for r in self.rest]
        super()._apply_trump(action)
        if any(rest):
            self._deal_items(dict(enumerate(rest)))
        if self.phase == Phase.DRAW:
            self._deal_items({self._draw_seat(): [int(self.stock[0])]})

    def _apply_draw(self, seat: int, action: Action) -> None:
        super()._apply_draw(seat, action)
        if not action["keep"]:  # the second card, taken: it is dealt to the drawer
            self._deal_items({seat: [int(self.hands[seat][-1])]})
        if self.stock:
            self._deal_items({self._draw_seat(): [int(self.stock[0])]})

    def _apply_discard(self, seat: int, action: Action) -> None:
        items = self._discarded(action, None)
        self._need_phase(Phase.DISCARD, "discard")
        size = self._discard_size(seat)
        if len(items) != size:
            raise IllegalActionError(f"lay away exactly {size} items, got {len(items)}")
        self._lay_away_items(seat, items)

    def _apply_play(self, seat: int, action: Action) -> None:
        card = self._card_of(action, "item", "card", "share", "proof")
        if card not in self._hand().items:
            raise MalformedActionError(f"{card} is not in this deck")
        self._need_phase(Phase.PLAY, "card play")
        self._play_card(seat, action, card)
        self.trick.add(seat, card)
        if len(self.trick) == self.n:
            self._finish_trick()

    def _finish_hand(self, tricks: list[int], winner: int | None) -> None:
        """The hand's tricks are decided: the keys are revealed before it is scored."""
        self._scored = (list(tricks), winner)
        self.phase = Phase.PLAY
        self._hand_over()

    def _after_reveal(self) -> None:
        assert self._scored is not None
        tricks, winner = self._scored
        self._scored = None
        HokmEngine._finish_hand(self, tricks, winner)

    # -- legal actions and views -------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out = super()._view(seat)
        out["cutter"] = None
        if seat is not None and self.n == 2:
            # the drawer sees the top card (``turn`` is None once the match is over)
            if seat == self.turn and self.phase == Phase.DRAW and not self.owed:
                out["drawn"] = int(self.stock[0])
            out["discard"] = sorted(int(p) for p in self.thrown[seat])
        return out


ENGINE = SealedHokmEngine
