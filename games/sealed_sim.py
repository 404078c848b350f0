"""Whole sealed matches played by simulated seats, for the tests and the benchmark.

Each :class:`SimSeat` is a conforming sealed client that sees only what a seat sees: its
engine view (the public ``sealed`` block, its own items) and its own secrets. It makes its
key, its shuffle with proof, its shares, opens the items it plays and reveals its key, with
the ``sealed`` package (CPython only). A seat given a ``cheat`` misbehaves once:

- ``bad_shuffle`` / ``bad_key`` / ``bad_share`` / ``bad_reveal``: one byte of that step's
  proof (or of the revealed key) changed;
- ``bad_open``: a play that names a card other than the item's;
- ``revoke``: a card off the suit led while it holds that suit (caught at the hand's end);
- ``illegal_tile``: a tile that does not match the end it is laid on, or a play while it
  could not legally play it (dominoes; caught at the hand's end where hidden);
- ``stall``: stops at its first shuffle (the match ends by its timeout).

:func:`play_match` plays a match to its end and returns the engine, the events (as a
transcript holds them, with ``seq``) and every refused action with its error.
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sealed

from .base import Action, Chance, Engine, Event, MatchContext
from .cards import suit
from .errors import ActionError
from .registry import engine_for

CHEATS = (
    "bad_key",
    "bad_shuffle",
    "bad_share",
    "bad_open",
    "bad_reveal",
    "revoke",
    "illegal_tile",
    "stall",
)


def _flip(hexstr: str, at: int = 0) -> str:
    b = bytearray(bytes.fromhex(hexstr))
    b[at % len(b)] ^= 0x01
    return b.hex()


def _flip_b64(text: str, at: int = 0) -> str:
    b = bytearray(base64.b64decode(text))
    b[at % len(b)] ^= 0x01
    return base64.b64encode(bytes(b)).decode("ascii")


class SimSeat:
    """A sealed client for one seat, with its own secrets and random choices."""

    def __init__(self, seat: int, seed: str = "sim", cheat: str | None = None) -> None:
        if cheat is not None and cheat not in CHEATS:
            raise ValueError(f"unknown cheat {cheat!r}; known: {', '.join(CHEATS)}")
        self.seat = seat
        self.cheat = cheat
        self.cheated = False
        self.rnd = random.Random(f"{seed}/choices/{seat}")
        self.rng = sealed.FixedRandomness(f"{seed}/seat/{seat}".encode())
        self.secrets: dict[int, bytes] = {}
        self.known: dict[tuple[int, int], str] = {}  #: (hand, item) → code, as learnt

    # -- what the seat knows -----------------------------------------------------------
    def _ctx(self, sv: Mapping[str, Any]) -> sealed.Context:
        return sealed.Context(sv["match_id"], sv["hand"], self.seat)

    def _deck(self, sv: Mapping[str, Any]) -> sealed.Deck:
        return sealed.deck_from_b64(sv["deck"])

    def code_of(self, sv: Mapping[str, Any], item: int) -> str:
        """The code of an item dealt to this seat (learnt from the others' shares)."""
        hand = sv["hand"]
        if (hand, item) not in self.known:
            opened = sv["opened"].get(str(item))
            if opened is not None:
                self.known[(hand, item)] = opened
            else:
                c = self._deck(sv)[item]
                others = [bytes.fromhex(d) for s, d in sv["shares"][str(item)].items()]
                table = sealed.item_table(sv["game"], sv["items"])
                self.known[(hand, item)] = sealed.own_item(c, self.secrets[hand], others, table)
        return self.known[(hand, item)]

    def _cheat_now(self, kind: str) -> bool:
        if self.cheat == kind and not self.cheated:
            self.cheated = True
            return True
        return False

    # -- steps -------------------------------------------------------------------------
    def step(self, sv: Mapping[str, Any], step: str, items: Sequence[int]) -> Action | None:
        ctx = self._ctx(sv)
        hand = sv["hand"]
        if step == "key":
            k = sealed.make_key(ctx, self.rng)
            self.secrets[hand] = k.x
            proof = k.proof.encode().hex()
            if self._cheat_now("bad_key"):
                proof = _flip(proof, 40)
            return {"type": "sealed", "step": "key", "key": k.P.hex(), "proof": proof}
        if step == "shuffle":
            if self._cheat_now("stall"):
                return None
            P = bytes.fromhex(sv["hand_key"])
            out, pr = sealed.shuffle(ctx, P, self._deck(sv), self.rng)
            proof = base64.b64encode(pr.encode()).decode("ascii")
            if self._cheat_now("bad_shuffle"):
                proof = _flip_b64(proof, 100)
            return {
                "type": "sealed",
                "step": "shuffle",
                "deck": sealed.deck_b64(out),
                "proof": proof,
            }
        if step == "share":
            deck = self._deck(sv)
            shares: list[dict[str, Any]] = []
            for i in items:
                sh = sealed.make_share(ctx, self.secrets[hand], deck[i], self.rng)
                shares.append({"item": i, "share": sh.D.hex(), "proof": sh.proof.encode().hex()})
            if self._cheat_now("bad_share"):
                shares[-1]["proof"] = _flip(shares[-1]["proof"], 70)
            return {"type": "sealed", "step": "share", "shares": shares}
        if step == "open":
            item = items[0]
            return {"type": "sealed", "step": "open", **self.opening(sv, item)}
        if step == "reveal_key":
            secret = self.secrets[hand].hex()
            if self._cheat_now("bad_reveal"):
                secret = _flip(secret, 3)
            return {"type": "sealed", "step": "reveal_key", "secret": secret}
        raise ValueError(f"unknown step {step!r}")

    def opening(self, sv: Mapping[str, Any], item: int) -> dict[str, Any]:
        """An item's opening: its code, this seat's share and proof."""
        c = self._deck(sv)[item]
        sh = sealed.make_share(self._ctx(sv), self.secrets[sv["hand"]], c, self.rng)
        return {
            "item": item,
            "code": self.code_of(sv, item),
            "share": sh.D.hex(),
            "proof": sh.proof.encode().hex(),
        }

    # -- the game's own actions --------------------------------------------------------
    def act(self, view: Mapping[str, Any]) -> Action | None:
        sv = view["sealed"]
        owed = sv.get("owed")
        if owed is not None:
            return self.step(sv, owed["step"], owed.get("items", []))
        legal = view["legal_actions"]
        game = view["game"]
        if game in ("hokm", "shelem"):
            return self._hokm(view, sv, legal)
        if game == "iraqi_domino":
            return self._domino(view, sv, legal)
        if game == "mexican_train":
            return self._mexican(view, sv, legal)
        if game == "qahve":
            return self._qahve(view, sv, legal)
        raise ValueError(f"no simulated seat for sealed {game}")

    def _domino(
        self, view: Mapping[str, Any], sv: Mapping[str, Any], legal: list[Action]
    ) -> Action:
        items = sorted({a["item"] for a in legal if a["type"] == "play"})
        codes = {i: self.code_of(sv, i) for i in items}
        other = [a for a in legal if a["type"] != "play"]
        calling = view.get("calling")
        ends = view.get("ends")
        if calling is not None:
            mine = [i for i in items if codes[i] == calling]
            if mine and not self._cheat_now("revoke"):
                return self._lay(sv, mine[0], None)
            return dict(other[0])
        if ends is None:
            return self._lay(sv, self.rnd.choice(items), None)
        fits = [
            (i, e) for i in items for e in ("left", "right") if str(ends[e]) in codes[i].split("-")
        ]
        misfits = [
            (i, e)
            for i in items
            for e in ("left", "right")
            if str(ends[e]) not in codes[i].split("-")
        ]
        if misfits and self._cheat_now("illegal_tile"):
            i, e = self.rnd.choice(misfits)
            return self._lay(sv, i, e)
        if fits and other and self._cheat_now("revoke"):
            return dict(other[0])
        if fits:
            i, e = self.rnd.choice(fits)
            return self._lay(sv, i, e)
        return dict(other[0])

    def _qahve(self, view: Mapping[str, Any], sv: Mapping[str, Any], legal: list[Action]) -> Action:
        if legal[0]["type"] != "play":
            return dict(self.rnd.choice(view.get("suggested_actions") or legal))
        led = view.get("led")
        items = [a["item"] for a in legal]
        cards = {i: self.code_of(sv, i) for i in items}
        hand = list(cards.values())
        if "JB" in hand and view.get("trick_number") == 9:
            allowed = [i for i in items if cards[i] == "JB"]
        else:
            allowed = [
                i
                for i in items
                if (cards[i] != "JR" or view.get("jb_played"))
                and (
                    led is None
                    or cards[i] in ("JB", "JR")
                    or suit(cards[i]) == led
                    or not any(c not in ("JB", "JR") and suit(c) == led for c in hand)
                )
            ]
        off = [i for i in items if i not in allowed and (cards[i] != "JR" or view.get("jb_played"))]
        item = self.rnd.choice(off if off and self._cheat_now("revoke") else allowed)
        opening = self.opening(sv, item)
        card = opening.pop("code")
        return {"type": "play", "card": card, **opening}

    def _mexican(
        self, view: Mapping[str, Any], sv: Mapping[str, Any], legal: list[Action]
    ) -> Action:
        ends = {t["train"]: t["end"] for t in view["trains"]}
        plays = [a for a in legal if a["type"] == "play"]
        other = [a for a in legal if a["type"] != "play"]
        codes = {a["item"]: self.code_of(sv, a["item"]) for a in plays}

        def fits(a: Action) -> bool:
            return str(ends[a["train"]]) in codes[a["item"]].split("-")

        good = [a for a in plays if fits(a)]
        bad = [a for a in plays if not fits(a)]
        if bad and self._cheat_now("illegal_tile"):
            choice = self.rnd.choice(bad)
        elif good and other and self._cheat_now("revoke"):
            return dict(other[0])
        elif good:
            choice = self.rnd.choice(good)
        else:
            return dict(other[0])
        opening = self.opening(sv, choice["item"])
        tile = opening.pop("code")
        return {"type": "play", "tile": tile, "train": choice["train"], **opening}

    def _lay(self, sv: Mapping[str, Any], item: int, end: str | None) -> Action:
        opening = self.opening(sv, item)
        tile = opening.pop("code")
        out: Action = {"type": "play", "tile": tile, **opening}
        if end is not None:
            out["end"] = end
        return out

    def _hokm(self, view: Mapping[str, Any], sv: Mapping[str, Any], legal: list[Action]) -> Action:
        kind = legal[0]["type"]
        if kind != "play":
            return dict(self.rnd.choice(view.get("suggested_actions") or legal))
        led = view.get("led")
        items = [a["item"] for a in legal]
        cards = {i: self.code_of(sv, i) for i in items}
        follow = [i for i in items if led is None or suit(cards[i]) == led]
        off = [i for i in items if led is not None and suit(cards[i]) != led]
        if follow and off and self._cheat_now("revoke"):
            item = self.rnd.choice(off)
        else:
            item = self.rnd.choice(follow or items)
        opening = self.opening(sv, item)
        card = opening.pop("code")
        if self._cheat_now("bad_open"):
            others = [c for c in sv["items"] if c != card]
            card = self.rnd.choice(others)
        return {"type": "play", "card": card, **opening}


@dataclass
class SimResult:
    engine: Engine
    events: list[Event]
    refused: list[tuple[int, Action, ActionError]] = field(default_factory=list)
    key: bytes = b""
    ctx: MatchContext | None = None
    ruleset: dict[str, Any] = field(default_factory=dict)


def play_match(
    game: str,
    ruleset: Mapping[str, Any] | None = None,
    *,
    seed: str = "sim",
    house: Sequence[int] = (),
    cheats: Mapping[int, str] | None = None,
    max_steps: int = 100_000,
) -> SimResult:
    """Play a sealed match of ``game`` to its end with simulated seats (``cheats``: seat →
    cheat). A refused action is recorded and the seat asked again (it then plays honestly);
    a seat that stalls ends the match by its timeout."""
    raw = {**(ruleset or {}), "deal": "sealed"}
    cls = engine_for(game, raw)
    parsed = cls.parse_ruleset(raw)
    key = hashlib.sha512(f"qahwa sealed sim key/{seed}".encode()).digest()
    ctx = MatchContext(f"sim-{seed}", house=tuple(house))
    engine = cls(parsed, Chance(key), ctx)
    events: list[Event] = []

    def record(evs: list[Event]) -> None:
        for ev in evs:
            events.append({"seq": len(events), **ev})

    record(engine.chance.take_events())
    seats = [SimSeat(s, seed, (cheats or {}).get(s)) for s in range(engine.n_seats)]
    result = SimResult(engine, events, key=key, ctx=ctx, ruleset=parsed)
    for _ in range(max_steps):
        if engine.outcome is not None:
            return result
        seat = engine.turn
        assert seat is not None
        action = seats[seat].act(engine.view(seat))
        if action is None:
            record(engine.end_match("timeout", seat))
            continue
        try:
            record(engine.apply(seat, action))
        except ActionError as exc:
            result.refused.append((seat, action, exc))
    raise RuntimeError(f"the match did not end in {max_steps} steps")


__all__ = ["CHEATS", "SimResult", "SimSeat", "play_match"]
