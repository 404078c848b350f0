"""A sealed seat's secrets and what it makes with them (qahwa-fair/3, fairness-v3 §3–§7):
the cryptography only.

:class:`SeatSecrets` makes a seat's per-hand key (from the OS's CSPRNG through libsodium, or
from the :class:`~sealed.randomness.Randomness` it is given) and keeps it in a
:class:`SealedKeys` store until the hand ends; it makes the seat's shuffle with its proof,
its decryption shares with their proofs, the opening of an item it plays, learns its own
items from the others' shares, and reveals its key. What the seat owes, which items are
whose and when the hand's play is over are not its business: the seat's deal machine says
(:mod:`games.sealed_deal`, run by the seat of :mod:`games.sealed_seat`). It refuses by
itself, whatever it is asked (defence in depth, fairness-v3 "The conforming sealed seat"):

- a share of an item dealt to this seat (the share of an item is made only for another
  seat's item; this seat's own share of its item goes only in the item's opening);
- the opening of an item not dealt to this seat;
- the hand secret before the hand's play is over.

Secrets are kept in a :class:`SealedKeys` store: this process's memory by default; house
bots keep theirs sealed under the operator's master key (service/house.py ``SealedKeyDir``),
so a restarted bot goes on with its hand.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Collection, Sequence
from typing import Protocol

from .context import Context
from .errors import SealedError
from .masking import Ciphertext, Deck, deck_b64
from .randomness import Randomness
from .shares import make_share, own_item
from .shuffle_proof import shuffle


class SecretRefused(SealedError):
    """What was asked of the seat's secrets would give away one of its items or its key."""


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


class SeatSecrets:
    """One seat's secrets at a sealed match, and every value made with them (no I/O, no
    rule of any game). ``rng``: where keys, shuffles and shares draw from (None: the OS)."""

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

    def ctx(self, hand: int) -> Context:
        return Context(self.match_id, hand, self.seat)

    def _secret(self, hand: int) -> bytes:
        x = self.keys.get(self.match_id, self.seat, hand)
        if x is None:
            raise SealedError(
                f"seat {self.seat} holds no key for hand {hand}: act through the handle "
                "(or the key store) that made its key step"
            )
        return x

    def key_step(self, hand: int) -> dict[str, str]:
        """This seat's key for ``hand`` (made once) with its proof (§3)."""
        from .keys import make_key

        if self.keys.get(self.match_id, self.seat, hand) is not None:
            raise SealedError(f"seat {self.seat} already made its key for hand {hand}")
        k = make_key(self.ctx(hand), self.rng)
        self.keys.put(self.match_id, self.seat, hand, k.x)
        return {"type": "sealed", "step": "key", "key": k.P.hex(), "proof": k.proof.encode().hex()}

    def shuffle_step(self, hand: int, hand_key: bytes, deck: Deck) -> dict[str, str]:
        """This seat's shuffle of ``deck`` under the hand key, with its proof (§5)."""
        out, proof = shuffle(self.ctx(hand), hand_key, deck, self.rng)
        b64_proof = base64.b64encode(proof.encode()).decode("ascii")
        return {"type": "sealed", "step": "shuffle", "deck": deck_b64(out), "proof": b64_proof}

    def share(
        self, hand: int, item: int, c: Ciphertext, mine: Collection[int]
    ) -> dict[str, int | str]:
        """This seat's decryption share of another seat's ``item`` with its proof (§6).
        ``mine``: every item dealt to this seat this hand; a share of one of them is refused."""
        if item in mine:
            raise SecretRefused(
                f"hand {hand}: item {item} is dealt to seat {self.seat}: its share goes only "
                "in the item's opening, when the seat plays it"
            )
        sh = make_share(self.ctx(hand), self._secret(hand), c, self.rng)
        return {"item": item, "share": sh.D.hex(), "proof": sh.proof.encode().hex()}

    def opening(
        self, hand: int, item: int, c: Ciphertext, mine: Collection[int]
    ) -> dict[str, int | str]:
        """The opening of this seat's own ``item`` as it plays it (§7): its share and proof.
        An item not dealt to this seat (``mine``) is refused."""
        if item not in mine:
            raise SecretRefused(f"hand {hand}: item {item} is not dealt to seat {self.seat}")
        sh = make_share(self.ctx(hand), self._secret(hand), c, self.rng)
        return {"item": item, "share": sh.D.hex(), "proof": sh.proof.encode().hex()}

    def learn(
        self, hand: int, c: Ciphertext, others: Sequence[bytes], table: dict[bytes, str]
    ) -> str:
        """The code of this seat's own item ``c`` from every other seat's share of it."""
        return own_item(c, self._secret(hand), list(others), table)

    def reveal(self, hand: int, play_over: bool) -> dict[str, str]:
        """The hand's secret key (§3, §10): only once the hand's play is over."""
        if not play_over:
            raise SecretRefused(
                f"hand {hand}: its play is not over: seat {self.seat}'s key stays with it"
            )
        return {"type": "sealed", "step": "reveal_key", "secret": self._secret(hand).hex()}
