"""Decryption shares with Chaum–Pedersen proofs, and openings (fairness-v3 §6, §7)."""

from __future__ import annotations

from dataclasses import dataclass

from .context import Context
from .errors import SealedError
from .group import Proof, add, base, mul, point, s_muladd, sub
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


def unmask(c: Ciphertext, shares: list[bytes]) -> bytes:
    """M = B − Σ D over every seat's share."""
    acc = c.B
    for D in shares:
        acc = sub(acc, D)
    return acc


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
