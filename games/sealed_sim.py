"""Simulated seats of sealed matches, for the tests, the benchmark and the transcripts of
:func:`games.transcript.simulate_match`.

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

``tests/support/sealed_play.py`` plays a match of them to its end.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Mapping
from typing import Any

import sealed

from .base import Action, Engine
from .cards import suit
from .sealed_base import SealedGame
from .sealed_deal import DealMachine
from .sealed_seat import SealedSeat

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


def _bad_step(step: str, action: Action) -> Action:
    """A deal step with one byte of its proof (or of the revealed key) changed."""
    if step == "shuffle":
        return {**action, "proof": _flip_b64(action["proof"], 100)}
    if step == "share":
        shares = [*action["shares"][:-1], dict(action["shares"][-1])]
        shares[-1]["proof"] = _flip(shares[-1]["proof"], 70)
        return {**action, "shares": shares}
    if step == "reveal_key":
        return {**action, "secret": _flip(action["secret"], 3)}
    return {**action, "proof": _flip(action["proof"], 40)}


#: the cheat of each deal step that sends it with one byte changed
BAD_STEPS = {
    "key": "bad_key",
    "shuffle": "bad_shuffle",
    "share": "bad_share",
    "reveal_key": "bad_reveal",
}


def _revokes(action: Action, view: Mapping[str, Any]) -> bool:
    """A listed action the rules over a hidden hand forbid, caught only at the hand's end: a
    draw or a pass while a tile fits, a card off the suit led (a joker is never one)."""
    led, card = view.get("led"), action.get("card")
    if action["type"] in ("draw", "pass"):
        return True
    return (
        isinstance(led, str)
        and isinstance(card, str)
        and card not in ("JB", "JR")
        and (suit(card) != led)
    )


class SimSeat:
    """A sealed client for one seat, with its own secrets and random choices: the seat's
    protocol side is :class:`games.sealed_seat.SealedSeat`, running the engine's own deal
    machine (in the engine's process: the engine checked every step before it applied it)."""

    def __init__(self, seat: int, seed: str = "sim", cheat: str | None = None) -> None:
        if cheat is not None and cheat not in CHEATS:
            raise ValueError(f"unknown cheat {cheat!r}; known: {', '.join(CHEATS)}")
        self.seat = seat
        self.seed = seed
        self.cheat = cheat
        self.cheated = False
        self.rnd = random.Random(f"{seed}/choices/{seat}")
        self.side: SealedSeat | None = None
        self._retry: Action | None = None  # the honest step after a bad one was refused

    def _cheat_now(self, kind: str) -> bool:
        if self.cheat == kind and not self.cheated:
            self.cheated = True
            return True
        return False

    def act(self, view: Mapping[str, Any], engine: Engine) -> Action | None:
        """The seat's action in the view (None: it stalls), made with ``engine``'s machine."""
        sv = view["sealed"]
        if self.side is None or self.side.machine.engine is not engine:
            rng = sealed.FixedRandomness(f"{self.seed}/seat/{self.seat}".encode())
            keys = self.side.keys if self.side is not None else None
            machine = DealMachine.of_engine(engine)
            self.side = SealedSeat(machine, sv["match_id"], self.seat, keys, rng=rng)
        side = self.side
        owed = side.machine.owed
        if owed is not None:
            return self._step(side, str(owed["step"]))
        raw: list[Action] = view["legal_actions"]
        if not any(a["type"] == "play" for a in raw):  # bids, trumps, discards
            return dict(self.rnd.choice(view.get("suggested_actions") or raw))
        legal = side.view(dict(view))["legal_actions"]  # its own items learnt first
        listed = side.listed()
        misfits = [a for a in listed if "tile" in a and _misfit(engine, a)]
        off = [a for a in listed if a not in legal and _revokes(a, view)]
        if misfits and self._cheat_now("illegal_tile"):
            choice = self.rnd.choice(misfits)
        elif off and self._cheat_now("revoke"):
            choice = self.rnd.choice(off)
        else:
            choice = self.rnd.choice(legal)
        action = side.wire(choice)
        if "card" in action and self._cheat_now("bad_open"):
            action["card"] = self.rnd.choice([c for c in sv["items"] if c != action["card"]])
        return action

    def _step(self, side: SealedSeat, step: str) -> Action | None:
        if self._retry is not None:
            action, self._retry = self._retry, None
            return action
        if step == "shuffle" and self._cheat_now("stall"):
            return None
        action = side.wire({"type": "sealed", "step": step})
        if step in BAD_STEPS and self._cheat_now(BAD_STEPS[step]):
            self._retry = action
            return _bad_step(step, action)
        return action


def _misfit(engine: Engine, action: Action) -> bool:
    """A tile play whose tile does not match the end (the train's end) it names: refused at
    once (an opening call's tiles are not misfits)."""
    if getattr(engine, "call", None) is not None or not isinstance(engine, SealedGame):
        return False
    return not engine._may_play(engine.turn or 0, action, str(action["tile"]), {})
