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
:meth:`SealedGame._check_open` / :meth:`SealedGame._commit_open` when an item is played, and
:meth:`SealedGame._hand_over` when the hand's play is over; it implements ``_breach`` and
``_after_reveal`` (score the hand, start the next one).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar

from fairness import PROTOCOL_V3, V2, FairProtocol

from .base import JSON, Action, Engine, Event, MatchContext, check_protocol, only_keys
from .errors import IllegalActionError, MalformedActionError, RulesetError
from .sealed_backend import SealedStepError, get_backend
from .tricks import Phase, Trick, follow_reason

#: the deal steps a seat owes (fairness-v3 §9a)
STEPS = ("key", "shuffle", "share", "open", "reveal_key")
#: the end reason of a breach of a rule over hidden hands found at the hand's end
RULE_END = "rule"


@dataclass(frozen=True)
class Owed:
    """A step a seat owes: ``items`` lists the items of a ``share`` step (or the one item of
    an ``open`` step)."""

    seat: int
    step: str
    items: tuple[int, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"seat": self.seat, "step": self.step}
        if self.step in ("share", "open"):
            out["items"] = list(self.items)
        return out


@dataclass
class SealedHand:
    """One hand's sealed state: what every seat has posted so far."""

    number: int  #: the hand (0 for the match's first, counting every hand dealt)
    game: str
    items: list[str]  #: the starting deck's order
    n: int
    keys: list[bytes | None]
    deck: bytes  #: the deck now: the starting deck, then each shuffle's output
    hand_key: bytes | None = None
    shuffled: list[int] = field(default_factory=list)
    owner: dict[int, int] = field(default_factory=dict)  #: item → the seat it is dealt to
    shares: dict[int, dict[int, bytes]] = field(default_factory=dict)  #: item → seat → D
    opened: dict[int, str] = field(default_factory=dict)
    revealed: list[bytes | None] = field(default_factory=list)
    codes: list[str] | None = None  #: every item's code, once every key is revealed
    record: dict[str, Any] = field(default_factory=dict)  #: the §9 entry, in event order

    def item(self, i: int) -> bytes:
        return self.deck[64 * i : 64 * i + 64]

    def add_share(self, item: int, seat: int, share: bytes, proof: bytes) -> None:
        """A share (verified) of ``item`` by ``seat``, kept and recorded."""
        self.shares.setdefault(item, {})[seat] = share
        self.record["shares"].append(
            {"item": item, "seat": seat, "share": share.hex(), "proof": proof.hex()}
        )


def parse_hex(v: Any, size: int, what: str) -> bytes:
    if not isinstance(v, str):
        raise MalformedActionError(f"{what}: a hex string expected")
    try:
        b = bytes.fromhex(v)
    except ValueError:
        raise MalformedActionError(f"{what}: not hex") from None
    if len(b) != size or v != b.hex():
        raise MalformedActionError(f"{what}: {size} bytes of lowercase hex expected")
    return b


def parse_b64(v: Any, what: str) -> bytes:
    if not isinstance(v, str):
        raise MalformedActionError(f"{what}: a base64 string expected")
    try:
        b = base64.b64decode(v, validate=True)
    except (ValueError, binascii.Error):
        raise MalformedActionError(f"{what}: not base64") from None
    if base64.b64encode(b).decode("ascii") != v:
        raise MalformedActionError(f"{what}: not canonical base64")
    return b


def parse_item(v: Any, n: int, what: str = "'item'") -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < n:
        raise MalformedActionError(f"{what} must be an item position 0 to {n - 1}, got {v!r}")
    return v


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


