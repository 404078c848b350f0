"""One object per protocol version, with one set of names, chosen once per match.

python-chess picks a board class per variant and then calls the same methods whatever the
variant; qahwa picks a :class:`FairProtocol` per match (:func:`protocol_for` a transcript, a
record, a stored row or a protocol string) and then asks it, never ``if v2``:

- ``new_server_seed()``, ``parse_server_seed(seed)``, ``commitment(seed)``: the server
  seed and its commitment (v1: 32 bytes, v2: 64);
- ``match_key(server_seed, match_id, game, ruleset, seats)``: K — v1 HMAC-SHA256 over the
  seats' client seeds, v2 HMAC-SHA512 over their (client seed, nonce) pairs;
  ``transcript_key(doc)`` reads those inputs from a transcript;
- ``loads(text)``: a ruleset or record string as the protocol reads JSON (v2 strictly:
  no duplicate keys, no floats);
- what a match of the protocol has: ``signed`` (seats commit and sign, a lock, receipts and
  the event chain: v2 and later), ``timed`` (the ruleset's timing rules), ``end_reasons``,
  ``key_bytes``, ``deal`` (``seeded``, or ``sealed`` for qahwa-fair/3) and ``records`` (the
  protocol its commit, lock and stored row name, and K's derivation binds).

An engine class carries its protocol (``Engine.PROTOCOL``): ``games.registry.find_engine``
chooses the class, and with it the protocol, once per match.

qahwa-fair/1 matches are read-only in the service (they are still verified, forever);
qahwa-fair/2 is the protocol of every new match. A later version (qahwa-fair/3: sealed
deals) is another subclass registered with :func:`register`.

Beside the objects, this module holds the bytes every version shares: canonical JSON
(fairness-v1.md §6) and qahwa-fair/2's nonces, seat commitments, roll chains, event chain,
seat-signature messages, times and strict JSON input (fairness-v2.md §1-§7), byte for
byte, with the standard library only (Ed25519 is :mod:`fairness.records`').
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .derive import PROTOCOL, check_client_seed, client_seed_part, key_input, lp, parse_hex, u32be
from .derive import match_key as _match_key_v1
from .errors import FairnessError, SeedError

# -- canonical JSON (fairness-v1.md §6): keys sorted, separators ',' and ':', UTF-8 ----------

#: the encoder ``json.dumps`` would build for these options on every call, built once.
#: Without the check for circular references (its bookkeeping per object is a fifth of the
#: encoding): what is encoded here is parsed JSON or records built of fresh values, never
#: circular, and one that were would still raise (RecursionError) instead of looping.
_ENCODE = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
).encode


def canonical_json(obj: Any) -> bytes:
    return _ENCODE(obj).encode("utf-8")


def canonical_ruleset(ruleset: dict[str, Any]) -> str:
    """The ruleset string a transcript carries: compact JSON with sorted keys."""
    return canonical_json(ruleset).decode("utf-8")


# -- qahwa-fair/2's bytes (fairness-v2.md) ---------------------------------------------------

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
    ±(2^53−1), no floats, no lone surrogates. A value of plain JSON types is walked once
    without naming each place (:func:`_fits`); the first place that does not fit is named
    by walking it again (and a value of other types, which may fit: a str subclass)."""
    if not _fits(obj):
        _check_canonical(obj, path)


def _fits(obj: Any) -> bool:
    """Whether ``obj``, made of plain JSON types only (not their subclasses), fits §1's
    canonical JSON; False also for a value of any other type (then walked by name)."""
    todo = [obj]
    while todo:
        v = todo.pop()
        t = type(v)
        if t is str:
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif t is dict:
            for k, x in v.items():
                if type(k) is not str or not k.isascii():
                    return False
                todo.append(x)
        elif t is list:
            todo.extend(v)
        elif t is int:
            if not -MAX_SAFE_INT <= v <= MAX_SAFE_INT:
                return False
        elif v is not None and t is not bool:
            return False
    return True


def _check_canonical(obj: Any, path: str) -> None:
    """:func:`check_canonical_value`, naming each place it walks."""
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
            _check_canonical(v, f"{path}[{i}]")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str) or not k.isascii():
                raise ValueError(f"{path}: object key {k!r} is not ASCII")
            _check_canonical(v, f"{path}.{k}")
        return
    raise ValueError(f"{path}: {type(obj).__name__} is not JSON")


# -- the protocol objects --------------------------------------------------------------------


#: sealed deals (docs/spec/fairness-v3.md)
PROTOCOL_V3 = "qahwa-fair/3"

#: a seat's input to K: its client seed (v1), or its (client seed, nonce) pair (v2 and later)
SeatInput = str | tuple[str, str | bytes]


class UnknownProtocolError(FairnessError):
    """A protocol string no :class:`FairProtocol` is registered for."""


