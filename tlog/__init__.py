"""Transparency logs in the C2SP conventions: RFC 6962 trees and proofs from stored hashes,
tiles, signed notes, checkpoints, cosignatures, offline proofs and trust policies.

Standard library plus ``cryptography`` only; the service and the verifier both use it.
"""

from .checkpoint import Checkpoint, CheckpointError, open_checkpoint, parse_checkpoint
from .cosignature import CosignatureSigner, cosignature_time
from .merkle import (
    EMPTY_ROOT,
    HASH_SIZE,
    CompactRange,
    HashReader,
    ListHashReader,
    ProofError,
    check_record,
    check_tree,
    consistent,
    leaf_hash,
    node_hash,
    prove_record,
    prove_tree,
    root_from_inclusion,
    split_stored_hash_index,
    stored_hash_count,
    stored_hash_index,
    stored_hashes,
    tree_hash,
)
from .note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    Note,
    NoteError,
    NoteSigner,
    Signature,
    UnverifiedNote,
    Verifier,
    open_note,
    parse_signature_line,
    parse_vkey,
    sign_note,
    split_note,
)
from .policy import Policy, PolicyError, parse_policy
from .proof import TlogProof, parse_proof
from .tiles import (
    MAX_ENTRY,
    TILE_HEIGHT,
    TILE_WIDTH,
    Tile,
    TileError,
    TileHashReader,
    encode_bundle,
    encode_index,
    parse_bundle,
    parse_path,
    tile_for_size,
    tiles_for_size,
)
from .witness import Witness

__all__ = [
    "ALG_COSIGNATURE_V1", "ALG_ED25519", "EMPTY_ROOT", "HASH_SIZE", "MAX_ENTRY", "TILE_HEIGHT",
    "TILE_WIDTH", "Checkpoint", "CheckpointError", "CompactRange", "CosignatureSigner",
    "HashReader", "ListHashReader", "Note", "NoteError", "NoteSigner", "Policy", "PolicyError",
    "ProofError", "Signature", "Tile", "TileError", "TileHashReader", "TlogProof",
    "UnverifiedNote", "Verifier", "Witness", "check_record", "check_tree", "consistent",
    "cosignature_time", "encode_bundle", "encode_index", "leaf_hash", "node_hash",
    "open_checkpoint", "open_note", "parse_bundle", "parse_checkpoint", "parse_path",
    "parse_policy", "parse_proof", "parse_signature_line", "parse_vkey", "prove_record",
    "prove_tree", "root_from_inclusion", "sign_note", "split_note", "split_stored_hash_index",
    "stored_hash_count", "stored_hash_index", "stored_hashes", "tiles_for_size",
    "tile_for_size", "tree_hash",
]
