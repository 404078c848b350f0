"""Hokm for 4 (partners), 3 or 2 players (docs/spec/rules/hokm.md; as played here: docs/games/hokm.md).

Four players: seats 0-3, partners 0 & 2 (side 0) and 1 & 3 (side 1). Three or two
players: everyone plays for himself (each seat is its own side). Chance
(fairness-v1.md §5): ``hakem`` — ``shuffle(deck)`` dealt face up one card at a time from
seat 0, the first ace names the first hakem (public: :meth:`HokmEngine.redact`);
``h{h}/shuffle`` — ``shuffle(deck)`` drawn when hand h starts (before the cut). The deck
is deck52, without 2C for three players (``games.deals.hokm_deck``).

Phases of a hand (``games.cards``): ``cut`` (ruleset ``cut``, default on: in qahwa-fair/1 the
cutter sends ``{"type": "cut", "k": 1..len-1}`` or taps the deck to accept it uncut,
``{"type": "tap"}``; in qahwa-fair/2 the cut is drawn (fairness-v2.md §5): the cutter sends
``{"type": "cut"}`` and ``u = uniform(len(deck) - 1)`` at ``h{h}/cut`` gives ``k = 1 + u``),
``trump`` (every seat holds its first 5 cards; the hakem sends
``{"type": "trump", "suit": "S"}``, with ruleset ``nars`` also ``"nars": true``); two
players only: ``draw`` (``{"type": "draw", "keep": true|false}``: keep the top card of the
stock and throw the next away, or throw it away and keep the next) and ``discard``
(``{"type": "discard", "cards": [...]}``: down to 13 cards); then ``play``
(``{"type": "play", "card": "AS"}``) until a side has 7 tricks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any, ClassVar

from fairness import DECK52, V1, V2, V3

from .base import JSON, Action, Event, only_keys
from .cards import (
    SUITS,
    Phase,
    Tally,
    Trick,
    TrickGame,
    close_trick,
    follow_reason,
    is_card,
    is_joker,
    playable,
    sort_hand,
)
from .deals import cut_deck, first_ace_index, hokm_deal, hokm_deck
from .errors import IllegalActionError, MalformedActionError

TRICKS_TO_WIN = 7
MAX_TARGET = 99
#: cards each seat holds for the tricks
HAND_SIZE = {4: 13, 3: 17, 2: 13}


class HokmEngine(TrickGame):
    game: ClassVar[str] = "hokm"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "players": 4,
        "target": 7,
        "cut": True,
        "nars": False,
    }
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {"target": (1, MAX_TARGET)}
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("cut", "tap", "trump", "draw", "discard", "play")
    RULESET_CHOICES: ClassVar[Mapping[str, tuple[Any, ...]]] = {"players": (2, 3, 4)}
    PARTNERS: ClassVar[bool] = True
    DECK: ClassVar[frozenset[str]] = frozenset(DECK52)

    def _start_match(self) -> None:
        self.n = self.n_seats
        self.target: int = self.ruleset["target"]
        self.scores: list[int] = [0] * self.n_sides
        self.history: list[dict[str, JSON]] = []
        # The first hakem: a face-up deal from seat 0 until the first ace.
        draw = self.chance.shuffle("hakem", hokm_deck(self.n))
        ace_at = first_ace_index(draw)
        self.hakem: int = ace_at % self.n
        self.first_hakem_deal: list[str] = draw[: ace_at + 1]
        self.hand_number: int = -1
        self.last_trick: dict[str, JSON] | None = None
        self._start_hand()

    # -- hands -----------------------------------------------------------------------------
    def _start_hand(self) -> None:
        self.hand_number += 1
        self.deck: list[str] = self._shuffled(f"h{self.hand_number}/shuffle", hokm_deck(self.n))
        self.cut_k: int | None = None
        self.tapped = False
        self.hands: list[list[str]] = [[] for _ in range(self.n)]
        self.rest: list[list[str]] = [[] for _ in range(self.n)]
        self.stock: list[str] = []
        self.thrown: list[list[str]] = [[] for _ in range(self.n)]
        self.trump: str | None = None
        self.nars = False
        self.trick = Trick(self.hakem)
        self.tally = Tally(self.n)
        if self.ruleset["cut"]:
            self.phase = Phase.CUT
        else:
            self._deal_first()

    def _place(
        self,
        hands: list[list[str]],
        *,
        trump: str,
        hakem: int = 0,
        leader: int | None = None,
        nars: bool = False,
        tricks_by_seat: Sequence[int] | None = None,
        scores: Sequence[int] | None = None,
    ) -> None:
        """:meth:`position` in hokm: ``trump`` named by ``hakem``, ``leader`` (the hakem by
        default) to lead."""
        n = self.n
        if trump not in SUITS or not 0 <= hakem < n:
            raise ValueError("bad trump or hakem")
        if (tricks_by_seat is not None and len(tricks_by_seat) != n) or (
            scores is not None and len(scores) != self.n_sides
        ):
            raise ValueError("tricks_by_seat needs one entry per seat, scores one per side")
        self.hakem = hakem
        self.hands = hands
        self.rest = [[] for _ in range(n)]
        self.stock = []
        self.trump, self.nars, self.phase = trump, nars, Phase.PLAY
        self.trick = Trick(hakem if leader is None else leader)
        self.tally = Tally(n)
        self.tally.tricks = list(tricks_by_seat or [0] * n)
        if scores is not None:
            self.scores = list(scores)

    def _deal_first(self) -> None:
        deal = hokm_deal(self.deck, self.hakem, self.n)
        self.hands = deal.first
        self.rest = deal.rest
        self.stock = deal.stock
        self.phase = Phase.TRUMP

    @property
    def cutter(self) -> int:
        """The seat before the dealer: the hakem's partner with four players."""
        return (self.hakem - 2) % self.n

    @property
    def dealer(self) -> int:
        return (self.hakem - 1) % self.n

    @property
    def other(self) -> int:
        """Two players: the seat that is not the hakem."""
        return (self.hakem + 1) % self.n

    def _draw_seat(self) -> int:
        done = (len(self.deck) - 2 * 5 - len(self.stock)) // 2
        return self.hakem if done % 2 == 0 else self.other

    def _discard_seat(self) -> int:
        return self.hakem if len(self.hands[self.hakem]) > HAND_SIZE[2] else self.other

    def _discard_size(self, seat: int) -> int:
        return len(self.hands[seat]) - HAND_SIZE[self.n]

    def _turn(self) -> int | None:
        if self.phase == Phase.CUT:
            return self.cutter
        if self.phase == Phase.TRUMP:
            return self.hakem
        if self.phase == Phase.DRAW:
            return self._draw_seat()
        if self.phase == Phase.DISCARD:
            return self._discard_seat()
        return (self.trick.leader + len(self.trick)) % self.n

    def playable(self, seat: int) -> list[str]:
        """The cards ``seat`` may play now (follow suit), in display order."""
        return sort_hand(playable(self.hands[seat], self.trick.led))

    def _legal(self, seat: int) -> list[Action]:
        if self.phase == Phase.CUT:
            return CUTS[self.proto.name].legal(self)
        if self.phase == Phase.TRUMP:
            out: list[Action] = [{"type": "trump", "suit": s} for s in SUITS]
            if self.ruleset["nars"]:
                out += [{"type": "trump", "suit": s, "nars": True} for s in SUITS]
            return out
        if self.phase == Phase.DRAW:
            return [{"type": "draw", "keep": True}, {"type": "draw", "keep": False}]
        if self.phase == Phase.DISCARD:
            return [
                {"type": "discard", "cards": list(c)}
                for c in combinations(sort_hand(self.hands[seat]), self._discard_size(seat))
            ]
        return [{"type": "play", "card": c} for c in self.playable(seat)]

    def bot_actions(self, seat: int) -> list[Action]:
        """Every legal action, except that a bot taps the deck rather than cutting it."""
        legal = self.legal_actions(seat)
        if self.phase == Phase.CUT and legal:
            return CUTS[self.proto.name].bot(legal)
        return legal

    # -- actions ---------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action["type"]
        if kind in ("cut", "tap"):
            CUTS[self.proto.name].apply(self, action)
        elif kind == "trump":
            self._apply_trump(action)
        elif kind == "draw":
            self._apply_draw(seat, action)
        elif kind == "discard":
            self._apply_discard(seat, action)
        else:
            self._apply_play(seat, action)

    def _need_cut(self, what: str) -> None:
        """That the deck waits for the cut (IllegalActionError naming ``what`` if not)."""
        if self.phase != Phase.CUT:
            if not self.ruleset["cut"]:
                raise IllegalActionError("no cut now: this ruleset has no cut")
            raise self._wrong_phase(what)

    def _apply_trump(self, action: Action) -> None:
        only_keys(action, "suit", "nars")
        s = action.get("suit")
        if not isinstance(s, str) or len(s) != 1 or s not in SUITS:
            raise MalformedActionError(f"'suit' must be one of C, D, H, S, got {s!r}")
        nars = action.get("nars", False)
        if not isinstance(nars, bool):
            raise MalformedActionError("'nars' must be true or false")
        if self.phase != Phase.TRUMP:
            if self.trump is not None:
                raise IllegalActionError(f"trump is already {self.trump} for this hand")
            raise self._wrong_phase("trump call")
        if nars and not self.ruleset["nars"]:
            raise IllegalActionError("this ruleset does not allow nars")
        self.trump = s
        self.nars = nars
        for seat in range(self.n):
            self.hands[seat].extend(self.rest[seat])
            self.rest[seat] = []
        self.phase = Phase.DRAW if self.n == 2 else Phase.PLAY

    def _apply_draw(self, seat: int, action: Action) -> None:
        only_keys(action, "keep")
        keep = action.get("keep")
        if not isinstance(keep, bool):
            raise MalformedActionError("a draw needs 'keep': true or false")
        self._need_phase(Phase.DRAW, "draw")
        first, second = self.stock[0], self.stock[1]
        taken, thrown = (first, second) if keep else (second, first)
        del self.stock[:2]
        self.hands[seat].append(taken)
        self.thrown[seat].append(thrown)
        if not self.stock:
            self.phase = Phase.DISCARD

    def _apply_discard(self, seat: int, action: Action) -> None:
        only_keys(action, "cards")
        cards = action.get("cards")
        if not isinstance(cards, list) or not all(
            isinstance(c, str) and is_card(c) and not is_joker(c) for c in cards
        ):
            raise MalformedActionError("'cards' must be a list of card codes")
        if len(set(cards)) != len(cards):
            raise MalformedActionError("'cards' names the same card twice")
        self._need_phase(Phase.DISCARD, "discard")
        size = self._discard_size(seat)
        if len(cards) != size:
            raise IllegalActionError(f"lay away exactly {size} cards, got {len(cards)}")
        missing = [c for c in cards if c not in self.hands[seat]]
        if missing:
            raise IllegalActionError(f"not in your hand: {', '.join(missing)}")
        self._lay_away(seat, cards)

    def _lay_away(self, seat: int, codes: list[str]) -> None:
        """``codes`` (checked: the seat's, as many as it must lay away) leave the seat's hand;
        the tricks start once both seats have laid away."""
        self.hands[seat] = [c for c in self.hands[seat] if c not in codes]
        self.thrown[seat].extend(codes)
        if all(len(h) == HAND_SIZE[2] for h in self.hands):
            self.phase = Phase.PLAY
            self.trick = Trick(self.hakem)

    def _apply_play(self, seat: int, action: Action) -> None:
        card = self._card_of(action, "card")
        self._need_phase(Phase.PLAY, "card play")
        hand = self.hands[seat]
        if card not in hand:
            raise IllegalActionError(f"{card} is not in seat {seat}'s hand")
        reason = follow_reason(hand, card, self.trick.led)
        if reason is not None:
            raise IllegalActionError(reason)
        hand.remove(card)
        self.trick.add(seat, card)
        if len(self.trick) == self.n:
            self._finish_trick()

    def _finish_trick(self) -> None:
        assert self.trump is not None
        winner, self.last_trick = close_trick(
            self.trick, self.tally, self.hand_number, self.trump, reverse=self.nars
        )
        self.trick = Trick(winner)
        tricks = self.side_tricks()
        if max(tricks) >= TRICKS_TO_WIN:
            self._finish_hand(tricks, tricks.index(max(tricks)))
        elif not self.hands[winner]:
            self._finish_hand(tricks, None)  # three players, 6-6-5: nobody reached 7

    def _finish_hand(self, tricks: list[int], winner: int | None) -> None:
        hakem_side = self.side_of(self.hakem)
        kot = winner is not None and all(t == 0 for i, t in enumerate(tricks) if i != winner)
        hakem_kot = kot and winner != hakem_side
        points = 0 if winner is None else (3 if hakem_kot else 2) if kot else 1
        if winner is not None:
            self.scores[winner] += points
        self.history.append(
            {
                "hand": self.hand_number,
                "hakem": self.hakem,
                "trump": self.trump,
                "nars": self.nars,
                "cut": self.cut_k,
                "tap": self.tapped,
                "tricks": list(tricks),
                "winner_side": winner,
                "points": points,
                "kot": kot,
                "hakem_kot": hakem_kot,
                "scores": list(self.scores),
            }
        )
        if winner != hakem_side:
            self.hakem = (self.hakem + 1) % self.n
        if not self.finish_at_target(self.target, {"hands": len(self.history)}):
            self._start_hand()

    # -- views -----------------------------------------------------------------------------
    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            **self._table_view(self.trick.leader, self.last_trick),
            "players": self.n,
            "hakem": self.hakem,
            "dealer": self.dealer,
            "cutter": self.cutter if self.ruleset["cut"] else None,
            "cut": self.cut_k,
            "tapped": self.tapped,
            "trump": self.trump,
            "nars": self.nars,
            "tricks": self.side_tricks(),
            "tricks_by_seat": list(self.tally.tricks),
            "hand_sizes": [len(h) for h in self.hands],
            "scores": list(self.scores),
            "target": self.target,
            "first_hakem_deal": list(self.first_hakem_deal),
            "history": [dict(h) for h in self.history],
        }
        if self.n == 2:
            out["stock_count"] = len(self.stock)
            out["discard_counts"] = [len(t) for t in self.thrown]
        if seat is not None:
            out["hand"] = sort_hand(self.hands[seat])
            if self.n == 2:
                if self.phase == Phase.DRAW and self.outcome is None and seat == self.turn:
                    out["drawn"] = self.stock[0]
                out["discard"] = sort_hand(self.thrown[seat])
        return out

    @classmethod
    def redact(cls, event: Event) -> Event:
        """The ``hakem`` draw is dealt face up: it stays public (a two-player discard shows
        only how many cards were laid away, as Engine.redact has it)."""
        if event.get("type") == "chance" and event.get("label") == "hakem":
            return event
        return super().redact(event)


