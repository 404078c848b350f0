"""qahwa-fair/2 as a client computes it (fairness-v2.md §1, §2, §6, §7, and the log's
RFC 9162 inclusion proofs), written here from the spec with the standard library and
``cryptography`` only.

The client does not import the server's ``fairness`` package: a player's client is a second
implementation of the few formulas it must compute itself (its seat commitment, its roll
chain, the event chain, its seat signatures, the checks of signed records and of the log), and
the tests hold the two to the same vectors.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

PROTOCOL_V2 = "qahwa-fair/2"
NONCE_BYTES = 32
CHAIN_SECRET_BYTES = 32
ROLL_CHAIN_LENGTH = 65536
MAX_SEED_BYTES = 128
_SEAT_TAG = b"qahwa-fair/2 seat\x00"
_ROLL_TAG = b"qahwa-fair/2 roll\x00"


class ProtocolError(ValueError):
    """Something the client computed or checked does not hold (a one-line reason)."""


def canonical(obj: Any) -> bytes:
    """Canonical JSON (fairness-v2.md §1): sorted keys, no spaces, UTF-8."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def check_client_seed(seed: Any) -> str:
    """A client seed is 1-128 UTF-8 bytes and printable (v1 §2, v2 §2)."""
    if not isinstance(seed, str):
        raise ProtocolError("a client seed must be a string")
    n = len(seed.encode("utf-8", errors="surrogatepass"))
    if not 1 <= n <= MAX_SEED_BYTES or not seed.isprintable():
        raise ProtocolError(
            f"a client seed is 1-{MAX_SEED_BYTES} UTF-8 bytes, printable (got {n} bytes)"
        )
    return seed


def hex_bytes(value: Any, nbytes: int, what: str) -> bytes:
    """``nbytes`` bytes written as lowercase hex, else ProtocolError."""
    if (
        not isinstance(value, str)
        or len(value) != 2 * nbytes
        or any(c not in "0123456789abcdef" for c in value)
    ):
        raise ProtocolError(f"{what} must be {2 * nbytes} lowercase hex characters")
    return bytes.fromhex(value)


def seed_commitment(match_id: str, seat: int, nonce: bytes, client_seed: str) -> str:
    """SHA-256("qahwa-fair/2 seat" || 0x00 || lp(match_id) || u32be(seat) || nonce ||
    lp(client_seed)), hex (fairness-v2.md §2)."""
    if len(nonce) != NONCE_BYTES:
        raise ProtocolError(f"a nonce is {NONCE_BYTES} bytes")
    seed = check_client_seed(client_seed).encode("utf-8")
    return hashlib.sha256(
        _SEAT_TAG + _lp(match_id.encode("utf-8")) + seat.to_bytes(4, "big") + nonce + _lp(seed)
    ).hexdigest()


class RollChain:
    """A seat's roll chain (fairness-v2.md §6): ``c[65536]`` is the secret, ``c[j-1] =
    SHA-256(tag || lp(match_id) || u32be(seat) || c[j])``; ``tip`` is ``c[0]`` and the seat's
    ``k``-th value is ``c[k+1]``."""

    def __init__(
        self, match_id: str, seat: int, secret: bytes, length: int = ROLL_CHAIN_LENGTH
    ) -> None:
        if len(secret) != CHAIN_SECRET_BYTES:
            raise ProtocolError(f"a roll-chain secret is {CHAIN_SECRET_BYTES} bytes")
        prefix = _ROLL_TAG + _lp(match_id.encode("utf-8")) + seat.to_bytes(4, "big")
        values = [secret]
        v = secret
        sha = hashlib.sha256
        for _ in range(length):
            v = sha(prefix + v).digest()
            values.append(v)
        values.reverse()
        self._values = values
        self.length = length

    @property
    def tip(self) -> str:
        return self._values[0].hex()

    def value(self, k: int) -> str:
        """The seat's ``k``-th value (k = 0, 1, …), hex."""
        if not 0 <= k < self.length:
            raise ProtocolError(f"value {k} is beyond the roll chain's {self.length} values")
        return self._values[k + 1].hex()


def chain_start(lock: Mapping[str, Any]) -> bytes:
    """chain[-1] = SHA-256(canonical(lock record, signature included))."""
    return hashlib.sha256(canonical(dict(lock))).digest()


def chain_next(prev: bytes, event: Mapping[str, Any]) -> bytes:
    """chain[n] = SHA-256(chain[n-1] || canonical(event[n]))."""
    return hashlib.sha256(prev + canonical(dict(event))).digest()


