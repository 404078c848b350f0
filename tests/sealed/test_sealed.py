"""The cryptographic core of sealed deals (``sealed``, docs/spec/fairness-v3.md).

The known answers of §11 (tests/vectors/fairness_v3.json, recomputed and found in the spec's
text); a whole hand's cryptography (keys, four shuffles, a deal, openings, revealed keys);
every tampered key, deck entry, proof element, share, opening or statement field refused
(property tests over random positions); and a shuffle composed of several seats' shuffles,
one of them honest, uniform (χ² with fixed seeds, and a broken shuffle caught by it)."""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from itertools import permutations
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sealed import (
    Ciphertext,
    Context,
    FixedRandomness,
    KeyProof,
    SealedError,
    Share,
    ShareProof,
    ShuffleProof,
    check_opening,
    check_revealed,
    decode_deck,
    encode_deck,
    hand_key,
    item_point,
    item_table,
    make_key,
    make_share,
    own_item,
    proof_size,
    shuffle,
    starting_deck,
    verify_key,
    verify_share,
    verify_shares,
    verify_shuffle,
)
from sealed.group import G, L, add, base, from_int, mul, random_scalar, s_add, s_muladd, sub, total
from sealed.keys import SeatKey
from sealed.masking import Deck
from tests.support.sealed_vectors import compute

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "vectors" / "fairness_v3.json").read_text("utf-8"))
SPEC = (ROOT / "docs" / "spec" / "fairness-v3.md").read_text("utf-8")
CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]
PROPS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# -- the known answers -----------------------------------------------------------------


def test_the_vectors_file_is_what_the_spec_computes() -> None:
    assert compute() == VECTORS


def test_every_vector_value_is_in_the_spec_text() -> None:
    section = SPEC[SPEC.index("## 11.") :]
    flat = re.sub(r"\s+", "", section)
    values = [p["point"] for p in VECTORS["item_points"]]
    values += [g["point"] for g in VECTORS["generators"]]
    values += [v for k in VECTORS["keys"] for v in (k["x"], k["P"], k["proof"])]
    values += [VECTORS["hand_key"], VECTORS["opening"]["point"]]
    values += [VECTORS["shuffle"][k] for k in ("deck_in", "deck_out", "proof")]
    values += [v for s in VECTORS["shares"] for v in (s["D"], s["proof"])]
    for v in values:
        assert v in flat, v[:16]
    assert f"ψ = {VECTORS['shuffle']['psi']}" in section


def test_the_vectors_verify_and_open() -> None:
    m, h = VECTORS["match_id"], VECTORS["hand"]
    keys = []
    for k in VECTORS["keys"]:
        ctx = Context(m, h, k["seat"])
        P = bytes.fromhex(k["P"])
        verify_key(ctx, P, KeyProof.decode(bytes.fromhex(k["proof"])))
        check_revealed(P, bytes.fromhex(k["x"]), k["seat"])
        keys.append(P)
    assert hand_key(keys).hex() == VECTORS["hand_key"]
    sh = VECTORS["shuffle"]
    n = len(sh["codes"])
    deck_in = decode_deck(bytes.fromhex(sh["deck_in"]), n)
    assert deck_in == starting_deck(sh["game"], sh["codes"])
    deck_out = decode_deck(bytes.fromhex(sh["deck_out"]), n)
    proof = ShuffleProof.decode(bytes.fromhex(sh["proof"]), n)
    P = bytes.fromhex(VECTORS["hand_key"])
    verify_shuffle(Context(m, h, sh["seat"]), P, deck_in, deck_out, proof)
    shares = [
        Share(bytes.fromhex(s["D"]), ShareProof.decode(bytes.fromhex(s["proof"])))
        for s in VECTORS["shares"]
    ]
    code = VECTORS["opening"]["code"]
    check_opening(sh["game"], code, deck_out[0], Context(m, h, 0), keys, shares)
    assert item_point(sh["game"], code).hex() == VECTORS["opening"]["point"]


