"""The known answers of docs/spec/fairness-v3.md §11, computed from the spec's fixed inputs
(``python tests/support/sealed_vectors.py`` writes tests/vectors/fairness_v3.json; the tests load
that file and recompute it)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import sealed
from fairness import DECK52
from sealed.group import L, from_int, to_int
from sealed.shuffle_proof import challenges, main_challenge, statement_seed

OUT = Path(__file__).resolve().parents[1] / "vectors" / "fairness_v3.json"
MATCH = "m-0003"
GAME = "hokm"
CODES = ["AS", "KH", "QD"]


def compute() -> dict[str, Any]:
    return compute_hand0(extra=True)


def compute_hand0(extra: bool = False) -> dict[str, Any]:
    items = [("hokm", "AS"), ("hokm", "2C"), ("iraqi_domino", "6-6"), ("mexican_train", "12-12")]
    keys = [
        sealed.make_key(sealed.Context(MATCH, 0, s), sealed.FixedRandomness(f"key{s}".encode()))
        for s in (0, 1)
    ]
    P = sealed.hand_key([k.P for k in keys])
    ctx0 = sealed.Context(MATCH, 0, 0)
    deck_in = sealed.starting_deck(GAME, CODES)
    psi = sealed.permutation(len(CODES), sealed.FixedRandomness(b"shuffle"))
    deck_out, proof = sealed.shuffle(ctx0, P, deck_in, sealed.FixedRandomness(b"shuffle"))
    target = deck_out[0]
    shares = [
        sealed.make_share(
            sealed.Context(MATCH, 0, s),
            keys[s].x,
            target,
            sealed.FixedRandomness(f"share{s}".encode()),
        )
        for s in (0, 1)
    ]
    opened = CODES[psi[0]]
    return {
        "spec": "docs/spec/fairness-v3.md §11",
        "item_points": [
            {"game": g, "code": c, "point": sealed.item_point(g, c).hex()} for g, c in items
        ],
        "generators": [{"i": i, "point": sealed.generator(i).hex()} for i in range(4)],
        "match_id": MATCH,
        "hand": 0,
        "keys": [
            {
                "seat": s,
                "randomness": f"key{s}",
                "x": keys[s].x.hex(),
                "P": keys[s].P.hex(),
                "proof": keys[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "hand_key": P.hex(),
        "shuffle": {
            "seat": 0,
            "game": GAME,
            "codes": CODES,
            "randomness": "shuffle",
            "psi": psi,
            "deck_in": sealed.encode_deck(deck_in).hex(),
            "deck_out": sealed.encode_deck(deck_out).hex(),
            "proof": proof.encode().hex(),
        },
        "shares": [
            {
                "seat": s,
                "item": 0,
                "randomness": f"share{s}",
                "D": shares[s].D.hex(),
                "proof": shares[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "opening": {"item": 0, "code": opened, "point": sealed.item_point(GAME, opened).hex()},
    } | (
        {"hand1": hand_vector(1), "shuffle52": shuffle52(), "negative": negative()} if extra else {}
    )


# -- a hand ≥ 1 ------------------------------------------------------------------------------
def hand_vector(hand: int) -> dict[str, Any]:
    """Hand ``hand`` of the match: both seats' keys, the 3-card shuffle by seat 1, both shares
    of the final deck's item 0 and its opening (every proof bound to ``hand``)."""
    tag = f"hand{hand}/"
    ctx = [sealed.Context(MATCH, hand, s) for s in (0, 1)]
    keys = [
        sealed.make_key(ctx[s], sealed.FixedRandomness(f"{tag}key{s}".encode())) for s in (0, 1)
    ]
    P = sealed.hand_key([k.P for k in keys])
    deck_in = sealed.starting_deck(GAME, CODES)
    psi = sealed.permutation(len(CODES), sealed.FixedRandomness(f"{tag}shuffle".encode()))
    deck_out, proof = sealed.shuffle(
        ctx[1], P, deck_in, sealed.FixedRandomness(f"{tag}shuffle".encode())
    )
    shares = [
        sealed.make_share(
            ctx[s], keys[s].x, deck_out[0], sealed.FixedRandomness(f"{tag}share{s}".encode())
        )
        for s in (0, 1)
    ]
    opened = CODES[psi[0]]
    return {
        "match_id": MATCH,
        "hand": hand,
        "keys": [
            {
                "seat": s,
                "randomness": f"{tag}key{s}",
                "x": keys[s].x.hex(),
                "P": keys[s].P.hex(),
                "proof": keys[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "hand_key": P.hex(),
        "shuffle": {
            "seat": 1,
            "game": GAME,
            "codes": CODES,
            "randomness": f"{tag}shuffle",
            "psi": psi,
            "deck_in": sealed.encode_deck(deck_in).hex(),
            "deck_out": sealed.encode_deck(deck_out).hex(),
            "proof": proof.encode().hex(),
        },
        "shares": [
            {
                "seat": s,
                "item": 0,
                "randomness": f"{tag}share{s}",
                "D": shares[s].D.hex(),
                "proof": shares[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "opening": {"item": 0, "code": opened, "point": sealed.item_point(GAME, opened).hex()},
    }


# -- a 52-card shuffle and its intermediate values -----------------------------------------
def sc(k: int) -> str:
    """A scalar mod ℓ, as hex."""
    return from_int(k % L).hex()


def _sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def shuffle52() -> dict[str, Any]:
    """Seat 0's shuffle of the whole hokm deck (the rules' canonical order, DECK52) in hand 1,
    under hand 1's key: ψ, the prover's draws and sums, σ, every u_j and u'_i, U, c and the
    proof's fields one by one (§5), drawn from FixedRandomness("shuffle52") in §11's order."""
    hand1 = hand_vector(1)
    P = bytes.fromhex(hand1["hand_key"])
    ctx = sealed.Context(MATCH, 1, 0)
    codes = list(DECK52)
    n = len(codes)
    deck_in = sealed.starting_deck(GAME, codes)
    seed = b"shuffle52"
    deck_out, proof = sealed.shuffle(ctx, P, deck_in, sealed.FixedRandomness(seed))
    # the same draws again, in the order shuffle() makes them
    rng = sealed.FixedRandomness(seed)
    psi = sealed.permutation(n, rng)
    rp = [to_int(rng.scalar()) for _ in range(n)]
    r = [to_int(rng.scalar()) for _ in range(n)]
    rhat = [to_int(rng.scalar()) for _ in range(n)]
    sigma = statement_seed(ctx, P, deck_in, deck_out, proof.c)
    u = [to_int(x) for x in challenges(sigma, n)]
    up = [u[psi[i]] for i in range(n)]
    big_u = 1
    for x in u:
        big_u = big_u * x % L
    pr = proof
    c = main_challenge(sigma, pr.chat, (pr.t1, pr.t2, pr.t3, pr.t4A, pr.t4B), pr.that)
    v = [0] * n  # v_{n-1} = 1, v_{i-1} = u'_i·v_i
    v[n - 1] = 1
    for i in range(n - 1, 0, -1):
        v[i - 1] = up[i] * v[i] % L
    return {
        "match_id": MATCH,
        "hand": 1,
        "seat": 0,
        "game": GAME,
        "codes": codes,
        "P": P.hex(),
        "randomness": seed.decode(),
        "psi": psi,
        "r_prime": [sc(x) for x in rp],
        "r": [sc(x) for x in r],
        "r_hat": [sc(x) for x in rhat],
        "sigma": sigma.hex(),
        "u": [sc(x) for x in u],
        "u_prime": [sc(x) for x in up],
        "U": sc(big_u),
        "c": c.hex(),
        "sums": {
            "r_bar": sc(sum(r)),
            "r_hat": sc(sum(rhat[i] * v[i] for i in range(n))),
            "r_tilde": sc(sum(r[j] * u[j] for j in range(n))),
            "r_prime": sc(sum(rp[i] * up[i] for i in range(n))),
        },
        "proof_fields": {
            name: (
                [x.hex() for x in getattr(pr, name)]
                if isinstance(getattr(pr, name), tuple)
                else getattr(pr, name).hex()
            )
            for name in pr.__match_args__
        },
        "deck_in": sealed.encode_deck(deck_in).hex(),
        "deck_out": sealed.encode_deck(deck_out).hex(),
        "proof": proof.encode().hex(),
        "deck_out_sha256": _sha256(sealed.encode_deck(deck_out)),
        "proof_sha256": _sha256(proof.encode()),
    }


# -- negative vectors: one byte changed, and the check that refuses it ------------------------
#: (name, what it changes, byte offset, xor mask, the check of the spec, the refusal's words)
NEGATIVE: tuple[tuple[str, str, int, int, str, str], ...] = (
    ("key proof: s", "keys[0].proof", 32, 0x01, "§3 s·G = R + e·P_i", "does not verify"),
    (
        "key proof: s not canonical",
        "keys[0].proof",
        63,
        0x80,
        "§1 scalar below ℓ",
        "canonical scalar",
    ),
    ("key proof: R", "keys[0].proof", 0, 0x01, "§1 point decodes", "canonical ristretto255 point"),
    ("key: P", "keys[1].P", 0, 0x01, "§1 point decodes", "canonical ristretto255 point"),
    ("revealed key: x", "keys[0].x", 0, 0x01, "§3 x·G = P_i", "does not match its public key"),
    ("shuffle proof: s1", "shuffle.proof", 32 * 14, 0x01, "§5.5 (1)", "equation 1"),
    ("shuffle proof: s2", "shuffle.proof", 32 * 15, 0x01, "§5.5 (2)", "equation 2"),
    ("shuffle proof: s3", "shuffle.proof", 32 * 16, 0x01, "§5.5 (3)", "equation 3"),
    ("shuffle proof: s4", "shuffle.proof", 32 * 17, 0x01, "§5.5 (4)", "equation 4"),
    ("shuffle proof: ŝ_1", "shuffle.proof", 32 * 19, 0x01, "§5.5 (5)", "equation 5"),
    (
        "shuffle proof: c_0",
        "shuffle.proof",
        0,
        0x01,
        "§1 point decodes",
        "canonical ristretto255 point",
    ),
    (
        "shuffle proof: s'_2 not canonical",
        "shuffle.proof",
        32 * 23 + 31,
        0x80,
        "§1 scalar below ℓ",
        "canonical scalar",
    ),
    (
        "shuffle: deck_out",
        "shuffle.deck_out",
        64 + 32,
        0x01,
        "§1 point decodes",
        "canonical ristretto255 point",
    ),
    (
        "share proof: s",
        "shares[0].proof",
        64,
        0x01,
        "§6 s·G = R1 + e·P_t, s·A = R2 + e·D_t",
        "does not verify",
    ),
    (
        "share proof: R2",
        "shares[1].proof",
        32,
        0x01,
        "§1 point decodes",
        "canonical ristretto255 point",
    ),
    ("share: D", "shares[1].D", 0, 0x01, "§1 point decodes", "canonical ristretto255 point"),
)


def _at(doc: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    """The object and the field a path like ``shares[1].proof`` names in ``doc``."""
    head, _, field = path.rpartition(".")
    name, _, index = head.partition("[")
    obj = doc[name]
    return (obj[int(index.rstrip("]"))] if index else obj), field


def negative() -> list[dict[str, Any]]:
    """Each a copy of one value of the hand-0 vectors above with one byte changed (XOR
    ``xor`` at ``byte``), the check of the spec that refuses it and the words of the
    refusal (``sealed``'s SealedError); every other value as in the valid vectors."""
    base = compute_hand0()
    out = []
    for name, path, at, xor, check, error in NEGATIVE:
        obj, field = _at(base, path)
        raw = bytearray(bytes.fromhex(obj[field]))
        raw[at] ^= xor
        out.append(
            {
                "name": name,
                "path": path,
                "byte": at,
                "xor": xor,
                "value": raw.hex(),
                "check": check,
                "error": error,
            }
        )
    return out


if __name__ == "__main__":
    text = json.dumps(compute(), indent=1, ensure_ascii=False) + "\n"
    if sys.argv[1:] == ["--check"]:
        raise SystemExit(0 if OUT.read_text("utf-8") == text else 1)
    OUT.write_text(text, "utf-8")