class FairProtocol:
    """What one protocol version does; one instance per version (:data:`V1`, :data:`V2`)."""

    name: ClassVar[str]
    #: bytes of a server seed and of the match key K
    seed_bytes: ClassVar[int]
    key_bytes: ClassVar[int]
    #: seats commit (nonce, seed commitment) and sign their actions; the match has a lock,
    #: receipts and a signed event chain
    signed: ClassVar[bool]
    #: rulesets list the timing rules (turn, reveal, max seconds)
    timed: ClassVar[bool]
    #: the reasons an ``end`` event (or ``Engine.end_match``) may give
    end_reasons: ClassVar[tuple[str, ...]]
    #: the items are dealt sealed (qahwa-fair/3): hands hidden even from the operator
    sealed: ClassVar[bool] = False
    #: the ruleset's ``deal`` (fairness-v3 §9a) a match of this protocol has
    deal: ClassVar[str] = "seeded"
    #: the protocol its records (commit, lock), its stored row and K's derivation name: its
    #: own, but qahwa-fair/3's, whose records are qahwa-fair/2's (fairness-v3 §9a)
    records: ClassVar[str]
    #: the protocol of a match of this one's records whose ruleset names another deal
    #: (fairness-v3 §9a: a qahwa-fair/2 lock of ``"deal": "sealed"`` is a qahwa-fair/3 match)
    deals: ClassVar[Mapping[str, str]] = {}
    #: the kinds of record a match of this protocol puts in the log
    logged: ClassVar[tuple[str, ...]]
    #: the field that dates a transcript of this protocol (v2: it is signed when the match
    #: ends), or None: its first time field (:func:`fairness.announce.signed_time`)
    transcript_time: ClassVar[str | None] = None
    #: what a report shows of each transcript seat besides its number and name
    seat_about: ClassVar[str]
    #: how a report notes a roll label's entropy (``{}``: the label's own)
    roll_entropy: ClassVar[str]
    #: what a transcript of this protocol carries that the server signs besides itself
    signed_records: ClassVar[tuple[str, ...]] = ()

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def __str__(self) -> str:
        return self.name

    def dealt(self, deal: str) -> FairProtocol:
        """The protocol of a match whose records are this one's and whose ruleset's deal is
        ``deal``: this one, but for a deal that names another (:attr:`deals`)."""
        return PROTOCOLS[self.deals.get(deal, self.name)]

    # -- seeds ------------------------------------------------------------------------------
    def new_server_seed(self) -> bytes:
        """``seed_bytes`` fresh bytes from the operating system's CSPRNG."""
        return secrets.token_bytes(self.seed_bytes)

    def parse_server_seed(self, seed: str | bytes) -> bytes:
        """The raw seed of its one written form (lowercase hex), else SeedError."""
        return parse_hex(seed, self.seed_bytes, "server seed")

    def commitment(self, seed: str | bytes) -> str:
        """SHA-256 of the raw seed bytes, as 64 lowercase hex."""
        return hashlib.sha256(self.parse_server_seed(seed)).hexdigest()

    # -- the match key ----------------------------------------------------------------------
    def match_key(
        self, server_seed: str | bytes, match_id: str, game: str, ruleset: str, seats: Sequence[Any]
    ) -> bytes:
        """K of a match: ``seats`` are each seat's :data:`SeatInput` in seat order."""
        raise NotImplementedError

    def seat_input(self, seat: Mapping[str, Any]) -> SeatInput | None:
        """A transcript seat's input to K, or None when it never revealed it."""
        raise NotImplementedError

    def transcript_key(self, doc: Mapping[str, Any]) -> bytes | None:
        """K of a transcript: its revealed seed, ids, ruleset string as given and its seats'
        inputs in seat order; None when a seat never revealed (a ``no_reveal`` end)."""
        inputs = [self.seat_input(s) for s in sorted(doc["seats"], key=lambda s: s["seat"])]
        if any(i is None for i in inputs):
            return None
        return self.match_key(
            doc["server_seed"], doc["match_id"], doc["game"], doc["ruleset"], inputs
        )

    # -- JSON -------------------------------------------------------------------------------
    def loads(self, text: str | bytes) -> Any:
        """A ruleset (or record) string as this protocol reads JSON."""
        return json.loads(text)

    def check_value(self, doc: Any) -> None:
        """ValueError unless ``doc`` is a value this protocol writes: any JSON that has a
        UTF-8 form (v1: UnicodeEncodeError for a lone surrogate)."""
        json.dumps(doc, ensure_ascii=False).encode("utf-8")


