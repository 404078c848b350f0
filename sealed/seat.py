"""A seat at a sealed table (qahwa-fair/3, docs/spec/fairness-v3.md §9a): its protocol side,
without I/O, written once for every seat that plays a sealed deal.

The seat makes its own per-hand key (from the OS's CSPRNG through libsodium, or from the
:class:`~sealed.randomness.Randomness` it is given) and keeps it until the hand ends; it
builds every deal step it owes with its proof (its key with a proof of knowledge, its
shuffle with a Terelius–Wikström proof, its decryption shares with Chaum–Pedersen proofs,
the opening of every card or tile it plays), learns its own items from the others' shares
and shows the player its hand by code, with the legal actions of that hand under the public
constraint of the view (the suit led): the server lists plays by item position, since it
cannot know what they hold.

What the seat knows of a hand comes one of two ways. A client over the network
(qahwa_client/sealed.py) checks every other seat's key, shuffle and share of the hand from
the public event log before it relies on it (:meth:`SealedSeat.take_events`: a server that
relays a forged step is caught by the seat, not only by ``verify`` afterwards). A seat in the
engine's own process (the simulated seats of games/sealed_sim.py) takes the view's public
state as it is (:meth:`SealedSeat.adopt`): the engine checked every step before it applied it.

Player forms and wire forms: a view the seat returns lists ``{"type": "play", "card": "QH"}``
(hokm) or ``{"type": "play", "tile": "6-6", "end": …}`` (dominoes) as a seeded view does,
and a deal step as ``{"type": "sealed", "step": "shuffle"}``; :meth:`SealedSeat.wire` turns
the chosen one into what is sent (the item, the code, the seat's share and its proof; the
step's key, deck, shares or secret with their proofs).

Secrets are kept in a :class:`SealedKeys` store: this process's memory by default; house
bots keep theirs sealed under the operator's master key (service/house.py ``SealedKeyDir``),
so a restarted bot goes on with its hand.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from .context import Context
from .errors import SealedError
from .keys import KeyProof, hand_key, make_key, verify_key
from .masking import Deck, deck_b64, deck_from_b64, starting_deck
from .points import item_table
from .randomness import Randomness
from .shares import Share, ShareProof, make_share, own_item, verify_share
from .shuffle_proof import ShuffleProof, shuffle, verify_shuffle

__all__ = ["MemoryKeys", "SealedKeys", "SealedSeat", "StepRefused", "fits"]


class StepRefused(SealedError):
    """Another seat's deal step (a key, a shuffle, a share) in the event log does not verify,
    or the view disagrees with the log: the seat makes no step over it (the server should
    have refused it; this is evidence against it)."""


class SealedKeys(Protocol):
    """Where a seat keeps its per-hand secret keys until it reveals them."""

    def put(self, match_id: str, seat: int, hand: int, secret: bytes) -> None: ...

    def get(self, match_id: str, seat: int, hand: int) -> bytes | None: ...


class MemoryKeys:
    """Secrets in this process's memory only (a player's client)."""

    def __init__(self) -> None:
        self._keys: dict[tuple[str, int, int], bytes] = {}
        self._guard = threading.Lock()

    def put(self, match_id: str, seat: int, hand: int, secret: bytes) -> None:
        with self._guard:
            self._keys[(match_id, seat, hand)] = secret

    def get(self, match_id: str, seat: int, hand: int) -> bytes | None:
        with self._guard:
            return self._keys.get((match_id, seat, hand))


class _Hand:
    """What the seat knows of one hand: checked from the event log, or adopted."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.keys: dict[int, bytes] = {}
        self.hand_key: bytes | None = None
        self.deck: Deck | None = None  # after the shuffles checked so far
        self.deck_b64: str | None = None  # the deck as the view sent it (adopted)
        self.shuffled: list[int] = []
        self.shares: dict[int, dict[int, bytes]] = {}  # item -> seat -> D (verified)
        self.own: dict[int, str] = {}  # item -> code: this seat's items, as it learnt them
        self.checked = 0  # how many of the hand's steps in the log are verified


