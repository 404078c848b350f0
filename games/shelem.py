"""Shelem (شلم) for four players in two teams, or for two players with face-up piles.

Rules: ``docs/spec/rules/shelem.md``; the rules as played here, the action formats
and every choice the spec leaves open are in ``docs/games/shelem.md``.

Chance (fairness-v1.md §5): ``dealer`` = ``uniform(n)`` (n = 4 or 2) when the match starts;
``h{h}/shuffle`` = ``shuffle(deck52)`` when hand h is dealt (h counts every hand dealt,
void hands too). Four players, D = dealer: ``[0,12)``→D+1, ``[12,24)``→D+2,
``[24,36)``→D+3, ``[36,40)`` kitty, ``[40,52)``→D. Two players, O = non-dealer:
``[0,12)`` O hand, ``[12,24)`` D hand, ``[24,28)`` O pile 1, ``[28,32)`` D pile 1,
``[32,36)`` O pile 2, ``[36,40)`` D pile 2, ``[40,44)`` O pile 3, ``[44,48)`` kitty,
``[48,52)`` D pile 3; the top (face-up) card of a pile is the last of its four.

Actions: ``{"type": "bid", "amount": 120}`` (multiple of 5, 100–165, above the high bid),
``{"type": "pass"}``, ``{"type": "discard", "cards": [4 codes]}`` (the hakem, after taking
the kitty), ``{"type": "play", "card": "AS"}`` (a hand card, or in the two-player game a
face-up pile card when the trick asks for a pile card).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any, ClassVar

from fairness import DECK52, deck52

from .base import JSON, Action, only_keys
from .cards import (
    RANKS,
    Phase,
    Tally,
    Trick,
    TrickGame,
    follow_reason,
    is_card,
    playable,
    sort_hand,
)
from .deals import shelem_layout
from .errors import IllegalActionError, MalformedActionError

MIN_BID = 100
MAX_BID = 165
BID_STEP = 5
HAND_POINTS = 165
SHELEM_SCORE = 330
YASA_BELOW = 85
TRICK_POINTS = 5
TRICKS_PER_HAND = 12
DISCARD_SIZE = 4


#: the points a card counts, by rank letter: 5s count 5, 10s and aces 10, every other card 0
_RANK_POINTS = {"5": 5, "T": 10, "A": 10}


def card_points(card: str) -> int:
    return _RANK_POINTS.get(card[0], 0)


def pile_points(cards: Iterable[str]) -> int:
    """The sum of ``card_points`` over ``cards``."""
    get = _RANK_POINTS.get
    return sum([get(c[0], 0) for c in cards])


def hand_score(bid: int, points: int, shelem: bool) -> tuple[int, int, bool]:
    """(hakem side's score, other side's score, yasa) for a hand where the hakem's side
    took ``points`` (kitty included) against ``bid``; ``shelem``: it took all 12 tricks."""
    other = HAND_POINTS - points
    if shelem:
        return SHELEM_SCORE, 0, False
    if points >= bid:
        return points, other, False
    if points < YASA_BELOW:
        return -HAND_POINTS, other, True
    return -bid, other, False


#: the 52 card codes (no jokers)
_DECK = frozenset(DECK52)
_HAND, _PILE = Trick.HAND, Trick.PILE
_PLAY, _BID, _DISCARD = Phase.PLAY, Phase.BID, Phase.DISCARD


def _card_field(action: Mapping[str, Any], key: str = "card") -> str:
    c = action.get(key)
    if type(c) is str and c in _DECK:  # the usual case
        return c
    if not isinstance(c, str):
        raise MalformedActionError(f"{key!r} must be a card code such as 'AS'")
    if not is_card(c) or c in ("JB", "JR"):
        raise MalformedActionError(f"{c!r} is not a card of the 52-card deck")
    return c


class ShelemEngine(TrickGame):
    game: ClassVar[str] = "shelem"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"players": 4, "target": 1200}
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {"target": (5, 100_000)}
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("bid", "pass", "discard", "play")
    RULESET_CHOICES: ClassVar[Mapping[str, tuple[Any, ...]]] = {"players": (4, 2)}
    PARTNERS: ClassVar[bool] = True

    # -- start -----------------------------------------------------------------------------
    def _start_match(self) -> None:
        self.n = self.n_seats
        self.target: int = int(self.ruleset["target"])
        self.scores: list[int] = [0, 0]
        self.history: list[dict[str, JSON]] = []
        self.hand_number = 0
        # the last trick completed, kept into the next hand so the table can show it: the
        # closed Trick, its hand, winner and points (last_trick's JSON is made from them)
        self._closed: tuple[Trick, int, int, int] | None = None
        self.dealer = self.chance.uniform("dealer", self.n)
        self._deal()

    def set_scores(self, scores: Sequence[int]) -> None:
        """Start from a match score of ``scores`` (a test or puzzle position, as
        python-chess's ``Board.set_fen``); not a replayable transcript."""
        if len(scores) != 2 or not all(isinstance(x, int) for x in scores):
            raise ValueError("a shelem score is two integers, one per side")
        self.scores = list(scores)

    def _deal(self) -> None:
        n, d = self.n, self.dealer
        deck = self._shuffled(f"h{self.hand_number}/shuffle", deck52())
        layout = shelem_layout(deck, d, n)
        self.hands: list[list[str]] = layout.hands
        # piles[seat][i]: bottom first, so pile[-1] is its top card (two players)
        self.piles: list[list[list[str]]] = layout.piles
        self.kitty: list[str] = layout.kitty
        # two players: the piles lie face down until the other player has answered the
        # hakem's first lead (the seed, «بازی دو نفره», part ج)
        self.revealed = False
        self.phase = Phase.BID
        self.bids: list[tuple[int, int | None]] = []  # (seat, amount | None for a pass)
        self.passed: set[int] = set()
        self.high_bid: int | None = None
        self.high_bidder: int | None = None
        self.bid_turn = (d + 1) % n
        self.hakem: int | None = None
        self.kitty_taken: list[str] = []
        self.discard: list[str] = []
        self.trump: str | None = None
        self.leader: int | None = None
        self.trick = Trick((d + 1) % n)
        self.tally = Tally(n)

    # -- turn ------------------------------------------------------------------------------
    def _trick_order(self) -> list[int]:
        assert self.leader is not None
        if self.n == 4:
            return [(self.leader + i) % 4 for i in range(4)]
        other = 1 - self.leader
        return [self.leader, other, self.leader, other]

    def _turn(self) -> int | None:
        phase = self.phase
        if phase == _BID:
            return self.bid_turn
        if phase == _DISCARD:
            return self.hakem
        k, leader = len(self.trick.plays), self.leader
        if leader is not None and k < 4:  # _trick_order()[k], without building the list
            return (leader + k) % 4 if self.n == 4 else (leader if k % 2 == 0 else 1 - leader)
        return self._trick_order()[k]

    @property
    def last_trick(self) -> dict[str, JSON] | None:
        """The last trick completed (kept into the next hand so the table can show it), as
        the views' ``last_trick``: ``Trick.to_json`` with its ``points`` (made anew at each
        call, so that reading it changes nothing)."""
        closed = self._closed
        if closed is None:
            return None
        trick, hand, winner, points = closed
        return trick.to_json(hand, winner, sources=self.n == 2, points=points)

    def _pile_step(self) -> bool:
        """True when the card due now comes from a face-up pile (two players, 3rd/4th card)."""
        return self.n == 2 and len(self.trick) >= 2

    def _tops(self, seat: int) -> list[str]:
        return [p[-1] for p in self.piles[seat] if p]

    def _playable(self, seat: int) -> list[str]:
        led = self.trick.led
        if self._pile_step():
            return playable(self._tops(seat), led)
        return playable(self.hands[seat], led)

    def _discard_size(self, seat: int) -> int:
        return DISCARD_SIZE

    def _min_bid(self) -> int:
        return MIN_BID if self.high_bid is None else self.high_bid + BID_STEP

    def _legal(self, seat: int) -> list[Action]:
        if self.phase == Phase.BID:
            out: list[Action] = [
                {"type": "bid", "amount": a} for a in range(self._min_bid(), MAX_BID + 1, BID_STEP)
            ]
            out.append({"type": "pass"})
            return out
        if self.phase == Phase.DISCARD:
            return [
                {"type": "discard", "cards": list(c)}
                for c in combinations(sort_hand(self.hands[seat]), DISCARD_SIZE)
            ]
        return [{"type": "play", "card": c} for c in sort_hand(self._playable(seat))]

    def bot_actions(self, seat: int) -> list[Action]:
        """What a random bot picks from (``simulate_match``): every legal card play, but in
        the auction only the lowest bid or a pass, and as the discard only the 4 cards with
        the most points. With uniformly random bids and discards the hakem almost never makes
        its contract, both totals drift below zero and a match would never reach its target.
        """
        if self.outcome is not None or seat != self.turn or self.phase != Phase.DISCARD:
            legal = self.legal_actions(seat)
            if self.phase == Phase.BID and len(legal) > 1:
                return [legal[0], legal[-1]]
            return legal
        best = sorted(self.hands[seat], key=lambda c: (-card_points(c), RANKS.index(c[0])))
        return [{"type": "discard", "cards": sort_hand(best[:DISCARD_SIZE])}]

    # -- actions ---------------------------------------------------------------------------
    def _apply_bid(self, seat: int, action: Action) -> None:
        self._need_phase(Phase.BID, "bidding")
        amount: int | None
        if action["type"] == "pass":
            only_keys(action)
            amount = None
        else:
            only_keys(action, "amount")
            a = action.get("amount")
            if isinstance(a, bool) or not isinstance(a, int):
                raise MalformedActionError("'amount' must be an integer (100 to 165)")
            if a % BID_STEP:
                raise IllegalActionError(f"a bid must be a multiple of {BID_STEP}, got {a}")
            if not MIN_BID <= a <= MAX_BID:
                raise IllegalActionError(f"a bid must be {MIN_BID} to {MAX_BID}, got {a}")
            if self.high_bid is not None and a <= self.high_bid:
                raise IllegalActionError(
                    f"a bid must be higher than the last bid {self.high_bid}, got {a}"
                )
            amount = a
        # -- valid: mutate
        self.bids.append((seat, amount))
        if amount is None:
            self.passed.add(seat)
        else:
            self.high_bid, self.high_bidder = amount, seat
        if len(self.passed) == self.n:
            self._void_hand()
            return
        if self.high_bidder is not None and len(self.passed) == self.n - 1:
            self._take_kitty(self.high_bidder)
            return
        nxt = (seat + 1) % self.n
        while nxt in self.passed:
            nxt = (nxt + 1) % self.n
        self.bid_turn = nxt

    def _take_kitty(self, hakem: int) -> None:
        self.hakem = hakem
        self.kitty_taken = list(self.kitty)
        self.hands[hakem] = self.hands[hakem] + self.kitty
        self.kitty = []
        self.phase = Phase.DISCARD

    def _apply_discard(self, seat: int, action: Action) -> None:
        self._need_phase(Phase.DISCARD, "discard")
        only_keys(action, "cards")
        cards = action.get("cards")
        if not isinstance(cards, list) or len(cards) != DISCARD_SIZE:
            raise MalformedActionError(f"'cards' must be a list of {DISCARD_SIZE} card codes")
        if all(type(c) is str and c in _DECK for c in cards):  # the usual case
            codes = list(cards)
        else:
            codes = [_card_field({"discarded card": c}, "discarded card") for c in cards]
        if len(set(codes)) != DISCARD_SIZE:
            raise MalformedActionError("'cards' names the same card twice")
        missing = [c for c in codes if c not in self.hands[seat]]
        if missing:
            raise IllegalActionError(f"not in your hand: {', '.join(missing)}")
        self._lay_away(seat, codes)

    def _lay_away(self, seat: int, codes: list[str]) -> None:
        """The hakem's discard (checked) leaves its hand; it leads the first trick."""
        self.hands[seat] = [c for c in self.hands[seat] if c not in codes]
        self.discard = codes
        self.phase = Phase.PLAY
        self.leader = seat
        self.trick = Trick(seat)

    def _apply(self, seat: int, action: Action) -> None:
        t = action["type"]  # (one of ACTION_TYPES)
        if t != "play":
            if t == "discard":
                self._apply_discard(seat, action)
            else:
                self._apply_bid(seat, action)
            return
        # a card play (the usual action: checked here, without a call of its own)
        if self.phase != _PLAY:
            raise self._wrong_phase("card play")
        if len(action) != 2 or "card" not in action:  # (the usual play: type and card)
            only_keys(action, "card")
        card = action.get("card")
        if type(card) is not str or card not in _DECK:
            card = _card_field(action)  # (which says what is wrong)
        trick = self.trick
        plays = trick.plays
        k = len(plays)
        # the trick's led suit is plays[0]'s: a card of the 52-card deck, its suit letter
        if k >= 2 and self.n == 2:  # _pile_step()
            led = plays[0][1][1]
            tops = self._tops(seat)
            if card not in tops:
                where = "in your hand" if card in self.hands[seat] else "not a face-up card"
                raise IllegalActionError(
                    f"{card} is {where}: play one of your face-up pile cards ({', '.join(tops)})"
                )
            if follow_reason(tops, card, led) is not None:
                raise IllegalActionError(
                    f"you have a face-up card of the led suit {led}: play it, not {card}"
                )
            # -- valid: mutate
            for p in self.piles[seat]:
                if p and p[-1] == card:
                    p.pop()  # the card under it is now face up
                    break
            source = _PILE
        else:
            hand = self.hands[seat]
            try:
                i = hand.index(card)
            except ValueError:
                raise IllegalActionError(f"{card} is not in your hand") from None
            # a card of the led suit always follows; another only when the hand holds none
            # of the led suit (follow_reason, which says why, asked only then)
            if k:
                led = plays[0][1][1]
                if card[1] != led and led in [c[1] for c in hand]:
                    reason = follow_reason(hand, card, led)
                    if reason is not None:
                        raise IllegalActionError(reason)
            # -- valid: mutate
            del hand[i]
            source = _HAND
        if self.trump is None:
            self.trump = card[1]  # the hakem's first card names trump
        plays.append((seat, card))  # trick.add(seat, card, source)
        trick.sources.append(source)
        if k == 1 and self.n == 2:
            self.revealed = True  # the other player has answered: the tops turn up
        elif k == 3:
            self._finish_trick()

    def _finish_trick(self) -> None:
        # close_trick(...), with last_trick's JSON made from the closed trick when a view
        # reads it (the trick stays as it is: the next one is a new Trick)
        trick = self.trick
        winner = trick.winner(self.trump)
        tally = self.tally
        tally.take(winner, trick)
        points = TRICK_POINTS + pile_points(trick.cards())
        self._closed = (trick, self.hand_number, winner, points)
        self.trick = Trick(winner, [], [])
        self.leader = winner
        if tally.played == TRICKS_PER_HAND:
            self._score_hand()

    # -- hand ends -------------------------------------------------------------------------
    def _record(self, entry: dict[str, JSON]) -> None:
        base: dict[str, JSON] = {"hand": self.hand_number, "dealer": self.dealer}
        base.update(entry)
        base["bids"] = self._bids_json()
        base["scores"] = list(self.scores)
        self.history.append(base)

    def _void_hand(self) -> None:
        self._record({"void": True})
        self._next_hand()

    def _taken_points(self) -> list[int]:
        """Points per side from the tricks played so far (the kitty not included)."""
        tricks = self.side_tricks()
        cards = self.tally.side_cards(self.side_of, 2)
        return [TRICK_POINTS * tricks[s] + pile_points(cards[s]) for s in (0, 1)]

    def _score_hand(self) -> None:
        assert self.hakem is not None and self.high_bid is not None
        hs = self.side_of(self.hakem)
        taken = self._taken_points()
        points = taken[hs] + TRICK_POINTS + pile_points(self.discard)
        shelem = self.side_tricks()[hs] == TRICKS_PER_HAND
        mine, theirs, yasa = hand_score(self.high_bid, points, shelem)
        delta = [0, 0]
        delta[hs], delta[1 - hs] = mine, theirs
        pts = [0, 0]
        pts[hs], pts[1 - hs] = points, HAND_POINTS - points
        for s in (0, 1):
            self.scores[s] += delta[s]
        self._record(
            {
                "void": False,
                "hakem": self.hakem,
                "bid": self.high_bid,
                "trump": self.trump,
                "discard": sort_hand(self.discard),
                "points": pts,
                "delta": delta,
                "shelem": shelem,
                "yasa": yasa,
                "made": points >= self.high_bid,
            }
        )
        if not self.finish_at_target(
            self.target, {"hands": self.hand_number + 1, "target": self.target}
        ):
            self._next_hand()

    def _next_hand(self) -> None:
        self.dealer = (self.dealer + 1) % self.n
        self.hand_number += 1
        self._deal()

    # -- views -----------------------------------------------------------------------------
    def _bids_json(self) -> list[dict[str, JSON]]:
        return [{"seat": s, "bid": "pass" if a is None else a} for s, a in self.bids]

    def _view(self, seat: int | None) -> dict[str, JSON]:
        is_hakem = seat is not None and seat == self.hakem
        out: dict[str, JSON] = {
            **self._table_view(self.leader, self.last_trick, self.n == 2),
            "players": self.n,
            "target": self.target,
            "dealer": self.dealer,
            "sides": [list(self.seats_of(side)) for side in (0, 1)],
            "hand": sort_hand(self.hands[seat]) if seat is not None else None,
            "hand_counts": [len(h) for h in self.hands],
            "kitty_count": len(self.kitty),
            "kitty": list(self.kitty_taken) if is_hakem else None,
            "discard": sort_hand(self.discard) if is_hakem and self.discard else None,
            "discard_count": len(self.discard),
            "bids": self._bids_json(),
            "auction": {
                "high_bid": self.high_bid,
                "high_bidder": self.high_bidder,
                "passed": sorted(self.passed),
                "min_bid": (
                    self._min_bid() if self.phase == Phase.BID and self.outcome is None else None
                ),
            },
            "hakem": self.hakem,
            "bid": self.high_bid if self.hakem is not None else None,
            "trump": self.trump,
            "tricks_taken": self.side_tricks(),
            "points_taken": self._taken_points(),
            "scores": list(self.scores),
            "history": [dict(h) for h in self.history],
        }
        if self.n == 2:
            # face down until the reveal: sizes only
            out["piles_revealed"] = self.revealed
            out["piles"] = [
                [
                    {"count": len(p), "top": p[-1] if p and self.revealed else None}
                    for p in self.piles[s]
                ]
                for s in range(2)
            ]
        return out

    # the hakem's 4 laid-down cards stay hidden in the public log until the reveal: the
    # ``discard`` of Engine.redact


ENGINE = ShelemEngine