def test_the_generator_is_rfc_9496s() -> None:
    assert base(from_int(1)) == G
    assert G.hex() in SPEC


# -- a hand ------------------------------------------------------------------------------


def _hand(
    seats: int = 4, codes: list[str] | None = None, game: str = "hokm"
) -> tuple[Context, list[SeatKey], bytes, Deck]:
    codes = codes or CARDS
    ctx = Context("m-sealed", 2, 0)
    keys = [make_key(ctx.for_seat(s)) for s in range(seats)]
    for s, k in enumerate(keys):
        verify_key(ctx.for_seat(s), k.P, k.proof)
    P = hand_key([k.P for k in keys])
    deck = starting_deck(game, codes)
    for s in range(seats):
        out, proof = shuffle(ctx.for_seat(s), P, deck)
        verify_shuffle(
            ctx.for_seat(s), P, deck, out, ShuffleProof.decode(proof.encode(), len(deck))
        )
        deck = out
    return ctx, keys, P, deck


def test_a_hand_deals_every_card_once_to_its_owner_only() -> None:
    ctx, keys, P, deck = _hand()
    table = item_table("hokm", CARDS)
    dealt = []
    for pos, c in enumerate(deck):
        owner = pos % 4
        shares = [make_share(ctx.for_seat(s), keys[s].x, c) for s in range(4)]
        for s in range(4):
            verify_share(ctx.for_seat(s), keys[s].P, c, shares[s])
        others = [shares[s].D for s in range(4) if s != owner]
        code = own_item(c, keys[owner].x, others, table)
        # without the owner's share the others hold a point that is no card
        assert sub(c.B, total(others)) not in table
        check_opening("hokm", code, c, ctx, [k.P for k in keys], shares)
        dealt.append(code)
    assert sorted(dealt) == sorted(CARDS)
    for s, k in enumerate(keys):
        check_revealed(k.P, k.x, s)


def test_ninety_one_tiles_shuffle_and_verify() -> None:
    tiles = [f"{a}-{b}" for a in range(13) for b in range(a, 13)]
    _, _, _, deck = _hand(seats=2, codes=tiles, game="mexican_train")
    assert len(deck) == 91
    assert len(encode_deck(deck)) == 91 * 64


# -- tampering: keys -----------------------------------------------------------------------

KEY_CTX = Context("m-keys", 1, 2)
KEY = make_key(KEY_CTX, FixedRandomness(b"tamper key"))


@PROPS
@given(pos=st.integers(0, 63), bit=st.integers(0, 7))
def test_a_changed_key_proof_bit_is_refused(pos: int, bit: int) -> None:
    raw = bytearray(KEY.proof.encode())
    raw[pos] ^= 1 << bit
    with pytest.raises(SealedError):
        verify_key(KEY_CTX, KEY.P, KeyProof.decode(bytes(raw)))


@pytest.mark.parametrize(
    "ctx",
    [Context("m-keyz", 1, 2), Context("m-keys", 0, 2), Context("m-keys", 1, 3)],
    ids=["match", "hand", "seat"],
)
def test_a_key_proof_for_another_context_is_refused(ctx: Context) -> None:
    with pytest.raises(SealedError, match="proof of knowledge"):
        verify_key(ctx, KEY.P, KEY.proof)


def test_another_key_or_the_identity_is_refused() -> None:
    with pytest.raises(SealedError):
        verify_key(KEY_CTX, base(random_scalar()), KEY.proof)
    with pytest.raises(SealedError, match="identity"):
        verify_key(KEY_CTX, bytes(32), KEY.proof)
    with pytest.raises(SealedError, match="does not match"):
        check_revealed(KEY.P, s_add(KEY.x, from_int(1)), 2)
    # a non-canonical scalar (s + ℓ) is refused as such
    s_big = (int.from_bytes(KEY.proof.s, "little") + L).to_bytes(32, "little")
    with pytest.raises(SealedError, match="canonical"):
        KeyProof.decode(KEY.proof.R + s_big)