class ProtocolV1(FairProtocol):
    """qahwa-fair/1 (docs/spec/fairness-v1.md): 32-byte seeds, K = HMAC-SHA256 over the
    client seeds; no seat commitments, no signatures per action. Read-only in the service."""

    name = records = PROTOCOL
    seed_bytes = 32
    key_bytes = 32
    signed = False
    timed = False
    end_reasons = ("resigned", "abandoned")
    logged = ("commitment",)
    seat_about = "seed_source"
    roll_entropy = ", live entropy {!r}"

    def match_key(
        self, server_seed: str | bytes, match_id: str, game: str, ruleset: str, seats: Sequence[Any]
    ) -> bytes:
        return _match_key_v1(server_seed, match_id, game, ruleset, seats)

    def seat_input(self, seat: Mapping[str, Any]) -> SeatInput | None:
        cs: str = seat["client_seed"]
        return cs

    def transcript_key(self, doc: Mapping[str, Any]) -> bytes | None:
        seats = sorted(doc["seats"], key=lambda s: s["seat"])
        return self.match_key(
            bytes.fromhex(doc["server_seed"]),
            doc["match_id"],
            doc["game"],
            doc["ruleset"],
            [s["client_seed"] for s in seats],
        )


class ProtocolV2(FairProtocol):
    """qahwa-fair/2 (docs/spec/fairness-v2.md): 64-byte seeds, each seat commits to a
    (client seed, nonce) pair and signs its actions, K = HMAC-SHA512 (§4)."""

    name = records = PROTOCOL_V2
    seed_bytes = 64
    key_bytes = 64
    signed = True
    timed = True
    end_reasons = ("resigned", "timeout", "expired")
    deals = {"sealed": PROTOCOL_V3}
    signed_records = ("lock",)
    logged = ("lock", "reveal")
    transcript_time = "ended_at"
    seat_about = "house"
    roll_entropy = ", fresh (from both seats' roll values)"

    def match_key(
        self, server_seed: str | bytes, match_id: str, game: str, ruleset: str, seats: Sequence[Any]
    ) -> bytes:
        """K = HMAC-SHA512(server_seed, T), 64 bytes; ``seats`` = (client_seed, nonce)."""
        seed = self.parse_server_seed(server_seed)

        def part(seat: Any) -> bytes:
            client_seed, nonce = seat
            return client_seed_part(client_seed) + parse_nonce(nonce)

        t = key_input(self.records, match_id, game, ruleset, seats, part)
        return hmac.new(seed, t, hashlib.sha512).digest()

    def seat_input(self, seat: Mapping[str, Any]) -> SeatInput | None:
        cs, nonce = seat.get("client_seed"), seat.get("nonce")
        if cs is None or nonce is None:
            return None
        return (cs, nonce)

    def loads(self, text: str | bytes) -> Any:
        return loads_strict(text)

    def check_value(self, doc: Any) -> None:
        """ValueError unless ``doc`` is canonical JSON's (fairness-v2.md §1)."""
        check_canonical_value(doc)


class ProtocolV3(ProtocolV2):
    """qahwa-fair/3 (docs/spec/fairness-v3.md §9a): a qahwa-fair/2 match (its commit, lock,
    reveals and K unchanged) whose items are dealt sealed, every deal step a seat action; the
    transcript names this protocol, its ruleset ``"deal": "sealed"``."""

    name = PROTOCOL_V3
    sealed = True
    deal = "sealed"


V1 = ProtocolV1()
V2 = ProtocolV2()
V3 = ProtocolV3()
#: every protocol this code knows, by name, oldest first
PROTOCOLS: dict[str, FairProtocol] = {V1.name: V1, V2.name: V2, V3.name: V3}
#: the protocol of every new match
CURRENT = V2


def register(protocol: FairProtocol) -> FairProtocol:
    """Add a later protocol version (its name must be new)."""
    if protocol.name in PROTOCOLS:
        raise ValueError(f"protocol {protocol.name!r} is already registered")
    PROTOCOLS[protocol.name] = protocol
    return protocol


def protocol_for(what: Any) -> FairProtocol:
    """The protocol of ``what``: a protocol string, a :class:`FairProtocol`, a transcript or
    record (a mapping with ``protocol``), or a stored row (an object with ``protocol``).
    UnknownProtocolError for any other."""
    if isinstance(what, FairProtocol):
        return what
    if isinstance(what, Mapping):
        name = what.get("protocol")
    elif isinstance(what, str):
        name = what
    else:
        name = getattr(what, "protocol", None)
    found = PROTOCOLS.get(name) if isinstance(name, str) else None
    if found is None:
        raise UnknownProtocolError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return found


def known_protocol(what: Any) -> FairProtocol:
    """The protocol of ``what`` (as :func:`protocol_for` takes it), read as qahwa-fair/1's
    when it names no known protocol: what an unsigned document is held to."""
    try:
        return protocol_for(what)
    except UnknownProtocolError:
        return V1


def signed_protocol(what: Any) -> bool:
    """Whether ``what`` (as :func:`protocol_for` takes it) names a known protocol whose
    matches are signed (seat commitments, a lock, receipts, signed events: v2 and later);
    False for qahwa-fair/1 and for anything that names no known protocol."""
    return known_protocol(what).signed
