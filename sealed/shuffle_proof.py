"""A re-masking shuffle with a Terelius–Wikström proof (fairness-v3 §5).

The proof follows the pseudo-code of Haenni, Locher, Koenig and Dubuis, "Pseudo-code
algorithms for verifiable re-encryption mix-nets" (FC 2017 workshops), written additively
over ristretto255 and with the ciphertext halves named as here ((A, B) = (r·G, M + r·P)):
a commitment to the permutation, a commitment chain over the challenges, and five
equations. Fiat–Shamir covers the whole statement: the domain, the context (match, hand,
seat), n, G and every generator, the hand key, both decks and every commitment.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import reduce
from itertools import islice
from typing import Any

from .context import Context
from .errors import SealedError
from .group import (
    IDENTITY,
    G,
    L,
    add,
    base,
    from_int,
    hash_scalar,
    mul,
    point,
    random_scalar,
    s_add,
    s_mul,
    s_muladd,
    scalar,
    sub,
    to_int,
    total,
    u32be,
)
from .masking import Ciphertext, Deck, encode_deck
from .points import MAX_ITEMS, generators
from .randomness import Randomness, SystemRandomness, permutation

SHUFFLE_DOMAIN = b"qahwa-fair/3 shuffle\x00"
CHALLENGE_DOMAIN = b"qahwa-fair/3 shuffle challenge\x00"
#: the proof's fields of n elements each (the others are one element)
_VECTORS = ("c", "chat", "that", "shat", "sprime")


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """The proof's elements, in the order of their encoding (§5.4)."""

    c: tuple[bytes, ...]  # permutation commitment, by input position
    chat: tuple[bytes, ...]  # commitment chain ĉ_0..ĉ_{n-1}
    t1: bytes
    t2: bytes
    t3: bytes
    t4A: bytes
    t4B: bytes
    that: tuple[bytes, ...]  # t̂_0..t̂_{n-1}
    s1: bytes
    s2: bytes
    s3: bytes
    s4: bytes
    shat: tuple[bytes, ...]
    sprime: tuple[bytes, ...]

    @property
    def n(self) -> int:
        return len(self.c)

    def encode(self) -> bytes:
        parts = [getattr(self, name) for name in self.__match_args__]
        return b"".join(b"".join(p) if isinstance(p, tuple) else p for p in parts)

    @classmethod
    def decode(cls, raw: bytes, n: int) -> ShuffleProof:
        if not isinstance(raw, bytes) or len(raw) != proof_size(n):
            raise SealedError(f"shuffle proof: {proof_size(n)} bytes expected for {n} items")
        words = [raw[32 * k : 32 * k + 32] for k in range(len(raw) // 32)]
        pts = [point(w, f"shuffle proof element {k}") for k, w in enumerate(words[: 3 * n + 5])]
        scs = [
            scalar(w, f"shuffle proof element {3 * n + 5 + k}")
            for k, w in enumerate(words[3 * n + 5 :])
        ]
        values = iter([*pts, *scs])  # the fields in order, n elements for each vector
        names: tuple[str, ...] = cls.__match_args__
        fields: list[Any] = [
            tuple(islice(values, n)) if k in _VECTORS else next(values) for k in names
        ]
        return cls(*fields)


def proof_size(n: int) -> int:
    """32·(5n + 9) bytes."""
    return 32 * (5 * n + 9)


def statement_seed(
    ctx: Context, P: bytes, deck_in: Deck, deck_out: Deck, c: tuple[bytes, ...] | list[bytes]
) -> bytes:
    """σ = SHA-512("qahwa-fair/3 shuffle" || 0x00 || ctx || u32be(n) || G || H(0) || … || H(n)
    || P || deck_in || deck_out || c_0 || … || c_{n-1})."""
    n = len(deck_in)
    h = hashlib.sha512(SHUFFLE_DOMAIN)
    h.update(ctx.encode())
    h.update(u32be(n))
    h.update(G)
    h.update(b"".join(generators(n)))
    h.update(P)
    h.update(encode_deck(deck_in))
    h.update(encode_deck(deck_out))
    h.update(b"".join(c))
    return h.digest()


def challenges(seed: bytes, n: int) -> list[bytes]:
    """u_j = Hs(σ || u32be(j)), j = 0..n-1."""
    return [hash_scalar(seed, u32be(j)) for j in range(n)]


def main_challenge(
    seed: bytes,
    chat: tuple[bytes, ...] | list[bytes],
    t: tuple[bytes, bytes, bytes, bytes, bytes],
    that: tuple[bytes, ...] | list[bytes],
) -> bytes:
    """c = Hs("qahwa-fair/3 shuffle challenge" || 0x00 || σ || ĉ_0..ĉ_{n-1} || t1 || t2 || t3
    || t4A || t4B || t̂_0..t̂_{n-1})."""
    return hash_scalar(CHALLENGE_DOMAIN, seed, *chat, *t, *that)


def _check_sizes(deck_in: Deck, n_out: int | None = None) -> int:
    n = len(deck_in)
    if not 1 <= n <= MAX_ITEMS:
        raise SealedError(f"shuffle: a deck of 1..{MAX_ITEMS} items expected")
    if n_out is not None and n_out != n:
        raise SealedError(f"shuffle: the output deck has {n_out} items, the input {n}")
    return n


def shuffle(
    ctx: Context,
    P: bytes,
    deck_in: Deck,
    rng: Randomness | None = None,
) -> tuple[Deck, ShuffleProof]:
    """Re-mask and permute ``deck_in`` under hand key ``P``; return the new deck and its proof.

    Draws from ``rng`` in this order (the vectors depend on it): the permutation ψ
    (``permutation``), then r'_0..r'_{n-1}, r_0..r_{n-1}, r̂_0..r̂_{n-1}, ω1, ω2, ω3, ω4,
    ω̂_0..ω̂_{n-1}, ω'_0..ω'_{n-1}.
    """
    rng = rng or SystemRandomness()
    n = _check_sizes(deck_in)
    gens = generators(n)
    h, hs = gens[0], gens[1:]
    psi = permutation(n, rng)
    rp = [rng.scalar() for _ in range(n)]
    # the shuffle: output i is input ψ(i) re-masked with r'_i (an identity first half,
    # as in the starting deck, needs no addition: public)
    out: list[Ciphertext] = []
    for i in range(n):
        src = deck_in[psi[i]]
        rG = base(rp[i])
        out.append(
            Ciphertext(rG if src.A == IDENTITY else add(src.A, rG), add(src.B, mul(rp[i], P)))
        )
    deck_out = tuple(out)
    # permutation commitment: c_{ψ(i)} = r_{ψ(i)}·G + h_i
    r = [rng.scalar() for _ in range(n)]
    c: list[bytes] = [IDENTITY] * n
    for i in range(n):
        j = psi[i]
        c[j] = add(base(r[j]), hs[i])
    seed = statement_seed(ctx, P, deck_in, deck_out, c)
    u = challenges(seed, n)
    up = [u[psi[i]] for i in range(n)]
    # commitment chain: ĉ_i = r̂_i·G + u'_i·ĉ_{i-1}, ĉ_{-1} = h
    rhat = [rng.scalar() for _ in range(n)]
    chat: list[bytes] = []
    prev = h
    for i in range(n):
        prev = add(base(rhat[i]), mul(up[i], prev))
        chat.append(prev)
    w1, w2, w3, w4 = rng.scalar(), rng.scalar(), rng.scalar(), rng.scalar()
    what = [rng.scalar() for _ in range(n)]
    wp = [rng.scalar() for _ in range(n)]
    t1 = base(w1)
    t2 = base(w2)
    t3 = reduce(add, (mul(wp[i], hs[i]) for i in range(n)), base(w3))
    t4A = sub(IDENTITY, base(w4))  # −ω4·G
    t4B = sub(IDENTITY, mul(w4, P))  # −ω4·P
    for i in range(n):
        t4A = add(t4A, mul(wp[i], deck_out[i].A))
        t4B = add(t4B, mul(wp[i], deck_out[i].B))
    that: list[bytes] = []
    prev = h
    for i in range(n):
        that.append(add(base(what[i]), mul(wp[i], prev)))
        prev = chat[i]
    ch = main_challenge(seed, chat, (t1, t2, t3, t4A, t4B), that)
    # the witnesses' combinations (secret: libsodium's scalar arithmetic)
    rbar = reduce(s_add, r[1:], r[0])
    rhat_sum = rhat[n - 1]
    v = from_int(1)
    for i in range(n - 2, -1, -1):
        v = s_mul(up[i + 1], v)
        rhat_sum = s_muladd(rhat[i], v, rhat_sum)
    rtilde = s_mul(r[0], u[0])
    for j in range(1, n):
        rtilde = s_muladd(r[j], u[j], rtilde)
    rprime = s_mul(rp[0], up[0])
    for i in range(1, n):
        rprime = s_muladd(rp[i], up[i], rprime)
    proof = ShuffleProof(
        c=tuple(c),
        chat=tuple(chat),
        t1=t1,
        t2=t2,
        t3=t3,
        t4A=t4A,
        t4B=t4B,
        that=tuple(that),
        s1=s_muladd(ch, rbar, w1),
        s2=s_muladd(ch, rhat_sum, w2),
        s3=s_muladd(ch, rtilde, w3),
        s4=s_muladd(ch, rprime, w4),
        shat=tuple(s_muladd(ch, rhat[i], what[i]) for i in range(n)),
        sprime=tuple(s_muladd(ch, up[i], wp[i]) for i in range(n)),
    )
    return deck_out, proof


def _lincomb(terms: list[tuple[int, bytes]]) -> bytes:
    """Σ k·Q over public scalars k (ints); identity points and zero scalars skipped."""
    return total(mul(from_int(k), Q) for k, Q in terms if Q != IDENTITY and k % L)


def verify_shuffle(
    ctx: Context, P: bytes, deck_in: Deck, deck_out: Deck, proof: ShuffleProof
) -> None:
    """Refuse (SealedError naming the failed equation) unless ``proof`` shows that
    ``deck_out`` is ``deck_in`` permuted and re-masked under ``P``.

    The five equations of §5.5 are checked at once, as one random linear combination (the
    weights are this verifier's own random scalars: a false proof passes with probability
    at most 1/ℓ); only when that fails are they checked one by one, to name the one that
    fails."""
    st = _Statement.of(ctx, P, deck_in, deck_out, proof)
    if not _batch_holds(st):
        _name_failure(st)
        raise SealedError(f"shuffle proof of seat {ctx.seat}: the equations fail")


@dataclass(frozen=True, slots=True)
class _Statement:
    """What a shuffle proof is checked over: the statement, the proof and its challenges
    (``u`` and ``c`` as integers, ``U`` = ∏ u_j mod ℓ)."""

    ctx: Context
    n: int
    u: list[int]
    c: int
    U: int
    P: bytes
    deck_in: Deck
    deck_out: Deck
    pr: ShuffleProof

    @classmethod
    def of(
        cls, ctx: Context, P: bytes, deck_in: Deck, deck_out: Deck, proof: ShuffleProof
    ) -> _Statement:
        n = _check_sizes(deck_in, len(deck_out))
        sizes = (proof.n, len(proof.chat), len(proof.that), len(proof.shat), len(proof.sprime))
        if any(k != n for k in sizes):
            raise SealedError(f"shuffle proof: made for {proof.n} items, the decks have {n}")
        point(P, "hand key")
        seed = statement_seed(ctx, P, deck_in, deck_out, proof.c)
        u = [to_int(x) for x in challenges(seed, n)]
        pr = proof
        c = to_int(main_challenge(seed, pr.chat, (pr.t1, pr.t2, pr.t3, pr.t4A, pr.t4B), pr.that))
        U = 1
        for uj in u:
            U = U * uj % L
        return cls(ctx, n, u, c, U, P, deck_in, deck_out, proof)


def _weight() -> int:
    return to_int(random_scalar())


def _batch_holds(st: _Statement) -> bool:
    """Σ over the five equations, each times a random weight (equation 5 one weight for
    each i, equation 4 one for each half), is the identity; each distinct point is
    multiplied once."""
    n, u, c, P, deck_in, deck_out, pr = st.n, st.u, st.c, st.P, st.deck_in, st.deck_out, st.pr
    gens = generators(n)
    h, hs = gens[0], gens[1:]
    d1, d2, d3, d4a, d4b = 1, _weight(), _weight(), _weight(), _weight()
    d5 = [_weight() for _ in range(n)]
    sp = [to_int(x) for x in pr.sprime]
    g = -d1 * to_int(pr.s1) - d2 * to_int(pr.s2) - d3 * to_int(pr.s3)
    g += (d4a * to_int(pr.s4)) - sum(d5[i] * to_int(pr.shat[i]) for i in range(n))
    terms: list[tuple[int, bytes]] = [
        (d2, pr.t2),
        (d3, pr.t3),
        (d4a, pr.t4A),
        (d4b, pr.t4B),
        (d4b * to_int(pr.s4), P),
        (-d2 * c * st.U - d5[0] * sp[0], h),
    ]
    for j in range(n):
        terms.append((d1 * c + d3 * c * u[j], pr.c[j]))
        terms.append((d4a * c * u[j], deck_in[j].A))
        terms.append((d4b * c * u[j], deck_in[j].B))
    for i in range(n):
        terms.append((-d1 * c - d3 * sp[i], hs[i]))
        terms.append((-d4a * sp[i], deck_out[i].A))
        terms.append((-d4b * sp[i], deck_out[i].B))
        terms.append((d5[i], pr.that[i]))
        nxt = -d5[i + 1] * sp[i + 1] if i + 1 < n else d2 * c
        terms.append((d5[i] * c + nxt, pr.chat[i]))
    acc = add(base(from_int(g)), pr.t1)  # t1's weight d1 is 1
    return add(acc, _lincomb(terms)) == IDENTITY


def _name_failure(st: _Statement) -> None:
    """The equations of §5.5 one by one: raise naming the first that fails."""
    n, u, c, P, deck_in, deck_out, pr = st.n, st.u, st.c, st.P, st.deck_in, st.deck_out, st.pr
    gens = generators(n)
    h, hs = gens[0], gens[1:]
    cu = [(c * uj) % L for uj in u]
    sp = [to_int(x) for x in pr.sprime]
    cs = from_int(c)
    who = f"shuffle proof of seat {st.ctx.seat}"
    # (1) Σ c_j − Σ h_i = r̄·G
    cbar = sub(total(pr.c), total(hs))
    if base(pr.s1) != add(pr.t1, mul(cs, cbar)):
        raise SealedError(f"{who}: equation 1 (the permutation commitment) fails")
    # (2) ĉ_{n-1} − (∏ u_j)·h = r̂·G
    chat_n = sub(pr.chat[n - 1], mul(from_int(st.U), h))
    if base(pr.s2) != add(pr.t2, mul(cs, chat_n)):
        raise SealedError(f"{who}: equation 2 (the chain's end) fails")
    # (3) s3·G + Σ s'_i·h_i = t3 + Σ c·u_j·c_j
    lhs = add(base(pr.s3), _lincomb(list(zip(sp, hs, strict=True))))
    rhs = add(pr.t3, _lincomb(list(zip(cu, pr.c, strict=True))))
    if lhs != rhs:
        raise SealedError(f"{who}: equation 3 (the challenges under the permutation) fails")
    # (4) Σ s'_i·e'_i − s4·(G, P) = t4 + Σ c·u_j·e_j
    negs4 = from_int(-to_int(pr.s4))
    lhsA = add(base(negs4), _lincomb([(sp[i], deck_out[i].A) for i in range(n)]))
    rhsA = add(pr.t4A, _lincomb([(cu[j], deck_in[j].A) for j in range(n)]))
    lhsB = add(mul(negs4, P), _lincomb([(sp[i], deck_out[i].B) for i in range(n)]))
    rhsB = add(pr.t4B, _lincomb([(cu[j], deck_in[j].B) for j in range(n)]))
    if lhsA != rhsA or lhsB != rhsB:
        raise SealedError(f"{who}: equation 4 (the re-masking) fails")
    # (5) ŝ_i·G + s'_i·ĉ_{i-1} = t̂_i + c·ĉ_i, ĉ_{-1} = h
    prev = h
    for i in range(n):
        if add(base(pr.shat[i]), mul(pr.sprime[i], prev)) != add(pr.that[i], mul(cs, pr.chat[i])):
            raise SealedError(f"{who}: equation 5 (the commitment chain) fails at {i}")
        prev = pr.chat[i]