# -- tampering: shuffles --------------------------------------------------------------------

SH_CTX = Context("m-shuffle", 0, 1)
SH_KEYS = [make_key(SH_CTX.for_seat(s), FixedRandomness(b"k%d" % s)) for s in range(3)]
SH_P = hand_key([k.P for k in SH_KEYS])
SH_IN, _ = shuffle(SH_CTX.for_seat(0), SH_P, starting_deck("hokm", CARDS[:5]))
SH_OUT, SH_PROOF = shuffle(SH_CTX, SH_P, SH_IN, FixedRandomness(b"tamper shuffle"))
SH_RAW = SH_PROOF.encode()


def _refused(ctx: Context, P: bytes, deck_in: Deck, deck_out: Deck, raw: bytes) -> None:
    with pytest.raises(SealedError):
        verify_shuffle(ctx, P, deck_in, deck_out, ShuffleProof.decode(raw, len(deck_in)))


def test_the_untampered_shuffle_verifies() -> None:
    verify_shuffle(SH_CTX, SH_P, SH_IN, SH_OUT, SH_PROOF)
    assert len(SH_RAW) == proof_size(5) == 32 * (5 * 5 + 9)


@PROPS
@given(pos=st.integers(0, proof_size(5) - 1), bit=st.integers(0, 7))
def test_a_changed_proof_bit_is_refused(pos: int, bit: int) -> None:
    """Every proof element (commitments c and ĉ, t-values, responses) at every position."""
    raw = bytearray(SH_RAW)
    raw[pos] ^= 1 << bit
    _refused(SH_CTX, SH_P, SH_IN, SH_OUT, bytes(raw))


@PROPS
@given(word=st.integers(0, 5 * 5 + 8), k=st.integers(1, L - 1))
def test_a_proof_element_replaced_by_another_valid_one_is_refused(word: int, k: int) -> None:
    """A valid point or canonical scalar in place of an element: still refused."""
    raw = bytearray(SH_RAW)
    is_point = word < 3 * 5 + 5
    new = base(from_int(k)) if is_point else from_int(k)
    raw[32 * word : 32 * word + 32] = new
    _refused(SH_CTX, SH_P, SH_IN, SH_OUT, bytes(raw))


@PROPS
@given(
    side=st.sampled_from(["in", "out"]),
    item=st.integers(0, 4),
    half=st.sampled_from("AB"),
    k=st.integers(1, L - 1),
)
def test_a_changed_deck_entry_is_refused(side: str, item: int, half: str, k: int) -> None:
    deck = list(SH_IN if side == "in" else SH_OUT)
    c = deck[item]
    moved = add(getattr(c, half), base(from_int(k)))
    deck[item] = Ciphertext(moved, c.B) if half == "A" else Ciphertext(c.A, moved)
    d_in, d_out = (tuple(deck), SH_OUT) if side == "in" else (SH_IN, tuple(deck))
    _refused(SH_CTX, SH_P, d_in, d_out, SH_RAW)


@PROPS
@given(i=st.integers(0, 4), j=st.integers(0, 4))
def test_swapped_output_items_are_refused(i: int, j: int) -> None:
    if i == j:
        return
    deck = list(SH_OUT)
    deck[i], deck[j] = deck[j], deck[i]
    _refused(SH_CTX, SH_P, SH_IN, tuple(deck), SH_RAW)


@pytest.mark.parametrize(
    "ctx",
    [Context("m-shufflf", 0, 1), Context("m-shuffle", 1, 1), Context("m-shuffle", 0, 2)],
    ids=["match", "hand", "seat"],
)
def test_a_shuffle_proof_for_another_context_is_refused(ctx: Context) -> None:
    _refused(ctx, SH_P, SH_IN, SH_OUT, SH_RAW)


