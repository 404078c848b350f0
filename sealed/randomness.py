"""Where a prover's scalars and permutations come from.

Real use draws them from libsodium's CSPRNG (``SystemRandomness``). The test vectors of
fairness-v3 §11 draw them from ``FixedRandomness``, a hash counter, so that anyone can
recompute the proof bytes; it must never be used for a real deal.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Protocol

from .group import lp, random_scalar, reduce64, u32be


class Randomness(Protocol):
    def scalar(self) -> bytes: ...

    def below(self, n: int) -> int: ...


class SystemRandomness:
    def scalar(self) -> bytes:
        return random_scalar()

    def below(self, n: int) -> int:
        return secrets.randbelow(n)


class FixedRandomness:
    """k-th output = SHA-512("qahwa-fair/3 test randomness" || 0x00 || lp(seed) || u32be(k));
    a scalar is it mod ℓ, ``below(n)`` is its first 8 bytes (big-endian) mod n."""

    DOMAIN = b"qahwa-fair/3 test randomness"

    def __init__(self, seed: bytes) -> None:
        self._prefix = self.DOMAIN + b"\x00" + lp(seed)
        self._k = 0

    def _next(self) -> bytes:
        out = hashlib.sha512(self._prefix + u32be(self._k)).digest()
        self._k += 1
        return out

    def scalar(self) -> bytes:
        return reduce64(self._next())

    def below(self, n: int) -> int:
        return int.from_bytes(self._next()[:8], "big") % n


def permutation(n: int, rng: Randomness) -> list[int]:
    """A uniform permutation ψ of 0..n-1 (Fisher–Yates: for i = n-1 down to 1, swap i with
    below(i+1)); output position i takes input ψ[i]."""
    psi = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.below(i + 1)
        psi[i], psi[j] = psi[j], psi[i]
    return psi
