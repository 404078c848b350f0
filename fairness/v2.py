"""qahwa-fair/2 (fairness-v2.md): nonces, seat commitments, roll chains, the event chain and
seat-signature messages, byte for byte. The seed, its commitment and the match key are the
protocol object's (:data:`fairness.protocol.V2`).

The word stream, uniform, dice and shuffle are v1's (:class:`fairness.Stream`), keyed with the
64-byte K of ``V2.match_key`` (HMAC-SHA512, 16 words per block). This module needs only
the standard library; Ed25519 checks of seat signatures live in :mod:`fairness.signing`.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from .canonical import canonical_json
from .derive import check_client_seed, lp, parse_hex, u32be
from .errors import SeedError

PROTOCOL_V2 = "qahwa-fair/2"
NONCE_BYTES = 32
CHAIN_SECRET_BYTES = 32
ROLL_CHAIN_LENGTH = 65536
_SEAT_TAG = b"qahwa-fair/2 seat\x00"
_ROLL_TAG = b"qahwa-fair/2 roll\x00"
MAX_SAFE_INT = (1 << 53) - 1


# -- nonces ----------------------------------------------------------------------------------------


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


def parse_nonce(nonce: str | bytes) -> bytes:
    return parse_hex(nonce, NONCE_BYTES, "nonce")


# -- seat commitments (§2) -------------------------------------------------------------------


def seed_commitment(match_id: str, seat: int, nonce: str | bytes, client_seed: str) -> str:
    """SHA-256("qahwa-fair/2 seat" || 0x00 || lp(match_id) || u32be(seat) || nonce ||
    lp(client_seed)), 64 lowercase hex."""
    if not isinstance(match_id, str):
        raise TypeError("match_id must be a string")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 1 << 32:
        raise ValueError(f"seat must be an integer 0 .. 2^32-1, got {seat!r}")
    n = parse_nonce(nonce)
    cs = check_client_seed(client_seed).encode("utf-8")
    return hashlib.sha256(
        _SEAT_TAG + lp(match_id.encode("utf-8")) + u32be(seat) + n + lp(cs)
    ).hexdigest()


# -- roll chains (§6) ------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _roll_prefix(match_id: str, seat: int) -> bytes:
    return _ROLL_TAG + lp(match_id.encode("utf-8")) + u32be(seat)


def roll_step(match_id: str, seat: int, value: bytes) -> bytes:
    """c[j-1] from c[j]: SHA-256("qahwa-fair/2 roll" || 0x00 || lp(match_id) || u32be(seat) || c[j])."""
    return hashlib.sha256(_roll_prefix(match_id, seat) + value).digest()


def roll_chain(
    match_id: str, seat: int, secret: bytes, length: int = ROLL_CHAIN_LENGTH
) -> list[bytes]:
    """The whole chain c[0] .. c[length] (c[length] = secret, c[0] = the tip)."""
    if not isinstance(secret, bytes) or len(secret) != CHAIN_SECRET_BYTES:
        raise SeedError(f"a roll-chain secret is {CHAIN_SECRET_BYTES} bytes")
    prefix = _roll_prefix(match_id, seat)
    out = [secret]
    sha = hashlib.sha256
    v = secret
    for _ in range(length):
        v = sha(prefix + v).digest()
        out.append(v)
    out.reverse()
    return out


def roll_chain_tip(match_id: str, seat: int, secret: bytes, length: int = ROLL_CHAIN_LENGTH) -> str:
    return roll_chain(match_id, seat, secret, length)[0].hex()


def check_roll_value(match_id: str, seat: int, previous: bytes, value: str | bytes) -> bytes:
    """The raw value if it hashes once to ``previous`` (the seat's last value or tip)."""
    raw = parse_hex(value, 32, "roll value")
    if roll_step(match_id, seat, raw) != previous:
        raise SeedError(f"roll value {raw.hex()} is not seat {seat}'s next value on its chain")
    return raw


def fresh_label(label: str, value_roller: bytes, value_other: bytes) -> str:
    """``L || "|" || hex(SHA-256(v_R || v_O))`` (for an opening: v_0 then v_1)."""
    return label + "|" + hashlib.sha256(value_roller + value_other).hexdigest()


# -- the event chain and seat signatures (§7) ------------------------------------------------


def chain_start(lock: Mapping[str, Any]) -> bytes:
    """chain[-1] = SHA-256(canonical(lock record, signature included))."""
    return hashlib.sha256(canonical_json(dict(lock))).digest()


def chain_next(prev: bytes, event: Mapping[str, Any]) -> bytes:
    """chain[n] = SHA-256(chain[n-1] || canonical(event[n]))."""
    return hashlib.sha256(prev + canonical_json(dict(event))).digest()


def chain_head(lock: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> bytes:
    h = chain_start(lock)
    for ev in events:
        h = chain_next(h, ev)
    return h


#: what a seat's signature leaves out of the event (fairness-v2.md §7): the server sets them
UNSIGNED_EVENT_FIELDS = ("seq", "sig", "at")


def signed_event_body(event: Mapping[str, Any]) -> dict[str, Any]:
    """E: the event without ``seq``, ``sig`` and ``at``."""
    return {k: v for k, v in event.items() if k not in UNSIGNED_EVENT_FIELDS}


def seat_sig_message(match_id: str, prev: str | bytes, event: Mapping[str, Any]) -> bytes:
    """canonical({"match_id", "prev": hex(chain[n-1]), "event": E}) — what a seat signs."""
    prev_hex = prev.hex() if isinstance(prev, bytes) else prev
    return canonical_json(
        {"match_id": match_id, "prev": prev_hex, "event": signed_event_body(event)}
    )


# -- times (§1, §7) --------------------------------------------------------------------------

_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$")
_EVENT_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


#: how far (seconds) an event after a signed head may be stamped before that head's ``at``
#: before it is back-dating (fairness-v2.md §7, heads): the hosts of one server keep their
#: clocks closer than this
BACKDATE_SLACK = 1.0


def parse_time_us(value: Any, *, event: bool = False) -> int:
    """An RFC 3339 UTC time ending in ``Z`` (§1) as integer microseconds since the epoch,
    exactly (no float). ``event``: an event's ``at``, which has exactly milliseconds
    (``2026-12-03T21:30:00.123Z``). ValueError when it is not such a time."""
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a time string")
    m = _TIME.match(value)
    if m is None or (event and _EVENT_TIME.match(value) is None):
        shape = "2026-12-03T21:30:00.123Z" if event else "2026-12-03T21:30:00Z"
        raise ValueError(f"{value!r} is not an RFC 3339 UTC time like {shape}")
    y, mo, d, h, mi, sec, frac = m.groups()
    try:
        day = datetime.date(int(y), int(mo), int(d)).toordinal() - _EPOCH_DAY
        if int(h) > 23 or int(mi) > 59 or int(sec) > 59:
            raise ValueError("hour, minute or second out of range")
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid time ({exc})") from None
    whole = ((day * 24 + int(h)) * 60 + int(mi)) * 60 + int(sec)
    return whole * 1_000_000 + int((frac or "").ljust(6, "0"))


def format_time_ms(us: int) -> str:
    """Microseconds since the epoch as an event time (milliseconds, ``Z``), truncated."""
    ms = us // 1000
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()


# -- strict JSON input (§1) ------------------------------------------------------------------


class DuplicateKeyError(ValueError):
    """A JSON object repeated a key (fairness-v2.md §1 refuses it on input)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKeyError(f"duplicate key {k!r} in a JSON object")
        out[k] = v
    return out


def _no_constant(s: str) -> Any:
    raise ValueError(f"{s} is not JSON")


def loads_strict(data: str | bytes) -> Any:
    """``json.loads`` that refuses duplicate keys (DuplicateKeyError) and NaN/Infinity
    (ValueError)."""
    return json.loads(data, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def check_canonical_value(obj: Any, path: str = "$") -> None:
    """Raise ValueError unless ``obj`` fits §1's canonical JSON: ASCII keys, integers within
    ±(2^53−1), no floats, no lone surrogates."""
    if obj is None or isinstance(obj, bool):
        return
    if isinstance(obj, int):
        if not -MAX_SAFE_INT <= obj <= MAX_SAFE_INT:
            raise ValueError(f"{path}: integer {obj} is outside ±(2^53-1)")
        return
    if isinstance(obj, float):
        raise ValueError(f"{path}: {obj!r} is not an integer")
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{path}: a string holds a lone surrogate") from None
        return
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            check_canonical_value(v, f"{path}[{i}]")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str) or not k.isascii():
                raise ValueError(f"{path}: object key {k!r} is not ASCII")
            check_canonical_value(v, f"{path}.{k}")
        return
    raise ValueError(f"{path}: {type(obj).__name__} is not JSON")