class SealedGame(Engine):
    """The deal state machine of a sealed engine (mixed in before the game's engine)."""

    #: the ruleset rule that selects a sealed engine (fairness-v3 §9a)
    RULESET_V2_EXTRA: ClassVar[Mapping[str, Any]] = {"deal": "sealed"}
    SEALED: ClassVar[bool] = True
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
        if not self.proto.signed:
            raise RulesetError("a sealed match needs a qahwa-fair/2 match key (64 bytes)")
        if ctx is None or not ctx.match_id:
            raise RulesetError("a sealed match needs its match context (the match id)")
        house = tuple(sorted(set(ctx.house)))
        if any(not 0 <= s < self.n_seats for s in house):
            raise RulesetError(f"house seats {list(ctx.house)} outside the table")
        self.match_id: str = ctx.match_id
        self.house: tuple[int, ...] = house
        self.owed: list[Owed] = []
        self.sealed: SealedHand | None = None
        self.sealed_hands: list[dict[str, Any]] = []  #: every hand's §9 entry

    # -- the game's calls ------------------------------------------------------------------
    def shuffle_order(self) -> list[int]:
        """House seats first, then the others, each in seat order (fairness-v3 §5)."""
        return list(self.house) + [s for s in range(self.n_seats) if s not in self.house]

    def _begin_hand(self, items: Sequence[str]) -> None:
        """A new hand over ``items`` (the rules' canonical order): keys, then shuffles owed."""
        n = self.n_seats
        hand = SealedHand(
            number=len(self.sealed_hands),
            game=self.game,
            items=list(items),
            n=n,
            keys=[None] * n,
            deck=get_backend().starting_deck(self.game, items),
            revealed=[None] * n,
        )
        hand.record = {"hand": hand.number, "game": self.game, "items": list(items)}
        hand.record.update((k, []) for k in ("keys", "shuffles", "shares", "openings", "revealed"))
        self.sealed = hand
        self.sealed_hands.append(hand.record)
        self.owed = [Owed(s, "key") for s in range(n)]
        self.owed += [Owed(s, "shuffle") for s in self.shuffle_order()]

    def _shuffled(self, label: str, items: list[str]) -> list[str]:
        """A new hand over ``items``, dealt as the positions of its final deck: the seeded
        engine deals them as it deals a shuffled deck (nothing is drawn at ``label``)."""
        if not hasattr(self, "owed"):  # the match starts (the game's __init__)
            self._sealed_init(self.ctx)
        self._begin_hand(items)
        return [str(p) for p in range(len(items))]

    def _dealt(self, hands: Sequence[Sequence[str]]) -> None:
        """Every seat's hand (positions) dealt face down."""
        self._deal_items({s: [int(p) for p in h] for s, h in enumerate(hands)})

    def _deal_items(self, dealt: Mapping[int, Sequence[int]]) -> None:
        """Items (final-deck positions) dealt face down, seat → items: every other seat owes
        its shares of them, one share step a seat, in seat order."""
        hand = self._hand()
        batch: dict[int, int] = {}
        for seat, items in dealt.items():
            for i in items:
                if i in hand.owner:
                    raise AssertionError(f"item {i} dealt twice")
                hand.owner[i] = seat
                batch[i] = seat
        for t in range(self.n_seats):
            need = tuple(sorted(i for i, o in batch.items() if o != t))
            if need:
                self.owed.append(Owed(t, "share", need))

    def _hand_over(self) -> None:
        """The hand's play is over: every seat owes its key, in seat order."""
        self.owed += [Owed(s, "reveal_key") for s in range(self.n_seats)]

    def _hand(self) -> SealedHand:
        if self.sealed is None:
            raise AssertionError("no sealed hand")
        return self.sealed

    def held_by(self, seat: int) -> list[int]:
        """Every item dealt to ``seat`` this hand (opened or not)."""
        hand = self.sealed
        return sorted(i for i, o in hand.owner.items() if o == seat) if hand else []

    def _check_open(self, seat: int, action: Action, code: str) -> tuple[int, bytes]:
        """The opening an action carries (``item``, ``share``, ``proof``), checked without
        changing anything: the item is the seat's and unopened, its share verifies and the
        shares open it to ``code``. Returns (item, the seat's share)."""
        hand = self._hand()
        item = parse_item(action.get("item"), len(hand.items))
        share = parse_hex(action.get("share"), 32, "'share'")
        proof = parse_hex(action.get("proof"), 96, "'proof'")
        if hand.owner.get(item) != seat:
            raise IllegalActionError(f"item {item} is not dealt to seat {seat}")
        if item in hand.opened:
            raise IllegalActionError(f"item {item} is already open ({hand.opened[item]})")
        keys = self._keys()
        be = get_backend()
        be.verify_share(
            (self.match_id, hand.number, seat), keys[seat], hand.item(item), share, proof
        )
        others = hand.shares.get(item, {})
        if sorted([*others, seat]) != list(range(self.n_seats)):
            raise IllegalActionError(f"item {item} lacks the other seats' shares")
        if not be.opens_to(self.game, code, hand.item(item), [*others.values(), share]):
            raise SealedStepError(f"the shares do not open item {item} to {code!r}")
        return item, share

    def _commit_open(self, seat: int, item: int, code: str, share: bytes, proof: bytes) -> None:
        hand = self._hand()
        hand.add_share(item, seat, share, proof)
        hand.opened[item] = code
        hand.record["openings"].append({"item": item, "seat": seat, "code": code})

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
        item, share = self._check_open(seat, action, code)
        if str(item) not in self.hands[seat]:
            raise IllegalActionError(f"item {item} is not in seat {seat}'s hand")
        held = self._held(seat)
        self._commit_open(seat, item, code, share, bytes.fromhex(action["proof"]))
        self.hands[seat].remove(str(item))
        return item, held

    def _keys(self) -> list[bytes]:
        keys = self._hand().keys
        if any(k is None for k in keys):
            raise AssertionError("a key is missing")
        return [k for k in keys if k is not None]

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

    def hidden_legal(self, seat: int, own: Mapping[int, str]) -> list[Action]:
        """What ``seat`` may do now in player form, given the codes of its own items
        (``own``: item → code, what only the seat knows): every legal action whose item it
        can name and that the game's rules over its hidden hand allow (following suit, the
        jokers, a tile's end, a draw or a pass only when nothing fits: the rules the engine
        checks once the hand's keys are revealed, :meth:`_breach`). A deal step owed is
        listed as ``{"type": "sealed", "step": …}``."""
        legal = self.legal_actions(seat)
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
        step = action.get("step")
        if not isinstance(step, str) or step not in STEPS:
            raise MalformedActionError(f"a sealed step must be one of {list(STEPS)}, got {step!r}")
        if not self.owed:
            raise IllegalActionError("no sealed step is owed now")
        owed = self.owed[0]
        if owed.step != step:
            raise IllegalActionError(
                f"seat {seat} owes its sealed {owed.step!r} step, not {step!r}"
            )
        hand = self._hand()
        ctx = (self.match_id, hand.number, seat)
        be = get_backend()
        if step == "key":
            only_keys(action, "step", "key", "proof")
            key = parse_hex(action.get("key"), 32, "'key'")
            proof = parse_hex(action.get("proof"), 64, "'proof'")
            be.verify_key(ctx, key, proof)
            hand.keys[seat] = key
            if all(k is not None for k in hand.keys):
                hand.hand_key = be.hand_key(self._keys())
            hand.record["keys"].append({"seat": seat, "key": key.hex(), "proof": proof.hex()})
        elif step == "shuffle":
            only_keys(action, "step", "deck", "proof")
            deck = parse_b64(action.get("deck"), "'deck'")
            proof = parse_b64(action.get("proof"), "'proof'")
            if len(deck) != len(hand.deck):
                raise MalformedActionError(f"'deck': {len(hand.items)} items expected")
            assert hand.hand_key is not None
            be.verify_shuffle(ctx, hand.hand_key, hand.deck, deck, proof)
            hand.deck = deck
            hand.shuffled.append(seat)
            hand.record["shuffles"].append({"seat": seat, "deck": b64(deck), "proof": b64(proof)})
        elif step == "share":
            only_keys(action, "step", "shares")
            got = action.get("shares")
            if not isinstance(got, list) or not all(isinstance(x, dict) for x in got):
                raise MalformedActionError("'shares' must be a list of objects")
            items = [x.get("item") for x in got]
            if items != list(owed.items):
                raise IllegalActionError(
                    f"seat {seat} owes shares of items {list(owed.items)}, in that order"
                )
            parsed: list[tuple[int, bytes, bytes]] = []
            for x in got:
                extra = sorted(set(x) - {"item", "share", "proof"})
                if extra:
                    raise MalformedActionError(f"unexpected field(s) {', '.join(extra)} in a share")
                i = x["item"]
                d = parse_hex(x.get("share"), 32, f"share of item {i}")
                p = parse_hex(x.get("proof"), 96, f"share proof of item {i}")
                be.verify_share(ctx, self._keys()[seat], hand.item(i), d, p)
                parsed.append((i, d, p))
            for i, d, p in parsed:
                hand.add_share(i, seat, d, p)
        elif step == "open":
            only_keys(action, "step", "item", "code", "share", "proof")
            code = action.get("code")
            if not isinstance(code, str) or code not in hand.items:
                raise MalformedActionError(f"'code' must be an item of this hand, got {code!r}")
            if action.get("item") not in owed.items:
                raise IllegalActionError(
                    f"seat {seat} owes the opening of items {list(owed.items)}"
                )
            item, share = self._check_open(seat, action, code)
            self._commit_open(seat, item, code, share, bytes.fromhex(action["proof"]))
            self._opened(seat, item, code)
        else:  # reveal_key
            only_keys(action, "step", "secret")
            secret = parse_hex(action.get("secret"), 32, "'secret'")
            be.check_revealed(self._keys()[seat], secret, seat)
            revealed = list(hand.revealed)
            revealed[seat] = secret
            codes = None
            if all(r is not None for r in revealed):
                codes = be.open_deck(
                    self.game, hand.items, hand.deck, [r for r in revealed if r is not None]
                )
            hand.revealed = revealed
            hand.record["revealed"].append({"seat": seat, "secret": secret.hex()})
            if codes is not None:
                hand.codes = codes
                self.owed.pop(0)
                breach = self._breach(codes)
                if breach is not None:
                    self._forfeit(RULE_END, [breach])
                    self.chance.add({"type": "end", "reason": RULE_END, "seat": breach})
                else:
                    self._after_reveal()
                return
        self.owed.pop(0)

    def _opened(self, seat: int, item: int, code: str) -> None:
        """An ``open`` step was applied (games whose rules open items outside a play)."""
        raise IllegalActionError("this game opens items only by playing them")

    # -- views -----------------------------------------------------------------------------
    def sealed_view(self) -> dict[str, JSON]:
        """The public state of the hand's deal: what a seat needs to make its next step and
        to learn its own items (everything here is public)."""
        hand = self.sealed
        if hand is None:
            return {}
        return {
            "protocol": PROTOCOL_V3,
            "match_id": self.match_id,
            "hand": hand.number,
            "game": hand.game,
            "items": list(hand.items),
            "house": list(self.house),
            "keys": [k.hex() if k is not None else None for k in hand.keys],
            "hand_key": hand.hand_key.hex() if hand.hand_key is not None else None,
            "deck": b64(hand.deck),
            "shuffled": list(hand.shuffled),
            "dealt": [self.held_by(s) for s in range(self.n_seats)],
            "shares": {
                str(i): {str(s): d.hex() for s, d in sorted(by.items())}
                for i, by in sorted(hand.shares.items())
            },
            "opened": {str(i): c for i, c in sorted(hand.opened.items())},
            "revealed": [r is not None for r in hand.revealed],
            "owed": self.owed[0].to_json() if self.owed and self.outcome is None else None,
        }

    def view(self, seat: int | None) -> dict[str, JSON]:
        out = super().view(seat)
        out["deal"] = "sealed"
        out["sealed"] = self.sealed_view()
        return out

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


__all__ = [
    "PROTOCOL_V3",
    "RULE_END",
    "STEPS",
    "Owed",
    "SealedGame",
    "SealedHand",
    "SealedTiles",
    "SealedTricks",
    "b64",
    "parse_b64",
    "parse_hex",
    "parse_item",
]
