"""Qahve, the coffee-house joker game (docs/spec/rules/qahve.md; as played here: docs/games/qahve.md).

Seats 0-3, partners 0 & 2 (side 0) and 1 & 3 (side 1). Deck ``deck_qahve`` (no 2D, no 2H,
plus jokers ``JB`` and ``JR``); spades are always trump. Chance (fairness-v1.md §5):
``dealer`` — ``uniform(4)``, the first dealer; ``h{h}/shuffle`` — ``shuffle(deck_qahve)``,
drawn when hand h starts, packets 5-4-4 from dealer+1.

A hand: bidding from dealer+1, each seat once ``{"type": "bid", "tricks": n}``
(``min_bid`` … 13), then 13 tricks of ``{"type": "play", "card": "JR"}`` led first by
dealer+1. Joker rules: a joker may be played at any time; ``JR`` only once ``JB`` has been
played (earlier in the hand or earlier in the same trick); a seat still holding ``JB`` when
it plays to trick 10 must play it there; a led joker leads no suit; jokers are of no suit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fairness import deck_qahve

from .base import JSON, Action, only_keys
from .cards import (
    Phase,
    Tally,
    Trick,
    TrickGame,
    close_trick,
    follow_reason,
    is_card,
    sort_hand,
)
from .deals import qahve_deal
from .errors import IllegalActionError, MalformedActionError

SEATS = 4
TRICKS = 13
TRUMP = "S"
JB = "JB"
JR = "JR"
JOKER_ORDER = (JB, JR)
#: Trick index (0-based) by which JB must have been played: "trick 10".
JB_DEADLINE = 9
MAX_TARGET = 100_000
#: The highest ``min_bid``: 2 × 6 = 12 ≤ 13 tricks, so a side can still make its contract.
MAX_MIN_BID = TRICKS // 2


def hand_points(contract: int, tricks: int) -> int:
    """A side's points for a hand: made → 10 × contract + overtricks; failed → −10 × contract."""
    if tricks >= contract:
        return 10 * contract + (tricks - contract)
    return -10 * contract


