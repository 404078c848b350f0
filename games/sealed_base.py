"""The sealed deal (qahwa-fair/3, docs/spec/fairness-v3.md §9a) as a state machine every
sealed engine (``games/sealed_<game>.py``) shares.

A sealed engine is a game engine whose cards or tiles are not shuffled from the match key:
each hand, every seat posts a key, shuffles the masked deck with a proof, posts decryption
shares for the items dealt to the others, opens an item when it plays it and reveals its
key when the hand is over. Each of these is a seat action ``{"type": "sealed", "step": …}``
in the match's events; :class:`SealedGame` keeps the queue of the steps owed (the seat that
owes the first one is the seat to act), checks every proof through
:mod:`games.sealed_backend` before it changes anything, and at the hand's end opens the
whole deck with the revealed keys and checks the rules over hidden hands
(:meth:`SealedGame._breach`): a breach ends the match ``{"type": "end", "reason": "rule",
"seat": s}``.

The game's subclass calls :meth:`SealedGame._begin_hand` with the hand's items,
:meth:`SealedGame._deal_items` whenever items are dealt face down (positions of the final deck),
:meth:`SealedGame._play_item` when an item is played (its opening checked, then committed), and
:meth:`SealedGame._hand_over` when the hand's play is over; it implements ``_breach`` and
``_after_reveal`` (score the hand, start the next one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any, ClassVar

from fairness import V2, V3, FairProtocol

from .base import (
    JSON,
    Action,
    Engine,
    Event,
    MatchContext,
    Shared,
    check_protocol,
    only_keys,
)
from .cards import Phase, Trick, follow_reason
from .errors import IllegalActionError, MalformedActionError, RulesetError
from .sealed_hand import Deal, Owed, parse_item
from .sealed_limits import sealed_limits

#: the end reason of a breach of a rule over hidden hands found at the hand's end
RULE_END = "rule"


class SealedGame(Engine):
    """The deal state machine of a sealed engine (mixed in before the game's engine)."""

    #: the ruleset rule that selects a sealed engine (fairness-v3 §9a)
    RULESET_V2_EXTRA: ClassVar[Mapping[str, Any]] = {"deal": "sealed"}
    #: a sealed match is qahwa-fair/3 (its records and K qahwa-fair/2's: ``V3.records``)
    PROTOCOL: ClassVar[FairProtocol] = V3
    #: the game's hands: while sealed, item positions (``str(i)``) rather than codes
    hands: list[list[str]]

    @classmethod
    def parse_ruleset(
        cls, raw: Mapping[str, Any] | None, *, protocol: str | FairProtocol = V2
    ) -> dict[str, Any]:
        if not check_protocol(protocol).signed:
            raise RulesetError("a sealed deal is qahwa-fair/3: it has no qahwa-fair/1 form")
        out = super().parse_ruleset(raw, protocol=protocol)
        if out.get("deal") != "sealed":
            raise RulesetError(f"a sealed engine needs 'deal': 'sealed', got {out.get('deal')!r}")
        return out

    def _sealed_init(self, ctx: MatchContext | None) -> None:
        if ctx is None or not ctx.match_id:
            raise RulesetError("a sealed match needs its match context (the match id)")
        house = tuple(sorted(set(ctx.house)))
        if any(not 0 <= s < self.n_seats for s in house):
            raise RulesetError(f"house seats {list(ctx.house)} outside the table")
        self.match_id: str = ctx.match_id
        self.house: tuple[int, ...] = house
        self.sealed: Deal | None = None  #: the hand's deal machine
        self.sealed_hands: list[dict[str, Any]] = []  #: every hand's §9 entry

    @property
    def owed(self) -> list[Owed]:
        """The steps owed now, in order (the hand's deal machine's queue)."""
        return self.sealed.owed if self.sealed is not None else []

    # -- the game's calls ------------------------------------------------------------------
    def _begin_hand(self, items: Sequence[str]) -> None:
        """A new hand over ``items`` (the rules' canonical order): keys, then shuffles owed."""
        number = len(self.sealed_hands)
        self.sealed = Deal.start(self.match_id, number, self.game, items, self.n_seats, self.house)
        self.sealed_hands.append(self.sealed.record)

    def _shuffled(self, label: str, items: list[str]) -> list[str]:
        """A new hand over ``items``, dealt as the positions of its final deck: the seeded
        engine deals them as it deals a shuffled deck (nothing is drawn at ``label``)."""
        if "sealed" not in self.__dict__:  # the match starts (the game's __init__)
            self._sealed_init(self.ctx)
        self._begin_hand(items)
        return [str(p) for p in range(len(items))]

    def _dealt(self, hands: Sequence[Sequence[str]]) -> None:
        """Every seat's hand (positions) dealt face down."""
        self._deal_items({s: [int(p) for p in h] for s, h in enumerate(hands)})

    def _deal_items(self, dealt: Mapping[int, Sequence[int]]) -> None:
        """Items (final-deck positions) dealt face down, seat → items: every other seat owes
        its shares of them, one share step a seat, in seat order."""
        self._hand().deal(dealt)

    def _hand_over(self) -> None:
        """The hand's play is over: every seat owes its key, in seat order."""
        self._hand().over()

    def _hand(self) -> Deal:
        if self.sealed is None:
            raise AssertionError("no sealed hand")
        return self.sealed

    def held_by(self, seat: int) -> list[int]:
        """Every item dealt to ``seat`` this hand (opened or not)."""
        return self.sealed.held_by(seat) if self.sealed is not None else []

    def _held(self, seat: int) -> tuple[int, ...]:
        """The items in the seat's hand (``self.hands`` holds item positions), in order."""
        return tuple(sorted(int(p) for p in self.hands[seat]))

    def _unopened(self, seat: int) -> list[int]:
        """The items in the seat's hand not opened yet, in order."""
        opened = self._hand().opened
        return [i for i in self._held(seat) if i not in opened]

    def _play_item(self, seat: int, action: Action, code: str) -> tuple[int, tuple[int, ...]]:
        """A play from the seat's hand of the item the action opens to ``code``: the opening is
        checked, then committed, and the item leaves the hand. Returns (the item, the items the
        seat held before), for the checks at the hand's end."""
        item, share = self._hand().check_open(seat, action, code)
        if str(item) not in self.hands[seat]:
            raise IllegalActionError(f"item {item} is not in seat {seat}'s hand")
        held = self._held(seat)
        self._hand().commit_open(seat, item, code, share, bytes.fromhex(action["proof"]))
        self.hands[seat].remove(str(item))
        return item, held

    # -- hooks of the game -----------------------------------------------------------------
    def _breach(self, codes: Sequence[str]) -> int | None:
        """The first seat that broke a rule over hidden hands this hand (None: none did),
        with every item's code known."""
        raise NotImplementedError

    def _after_reveal(self) -> None:
        """Every key of the hand is revealed and no rule was broken: score, go on."""
        raise NotImplementedError

    def _play_legal(self, seat: int) -> list[Action]:
        """The game's legal actions for the seat to act when no deal step is owed."""
        raise NotImplementedError

    # -- the game's rules over a hidden hand ------------------------------------------------
    #: the field that names an item in player form (``card`` or ``tile``)
    ITEM_FIELD: ClassVar[str] = "card"

    def hidden_legal(self, seat: int, own: Mapping[int, str], bot: bool = False) -> list[Action]:
        """What ``seat`` may do now in player form, given the codes of its own items
        (``own``: item → code, what only the seat knows): every legal action whose item it
        can name and that the game's rules over its hidden hand allow (following suit, the
        jokers, a tile's end, a draw or a pass only when nothing fits: the rules the engine
        checks once the hand's keys are revealed, :meth:`_breach`). A deal step owed is
        listed as ``{"type": "sealed", "step": …}``. With ``bot``, the same over
        :meth:`bot_actions` (what a random bot picks from: qahve's lowest bids), or every
        such action when the bot's narrowing leaves none."""
        picks = self._hidden(seat, own, self.bot_actions(seat)) if bot else []
        return picks or self._hidden(seat, own, self.legal_actions(seat))

    def _hidden(self, seat: int, own: Mapping[int, str], legal: list[Action]) -> list[Action]:
        """``legal`` (the server's form) in player form, as :meth:`hidden_legal` says."""
        if self.owed or not legal:
            return legal
        hand = {i: own[i] for i in self._held(seat) if i in own}
        out: list[Action] = []
        for a in legal:
            if a.get("type") == "play" and "item" in a:
                code = hand.get(int(a["item"]))
                if code is None:
                    continue
                named: Action = {"type": "play", self.ITEM_FIELD: code}
                named.update((k, v) for k, v in a.items() if k not in ("type", "item"))
                if self._may_play(seat, named, code, hand):
                    out.append(named)
            elif self._may_do(seat, a, hand):
                out.append(dict(a))
        return out

    def _may_play(self, seat: int, action: Action, code: str, hand: Mapping[int, str]) -> bool:
        """Whether the rules over the seat's hidden ``hand`` (item → code) let it play
        ``code`` as ``action`` says."""
        return True

    def _may_do(self, seat: int, action: Action, hand: Mapping[int, str]) -> bool:
        """Whether the rules over the seat's hidden ``hand`` let it send ``action`` (no play)."""
        return True

    # -- the engine interface --------------------------------------------------------------
    def _turn(self) -> int | None:
        if self.owed:
            return self.owed[0].seat
        return super()._turn()

    def _legal(self, seat: int) -> list[Action]:
        if self.owed:
            return [{"type": "sealed", "step": self.owed[0].step}]
        return self._play_legal(seat)

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "sealed":
            self._apply_step(seat, action)
            return
        if self.owed:
            o = self.owed[0]
            raise IllegalActionError(
                f"the deal is under way: seat {o.seat} owes its sealed {o.step!r} step"
            )
        super()._apply(seat, action)  # type: ignore[safe-super]

    def _apply_step(self, seat: int, action: Action) -> None:
        hand = self.sealed
        if hand is None:
            raise IllegalActionError("no sealed step is owed now")
        done = hand.step(seat, action)
        if isinstance(done, tuple):  # an open step, checked: committed, then the game's
            item, code = done
            hand.commit_open_step(seat, action, item, code)
            self._opened(seat, item, code)
        elif done:  # every key of the hand is revealed
            assert hand.codes is not None
            breach = self._breach(hand.codes)
            if breach is not None:
                self._forfeit(RULE_END, [breach])
                self.chance.add({"type": "end", "reason": RULE_END, "seat": breach})
            else:
                self._after_reveal()

    def _opened(self, seat: int, item: int, code: str) -> None:
        """An ``open`` step was applied (games whose rules open items outside a play)."""
        raise IllegalActionError("this game opens items only by playing them")

    # -- views -----------------------------------------------------------------------------
    def sealed_view(self) -> dict[str, JSON]:
        """The public state of the hand's deal (its machine's :meth:`Deal.view`): what a seat
        needs to make its next step and to learn its own items (everything here is public)."""
        hand = self.sealed
        return hand.view(self.outcome is None) if hand is not None else {}

    def view(self, seat: int | None) -> dict[str, JSON]:
        out = super().view(seat)
        out["deal"] = "sealed"
        out["sealed"] = self._shown()
        return out

    def _shown(self) -> Shared:
        """The deal's public state as every view shows it, with what the table does not
        hide (docs/api.md: its public facts alone say): one object (and one encoding) per
        state of the deal, shared by every seat's view of it."""
        hand = self.sealed
        if hand is None:
            return Shared(limits=sealed_limits(self.game, self.n_seats, self.house))
        return hand.shared(
            self.outcome is None, lambda: sealed_limits(self.game, self.n_seats, self.house)
        )

    @classmethod
    def redact(cls, event: Event) -> Event:
        """Every sealed step is public (it hides what it must by itself)."""
        action = event.get("action")
        if event.get("type") == "action" and isinstance(action, dict):
            if action.get("type") in ("sealed", "play", "discard", "draw"):
                return event
        return super().redact(event)


class SealedTricks(SealedGame):
    """The deal of a sealed trick game (``games/sealed_<game>.py`` for hokm, shelem and
    qahve), mixed in before the game's engine: every play is recorded with the items its seat
    held, and following suit (with the game's own rules over a hand, :meth:`_broke`) is
    checked once the hand's keys are revealed."""

    phase: str
    trick: Trick
    #: (seat, item, led suit, the items the seat held then, the tricks done then) of every
    #: play of the hand
    plays: list[tuple[int, int, str | None, tuple[int, ...], int]]

    def _play_card(self, seat: int, action: Action, card: str) -> None:
        """The play of the item the action opens to ``card``: checked, committed, recorded."""
        done = len(self.plays) // self.n_seats
        item, held = self._play_item(seat, action, card)
        self.plays.append((seat, item, self.trick.led, held, done))

    def _play_legal(self, seat: int) -> list[Action]:
        """Plays and discards by item (the seat names its cards), else the game's own."""
        if self.phase == Phase.PLAY:
            return [{"type": "play", "item": i} for i in self._unopened(seat)]
        if self.phase == Phase.DISCARD:
            size = self._discard_size(seat)  # type: ignore[attr-defined]
            held = self._held(seat)
            return [{"type": "discard", "items": list(c)} for c in combinations(held, size)]
        # the game's own: bids, trumps, draws
        return super(SealedGame, self)._legal(seat)

    def _breach(self, codes: Sequence[str]) -> int | None:
        """The first play that did not follow suit when the seat held the suit led."""
        for seat, item, led, held, done in self.plays:
            hand = [codes[i] for i in held]
            if self._broke(hand, codes[item], done) or follow_reason(hand, codes[item], led):
                return seat
        return None

    def _may_play(self, seat: int, action: Action, code: str, hand: Mapping[int, str]) -> bool:
        held = list(hand.values())
        done = len(self.plays) // self.n_seats
        return not self._broke(held, code, done) and not follow_reason(held, code, self.trick.led)

    def _broke(self, hand: list[str], card: str, done: int) -> bool:
        """Whether playing ``card`` from ``hand`` after ``done`` tricks broke a rule of the
        game's own over a hidden hand (beyond following suit)."""
        return False

    def _discarded(self, action: Action, size: int | None) -> list[int]:
        """The items a ``{"type": "discard", "items": […]}`` lays away, checked as item
        positions, each once (``size``: how many the list must name, if the game says)."""
        only_keys(action, "items")
        raw = action.get("items")
        if not isinstance(raw, list) or (size is not None and len(raw) != size):
            count = "" if size is None else f"{size} "
            raise MalformedActionError(f"'items' must be a list of {count}item positions")
        items = [parse_item(i, len(self._hand().items), "an item of 'items'") for i in raw]
        if len(set(items)) != len(items):
            raise MalformedActionError("'items' names the same item twice")
        return items

    def _lay_away_items(self, seat: int, items: list[int]) -> None:
        """The discarded items (checked) leave the seat's hand, still sealed."""
        missing = [i for i in items if str(i) not in self.hands[seat]]
        if missing:
            raise IllegalActionError(f"not in your hand: items {missing}")
        self._lay_away(seat, [str(i) for i in items])  # type: ignore[attr-defined]

    def _view(self, seat: int | None) -> dict[str, JSON]:
        out = super()._view(None)  # type: ignore[safe-super]
        out["led"] = self.trick.led
        if seat is not None:
            out["hand"] = list(self._held(seat))
        return out


class SealedTiles(SealedGame):
    """The deal of a sealed domino game (``games/sealed_<game>.py`` for iraqi_domino and
    mexican_train), mixed in before the game's engine: each round's tiles are dealt as
    positions of the final deck, a tile drawn is dealt to the drawer alone, and the round is
    scored by the game's own ``_end_round`` once every key is revealed."""

    ITEM_FIELD: ClassVar[str] = "tile"
    round: int
    #: the draws and passes to check at the round's end (the game's own records)
    checks: list[Any]
    _ended: tuple[str, int | None] | None  #: how the round's play ended, until it is scored

    def _deal(self, items: list[str], hand: int) -> tuple[list[list[str]], list[str]]:
        hands, pile = super()._deal(items, hand)  # type: ignore[misc]
        self._dealt(hands)
        self.checks = []
        self._ended = None
        return hands, pile

    def _draw_item(self, seat: int, pile: list[str]) -> str:
        """The pile's first item, drawn: dealt to ``seat`` alone."""
        taken = pile.pop(0)
        self.hands[seat].append(taken)
        self._deal_items({seat: [int(taken)]})
        return taken

    def _apply(self, seat: int, action: Action) -> None:
        if action["type"] == "sealed" or self.owed:
            super()._apply(seat, action)
        elif action["type"] == "play":
            self._sealed_play(seat, action)
        else:
            only_keys(action)
            self._draw_or_pass(seat, action["type"])

    def _sealed_play(self, seat: int, action: Action) -> None:
        """A play: the tile opened and laid."""
        raise NotImplementedError

    def _draw_or_pass(self, seat: int, kind: str) -> None:
        """A ``draw`` or a ``pass`` (``kind``): what it owes the checks at the round's end."""
        raise NotImplementedError

    def _end_round(self, how: str, seat: int | None) -> None:
        """The round's play is over: the keys are revealed before it is scored
        (:meth:`_after_reveal`)."""
        self._ended = (how, seat)
        self._hand_over()

    def _after_reveal(self) -> None:
        assert self._ended is not None
        codes = self._hand().codes
        assert codes is not None
        how, seat = self._ended
        self._ended = None
        self.hands = [[codes[int(p)] for p in h] for h in self.hands]
        super()._end_round(how, seat)  # type: ignore[misc]

    def _view(self, seat: int | None) -> dict[str, JSON]:
        held = self.hands
        self.hands = [[] for _ in held]
        try:
            out = super()._view(None)  # type: ignore[safe-super]
        finally:
            self.hands = held
        out["hand_counts"] = [len(h) for h in held]
        if seat is not None:
            # positions while the match runs; once it is over the last round's tiles are
            # known to all (its history shows them)
            out["hand"] = [] if self.outcome is not None else list(self._held(seat))
        return out
