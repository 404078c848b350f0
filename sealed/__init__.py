"""Sealed deals (qahwa-fair/3): the cryptographic core, docs/spec/fairness-v3.md.

ristretto255 through libsodium; per-seat, per-hand keys with Schnorr proofs of knowledge;
Barnett–Smart masking (ElGamal over the hand key); re-masking shuffles with
Terelius–Wikström proofs; decryption shares with Chaum–Pedersen proofs; openings. Imports
nothing of the project's other packages.
"""

from __future__ import annotations

from .context import Context
from .errors import SealedError
from .keys import KeyProof, SeatKey, check_revealed, hand_key, make_key, verify_key
from .masking import (
    Ciphertext,
    Deck,
    deck_b64,
    deck_from_b64,
    decode_deck,
    encode_deck,
    starting_deck,
)
from .points import generator, generators, item_point, item_table
from .randomness import FixedRandomness, Randomness, SystemRandomness, permutation
from .shares import (
    Share,
    ShareProof,
    check_opening,
    make_share,
    own_item,
    unmask,
    verify_share,
    verify_shares,
)
from .shuffle_proof import ShuffleProof, proof_size, shuffle, verify_shuffle

PROTOCOL = "qahwa-fair/3"

__all__ = [
    "PROTOCOL",
    "Ciphertext",
    "Context",
    "Deck",
    "FixedRandomness",
    "KeyProof",
    "Randomness",
    "SealedError",
    "SeatKey",
    "Share",
    "ShareProof",
    "ShuffleProof",
    "SystemRandomness",
    "check_opening",
    "check_revealed",
    "deck_b64",
    "deck_from_b64",
    "decode_deck",
    "encode_deck",
    "generator",
    "generators",
    "hand_key",
    "item_point",
    "item_table",
    "make_key",
    "make_share",
    "own_item",
    "permutation",
    "proof_size",
    "shuffle",
    "starting_deck",
    "unmask",
    "verify_key",
    "verify_share",
    "verify_shares",
    "verify_shuffle",
]
