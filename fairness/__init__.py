"""The derivation of every roll, shuffle and lot, for qahwa-fair/1 and qahwa-fair/2
(docs/spec/fairness-v1.md, docs/spec/fairness-v2.md; see docs/fairness.md).

This package knows no game's rules: it holds one protocol object per version
(:mod:`fairness.protocol`: ``protocol_for(doc)``, then one set of names: ``commitment``,
``match_key``, ``transcript_key``, ``loads``, ``signed``, ``end_reasons``) with the bytes
they share (canonical JSON, v2's seat commitments, roll chains and event chain), the
derivation, the canonical item lists, the records (:mod:`fairness.records`: made, signed
and opened, loading `cryptography` only to sign or check) and the secret box (loaded on
first use). Errors: see :mod:`fairness.errors`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .derive import (
    PROTOCOL,
    Stream,
    StreamKey,
    check_client_seed,
    check_entropy,
    check_label,
    commitment,
    dice,
    entropy_label,
    match_key,
    new_client_seed,
    new_server_seed,
    parse_hex,
    parse_server_seed,
    shuffle,
    uniform,
)
from .errors import (
    ClientSeedError,
    FairnessError,
    ItemsError,
    KeyFileError,
    LabelError,
    RangeError,
    SecretBoxError,
    SeedError,
    SignatureError,
)
from .items import (
    DECK52,
    DECK_QAHVE,
    canonical_sort,
    deck52,
    deck_qahve,
    parse_items,
    parse_tile,
    restrict,
    tile_code,
    tiles,
)
from .protocol import (
    CURRENT,
    PROTOCOL_V2,
    PROTOCOL_V3,
    PROTOCOLS,
    UNSIGNED_EVENT_FIELDS,
    V1,
    V2,
    V3,
    DuplicateKeyError,
    FairProtocol,
    UnknownProtocolError,
    canonical_json,
    canonical_ruleset,
    chain_head,
    chain_next,
    chain_start,
    check_canonical_value,
    check_roll_value,
    format_time_ms,
    fresh_label,
    loads_strict,
    new_nonce,
    parse_nonce,
    parse_time_us,
    protocol_for,
    roll_chain,
    roll_chain_tip,
    roll_step,
    seat_sig_message,
    seed_commitment,
    signed_event_body,
    signed_protocol,
)
from .records import (
    Signer,
    key_id_of,
    load_public_key,
    public_key_b64,
    signed_time,
    verify_bytes,
    verify_record,
)

if TYPE_CHECKING:
    from .secretbox import SecretBox, load_master_key, new_master_key

# The secret box needs `cryptography`: it loads on first use, as the records' signing and
# checking do (fairness.records imports it only then), so that the derivation (and
# everything built on it: `games`, the browser's `verify_cli.replay_core`) imports no
# `cryptography` at all.
_LAZY = {"SecretBox": "secretbox", "load_master_key": "secretbox", "new_master_key": "secretbox"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "CURRENT",
    "PROTOCOLS",
    "V1",
    "V2",
    "V3",
    "PROTOCOL_V3",
    "FairProtocol",
    "UnknownProtocolError",
    "protocol_for",
    "signed_protocol",
    "PROTOCOL",
    "PROTOCOL_V2",
    "UNSIGNED_EVENT_FIELDS",
    "DuplicateKeyError",
    "chain_head",
    "chain_next",
    "chain_start",
    "check_canonical_value",
    "check_roll_value",
    "format_time_ms",
    "fresh_label",
    "loads_strict",
    "new_nonce",
    "parse_hex",
    "parse_nonce",
    "parse_time_us",
    "roll_chain",
    "roll_chain_tip",
    "roll_step",
    "seat_sig_message",
    "seed_commitment",
    "signed_event_body",
    "verify_bytes",
    "DECK52",
    "DECK_QAHVE",
    "ClientSeedError",
    "FairnessError",
    "ItemsError",
    "KeyFileError",
    "LabelError",
    "RangeError",
    "SecretBox",
    "SecretBoxError",
    "SeedError",
    "SignatureError",
    "Signer",
    "Stream",
    "StreamKey",
    "canonical_json",
    "canonical_sort",
    "canonical_ruleset",
    "check_client_seed",
    "check_entropy",
    "check_label",
    "commitment",
    "deck52",
    "deck_qahve",
    "dice",
    "entropy_label",
    "key_id_of",
    "load_master_key",
    "load_public_key",
    "match_key",
    "new_client_seed",
    "new_master_key",
    "new_server_seed",
    "parse_items",
    "parse_server_seed",
    "parse_tile",
    "public_key_b64",
    "restrict",
    "shuffle",
    "tile_code",
    "tiles",
    "signed_time",
    "uniform",
    "verify_record",
]