class DrawnCut:
    """How the deck is cut from qahwa-fair/2 on (§5): the cutter only asks; k is drawn."""

    def legal(self, engine: HokmEngine) -> list[Action]:
        return [{"type": "cut"}]

    def bot(self, legal: list[Action]) -> list[Action]:
        return legal

    def apply(self, engine: HokmEngine, action: Action) -> None:
        if action["type"] == "tap":
            raise IllegalActionError(
                'no tap in qahwa-fair/2: the cut is drawn; send {"type": "cut"}'
            )
        if "k" in action:
            raise MalformedActionError(
                'in qahwa-fair/2 the cut is drawn: send {"type": "cut"} without \'k\''
            )
        only_keys(action)
        engine._need_cut("cut")
        u = engine.chance.uniform(f"h{engine.hand_number}/cut", len(engine.deck) - 1)
        engine.cut_k = 1 + u
        engine.deck = cut_deck(engine.deck, engine.cut_k)
        engine._deal_first()


class ChosenCut(DrawnCut):
    """qahwa-fair/1's cut: the cutter taps, or cuts at a k of its choosing (a bot taps)."""

    def legal(self, engine: HokmEngine) -> list[Action]:
        return [{"type": "tap"}] + [{"type": "cut", "k": k} for k in range(1, len(engine.deck))]

    def bot(self, legal: list[Action]) -> list[Action]:
        return [{"type": "tap"}]

    def apply(self, engine: HokmEngine, action: Action) -> None:
        k: int | None = None
        if action["type"] == "cut":
            only_keys(action, "k")
            top = len(engine.deck) - 1
            raw = action.get("k")
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise MalformedActionError(f"a cut needs an integer 'k' (1 to {top})")
            if not 1 <= raw <= top:
                raise MalformedActionError(f"a cut 'k' must be 1 to {top}, got {raw}")
            k = raw
        else:
            only_keys(action)
        engine._need_cut("cut or tap")
        if k is None:
            engine.tapped = True
        else:
            engine.cut_k = k
            engine.deck = cut_deck(engine.deck, k)
        engine._deal_first()


#: the cut of each protocol's hokm (a sealed deal has none: every seat shuffles)
CUTS: dict[str, DrawnCut] = {V1.name: ChosenCut(), V2.name: DrawnCut(), V3.name: DrawnCut()}

ENGINE = HokmEngine
