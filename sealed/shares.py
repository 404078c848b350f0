"""Decryption shares with Chaum–Pedersen proofs, and openings (fairness-v3 §6, §7)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce

from .context import Context
from .errors import SealedError
from .group import Proof, add, base, from_int, mul, point, s_muladd, sub, to_int, total
from .masking import Ciphertext
from .points import item_point
from .randomness import Randomness, SystemRandomness


@dataclass(frozen=True, slots=True)
class ShareProof(Proof):
    """R1 || R2 || s (96 bytes): log_G(P) = log_A(D); its challenge e = Hs("qahwa-fair/3
    share" || 0x00 || ctx || G || P || A || B || D || R1 || R2)."""

    LABEL = "share"
    R1: bytes
    R2: bytes
    s: bytes


@dataclass(frozen=True, slots=True)
class Share:
    """Seat ``ctx.seat``'s share D = x·A of one ciphertext, with its proof."""

    D: bytes
    proof: ShareProof


def make_share(ctx: Context, x: bytes, c: Ciphertext, rng: Randomness | None = None) -> Share:
    rng = rng or SystemRandomness()
    P = base(x)
    D = mul(x, c.A)
    k = rng.scalar()
    R1, R2 = base(k), mul(k, c.A)
    e = ShareProof.challenge(ctx.encode(), P, c.A, c.B, D, R1, R2)
    return Share(D, ShareProof(R1, R2, s_muladd(e, x, k)))


def verify_share(ctx: Context, P: bytes, c: Ciphertext, share: Share) -> None:
    """Refuse unless ``share.D`` is x·A for the x of key P (the seat of ``ctx``)."""
    point(P, "share key")
    point(share.D, "share")
    pr = share.proof
    e = ShareProof.challenge(ctx.encode(), P, c.A, c.B, share.D, pr.R1, pr.R2)
    if base(pr.s) != add(pr.R1, mul(e, P)) or mul(pr.s, c.A) != add(pr.R2, mul(e, share.D)):
        raise SealedError(f"share of seat {ctx.seat}: the proof does not verify")


def verify_shares(ctx: Context, P: bytes, shares: Sequence[tuple[Ciphertext, Share]]) -> None:
    """Refuse unless every share verifies, as :func:`verify_share` checks it, for the key P
    of one seat (a share step's shares, ``(ciphertext, share)`` each).

    The proofs' first equations, s·G = R1 + e·P, are checked at once as one random linear
    combination, (Σ wᵢsᵢ)·G = Σ wᵢ·R1ᵢ + (Σ wᵢeᵢ)·P, with this verifier's own random
    128-bit weights wᵢ (os.urandom): when any equation fails the combination holds with
    probability at most 2⁻¹²⁸. It saves a fixed-base multiplication a share. Each second
    equation, s·A = R2 + e·D, is checked on its own: its points are its own, so a weighted sum
    would multiply R2 as well (libsodium has no multi-scalar multiplication). When anything
    fails, the shares are checked one by one, which names the first that fails with
    :func:`verify_share`'s refusal."""
    if len(shares) < 2:
        for c, sh in shares:
            verify_share(ctx, P, c, sh)
        return
    point(P, "share key")
    encoded = ctx.encode()
    g = ep = 0
    r1: list[bytes] = []
    try:
        for c, sh in shares:
            point(sh.D, "share")
            pr = sh.proof
            e = ShareProof.challenge(encoded, P, c.A, c.B, sh.D, pr.R1, pr.R2)
            if mul(pr.s, c.A) != add(pr.R2, mul(e, sh.D)):
                raise SealedError("a second equation fails")
            w = int.from_bytes(os.urandom(16), "little")
            g += w * to_int(pr.s)
            ep += w * to_int(e)
            r1.append(mul(from_int(w), pr.R1))
        if base(from_int(g)) == add(total(r1), mul(from_int(ep), P)):
            return
    except SealedError:
        pass  # named below, in order
    for c, sh in shares:
        verify_share(ctx, P, c, sh)
    raise AssertionError("a share step's combination failed while each of its shares verifies")


def unmask(c: Ciphertext, shares: list[bytes]) -> bytes:
    """M = B − Σ D over every seat's share."""
    return reduce(sub, shares, c.B)


def own_item(c: Ciphertext, x: bytes, others: list[bytes], table: dict[bytes, str]) -> str:
    """What the owner learns: B − Σ others' shares − x·A, named through the item table."""
    m = sub(unmask(c, others), mul(x, c.A))
    code = table.get(m)
    if code is None:
        raise SealedError("own item: the shares do not open this ciphertext to an item")
    return code


def check_opening(
    game: str,
    code: str,
    c: Ciphertext,
    ctx: Context,
    keys: list[bytes],
    shares: list[Share],
) -> None:
    """An opening: every seat's share verified (seat i with key keys[i]) and the shares
    open ``c`` to M(game, code)."""
    if len(shares) != len(keys):
        raise SealedError(f"opening: {len(keys)} shares expected, got {len(shares)}")
    for seat, (P, sh) in enumerate(zip(keys, shares, strict=True)):
        verify_share(ctx.for_seat(seat), P, c, sh)
    if unmask(c, [sh.D for sh in shares]) != item_point(game, code):
        raise SealedError(f"opening: the shares do not open this ciphertext to {code!r}")