class QahveEngine(TrickGame):
    game: ClassVar[str] = "qahve"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"target": 501, "min_bid": 2}
    # two bids of 7 or more make a contract above 13 tricks: no side could ever make
    # its contract, every hand would score negative for both and the match never end
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {
        "target": (1, MAX_TARGET),
        "min_bid": (1, MAX_MIN_BID),
    }
    SEATS: ClassVar[int | None] = SEATS
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("bid", "play")
    PARTNERS: ClassVar[bool] = True
    DECK: ClassVar[frozenset[str]] = frozenset(deck_qahve())
    bids: list[int | None]  #: each seat's bid this hand (None: not yet)

    def _start_match(self) -> None:
        self.target: int = self.ruleset["target"]
        self.min_bid: int = self.ruleset["min_bid"]
        self.scores: list[int] = [0, 0]
        self.history: list[dict[str, JSON]] = []
        self.dealer: int = self.chance.uniform("dealer", SEATS)
        self.hand_number: int = -1
        self.last_trick: dict[str, JSON] | None = None
        self._start_hand()

    def _place(
        self,
        hands: list[list[str]],
        *,
        bids: Sequence[int] = (2, 2, 2, 2),
        leader: int = 0,
        jb_played: bool = False,
        tricks_by_seat: Sequence[int] = (0, 0, 0, 0),
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
    ) -> None:
        """:meth:`position` in qahve: after ``bids``, ``leader`` to lead."""
        if len(bids) != SEATS or len(tricks_by_seat) != SEATS or not 0 <= leader < SEATS:
            raise ValueError("bids and tricks_by_seat need one entry per seat")
        self.hands = hands
        self.bids = list(bids)
        self.phase = Phase.PLAY
        self.trick = Trick(leader)
        self.tally = Tally(SEATS)
        self.tally.tricks = list(tricks_by_seat)
        self.jb_played = jb_played
        if dealer is not None:
            self.dealer = dealer
        if scores is not None:
            self.scores = list(scores)

    # -- hands -----------------------------------------------------------------------------
    @property
    def first_seat(self) -> int:
        """dealer+1: first to receive cards, first to bid, first to lead."""
        return (self.dealer + 1) % SEATS

    def _start_hand(self) -> None:
        self.hand_number += 1
        deck = self._shuffled(f"h{self.hand_number}/shuffle", deck_qahve())
        self.hands = qahve_deal(deck, self.dealer)
        self.bids = [None] * SEATS
        self.trick = Trick(self.first_seat)
        self.tally = Tally(SEATS)
        self.jb_played = False
        self.phase = Phase.BID

    def _turn(self) -> int | None:
        if self.phase == Phase.BID:
            done = sum(b is not None for b in self.bids)
            return (self.first_seat + done) % SEATS
        return (self.trick.leader + len(self.trick)) % SEATS

    @property
    def tricks_done(self) -> int:
        return self.tally.played

    def contracts(self) -> list[int] | None:
        """Each side's contract (the sum of its two bids) once bidding is over."""
        if any(b is None for b in self.bids):
            return None
        bids = [b or 0 for b in self.bids]
        return [bids[0] + bids[2], bids[1] + bids[3]]

    def playable(self, seat: int) -> list[str]:
        """The cards ``seat`` may play now under follow suit and the joker rules."""
        return sort_hand(c for c in self.hands[seat] if self.why_not(seat, c) is None)

    def why_not(self, seat: int, card: str) -> str | None:
        """Why ``seat`` may not play ``card`` now (None: it may)."""
        hand = self.hands[seat]
        if card not in hand:
            return f"{card} is not in seat {seat}'s hand"
        if JB in hand and self.tricks_done == JB_DEADLINE and card != JB:
            return "JB must be played by trick 10: this is trick 10 and seat still holds JB"
        if card == JR and not self.jb_played:
            return "JR may not be played until JB has been played"
        return follow_reason(hand, card, self.trick.led)

    def _legal(self, seat: int) -> list[Action]:
        if self.phase == Phase.BID:
            return [{"type": "bid", "tricks": n} for n in range(self.min_bid, TRICKS + 1)]
        return [{"type": "play", "card": c} for c in self.playable(seat)]

    def bot_actions(self, seat: int) -> list[Action]:
        """The legal actions a random bot picks from (``simulate_match``): every legal play,
        but only the two lowest bids, and of those only bids of at most 3 tricks when there
        is one (bids drawn from all of min_bid … 13 add up to contracts no side can make;
        with min_bid 3, bids of 3 and 4 make contracts of 6 to 8 that random play fails as
        often as it makes, and such a match can wander below zero for thousands of hands:
        contracts of 6 each leave one side at least 7 of the 13 tricks, so it makes its
        contract)."""
        legal = self.legal_actions(seat)
        if self.phase == Phase.BID:
            return [a for a in legal[:2] if a.get("tricks", 0) <= 3] or legal[:1]
        return legal

    # -- actions ---------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "bid":
            self._apply_bid(seat, action)
        else:
            self._apply_play(seat, action)

    def _apply_bid(self, seat: int, action: Action) -> None:
        only_keys(action, "tricks")
        n = action.get("tricks")
        if isinstance(n, bool) or not isinstance(n, int):
            raise MalformedActionError("a bid needs an integer 'tricks'")
        if self.phase != Phase.BID:
            raise IllegalActionError("bidding is over for this hand")
        if not self.min_bid <= n <= TRICKS:
            raise IllegalActionError(f"a bid must be {self.min_bid} to {TRICKS} tricks, got {n}")
        self.bids[seat] = n
        if all(b is not None for b in self.bids):
            self.phase = Phase.PLAY
            self.trick = Trick(self.first_seat)

    def _apply_play(self, seat: int, action: Action) -> None:
        card = self._card(action, "card")
        reason = self.why_not(seat, card)
        if reason is not None:
            raise IllegalActionError(reason)
        self.hands[seat].remove(card)
        self._add_to_trick(seat, card)

    def _card(self, action: Action, *keys: str) -> str:
        """The card a play names, checked, and that the tricks are on (``keys``: the play's)."""
        only_keys(action, *keys)
        card = action.get("card")
        if not isinstance(card, str) or not is_card(card) or card in ("2D", "2H"):
            raise MalformedActionError(
                f"'card' must be a card code of the qahve deck such as 'AS' or 'JB', got {card!r}"
            )
        if self.phase == Phase.BID:
            raise IllegalActionError("every seat must bid before the first trick")
        return card

    def _add_to_trick(self, seat: int, card: str) -> None:
        self.trick.add(seat, card)
        if card == JB:
            self.jb_played = True
        if len(self.trick) == SEATS:
            self._finish_trick()

    def _finish_trick(self) -> None:
        winner, self.last_trick = close_trick(
            self.trick, self.tally, self.hand_number, TRUMP, joker_order=JOKER_ORDER
        )
        self.trick = Trick(winner)
        if self.tally.played == TRICKS:
            self._finish_hand()

    def _finish_hand(self) -> None:
        contracts = self.contracts()
        assert contracts is not None
        tricks = self.side_tricks()
        points = [hand_points(contracts[i], tricks[i]) for i in range(2)]
        for i in range(2):
            self.scores[i] += points[i]
        dealer = self.dealer
        d_side = self.side_of(dealer)
        if self.scores[d_side] > self.scores[1 - d_side]:
            self.dealer = (dealer + 1) % SEATS
        self.history.append(
            {
                "hand": self.hand_number,
                "dealer": dealer,
                "bids": list(self.bids),
                "contracts": contracts,
                "tricks": tricks,
                "points": points,
                "scores": list(self.scores),
                "next_dealer": self.dealer,
            }
        )
        if not self.finish_at_target(self.target, {"hands": len(self.history)}):
            self._start_hand()

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            **self._table_view(self.trick.leader, self.last_trick),
            "dealer": self.dealer,
            "trump": TRUMP,
            "bids": list(self.bids),
            "contracts": self.contracts(),
            "trick_number": self.tricks_done,
            "tricks": self.side_tricks(),
            "tricks_by_seat": list(self.tally.tricks),
            "jb_played": self.jb_played,
            "hand_sizes": [len(h) for h in self.hands],
            "scores": list(self.scores),
            "target": self.target,
            "min_bid": self.min_bid,
            "history": [dict(h) for h in self.history],
        }
        if seat is not None:
            out["hand"] = sort_hand(self.hands[seat])
        return out


ENGINE = QahveEngine