def test_a_shuffle_proof_under_another_hand_key_is_refused() -> None:
    _refused(SH_CTX, SH_KEYS[0].P, SH_IN, SH_OUT, SH_RAW)


def test_a_deck_that_is_not_a_shuffle_has_no_proof() -> None:
    """A cheating shuffler replaces one card by another (its own re-masked copy of a card it
    keeps): an honest proof for the honest output does not carry over, and neither does a
    proof computed for the cheating deck (the prover's witnesses do not fit)."""
    deck = list(SH_OUT)
    deck[1] = Ciphertext(add(deck[0].A, base(from_int(5))), add(deck[0].B, mul(from_int(5), SH_P)))
    _refused(SH_CTX, SH_P, SH_IN, tuple(deck), SH_RAW)


def test_the_challenge_covers_every_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from sealed.points import generators as real

    def other(n: int) -> tuple[bytes, ...]:
        g = list(real(n))
        g[0] = base(from_int(7))  # h with a known logarithm
        return tuple(g)

    monkeypatch.setattr("sealed.shuffle_proof.generators", other)
    _refused(SH_CTX, SH_P, SH_IN, SH_OUT, SH_RAW)


def test_wrong_sizes_are_refused_with_words() -> None:
    with pytest.raises(SealedError, match="bytes expected"):
        ShuffleProof.decode(SH_RAW[:-1], 5)
    with pytest.raises(SealedError, match="items"):
        verify_shuffle(SH_CTX, SH_P, SH_IN, SH_OUT[:4], SH_PROOF)
    with pytest.raises(SealedError, match="multiple of 64"):
        decode_deck(encode_deck(SH_OUT)[:-1])
    with pytest.raises(SealedError, match="not a canonical ristretto255 point"):
        decode_deck(b"\xff" * 64)
    with pytest.raises(SealedError, match="3 items expected"):
        decode_deck(encode_deck(SH_OUT), 3)


def test_the_failed_equation_is_named() -> None:
    raw = bytearray(SH_RAW)
    off = 32 * (3 * 5 + 5)  # s1
    raw[off : off + 32] = random_scalar()
    with pytest.raises(SealedError, match="equation 1"):
        verify_shuffle(SH_CTX, SH_P, SH_IN, SH_OUT, ShuffleProof.decode(bytes(raw), 5))
    raw = bytearray(SH_RAW)
    off = 32 * (3 * 5 + 5 + 4 + 5 + 2)  # s'_2
    raw[off : off + 32] = random_scalar()
    with pytest.raises(SealedError, match="equation 3"):
        verify_shuffle(SH_CTX, SH_P, SH_IN, SH_OUT, ShuffleProof.decode(bytes(raw), 5))


# -- tampering: shares and openings ------------------------------------------------------------

SHARE_SEAT = 2
SHARE_CTX = SH_CTX.for_seat(SHARE_SEAT)
SHARE = make_share(SHARE_CTX, SH_KEYS[SHARE_SEAT].x, SH_OUT[0], FixedRandomness(b"tamper share"))
OWN_P = SH_KEYS[SHARE_SEAT].P


def test_the_untampered_share_verifies() -> None:
    verify_share(SHARE_CTX, OWN_P, SH_OUT[0], SHARE)


@PROPS
@given(pos=st.integers(0, 32 + 96 - 1), bit=st.integers(0, 7))
def test_a_changed_share_or_share_proof_bit_is_refused(pos: int, bit: int) -> None:
    raw = bytearray(SHARE.D + SHARE.proof.encode())
    raw[pos] ^= 1 << bit
    with pytest.raises(SealedError):
        verify_share(
            SHARE_CTX, OWN_P, SH_OUT[0], Share(bytes(raw[:32]), ShareProof.decode(bytes(raw[32:])))
        )