class SealedSeat:
    """One seat's sealed side of a match (no I/O: the client's seat handles or a simulated
    seat drive it). ``rng``: where its keys, shuffles and shares draw from (None: the OS)."""

    #: what the seat raises: a step of the log (or the view) that does not verify, and any
    #: other refusal; the client raises its own kinds (qahwa_client/sealed.py)
    refused: ClassVar[type[Exception]] = StepRefused
    error: ClassVar[type[Exception]] = SealedError

    def __init__(
        self,
        match_id: str,
        seat: int,
        keys: SealedKeys | None = None,
        rng: Randomness | None = None,
    ) -> None:
        self.match_id = match_id
        self.seat = seat
        self.keys: SealedKeys = keys if keys is not None else MemoryKeys()
        self.rng = rng
        #: the seq of the last event read from the log
        self.seen = -1
        self.hands: dict[int, _Hand] = {}
        self._hand_no = -1  # the hand the log's sealed steps have reached
        self._last_step: str | None = None
        #: per hand, its sealed steps and openings from the log: (seat, action)
        self._log: dict[int, list[tuple[int, dict[str, Any]]]] = {}

    def ctx(self, hand: int, seat: int | None = None) -> Context:
        return Context(self.match_id, hand, self.seat if seat is None else seat)

    def secret(self, hand: int) -> bytes:
        x = self.keys.get(self.match_id, self.seat, hand)
        if x is None:
            raise self.error(
                f"seat {self.seat} holds no key for hand {hand}: act through the handle "
                "(or the key store) that made its key step"
            )
        return x

    # -- what the seat knows of a hand --------------------------------------------------------
    def take_events(self, events: Sequence[Mapping[str, Any]], sv: Mapping[str, Any]) -> None:
        """Read the log's events after :attr:`seen` (kept by hand) and verify every sealed
        step of the view's hand ``sv`` (the view's ``sealed`` part) not checked yet, in order."""
        for ev in events:
            seq = ev.get("seq")
            if isinstance(seq, int):
                if seq <= self.seen:
                    continue
                self.seen = seq
            action = ev.get("action")
            if ev.get("type") != "action" or not isinstance(action, Mapping):
                continue
            step = action.get("step") if action.get("type") == "sealed" else None
            if step == "key" and self._last_step != "key":
                self._hand_no += 1
            if step is not None:
                self._last_step = str(step)
            if step is not None or ("share" in action and "item" in action):
                self._log.setdefault(self._hand_no, []).append((int(ev["seat"]), dict(action)))
        h = self._hand(sv)
        steps = self._log.get(h.number, [])
        while h.checked < len(steps):
            seat, action = steps[h.checked]
            self._check(seat, action, sv)
            h.checked += 1

    def adopt(self, sv: Mapping[str, Any]) -> None:
        """Take the view's public deal state ``sv`` as it is, unchecked: for a seat in the
        engine's own process, which checked every step before it applied it."""
        h = self._hand(sv)
        h.keys = {s: bytes.fromhex(k) for s, k in enumerate(sv["keys"]) if k is not None}
        h.hand_key = bytes.fromhex(sv["hand_key"]) if sv["hand_key"] is not None else None
        if h.deck is None or sv["deck"] != h.deck_b64:
            h.deck, h.deck_b64 = deck_from_b64(sv["deck"]), sv["deck"]
        h.shuffled = list(sv["shuffled"])
        for i, by in sv["shares"].items():
            got = h.shares.setdefault(int(i), {})
            if len(got) != len(by):
                got.update((int(s), bytes.fromhex(d)) for s, d in by.items())

    def _hand(self, sv: Mapping[str, Any]) -> _Hand:
        n = int(sv["hand"])
        return self.hands.get(n) or self.hands.setdefault(n, _Hand(n))

    def _check(self, seat: int, action: Mapping[str, Any], sv: Mapping[str, Any]) -> None:
        h = self._hand(sv)
        step = action.get("step") if action.get("type") == "sealed" else None
        try:
            if step == "key":
                P = bytes.fromhex(str(action["key"]))
                verify_key(
                    self.ctx(h.number, seat),
                    P,
                    KeyProof.decode(bytes.fromhex(str(action["proof"]))),
                )
                h.keys[seat] = P
                if len(h.keys) == len(sv["keys"]):
                    h.hand_key = hand_key([h.keys[s] for s in range(len(h.keys))])
                    h.deck = starting_deck(str(sv["game"]), list(sv["items"]))
            elif step == "shuffle":
                assert h.deck is not None and h.hand_key is not None
                out = deck_from_b64(str(action["deck"]), len(h.deck))
                proof = ShuffleProof.decode(base64.b64decode(str(action["proof"])), len(h.deck))
                verify_shuffle(self.ctx(h.number, seat), h.hand_key, h.deck, out, proof)
                h.deck, h.shuffled = out, [*h.shuffled, seat]
            elif step == "share":
                for x in action["shares"]:
                    self._share(h, seat, int(x["item"]), x)
            elif "share" in action and "item" in action:  # an opening (a play, an open step)
                self._share(h, seat, int(action["item"]), action)
        except (KeyError, TypeError, ValueError, AssertionError) as exc:
            raise self.refused(
                f"hand {h.number}: seat {seat}'s {step or action.get('type')} step in the "
                f"log does not verify: {exc}"
            ) from None

    def _share(self, h: _Hand, seat: int, item: int, x: Mapping[str, Any]) -> None:
        assert h.deck is not None
        share = Share(
            bytes.fromhex(str(x["share"])), ShareProof.decode(bytes.fromhex(str(x["proof"])))
        )
        verify_share(self.ctx(h.number, seat), h.keys[seat], h.deck[item], share)
        h.shares.setdefault(item, {})[seat] = share.D

    # -- the view -------------------------------------------------------------------------------
    def view(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The seat's view with its hand by code and the legal actions in player form."""
        sv = raw.get("sealed") or {}
        if not sv:
            return raw
        h = self._hand(sv)
        if h.hand_key is not None and sv.get("hand_key") not in (None, h.hand_key.hex()):
            raise self.refused(f"hand {h.number}: the view's hand key is not the log's")
        done = h.deck is not None and len(h.shuffled) == len(sv["keys"])
        if done and h.deck is not None and sv.get("deck") != (h.deck_b64 or deck_b64(h.deck)):
            raise self.refused(f"hand {h.number}: the view's deck is not the log's")
        n_seats = len(sv["keys"])
        dealt = sv.get("dealt") or []
        mine = [int(i) for i in dealt[self.seat]] if self.seat < len(dealt) else []
        if done and h.deck is not None:
            table = item_table(str(sv["game"]), list(sv["items"]))
            for i in mine:
                others = h.shares.get(i, {})
                got = [others[s] for s in range(n_seats) if s != self.seat and s in others]
                if i not in h.own and len(got) == n_seats - 1:
                    h.own[i] = own_item(h.deck[i], self.secret(h.number), got, table)
        out = dict(raw)
        held = raw.get("hand")
        if isinstance(held, list) and all(isinstance(i, int) for i in held):
            out["hand_items"] = list(held)
            out["hand"] = [h.own[i] for i in held if i in h.own]
        drawn = raw.get("drawn")
        if isinstance(drawn, int) and drawn in h.own:
            out["drawn_card"] = h.own[drawn]
        out["legal_actions"] = _follow([a for a in self.listed(raw) if fits(a, raw)], raw)
        if "suggested_actions" in raw:
            out["suggested_actions"] = out["legal_actions"]
        return out

    def listed(self, raw: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The view's listed actions as the player sees them, before any rule over the hand:
        a play of an item by its code (left out for an item the seat cannot name)."""
        h = self._hand(raw["sealed"])
        out: list[dict[str, Any]] = []
        for a in raw.get("legal_actions") or []:
            if a.get("type") != "play" or "item" not in a:
                out.append(dict(a))
            elif (code := h.own.get(int(a["item"]))) is not None:
                named = {"type": "play", "card" if _is_card(code) else "tile": code}
                out.append(named | {k: v for k, v in a.items() if k not in ("type", "item")})
        return out

    # -- what is sent -----------------------------------------------------------------------------
    def wire(self, action: Mapping[str, Any], raw: Mapping[str, Any]) -> dict[str, Any]:
        """What is sent for a player-form ``action`` chosen from the view ``raw`` (as the
        server sent it): the deal step with its proofs, or the play with its opening."""
        sv = raw.get("sealed") or {}
        act = dict(action)
        if not sv:
            return act
        h = self._hand(sv)
        if act.get("type") == "sealed" and set(act) == {"type", "step"}:
            step = act["step"]
            if step == "key":
                return self.key_step(h.number)
            if step == "shuffle":
                if (
                    h.deck is None
                    or h.hand_key is None
                    or len(h.shuffled) != len(sv.get("shuffled") or [])
                ):
                    raise self.refused(
                        f"hand {h.number}: the log's keys and shuffles are not all checked"
                    )
                out, proof = shuffle(self.ctx(h.number), h.hand_key, h.deck, self.rng)
                b64_proof = base64.b64encode(proof.encode()).decode("ascii")
                return {**act, "deck": deck_b64(out), "proof": b64_proof}
            owed = [int(i) for i in (sv.get("owed") or {}).get("items") or []]
            if step == "share":
                return {**act, "shares": [self._my_share(h, i) for i in owed]}
            if step == "open":
                return {**act, "code": h.own.get(owed[0]), **self._opening(h, owed[0])}
            if step == "reveal_key":
                return {**act, "secret": self.secret(h.number).hex()}
            raise self.error(f"unknown sealed step {step!r}")
        if act.get("type") == "play" and "item" not in act:
            code = act.get("card", act.get("tile"))
            found = [i for i, c in h.own.items() if c == code]
            if not found:
                raise self.error(f"{code!r} is not in seat {self.seat}'s hand")
            return {**act, **self._opening(h, found[0])}
        return act

    def key_step(self, hand: int) -> dict[str, Any]:
        """This seat's key for ``hand`` (made once) with a proof."""
        if self.keys.get(self.match_id, self.seat, hand) is not None:
            raise self.error(f"seat {self.seat} already made its key for hand {hand}")
        k = make_key(self.ctx(hand), self.rng)
        self.keys.put(self.match_id, self.seat, hand, k.x)
        return {"type": "sealed", "step": "key", "key": k.P.hex(), "proof": k.proof.encode().hex()}

    def _my_share(self, h: _Hand, item: int) -> dict[str, Any]:
        if h.deck is None:
            raise self.refused(f"hand {h.number}: no checked deck to share from")
        sh = make_share(self.ctx(h.number), self.secret(h.number), h.deck[item], self.rng)
        return {"item": item, "share": sh.D.hex(), "proof": sh.proof.encode().hex()}

    def _opening(self, h: _Hand, item: int) -> dict[str, Any]:
        """An item's opening: its position, this seat's share of it and the share's proof."""
        if item not in h.own:
            raise self.error(f"item {item} is not one this seat has learnt")
        return self._my_share(h, item)


def _is_card(code: str) -> bool:
    return "-" not in code


def fits(action: Mapping[str, Any], raw: Mapping[str, Any]) -> bool:
    """Whether a tile played in player form matches the end (the train's end, in Mexican
    Train) it names in the view ``raw``; any other action fits."""
    tile = action.get("tile")
    if not isinstance(tile, str):
        return True
    ends = raw.get("ends")
    if "end" in action and isinstance(ends, Mapping):
        return _matches(tile, ends.get(action["end"]))
    if "train" in action:
        trains = [t for t in raw.get("trains") or [] if t.get("train") == action["train"]]
        return bool(trains) and _matches(tile, trains[0].get("end"))
    return True


def _matches(tile: str, end: Any) -> bool:
    return isinstance(end, int) and str(end) in tile.split("-")


def _follow(legal: list[dict[str, Any]], raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The public constraint applied to the seat's own hand: a card of the suit led when the
    seat holds one (every trick game's rule over a hidden hand); in dominoes the tile called
    when the seat holds it (else a pass), and a draw or a pass only when no tile fits."""
    if any(a.get("type") == "sealed" for a in legal):
        return legal  # a deal step owed: nothing to choose
    tiles = [a for a in legal if a.get("type") == "play" and "tile" in a]
    calling = raw.get("calling")
    if isinstance(calling, str):
        mine = [a for a in tiles if a["tile"] == calling]
        return mine or [a for a in legal if a.get("type") == "pass"]
    if tiles:
        return [a for a in legal if a.get("type") not in ("draw", "pass")]
    plays = [a for a in legal if a.get("type") == "play" and "card" in a]
    if not plays:
        return legal
    held = [str(a["card"]) for a in plays]
    opened = set((raw.get("sealed") or {}).get("opened", {}).values())
    keep = list(plays)
    if raw.get("game") == "qahve":  # the jokers: JR only after JB; JB by trick 10
        if "JB" in held and sum(raw.get("tricks_by_seat") or []) == 9:
            keep = [a for a in keep if a["card"] == "JB"]
        elif "JB" not in opened:
            keep = [a for a in keep if a["card"] != "JR"]
    led = raw.get("led")
    if isinstance(led, str) and any(_suit(c) == led for c in held if not _joker(c)):
        keep = [a for a in keep if _joker(str(a["card"])) or _suit(str(a["card"])) == led]
    return [a for a in legal if a.get("type") != "play" or a in keep]


def _joker(card: str) -> bool:
    return card in ("JB", "JR")


def _suit(card: str) -> str:
    return card[-1]