def chain_heads(lock: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """[chain[-1], chain[0], …, chain[len(events)-1]]."""
    heads = [chain_start(lock)]
    for ev in events:
        heads.append(chain_next(heads[-1], ev))
    return heads


def sig_message(match_id: str, prev: str, event: Mapping[str, Any]) -> bytes:
    """What a seat signs: canonical({"match_id", "prev", "event": E}), E without seq/sig/at."""
    body = {k: v for k, v in event.items() if k not in ("seq", "sig", "at")}
    return canonical({"match_id": match_id, "prev": prev, "event": body})


class SeatKey:
    """A seat's Ed25519 key: made here, used for one seat of one match."""

    def __init__(self, private: Ed25519PrivateKey | None = None) -> None:
        self._private = private or Ed25519PrivateKey.generate()
        raw = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_b64 = base64.b64encode(raw).decode("ascii")

    @classmethod
    def from_seed(cls, seed: bytes) -> SeatKey:
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def sign(self, message: bytes) -> str:
        return base64.b64encode(self._private.sign(message)).decode("ascii")


@functools.lru_cache(maxsize=256)
def _public_key(b64: str) -> Ed25519PublicKey:
    """The parsed key, kept: every receipt is checked with one of a few server keys, and
    parsing a key costs about as much as the check itself."""
    try:
        raw = base64.b64decode(b64, validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise ProtocolError("a public key is not base64 of 32 bytes") from None


def check_signature(public_b64: str, signature_b64: str, message: bytes) -> None:
    try:
        raw = base64.b64decode(signature_b64, validate=True)
    except ValueError:
        raise ProtocolError("a signature is not base64") from None
    try:
        _public_key(public_b64).verify(raw, message)
    except InvalidSignature:
        raise ProtocolError("the signature does not match") from None


def check_signed_record(
    record: Any,
    keys: Mapping[str, str],
    *,
    what: str,
    rtype: str,
    protocols: Sequence[str] = (PROTOCOL_V2,),
) -> None:
    """``record`` is a JSON object of ``type`` ``rtype`` and one of ``protocols``, signed by
    one of ``keys`` (key_id → base64 public key) over its canonical form without
    ``signature``."""
    if not isinstance(record, dict):
        raise ProtocolError(f"the {what} is not a JSON object")
    sig = record.get("signature")
    if not isinstance(sig, dict) or sig.get("alg") != "ed25519":
        raise ProtocolError(f"the {what} carries no Ed25519 signature")
    key_id, value = sig.get("key_id"), sig.get("value")
    if not isinstance(key_id, str) or key_id not in keys:
        raise ProtocolError(
            f"the {what} is signed by key {key_id!r}, which is not one of the "
            f"server keys this client trusts"
        )
    if not isinstance(value, str):
        raise ProtocolError(f"the {what}'s signature has no value")
    body = {k: v for k, v in record.items() if k != "signature"}
    try:
        check_signature(keys[key_id], value, canonical(body))
    except ProtocolError:
        raise ProtocolError(f"the {what}'s signature does not match it (key {key_id})") from None
    if record.get("type") != rtype:
        raise ProtocolError(f"the {what} has type {record.get('type')!r}, not {rtype!r}")
    if record.get("protocol") not in protocols:
        raise ProtocolError(
            f"the {what} has protocol {record.get('protocol')!r}, not "
            f"{' or '.join(map(repr, protocols))}"
        )


# -- the log: RFC 9162 inclusion proofs ------------------------------------------------------


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion(index: int, tree_size: int, leaf_h: bytes, path: Sequence[bytes]) -> bytes:
    """The root an inclusion proof leads to (RFC 9162 §2.1.3.2), else ProtocolError."""
    if not 0 <= index < tree_size:
        raise ProtocolError(f"index {index} is outside a tree of size {tree_size}")
    fn, sn, r = index, tree_size - 1, leaf_h
    for p in path:
        if sn == 0:
            raise ProtocolError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProtocolError("the inclusion proof is too short")
    return r


# -- times (§1, §7) --------------------------------------------------------------------------

_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$")
TURN_SECONDS = 300  # the ruleset's default (fairness-v2.md §7)


def parse_time_us(value: Any) -> int:
    """An RFC 3339 UTC time ending in ``Z`` (§1) as integer microseconds since the epoch
    (exactly: times are compared to the millisecond); ProtocolError if it is not one."""
    m = _TIME.match(value) if isinstance(value, str) else None
    if m is None:
        raise ProtocolError(f"{value!r} is not an RFC 3339 UTC time ending in Z")
    y, mo, d, h, mi, sec, frac = m.groups()
    try:
        t = datetime.datetime(
            int(y), int(mo), int(d), int(h), int(mi), int(sec), tzinfo=datetime.UTC
        )
    except ValueError as exc:
        raise ProtocolError(f"{value!r} is not a valid time ({exc})") from None
    return int(t.timestamp()) * 1_000_000 + int((frac or "0").ljust(6, "0"))


def format_time(us: int) -> str:
    """Microseconds since the epoch as §1's time with milliseconds
    (``2026-12-03T21:30:00.123Z``)."""
    ms = us // 1000
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def timeout_deadline(lock: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> int | None:
    """The deadline (microseconds since the epoch) of the seat a final timeout event names (§7, times): the
    ``at`` of the event before it (the lock's ``locked_at`` when no action came before) plus
    the ruleset's ``turn_seconds``. None when the events carry no times to tell it."""
    n = len(events) - 1
    if n < 0:
        return None
    try:
        rules = json.loads(lock.get("ruleset", "{}"))
        turn = rules.get("turn_seconds", TURN_SECONDS) if isinstance(rules, dict) else None
        if isinstance(turn, bool) or not isinstance(turn, int):
            return None
        if any(e.get("type") == "action" for e in events[:n]):
            since = events[n - 1].get("at")
            if since is None:
                return None
            return parse_time_us(since) + turn * 1_000_000
        return parse_time_us(lock.get("locked_at")) + turn * 1_000_000
    except ProtocolError:
        return None


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


def new_chain_secret() -> bytes:
    return secrets.token_bytes(CHAIN_SECRET_BYTES)


def new_client_seed() -> str:
    return secrets.token_hex(16)


__all__ = [
    "PROTOCOL_V2",
    "ProtocolError",
    "RollChain",
    "SeatKey",
    "canonical",
    "chain_heads",
    "chain_next",
    "chain_start",
    "check_client_seed",
    "check_signature",
    "check_signed_record",
    "hex_bytes",
    "leaf_hash",
    "new_chain_secret",
    "new_client_seed",
    "new_nonce",
    "root_from_inclusion",
    "seed_commitment",
    "sig_message",
]
