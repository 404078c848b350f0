"""One hand's sealed deal (qahwa-fair/3, docs/spec/fairness-v3.md §3–§7, §9, §9a): the one
place in Python that checks a sealed deal.

:class:`Deal` is an I/O-free state machine for one hand, built from the match's public facts
(match id, hand number, game, the hand's items in canonical order, seats, house seats). It
keeps the queue of steps owed (:class:`Owed`: the seat that owes the first one is the seat to
act), which final-deck positions are dealt to which seat, and every key, shuffle, share,
opening and revealed key, each verified through :mod:`games.sealed_backend` before anything
changes. The game (:class:`games.sealed_base.SealedGame`) tells it when items are dealt
(:meth:`Deal.deal`) and when the hand's play is over (:meth:`Deal.over`); every other change
is a seat's step (:meth:`Deal.step`) or the opening a play carries (:meth:`Deal.check_open`,
:meth:`Deal.commit_open`). The public state every view shows is :meth:`Deal.view`.

:func:`verify_hand` checks a hand's §9 record (keys, the shuffle chain, shares, openings,
revealed keys; the whole deck opened once every key is revealed) with the same checks.

Transitions (the data a port follows; ``n`` seats, house seats first in the shuffle order):

=====================  ===================================================================
start                  owed: ``key`` by 0..n−1, then ``shuffle`` by house seats, then others
``key`` (s)            §3 proof checked; the hand key once every key is in
``shuffle`` (s)        §5.5 proof checked against the deck so far; the deck replaced
``deal({s: items})``   for each seat t, ``share`` of the items dealt to the others, owed by t
``share`` (t)          the owed items exactly, in order; each §6 share proof checked
``open`` / a play      the item is the seat's, unopened; its share checked; every seat's
                       share opens it to the code named (§7)
``over()``             owed: ``reveal_key`` by 0..n−1
``reveal_key`` (s)     §3: secret·G = key; with every key in, the whole deck opened (§10)
=====================  ===================================================================
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fairness import PROTOCOL_V3
from fairness.records import (
    RecordError,
    open_item,
    open_key_step,
    open_revealed_key,
    open_share,
    open_shuffle_step,
)

from .base import JSON, Action, Encodings, Shared, Table, only_keys
from .errors import IllegalActionError, MalformedActionError
from .sealed_backend import SealedStepError, get_backend

#: the deal steps a seat owes (fairness-v3 §9a)
STEPS = ("key", "shuffle", "share", "open", "reveal_key")
#: what a sealed view leaves out when its seat asks for it brief (``sealed=brief``, docs/api.md):
#: the deck and the table of shares, the bulk of the view, which a seat that follows the log
#: holds already (its deal machine makes them from the steps)
LOG_HELD = frozenset({"deck", "shares"})


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


@contextmanager
def _opening() -> Iterator[None]:
    """A step's shape the records' openers refuse (RecordError) is a malformed action."""
    try:
        yield
    except RecordError as exc:
        raise MalformedActionError(str(exc)) from None


def parse_item(v: Any, n: int, what: str = "'item'") -> int:
    with _opening():
        return open_item(v, n, what)


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def shuffle_order(seats: int, house: Collection[int]) -> list[int]:
    """House seats first, then the others, each in seat order (fairness-v3 §5)."""
    hs = sorted(set(house))
    return hs + [s for s in range(seats) if s not in hs]


@dataclass
class Deal:
    """One hand's sealed deal (see the module's doc)."""

    match_id: str
    number: int  #: the hand (0 for the match's first, counting every hand dealt)
    game: str
    items: list[str]  #: the starting deck's order
    n: int  #: the seats
    house: tuple[int, ...] = ()
    keys: list[bytes | None] = field(default_factory=list)
    deck: bytes = b""  #: the deck now: the starting deck, then each shuffle's output
    hand_key: bytes | None = None
    shuffled: list[int] = field(default_factory=list)
    owner: dict[int, int] = field(default_factory=dict)  #: item → the seat it is dealt to
    shares: dict[int, dict[int, bytes]] = field(default_factory=dict)  #: item → seat → D
    opened: dict[int, str] = field(default_factory=dict)
    revealed: list[bytes | None] = field(default_factory=list)
    codes: list[str] | None = None  #: every item's code, once every key is revealed
    owed: list[Owed] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)  #: the §9 entry, in event order
    #: the last :meth:`view` made, with what it was made from (:meth:`_view_key`)
    _view: tuple[tuple[Any, ...], dict[str, JSON]] | None = field(
        default=None, repr=False, compare=False
    )
    #: the last :meth:`shared` made, with the view it was made from
    _shared: tuple[dict[str, JSON], Shared] | None = field(default=None, repr=False, compare=False)
    #: the views' table of shares as last made, with how many shares it holds
    _table: tuple[int, Table] | None = field(default=None, repr=False, compare=False)
    #: the encodings of the views' larger values, each written again while it holds
    _parts: Encodings = field(default_factory=Encodings, repr=False, compare=False)

    @classmethod
    def start(
        cls,
        match_id: str,
        number: int,
        game: str,
        items: Sequence[str],
        seats: int,
        house: Collection[int] = (),
    ) -> Deal:
        """A new hand over ``items`` (the rules' canonical order): keys, then shuffles owed."""
        deal = cls(
            match_id,
            number,
            game,
            list(items),
            seats,
            tuple(sorted(set(house))),
            keys=[None] * seats,
            deck=get_backend().starting_deck(game, items),
            revealed=[None] * seats,
        )
        deal.record = {"hand": number, "game": game, "items": list(items)}
        deal.record.update((k, []) for k in ("keys", "shuffles", "shares", "openings", "revealed"))
        deal.owed = [Owed(s, "key") for s in range(seats)]
        deal.owed += [Owed(s, "shuffle") for s in shuffle_order(seats, house)]
        return deal

    # -- reads -------------------------------------------------------------------------------
    def item(self, i: int) -> bytes:
        return self.deck[64 * i : 64 * i + 64]

    def ctx(self, seat: int) -> tuple[str, int, int]:
        return (self.match_id, self.number, seat)

    def all_keys(self) -> list[bytes]:
        if any(k is None for k in self.keys):
            raise AssertionError("a key is missing")
        return [k for k in self.keys if k is not None]

    def held_by(self, seat: int) -> list[int]:
        """Every item dealt to ``seat`` this hand (opened or not)."""
        return sorted(i for i, o in self.owner.items() if o == seat)

    # -- the game's calls ----------------------------------------------------------------------
    def deal(self, dealt: Mapping[int, Sequence[int]]) -> None:
        """Items (final-deck positions) dealt face down, seat → items: every other seat owes
        its shares of them, one share step a seat, in seat order."""
        batch: dict[int, int] = {}
        for seat, items in dealt.items():
            for i in items:
                if i in self.owner:
                    raise AssertionError(f"item {i} dealt twice")
                self.owner[i] = seat
                batch[i] = seat
        for t in range(self.n):
            need = tuple(sorted(i for i, o in batch.items() if o != t))
            if need:
                self.owed.append(Owed(t, "share", need))

    def over(self) -> None:
        """The hand's play is over: every seat owes its key, in seat order."""
        self.owed += [Owed(s, "reveal_key") for s in range(self.n)]

    # -- openings ------------------------------------------------------------------------------
    def check_open(self, seat: int, action: Action, code: str) -> tuple[int, bytes]:
        """The opening an action carries (``item``, ``share``, ``proof``), checked without
        changing anything: the item is the seat's and unopened, its share verifies and the
        shares open it to ``code``. Returns (item, the seat's share)."""
        with _opening():
            item = open_item(action.get("item"), len(self.items))
            share, proof = open_share(action)
        if self.owner.get(item) != seat:
            raise IllegalActionError(f"item {item} is not dealt to seat {seat}")
        if item in self.opened:
            raise IllegalActionError(f"item {item} is already open ({self.opened[item]})")
        self.check_share(seat, item, share, proof)
        others = self.shares.get(item, {})
        if sorted([*others, seat]) != list(range(self.n)):
            raise IllegalActionError(f"item {item} lacks the other seats' shares")
        self.check_opens(item, code, {**others, seat: share})
        return item, share

    def check_opens(self, item: int, code: str, shares: Mapping[int, bytes]) -> None:
        """§7: ``shares`` (seat → D, each verified, one of every seat) open ``item`` to
        ``code``."""
        missing = [s for s in range(self.n) if s not in shares]
        if missing:
            raise SealedStepError(f"opening of item {item}: no share of seats {missing}")
        D = [shares[s] for s in range(self.n)]
        if not get_backend().opens_to(self.game, code, self.item(item), D):
            raise SealedStepError(f"the shares do not open item {item} to {code!r}")

    def commit_open(self, seat: int, item: int, code: str, share: bytes, proof: bytes) -> None:
        self.add_share(item, seat, share, proof)
        self.opened[item] = code
        self.record["openings"].append({"item": item, "seat": seat, "code": code})

    # -- the checks (every key, shuffle, share, opening and revealed key passes one of these) --
    def add_key(self, seat: int, key: bytes, proof: bytes) -> None:
        """§3: the seat's key, its proof checked; the hand key once every key is in."""
        be = get_backend()
        be.verify_key(self.ctx(seat), key, proof)
        self.keys[seat] = key
        if all(k is not None for k in self.keys):
            self.hand_key = be.hand_key(self.all_keys())
        self.record["keys"].append({"seat": seat, "key": key.hex(), "proof": proof.hex()})

    def add_shuffle(self, seat: int, deck: bytes, proof: bytes) -> None:
        """§5.5: the seat's shuffle, its proof checked against the deck so far; the deck
        replaced."""
        if self.hand_key is None:
            raise AssertionError("a shuffle before every key is in")
        get_backend().verify_shuffle(self.ctx(seat), self.hand_key, self.deck, deck, proof)
        self.deck = deck
        self.shuffled.append(seat)
        self.record["shuffles"].append({"seat": seat, "deck": b64(deck), "proof": b64(proof)})

    def check_share(self, seat: int, item: int, share: bytes, proof: bytes) -> None:
        """§6: the seat's share of ``item`` and its proof, checked (nothing changes)."""
        key = self.all_keys()[seat]
        get_backend().verify_share(self.ctx(seat), key, self.item(item), share, proof)

    def check_shares(self, seat: int, shares: Sequence[tuple[int, bytes, bytes]]) -> None:
        """§6 for a share step: the seat's ``(item, share, proof)`` each, checked as
        :meth:`check_share` checks one (their proofs at once: the backend's
        ``verify_shares``; the same refusal for the first that fails)."""
        key = self.all_keys()[seat]
        got = [(self.item(i), d, p) for i, d, p in shares]
        get_backend().verify_shares(self.ctx(seat), key, got)

    def reveal(self, seat: int, secret: bytes) -> bool:
        """§3: the seat's revealed key, checked; with every key in, the whole deck opened
        (§10, :attr:`codes`). True when this was the last key."""
        be = get_backend()
        be.check_revealed(self.all_keys()[seat], secret, seat)
        revealed = list(self.revealed)
        revealed[seat] = secret
        codes = None
        if all(r is not None for r in revealed):
            codes = be.open_deck(
                self.game, self.items, self.deck, [r for r in revealed if r is not None]
            )
        self.revealed = revealed
        self.record["revealed"].append({"seat": seat, "secret": secret.hex()})
        if codes is None:
            return False
        self.codes = codes
        return True

    def add_share(self, item: int, seat: int, share: bytes, proof: bytes) -> None:
        """A share (verified) of ``item`` by ``seat``, kept and recorded."""
        self.shares.setdefault(item, {})[seat] = share
        self.record["shares"].append(
            {"item": item, "seat": seat, "share": share.hex(), "proof": proof.hex()}
        )

    # -- a seat's step ---------------------------------------------------------------------------
    def step(self, seat: int, action: Action) -> tuple[int, str] | bool:
        """Check and apply the step ``action`` of ``seat`` (the first one owed). Returns the
        opening (item, code) of an ``open`` step (checked, not applied: the game commits it),
        True when the last key of the hand is revealed (:attr:`codes` set), else False."""
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
        if step == "key":
            only_keys(action, "step", "key", "proof")
            with _opening():
                key, proof = open_key_step(action)
            self.add_key(seat, key, proof)
        elif step == "shuffle":
            only_keys(action, "step", "deck", "proof")
            with _opening():
                deck, proof = open_shuffle_step(action)
            if len(deck) != len(self.deck):
                raise MalformedActionError(f"'deck': {len(self.items)} items expected")
            self.add_shuffle(seat, deck, proof)
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
            try:
                for x in got:
                    extra = sorted(set(x) - {"item", "share", "proof"})
                    if extra:
                        raise MalformedActionError(
                            f"unexpected field(s) {', '.join(extra)} in a share"
                        )
                    i = x["item"]
                    with _opening():
                        d, p = open_share(x, (f"share of item {i}", f"share proof of item {i}"))
                    parsed.append((i, d, p))
            except MalformedActionError:
                self.check_shares(seat, parsed)  # a bad proof before it is refused first
                raise
            self.check_shares(seat, parsed)
            for i, d, p in parsed:
                self.add_share(i, seat, d, p)
        elif step == "open":
            only_keys(action, "step", "item", "code", "share", "proof")
            code = action.get("code")
            if not isinstance(code, str) or code not in self.items:
                raise MalformedActionError(f"'code' must be an item of this hand, got {code!r}")
            if action.get("item") not in owed.items:
                raise IllegalActionError(
                    f"seat {seat} owes the opening of items {list(owed.items)}"
                )
            item, _ = self.check_open(seat, action, code)
            return item, code
        else:  # reveal_key
            only_keys(action, "step", "secret")
            with _opening():
                secret = open_revealed_key(action)
            last = self.reveal(seat, secret)
            self.owed.pop(0)
            return last
        self.owed.pop(0)
        return False

    def commit_open_step(self, seat: int, action: Action, item: int, code: str) -> None:
        """Apply an ``open`` step :meth:`step` checked."""
        share = bytes.fromhex(action["share"])
        self.commit_open(seat, item, code, share, bytes.fromhex(action["proof"]))
        self.owed.pop(0)

    # -- the view ----------------------------------------------------------------------------------
    def view(self, running: bool = True) -> dict[str, JSON]:
        """The public state of the hand's deal: what a seat needs to make its next step and
        to learn its own items (everything here is public). ``running``: the match goes on
        (else nothing is owed). Made once per state of the deal: every view of it (each
        seat's, after each action and at each read) shares its values, read only."""
        return dict(self.shown(running))

    def shown(self, running: bool = True) -> dict[str, JSON]:
        """:meth:`view` itself, not a copy: the same object while the deal's state holds
        (read only)."""
        key = self._view_key(running)
        if self._view is None or self._view[0] != key:
            self._view = (key, self._make_view(running))
        return self._view[1]

    def shared(self, running: bool, limits: Callable[[], JSON]) -> Shared:
        """:meth:`view` with the table's ``limits()`` as every seat's view shows it: one
        object, and one encoding of it, while the deal's state holds."""
        deal = self.shown(running)
        if self._shared is None or self._shared[0] is not deal:
            self._shared = (deal, Shared({**deal, "limits": limits()}, self._parts))
        return self._shared[1]

    def _view_key(self, running: bool) -> tuple[Any, ...]:
        """What the view is made from: every change of the deal appends to its record,
        deals items (``owner``), opens one or changes the steps owed."""
        r = self.record
        return (
            running,
            len(r["keys"]),
            len(r["shuffles"]),
            len(r["shares"]),
            len(r["revealed"]),
            len(self.owner),
            len(self.opened),
            tuple(self.owed),
        )

    def _make_view(self, running: bool) -> dict[str, JSON]:
        # what did not change since the last view is taken from it (its values are read
        # only): the items, the deck until a shuffle, the dealt items until a deal, the
        # table of shares until one is added and each row of it until one is added to it
        # (:meth:`_share_table`)
        last = self._view[1] if self._view is not None else None
        deck = b64(self.deck) if last is None or self.shuffled != last["shuffled"] else last["deck"]
        if last is None or len(self.owner) != sum(map(len, last["dealt"])):
            dealt: JSON = [self.held_by(s) for s in range(self.n)]
        else:
            dealt = last["dealt"]
        return {
            "protocol": PROTOCOL_V3,
            "match_id": self.match_id,
            "hand": self.number,
            "game": self.game,
            "items": last["items"] if last is not None else list(self.items),
            "house": list(self.house),
            "keys": [k.hex() if k is not None else None for k in self.keys],
            "hand_key": self.hand_key.hex() if self.hand_key is not None else None,
            "deck": deck,
            "shuffled": list(self.shuffled),
            "dealt": dealt,
            "shares": self._share_table(),
            "opened": {str(i): c for i, c in sorted(self.opened.items())},
            "revealed": [r is not None for r in self.revealed],
            "owed": self.owed[0].to_json() if self.owed and running else None,
        }

    def _share_table(self) -> Table:
        """The views' table of shares (item → seat → D, by item): the one made last while no
        share was added since (the same object), else a new one made from it, whose rows no
        share was added to are the last one's (the same objects)."""
        added = self.record["shares"]
        made = self._table
        if made is not None and made[0] == len(added):
            return made[1]
        before = made[1] if made is not None else Table()
        before.base = None  # the new table is made from this one: none before it is needed
        fresh = {e["item"] for e in added[made[0] :]} if made is not None else set(self.shares)
        changed = {str(i): self._row(i) for i in sorted(fresh)}
        if all(k in before for k in changed):  # rows replaced: the same keys, in order
            table = Table(before, before, changed)
            table.update(changed)
        else:  # new rows among them: in item order
            rows = {str(i): changed.get(str(i)) or before[str(i)] for i in sorted(self.shares)}
            table = Table(rows, before, changed)
        self._table = (len(added), table)
        return table

    def _row(self, item: int) -> dict[str, JSON]:
        """A row of the views' table of shares: seat → D, by seat."""
        return {str(s): d.hex() for s, d in sorted(self.shares[item].items())}


# -- a hand's §9 record ---------------------------------------------------------------------------

#: the fields of a hand's §9 entry
FIELDS = ("hand", "game", "items", "keys", "shuffles", "shares", "openings", "revealed")


@dataclass(frozen=True)
class VerifiedHand:
    """What :func:`verify_hand` learns from a hand's §9 entry."""

    hand_key: bytes
    deck: bytes  #: the final deck, after every shuffle
    opened: dict[int, str]  #: item position → code, of every opening
    order: tuple[str, ...] | None  #: every item's code by position, once every key is revealed


def _index(v: Any, what: str, below: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < below:
        raise SealedStepError(f"{what}: an integer in 0..{below - 1} expected")
    return v


def _objects(entry: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    v = entry.get(name)
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise SealedStepError(f"sealed hand: {name!r} must be a list of objects")
    return v


def verify_hand(
    match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
) -> VerifiedHand:
    """Verify one hand's ``"sealed"`` entry (fairness-v3 §9, §10) of a match with ``seats``
    seats (``house``: the house seats) by feeding its steps into a :class:`Deal`, which checks
    each as it checks a seat's step: every key, the shuffle chain (house seats first, then the
    others, each once), every share, every opening and every revealed key; with every key
    revealed, the whole final deck opened. What the rules make of the deck is the games' part
    (the engines' replay). Raises :class:`SealedStepError` naming the first thing that fails."""
    try:
        return _verify_hand(match_id, entry, seats, house)
    except (MalformedActionError, IllegalActionError, RecordError) as exc:
        if isinstance(exc, SealedStepError):
            raise
        raise SealedStepError(str(exc)) from None


def _verify_hand(
    match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int]
) -> VerifiedHand:
    if seats < 1:
        raise ValueError(f"a sealed hand has at least one seat, got {seats}")
    if not isinstance(entry, Mapping) or set(entry) != set(FIELDS):
        raise SealedStepError(f"sealed hand: exactly the fields {', '.join(FIELDS)} expected")
    hand = _index(entry["hand"], "sealed hand: hand", 2**32)
    game, items = entry["game"], entry["items"]
    if not isinstance(game, str) or not isinstance(items, list) or not items:
        raise SealedStepError("sealed hand: game must be a string and items a non-empty list")
    if not all(isinstance(c, str) for c in items):
        raise SealedStepError("sealed hand: items must be codes (strings)")
    deal = Deal.start(match_id, hand, game, items, seats, house)
    n = len(items)
    # §3: the keys, one per seat in seat order
    keys = _objects(entry, "keys")
    if [k.get("seat") for k in keys] != list(range(seats)):
        raise SealedStepError(f"sealed hand: one key per seat, seats 0..{seats - 1} in order")
    for s, k in enumerate(keys):
        deal.add_key(s, *open_key_step(k, (f"key of seat {s}", f"key proof of seat {s}")))
    # §5: the shuffle chain, house seats first, then the others, each once, in seat order
    order = shuffle_order(seats, house)
    shuffles = _objects(entry, "shuffles")
    if [sh.get("seat") for sh in shuffles] != order:
        raise SealedStepError(f"sealed hand: shuffles by seats {order} in that order expected")
    for s, sh in zip(order, shuffles, strict=True):
        names = (f"deck of seat {s}", f"shuffle proof of seat {s}")
        deal.add_shuffle(s, *open_shuffle_step(sh, names))
    # §6: shares
    for sh in _objects(entry, "shares"):
        item = _index(sh.get("item"), "share item", n)
        s = _index(sh.get("seat"), "share seat", seats)
        if s in deal.shares.get(item, {}):
            raise SealedStepError(f"sealed hand: a second share of item {item} by seat {s}")
        share, proof = open_share(sh, (f"share of seat {s}", f"share proof of seat {s}"))
        deal.check_share(s, item, share, proof)
        deal.add_share(item, s, share, proof)
    # §7: openings (every share was checked above)
    for op in _objects(entry, "openings"):
        item = _index(op.get("item"), "opening item", n)
        s = _index(op.get("seat"), "opening seat", seats)
        code = op.get("code")
        if not isinstance(code, str) or item in deal.opened:
            raise SealedStepError(f"sealed hand: opening of item {item}: a code, once")
        deal.check_opens(item, code, deal.shares.get(item, {}))
        deal.opened[item] = code
        deal.record["openings"].append({"item": item, "seat": s, "code": code})
    # §3: revealed keys; with all of them, the whole deck (§10)
    for r in _objects(entry, "revealed"):
        s = _index(r.get("seat"), "revealed seat", seats)
        secret = open_revealed_key(r, f"revealed key of seat {s}")
        if deal.revealed[s] is not None:
            raise SealedStepError(f"sealed hand: seat {s} revealed twice")
        deal.reveal(s, secret)
    codes = deal.codes
    for item, code in deal.opened.items():
        if codes is not None and codes[item] != code:  # cannot happen when the openings verified
            raise SealedStepError(f"sealed hand: item {item} opened as {code}, holds {codes[item]}")
    assert deal.hand_key is not None
    return VerifiedHand(
        deal.hand_key, deal.deck, dict(deal.opened), tuple(codes) if codes is not None else None
    )
