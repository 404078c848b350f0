"""Four-player Hokm (docs/spec/rules/hokm.md; the rules as played here: docs/games/hokm.md).

Seats 0-3, partners 0 & 2 (side 0) and 1 & 3 (side 1). Chance (fairness-v1.md §5):
``hakem`` — ``shuffle(deck52)`` dealt face up from seat 0, the first ace names the first
hakem (a public draw: :meth:`HokmEngine.redact` leaves it visible); ``h{h}/shuffle`` —
``shuffle(deck52)`` drawn when hand h starts (before the cut), packets 5-4-4 from the hakem.

Phases of a hand: ``cut`` (ruleset ``cut``: the hakem's partner sends
``{"type": "cut", "k": 1..51}``), ``trump`` (every seat holds its first 5 cards; the hakem
sends ``{"type": "trump", "suit": "S"}``, or with ruleset ``nars``
``{"type": "trump", "suit": "S", "nars": true}``), then ``play``
(``{"type": "play", "card": "AS"}``) until a side has 7 tricks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fairness import deck52

from .base import JSON, Action, Chance, Engine, Event, Outcome, only_keys
from .cards import (
    SUITS,
    cut_deck,
    deal_packets,
    first_ace_seat,
    follow_suit_cards,
    is_card,
    is_joker,
    sort_hand,
    suit,
    trick_winner,
)
from .errors import IllegalActionError, MalformedActionError

SEATS = 4
TRICKS_TO_WIN = 7
FIRST_PACKET = 5
MAX_TARGET = 99

CUT = "cut"
TRUMP = "trump"
PLAY = "play"
OVER = "over"


def _plays_json(plays: list[tuple[int, str]]) -> list[dict[str, JSON]]:
    return [{"seat": s, "card": c} for s, c in plays]


class HokmEngine(Engine):
    game: ClassVar[str] = "hokm"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"target": 7, "cut": False, "nars": False}
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {"target": (1, MAX_TARGET)}
    SEATS: ClassVar[int | None] = SEATS
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("cut", "trump", "play")

    def __init__(self, ruleset: Mapping[str, Any], chance: Chance) -> None:
        super().__init__(ruleset, chance)
        self.target: int = self.ruleset["target"]
        self.scores: list[int] = [0, 0]
        self.history: list[dict[str, JSON]] = []
        # The first hakem: a face-up deal from seat 0 until the first ace.
        draw = self.chance.shuffle("hakem", deck52())
        self.hakem: int = first_ace_seat(draw)
        ace_at = next(i for i, c in enumerate(draw) if c[0] == "A")
        self.first_hakem_deal: list[str] = draw[: ace_at + 1]
        self.hand_number: int = -1
        self.phase: str = OVER
        self.deck: list[str] = []
        self.cut_k: int | None = None
        self.hands: list[list[str]] = [[] for _ in range(SEATS)]
        self._rest: list[list[str]] = [[] for _ in range(SEATS)]
        self.trump: str | None = None
        self.nars: bool = False
        self.trick: list[tuple[int, str]] = []
        self.leader: int = self.hakem
        self.tricks_by_seat: list[int] = [0] * SEATS
        self.taken: list[list[str]] = [[] for _ in range(SEATS)]
        self.last_trick: dict[str, JSON] | None = None
        self._start_hand()

    # -- ruleset ---------------------------------------------------------------------------
    def side_of(self, seat: int) -> int:
        return seat % 2

    # -- hands -----------------------------------------------------------------------------
    def _start_hand(self) -> None:
        self.hand_number += 1
        self.deck = self.chance.shuffle(f"h{self.hand_number}/shuffle", deck52())
        self.cut_k = None
        self.hands = [[] for _ in range(SEATS)]
        self._rest = [[] for _ in range(SEATS)]
        self.trump = None
        self.nars = False
        self.trick = []
        self.leader = self.hakem
        self.tricks_by_seat = [0] * SEATS
        self.taken = [[] for _ in range(SEATS)]
        if self.ruleset["cut"]:
            self.phase = CUT
        else:
            self._deal_first()

    def _deal_first(self) -> None:
        full = deal_packets(self.deck, self.hakem)
        self.hands = [h[:FIRST_PACKET] for h in full]
        self._rest = [h[FIRST_PACKET:] for h in full]
        self.phase = TRUMP

    @property
    def cutter(self) -> int:
        return (self.hakem + 2) % SEATS

    @property
    def dealer(self) -> int:
        return (self.hakem - 1) % SEATS

    @property
    def turn(self) -> int | None:
        if self.outcome is not None:
            return None
        if self.phase == CUT:
            return self.cutter
        if self.phase == TRUMP:
            return self.hakem
        return (self.leader + len(self.trick)) % SEATS

    def led_suit(self) -> str | None:
        return suit(self.trick[0][1]) if self.trick else None

    def playable(self, seat: int) -> list[str]:
        """The cards ``seat`` may play now (follow suit), in display order."""
        return sort_hand(follow_suit_cards(self.hands[seat], self.led_suit()))

    def legal_actions(self, seat: int) -> list[Action]:
        if self.outcome is not None or seat != self.turn:
            return []
        if self.phase == CUT:
            return [{"type": "cut", "k": k} for k in range(1, 52)]
        if self.phase == TRUMP:
            out: list[Action] = [{"type": "trump", "suit": s} for s in SUITS]
            if self.ruleset["nars"]:
                out += [{"type": "trump", "suit": s, "nars": True} for s in SUITS]
            return out
        return [{"type": "play", "card": c} for c in self.playable(seat)]

    # -- actions ---------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action["type"]
        if kind == "cut":
            self._apply_cut(action)
        elif kind == "trump":
            self._apply_trump(action)
        else:
            self._apply_play(seat, action)

    def _apply_cut(self, action: Action) -> None:
        only_keys(action, "k")
        k = action.get("k")
        if isinstance(k, bool) or not isinstance(k, int):
            raise MalformedActionError("a cut needs an integer 'k' (1 to 51)")
        if not 1 <= k <= 51:
            raise MalformedActionError(f"a cut 'k' must be 1 to 51, got {k}")
        if self.phase != CUT:
            raise IllegalActionError(
                "no cut now: " + ("this ruleset has no cut" if not self.ruleset["cut"]
                                  else "the deck has already been cut")
            )
        self.cut_k = k
        self.deck = cut_deck(self.deck, k)
        self._deal_first()

    def _apply_trump(self, action: Action) -> None:
        only_keys(action, "suit", "nars")
        s = action.get("suit")
        if not isinstance(s, str) or len(s) != 1 or s not in SUITS:
            raise MalformedActionError(f"'suit' must be one of C, D, H, S, got {s!r}")
        nars = action.get("nars", False)
        if not isinstance(nars, bool):
            raise MalformedActionError("'nars' must be true or false")
        if self.phase == CUT:
            raise IllegalActionError("the hakem's partner must cut the deck first")
        if self.phase != TRUMP:
            raise IllegalActionError(f"trump is already {self.trump} for this hand")
        if nars and not self.ruleset["nars"]:
            raise IllegalActionError("this ruleset does not allow nars")
        self.trump = s
        self.nars = nars
        for seat in range(SEATS):
            self.hands[seat].extend(self._rest[seat])
            self._rest[seat] = []
        self.phase = PLAY
        self.leader = self.hakem

    def _apply_play(self, seat: int, action: Action) -> None:
        only_keys(action, "card")
        card = action.get("card")
        if not isinstance(card, str) or not is_card(card) or is_joker(card):
            raise MalformedActionError(f"'card' must be a card code such as 'AS', got {card!r}")
        if self.phase == CUT:
            raise IllegalActionError("the hakem's partner must cut the deck first")
        if self.phase == TRUMP:
            raise IllegalActionError("the hakem must name trump before the first trick")
        hand = self.hands[seat]
        if card not in hand:
            raise IllegalActionError(f"{card} is not in seat {seat}'s hand")
        led = self.led_suit()
        if led is not None and suit(card) != led and any(suit(c) == led for c in hand):
            raise IllegalActionError(
                f"must follow suit: {led} was led and seat {seat} still holds {led}"
            )
        hand.remove(card)
        self.trick.append((seat, card))
        if len(self.trick) == SEATS:
            self._finish_trick()

    def _finish_trick(self) -> None:
        winner = trick_winner(self.trick, self.trump, reverse=self.nars)
        self.tricks_by_seat[winner] += 1
        self.taken[winner].extend(c for _, c in self.trick)
        self.last_trick = {"hand": self.hand_number, "leader": self.leader,
                           "plays": _plays_json(self.trick), "winner": winner}
        self.trick = []
        self.leader = winner
        tricks = self.side_tricks()
        if max(tricks) >= TRICKS_TO_WIN:
            self._finish_hand(tricks)

    def side_tricks(self) -> list[int]:
        return [self.tricks_by_seat[0] + self.tricks_by_seat[2],
                self.tricks_by_seat[1] + self.tricks_by_seat[3]]

    def _finish_hand(self, tricks: list[int]) -> None:
        winner = 0 if tricks[0] >= TRICKS_TO_WIN else 1
        loser = 1 - winner
        hakem_side = self.side_of(self.hakem)
        kot = tricks[loser] == 0
        points = (3 if loser == hakem_side else 2) if kot else 1
        self.scores[winner] += points
        self.history.append({
            "hand": self.hand_number, "hakem": self.hakem, "trump": self.trump,
            "nars": self.nars, "cut": self.cut_k, "tricks": list(tricks),
            "winner_side": winner, "points": points,
            "kot": kot, "hakem_kot": kot and loser == hakem_side,
            "scores": list(self.scores),
        })
        if winner != hakem_side:
            self.hakem = (self.hakem + 1) % SEATS
        if self.scores[winner] >= self.target:
            self.phase = OVER
            self.outcome = Outcome(
                "finished",
                self.seats_of(winner),
                self.side_scores(),
                {"hands": len(self.history)},
            )
            return
        self._start_hand()

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            # a resigned or abandoned match is over too, whatever phase it stopped in
            "phase": self.phase if self.outcome is None else OVER,
            "hand_number": self.hand_number,
            "hakem": self.hakem,
            "dealer": self.dealer,
            "cutter": self.cutter if self.ruleset["cut"] else None,
            "cut": self.cut_k,
            "trump": self.trump,
            "nars": self.nars,
            "leader": self.leader,
            "trick": _plays_json(self.trick),
            "tricks": self.side_tricks(),
            "tricks_by_seat": list(self.tricks_by_seat),
            "last_trick": self.last_trick,
            "hand_sizes": [len(h) for h in self.hands],
            "scores": list(self.scores),
            "target": self.target,
            "first_hakem_deal": list(self.first_hakem_deal),
            "history": [dict(h) for h in self.history],
        }
        if seat is not None:
            out["hand"] = sort_hand(self.hands[seat])
        return out

    def side_scores(self) -> tuple[int, ...]:
        return (self.scores[0], self.scores[1])

    @classmethod
    def redact(cls, event: Event) -> Event:
        """The ``hakem`` draw is dealt face up for all to see: it stays public."""
        if event.get("type") == "chance" and event.get("label") == "hakem":
            return event
        return super().redact(event)


ENGINE = HokmEngine