@pytest.mark.parametrize(
    "field", ["match", "hand", "seat", "key", "A", "B", "another item's ciphertext"]
)
def test_a_share_for_another_statement_is_refused(field: str) -> None:
    ctx, P, c = SHARE_CTX, OWN_P, SH_OUT[0]
    if field == "match":
        ctx = replace(ctx, match_id="m-other")
    elif field == "hand":
        ctx = replace(ctx, hand=9)
    elif field == "seat":
        ctx = replace(ctx, seat=0)
    elif field == "key":
        P = SH_KEYS[0].P
    elif field == "A":
        c = Ciphertext(add(c.A, G), c.B)
    elif field == "B":
        c = Ciphertext(c.A, add(c.B, G))
    else:
        c = SH_OUT[1]
    with pytest.raises(SealedError):
        verify_share(ctx, P, c, SHARE)


# a share step's shares, verified at once (issue 50)
STEP = [
    (c, make_share(SHARE_CTX, SH_KEYS[SHARE_SEAT].x, c, FixedRandomness(f"step {i}".encode())))
    for i, c in enumerate(SH_OUT[:5])
]


def _refusal(check: Callable[[], None]) -> str:
    with pytest.raises(SealedError) as exc:
        check()
    return str(exc.value)


def _changed(sh: Share, part: str) -> Share:
    """``sh`` with one part replaced by another valid value."""
    pr = sh.proof
    if part == "D":
        return Share(add(sh.D, G), pr)
    if part == "s":
        return Share(sh.D, replace(pr, s=from_int(int.from_bytes(pr.s, "little") + 1)))
    return Share(sh.D, replace(pr, **{part: add(getattr(pr, part), G)}))


def test_a_share_steps_shares_verify_at_once() -> None:
    verify_shares(SHARE_CTX, OWN_P, STEP)
    verify_shares(SHARE_CTX, OWN_P, STEP[:1])
    verify_shares(SHARE_CTX, OWN_P, [])


@pytest.mark.parametrize("at", range(5))
@pytest.mark.parametrize("part", ["D", "R1", "R2", "s"])
def test_one_bad_share_in_a_step_is_refused_as_it_is_alone(at: int, part: str) -> None:
    """Whichever equation fails (R1: only the combined first equations; R2: only its own
    second), the step is refused with the words its bad share alone gets."""
    c, sh = STEP[at]
    bad = _changed(sh, part)
    step = [*STEP[:at], (c, bad), *STEP[at + 1 :]]
    alone = _refusal(lambda: verify_share(SHARE_CTX, OWN_P, c, bad))
    assert _refusal(lambda: verify_shares(SHARE_CTX, OWN_P, step)) == alone
    assert alone == f"share of seat {SHARE_SEAT}: the proof does not verify"


def test_changes_that_cancel_in_a_plain_sum_are_refused() -> None:
    """R1 + G in one proof and R1 − G in another: their first equations' plain sum holds,
    their randomly weighted sum does not."""
    (c0, a), (c1, b) = STEP[0], STEP[1]
    up = Share(a.D, replace(a.proof, R1=add(a.proof.R1, G)))
    down = Share(b.D, replace(b.proof, R1=sub(b.proof.R1, G)))
    step = [(c0, up), (c1, down), *STEP[2:]]
    assert _refusal(lambda: verify_shares(SHARE_CTX, OWN_P, step)) == _refusal(
        lambda: verify_share(SHARE_CTX, OWN_P, c0, up)
    )


def test_the_first_bad_share_of_a_step_is_the_one_named() -> None:
    """A bad proof before a share that is no point: the proof's refusal, as one by one."""
    (c1, b), (c3, d) = STEP[1], STEP[3]
    step = [STEP[0], (c1, _changed(b, "s")), STEP[2], (c3, Share(b"\xff" * 32, d.proof))]
    assert _refusal(lambda: verify_shares(SHARE_CTX, OWN_P, step)).endswith("does not verify")
    step = [STEP[0], STEP[1], STEP[2], (c3, Share(b"\xff" * 32, d.proof))]
    assert _refusal(lambda: verify_shares(SHARE_CTX, OWN_P, step)) == (
        "share: not a canonical ristretto255 point"
    )
    assert _refusal(lambda: verify_shares(SH_CTX.for_seat(0), OWN_P, STEP)) == (
        "share of seat 0: the proof does not verify"
    )


