"""Per-seat, per-hand keys with a Schnorr proof of knowledge (fairness-v3 §3)."""

from __future__ import annotations

from dataclasses import dataclass

from .context import Context
from .errors import SealedError
from .group import IDENTITY, Proof, add, base, mul, point, s_muladd, scalar, total
from .randomness import Randomness, SystemRandomness


@dataclass(frozen=True, slots=True)
class KeyProof(Proof):
    """R || s (64 bytes); its challenge e = Hs("qahwa-fair/3 key" || 0x00 || ctx || G || P ||
    R)."""

    LABEL = "key"
    R: bytes
    s: bytes


@dataclass(frozen=True, slots=True)
class SeatKey:
    """A seat's secret x for one hand, its public P = x·G and the proof."""

    x: bytes
    P: bytes
    proof: KeyProof


def make_key(ctx: Context, rng: Randomness | None = None) -> SeatKey:
    rng = rng or SystemRandomness()
    x = rng.scalar()
    P = base(x)
    k = rng.scalar()
    R = base(k)
    e = KeyProof.challenge(ctx.encode(), P, R)
    return SeatKey(x, P, KeyProof(R, s_muladd(e, x, k)))


def verify_key(ctx: Context, P: bytes, proof: KeyProof) -> None:
    """Refuse (SealedError) unless ``proof`` shows knowledge of log_G(P) for this context."""
    point(P, f"key of seat {ctx.seat}")
    if P == IDENTITY:
        raise SealedError(f"key of seat {ctx.seat}: the identity is not a key")
    e = KeyProof.challenge(ctx.encode(), P, proof.R)
    if base(proof.s) != add(proof.R, mul(e, P)):
        raise SealedError(f"key of seat {ctx.seat}: the proof of knowledge does not verify")


def hand_key(keys: list[bytes]) -> bytes:
    """The hand key: the sum of every seat's key, in seat order."""
    if not keys:
        raise SealedError("hand key: no seat keys")
    return total(keys)


def check_revealed(P: bytes, x: bytes, seat: int) -> None:
    """A key revealed at the hand's end must be the one committed to."""
    scalar(x, f"revealed key of seat {seat}")
    if base(x) != P:
        raise SealedError(f"revealed key of seat {seat} does not match its public key")