def _one_by_one(ctx: Context, P: bytes, step: list[tuple[Ciphertext, Share]]) -> str | None:
    """What checking each share alone says of a step: the first refusal, else None."""
    for c, sh in step:
        try:
            verify_share(ctx, P, c, sh)
        except SealedError as exc:
            return str(exc)
    return None


def _at_once(ctx: Context, P: bytes, step: list[tuple[Ciphertext, Share]]) -> str | None:
    try:
        verify_shares(ctx, P, step)
    except SealedError as exc:
        return str(exc)
    return None


#: the ways a share of a step is tampered with: a part of it moved by G or its s by one, the
#: share (proof and all) made for another ciphertext or by another seat's key, or made with
#: another seat's x but its challenge over the claimed key (its second equation holds: only
#: the combined first equations catch it)
TAMPERS = ["D", "R1", "R2", "s", "other_item", "other_key", "wrong_x"]


def _with_wrong_x(c: Ciphertext, seed: bytes) -> Share:
    """D = x'·A with a proof that satisfies s·A = R2 + e·D for the claimed key's challenge,
    made with x' (seat 0's) instead of the claimed key's x."""
    x, k = SH_KEYS[0].x, FixedRandomness(seed).scalar()
    D, R1, R2 = mul(x, c.A), base(k), mul(k, c.A)
    e = ShareProof.challenge(SHARE_CTX.encode(), OWN_P, c.A, c.B, D, R1, R2)
    return Share(D, ShareProof(R1, R2, s_muladd(e, x, k)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(2, len(SH_OUT)),
    tampered=st.dictionaries(st.integers(0, len(SH_OUT) - 1), st.sampled_from(TAMPERS), max_size=3),
    seed=st.binary(min_size=1, max_size=8),
)
def test_a_steps_shares_at_once_say_what_one_by_one_says(
    size: int, tampered: dict[int, str], seed: bytes
) -> None:
    """Random steps of fresh shares, some of them tampered with: the random linear
    combination accepts exactly the steps whose every share verifies alone, and refuses the
    others with the words of the first share that fails alone."""
    x = SH_KEYS[SHARE_SEAT].x
    step: list[tuple[Ciphertext, Share]] = []
    for i, c in enumerate(SH_OUT[:size]):
        sh = make_share(SHARE_CTX, x, c, FixedRandomness(seed + b"/%d" % i))
        how = tampered.get(i)
        if how == "other_item":
            sh = make_share(SHARE_CTX, x, SH_OUT[(i + 1) % len(SH_OUT)], FixedRandomness(seed))
        elif how == "other_key":
            sh = make_share(SHARE_CTX, SH_KEYS[0].x, c, FixedRandomness(seed))
        elif how == "wrong_x":
            sh = _with_wrong_x(c, seed)
        elif how is not None:
            sh = _changed(sh, how)
        step.append((c, sh))
    alone = _one_by_one(SHARE_CTX, OWN_P, step)
    assert (alone is None) == all(i >= size for i in tampered)
    assert _at_once(SHARE_CTX, OWN_P, step) == alone


def test_an_opening_to_another_code_or_with_a_wrong_share_is_refused() -> None:
    c = SH_OUT[3]
    keys = [k.P for k in SH_KEYS]
    shares = [make_share(SH_CTX.for_seat(s), SH_KEYS[s].x, c) for s in range(3)]
    table = item_table("hokm", CARDS[:5])
    code = own_item(c, SH_KEYS[1].x, [shares[0].D, shares[2].D], table)
    check_opening("hokm", code, c, SH_CTX, keys, shares)
    for other in CARDS[:5]:
        if other != code:
            with pytest.raises(SealedError, match="do not open"):
                check_opening("hokm", other, c, SH_CTX, keys, shares)
    with pytest.raises(SealedError, match="do not open"):
        check_opening("qahve", code, c, SH_CTX, keys, shares)  # another game's point
    swapped = [shares[1], shares[0], shares[2]]
    with pytest.raises(SealedError, match="share of seat 0"):
        check_opening("hokm", code, c, SH_CTX, keys, swapped)
    with pytest.raises(SealedError, match="3 shares expected"):
        check_opening("hokm", code, c, SH_CTX, keys, shares[:2])
    with pytest.raises(SealedError, match="no"):
        own_item(c, SH_KEYS[0].x, [shares[0].D, shares[2].D], table)


# -- uniformity ---------------------------------------------------------------------------------


class Fixed:
    """A dishonest seat's randomness: always the same permutation (below → 0)."""

    def __init__(self, seed: bytes) -> None:
        self._inner = FixedRandomness(seed)

    def scalar(self) -> bytes:
        return self._inner.scalar()

    def below(self, n: int) -> int:
        return 0


class Sattolo(FixedRandomness):
    """A broken honest shuffle: Fisher–Yates off by one (only the n-cycles come out)."""

    def below(self, n: int) -> int:
        return super().below(n - 1) if n > 1 else 0


CHI2_TRIALS = 480  # 20 a cell over the 24 orders of 4 items
CHI2_LIMIT = 49.73  # χ² with 23 degrees of freedom, p = 0.001


def _composed_counts(honest: type[FixedRandomness]) -> dict[tuple[str, ...], int]:
    codes = CARDS[:4]
    ctx = Context("m-chi2", 0, 0)
    keys = [make_key(ctx.for_seat(s), FixedRandomness(b"chi2 key %d" % s)) for s in range(3)]
    P = hand_key([k.P for k in keys])
    x = keys[0].x
    for k in keys[1:]:
        x = s_add(x, k.x)
    table = item_table("hokm", codes)
    counts = {p: 0 for p in permutations(codes)}
    for t in range(CHI2_TRIALS):
        deck = starting_deck("hokm", codes)
        # seats 0 and 2 shuffle dishonestly (a fixed order), seat 1 honestly
        for s, rng in ((0, Fixed(b"a%d" % t)), (1, honest(b"h%d" % t)), (2, Fixed(b"b%d" % t))):
            deck, _ = shuffle(ctx.for_seat(s), P, deck, rng)
        order = tuple(table[sub(c.B, mul(x, c.A))] for c in deck)
        counts[order] += 1
    return counts


def _chi2(counts: dict[tuple[str, ...], int]) -> float:
    expected = sum(counts.values()) / len(counts)
    return sum((k - expected) ** 2 / expected for k in counts.values())


def test_a_composed_shuffle_with_one_honest_seat_is_uniform() -> None:
    counts = _composed_counts(FixedRandomness)
    assert min(counts.values()) > 0
    assert _chi2(counts) < CHI2_LIMIT, counts


def test_the_uniformity_test_catches_a_broken_shuffle() -> None:
    assert _chi2(_composed_counts(Sattolo)) > CHI2_LIMIT


# -- the package ---------------------------------------------------------------------------------


def test_sealed_imports_only_the_stdlib_and_rbcl() -> None:
    allowed = set(sys.stdlib_module_names) | {"rbcl", "sealed", "__future__"}
    for path in sorted((ROOT / "sealed").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = {node.module.split(".")[0]}
            else:
                continue
            assert names <= allowed, f"{path} imports {sorted(names - allowed)}"


def test_rbcls_temporary_copy_of_libsodium_is_removed() -> None:
    import sealed.group  # noqa: F401

    path = sys.modules["rbcl._sodium"].lib_path
    assert not Path(path).exists()


# -- Fiat–Shamir: every input moves the challenges ------------------------------------------


@PROPS
@given(
    what=st.sampled_from(["match", "hand", "seat", "P", "in", "out", "c"]),
    pos=st.integers(0, 4),
    half=st.sampled_from("AB"),
)
def test_every_statement_input_moves_sigma(what: str, pos: int, half: str) -> None:
    """σ (§5.2) changes with each part of the statement and each permutation commitment."""
    from sealed.shuffle_proof import statement_seed

    ctx, P, d_in, d_out, c = SH_CTX, SH_P, list(SH_IN), list(SH_OUT), list(SH_PROOF.c)
    before = statement_seed(ctx, P, tuple(d_in), tuple(d_out), c)
    if what in ("match", "hand", "seat"):
        field = {"match": "match_id", "hand": "hand", "seat": "seat"}[what]
        ctx = replace(ctx, **{field: "m-x" if what == "match" else getattr(ctx, field) + 1})
    elif what == "P":
        P = add(P, G)
    elif what in ("in", "out"):
        deck = d_in if what == "in" else d_out
        e = deck[pos]
        deck[pos] = Ciphertext(add(e.A, G), e.B) if half == "A" else Ciphertext(e.A, add(e.B, G))
    else:
        c[pos] = add(c[pos], G)
    assert statement_seed(ctx, P, tuple(d_in), tuple(d_out), c) != before


@PROPS
@given(part=st.sampled_from(["chat", "t", "that"]), pos=st.integers(0, 4))
def test_every_commitment_moves_the_main_challenge(part: str, pos: int) -> None:
    from sealed.shuffle_proof import main_challenge

    pr = SH_PROOF
    chat, t, that = list(pr.chat), [pr.t1, pr.t2, pr.t3, pr.t4A, pr.t4B], list(pr.that)
    before = main_challenge(b"\x01" * 64, chat, (t[0], t[1], t[2], t[3], t[4]), that)
    {"chat": chat, "t": t, "that": that}[part][pos] = G
    after = main_challenge(b"\x01" * 64, chat, (t[0], t[1], t[2], t[3], t[4]), that)
    assert after != before
    assert main_challenge(
        b"\x02" * 64, pr.chat, (pr.t1, pr.t2, pr.t3, pr.t4A, pr.t4B), pr.that
    ) != main_challenge(b"\x01" * 64, pr.chat, (pr.t1, pr.t2, pr.t3, pr.t4A, pr.t4B), pr.that)


def test_the_challenges_use_every_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """n and every H(i) are hashed: σ for the same decks differs when any generator differs."""
    from sealed.points import generators
    from sealed.shuffle_proof import statement_seed

    assert len(set(generators(5))) == 6
    before = statement_seed(SH_CTX, SH_P, SH_IN, SH_OUT, SH_PROOF.c)
    for i in range(6):

        def swapped(n: int, i: int = i) -> tuple[bytes, ...]:
            return tuple(G if k == i else g for k, g in enumerate(generators(n)))

        monkeypatch.setattr("sealed.shuffle_proof.generators", swapped)
        assert statement_seed(SH_CTX, SH_P, SH_IN, SH_OUT, SH_PROOF.c) != before


def test_a_value_that_skipped_parsing_cannot_pass_as_the_identity() -> None:
    """libsodium leaves its output unwritten for an operand that does not decode: the group
    operations refuse it rather than read the zero buffer as the identity."""
    bad = b"\xff" * 32
    deck = list(SH_OUT)
    deck[2] = Ciphertext(bad, deck[2].B)
    with pytest.raises(SealedError, match="not a canonical"):
        verify_shuffle(SH_CTX, SH_P, SH_IN, tuple(deck), SH_PROOF)
    with pytest.raises(SealedError, match="not a canonical"):
        mul(random_scalar(), bad)
    with pytest.raises(SealedError, match="not a canonical"):
        add(G, bad)
    assert mul(random_scalar(), bytes(32)) == bytes(32)
    assert mul(bytes(32), G) == bytes(32)
