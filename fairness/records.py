"""qahwa-fair/2's signed records (fairness-v2.md §1-§8), each built, signed, serialised and
opened in one place, the way :mod:`tlog` keeps prover and checker side by side.

A record is an immutable value. ``to_json()`` is the unsigned record in the key order the
service has always written it (canonical JSON sorts the keys, so the signed bytes never
depend on it); ``sign(signer)`` adds the ``signature`` object, made by a :class:`Signer`
(an Ed25519 key, fairness-v1.md §6) or the service's key ring.

Reading goes the other way, as Go's ``note.Open`` does: every record kind has one opener
(:data:`OPENERS`, or :func:`open` by the record's ``type``) that takes the record as read
(a JSON object, or its text) and the keys its reader trusts, and either returns the record
or raises one :class:`RecordError` whose ``kind`` names the check that failed: its shape,
its signature (:func:`check_signature`, the only place a record's or a seat's Ed25519
signature is checked, with the key rules: key ids, a single pinned key, retired keys), its
type and protocol, and the record's own invariants. ``keys=None`` opens a record without
its signature (the verify page's Python, which has no Ed25519, and the service reading the
records it stored itself). Only making or checking a signature needs ``cryptography``
(imported then).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .derive import HEX_DIGITS, parse_hex
from .derive import PROTOCOL as PROTOCOL_V1
from .errors import FairnessError, KeyFileError, SignatureError
from .protocol import (
    PROTOCOL_V2,
    PROTOCOL_V3,
    PROTOCOLS,
    V2,
    FairProtocol,
    canonical_json,
    chain_start,
    loads_strict,
    protocol_for,
    seat_sig_message,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )


class RecordSigner(Protocol):
    """What signs a record: :class:`Signer`, or the service's key ring."""

    def signed(self, record: dict[str, Any]) -> dict[str, Any]: ...


#: the seat fields a lock fixes per seat (§3), in the order it lists them
LOCK_SEAT_FIELDS = ("seat", "name", "house", "seed_commitment", "key", "roll_chain")


class RecordError(FairnessError):
    """A record is not the one the protocol asks for. ``kind`` names the check that failed:
    ``shape``, ``signature``, ``type``, ``protocol``, ``commit`` (it differs from the
    commit record) or ``seat`` (a seat's entry differs from what that seat committed).

    ``record``: the record kind being opened (``lock``, ``receipt``, ``event``, …);
    ``reason``: the failure without the record's name, as ``verify`` reports it; ``step``:
    which part of the signature check failed (``unsigned``, ``key``: no trusted key of
    that id, ``alg``, ``value``, ``canonical``, ``retired``), None for the other checks;
    ``note``: what the key ring said of the key it picked (``verify``'s single pinned key
    used whatever id the record names), empty otherwise."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        record: str | None = None,
        reason: str | None = None,
        step: str | None = None,
        note: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.record = record
        self.reason = message if reason is None else reason
        self.step = step
        self.note = note


# -- Ed25519 keys, and signing records over their canonical JSON -----------------------------

ALG = "ed25519"


def _raw_public(pub: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(pub: Ed25519PublicKey) -> str:
    """A short stable id: the first 16 hex digits of SHA-256 of the raw public key."""
    return hashlib.sha256(_raw_public(pub)).hexdigest()[:16]


def public_key_b64(pub: Ed25519PublicKey) -> str:
    return base64.b64encode(_raw_public(pub)).decode("ascii")


def load_public_key(b64: str) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        raw = base64.b64decode(b64, validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"not a base64 Ed25519 public key: {exc}") from None


class Signer:
    """Holds an Ed25519 private key and signs records over their canonical JSON."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        self.key_id = key_id_of(self.public_key)

    @classmethod
    def generate(cls) -> Signer:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed_b64(cls, b64: str) -> Signer:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        try:
            raw = base64.b64decode(b64.strip(), validate=True)
            return cls(Ed25519PrivateKey.from_private_bytes(raw))
        except (ValueError, TypeError) as exc:
            raise KeyFileError(f"signing key is not 32 base64-encoded bytes: {exc}") from None

    def private_b64(self) -> str:
        from cryptography.hazmat.primitives import serialization

        raw = self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return base64.b64encode(raw).decode("ascii")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Signer:
        """Load a key file: PEM (PKCS#8) or one line of base64 of the 32 raw bytes."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise KeyFileError(f"cannot read signing key {p}: {exc.strerror}") from None
        if data.lstrip().startswith(b"-----BEGIN"):
            try:
                key = serialization.load_pem_private_key(data, password=None)
            except (ValueError, TypeError) as exc:
                raise KeyFileError(f"{p}: not a PEM private key: {exc}") from None
            if not isinstance(key, Ed25519PrivateKey):
                raise KeyFileError(f"{p}: not an Ed25519 key")
            return cls(key)
        return cls.from_seed_b64(data.decode("ascii", "replace"))

    def save(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.private_b64() + "\n")

    def sign_bytes(self, data: bytes) -> str:
        return base64.b64encode(self._key.sign(data)).decode("ascii")

    def sign_record(self, record: dict[str, Any]) -> dict[str, str]:
        """The signature object for a record (the record's own `signature` key is ignored)."""
        body = {k: v for k, v in record.items() if k != "signature"}
        return {"alg": ALG, "key_id": self.key_id, "value": self.sign_bytes(canonical_json(body))}

    def signed(self, record: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in record.items() if k != "signature"}
        out["signature"] = self.sign_record(out)
        return out

    def signed_json(self, record: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """:meth:`signed` and the canonical JSON of the signed record (what a reveal record
        hashes, §8), each member of the record encoded once for both: canonical JSON is its
        members, ordered by key (a record with a key other than a string: encoded twice)."""
        out = {k: v for k, v in record.items() if k != "signature"}
        if not all(type(k) is str for k in out):
            signed = self.signed(out)
            return signed, canonical_json(signed)
        members = {k: canonical_json(k) + b":" + canonical_json(v) for k, v in out.items()}
        sig = {"alg": ALG, "key_id": self.key_id, "value": self.sign_bytes(_joined(members))}
        out["signature"] = sig
        members["signature"] = b'"signature":' + canonical_json(sig)
        return out, _joined(members)


def _joined(members: Mapping[str, bytes]) -> bytes:
    """An object's canonical JSON from its members' (``"key":value``), ordered by key."""
    return b"{" + b",".join(members[k] for k in sorted(members)) + b"}"


#: the fields that carry a signed record's own time, most specific first: a tree head's
#: ``timestamp``, a reveal's or transcript's ``ended_at``, a lock's ``locked_at``, a commit
#: record's ``created_at`` (receipts carry none)
TIME_FIELDS = ("timestamp", "ended_at", "locked_at", "created_at")


def parse_rfc3339(value: Any) -> float | None:
    """Epoch seconds of an RFC 3339 time with its offset, or None."""
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return None if t.tzinfo is None else t.timestamp()


def signed_time(record: dict[str, Any]) -> tuple[str, float] | None:
    """``(field, epoch seconds)`` of the time a record says it was signed
    (:data:`TIME_FIELDS`), or None when it names none (or not as RFC 3339)."""
    for name in TIME_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            t = parse_rfc3339(value)
            return None if t is None else (name, t)
    return None


# -- Ed25519 over canonical JSON: the checks themselves --------------------------------------


def _signature_bytes(value: Any, what: str, missing: str) -> bytes:
    """The raw bytes of a base64 signature ``value`` (SignatureError ``missing`` when it is
    no string, or ``what`` is not base64)."""
    if not isinstance(value, str):
        raise SignatureError(missing)
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise SignatureError(f"{what} is not base64") from None


def verify_record(
    record: dict[str, Any], public_key: Ed25519PublicKey, *, body_json: bytes | None = None
) -> None:
    """Raise SignatureError unless record["signature"] is a valid Ed25519 signature.

    ``body_json``: the canonical JSON of the record without its signature, when the caller
    has already made it from the record (the verifier builds a transcript's from the
    events' canonical JSON it hashed into the chain); by default it is made here.
    """
    from cryptography.exceptions import InvalidSignature

    if not isinstance(record, dict):
        raise SignatureError("a signed record must be a JSON object")
    sig = record.get("signature")
    if not isinstance(sig, dict):
        raise SignatureError("record has no signature object")
    if sig.get("alg") != "ed25519":
        raise SignatureError(f"unsupported signature algorithm {sig.get('alg')!r}")
    raw = _signature_bytes(sig.get("value"), "signature value", "signature value missing")
    if body_json is None:
        body_json = canonical_json({k: v for k, v in record.items() if k != "signature"})
    try:
        public_key.verify(raw, body_json)
    except InvalidSignature:
        raise SignatureError("signature does not match the record") from None


def verify_bytes(
    public_key_b64: str | Ed25519PublicKey, signature_b64: str, message: bytes
) -> None:
    """Raise SignatureError unless ``signature_b64`` is a valid Ed25519 signature of
    ``message`` by the base64 raw public key (a v2 seat key, fairness-v2.md §7); the key
    may also be given loaded (:func:`public_key`), to check many messages of one key."""
    raw = _signature_bytes(signature_b64, "signature", "signature must be a base64 string")
    from cryptography.exceptions import InvalidSignature

    if isinstance(public_key_b64, str):
        try:
            pub = public_key(public_key_b64)
        except FairnessError as exc:
            raise SignatureError(str(exc)) from None
    else:
        pub = public_key_b64
    try:
        pub.verify(raw, message)
    except InvalidSignature:
        raise SignatureError("signature does not match") from None


# -- the keys a reader trusts and the one signature check ------------------------------------


class KeyRing(Protocol):
    """The server keys a reader trusts: :class:`Trusted` (a client's key_id → base64 key) or
    ``verify``'s :class:`verify_cli.keys.KeySet` (pinned or fetched keys, with retirement)."""

    def pick(self, key_id: Any) -> tuple[Any, str]:
        """The public key for ``key_id`` (None when none is trusted) and a note on the pick."""
        ...

    def retired_problem(self, key_id: Any, record: dict[str, Any]) -> str | None:
        """Why ``record`` does not count as signed by ``key_id`` (a retired key), or None."""
        ...


@functools.lru_cache(maxsize=256)
def public_key(b64: str) -> Ed25519PublicKey:
    """A base64 Ed25519 public key, parsed once (parsing costs about as much as a check)."""
    return load_public_key(b64)


class Trusted:
    """key_id → base64 public key, as a client trusts them: a key is trusted by its id only,
    and a client takes a new key only through an announcement (no retirement rule)."""

    __slots__ = ("keys",)

    def __init__(self, keys: Mapping[str, str]) -> None:
        self.keys = keys

    def pick(self, key_id: Any) -> tuple[Any, str]:
        if isinstance(key_id, str) and key_id in self.keys:
            return public_key(self.keys[key_id]), ""
        return None, f"key {key_id!r} is not one of the server keys this client trusts"

    def retired_problem(self, key_id: Any, record: dict[str, Any]) -> str | None:
        return None


Keys = KeyRing | Mapping[str, str]


def _fail(what: str, message: str, kind: str, **info: Any) -> RecordError:
    return RecordError(message, kind=kind, record=what, **info)


def check_signature(record: Any, keys: Keys, what: str, *, body_json: bytes | None = None) -> str:
    """The key id of the trusted server key that signed ``record`` (its ``signature`` over
    the canonical JSON of the rest, fairness-v1.md §6); else RecordError ``signature``.
    Every record's signature is checked here and nowhere else.

    ``body_json``: that canonical JSON, when the caller has it already (the verifier builds
    a transcript's from its events' canonical JSON; :func:`signature_body` cuts a log
    leaf's from its bytes)."""
    sig = record.get("signature") if isinstance(record, dict) else None
    if not isinstance(sig, dict):
        raise _fail(
            what,
            f"the {what} carries no Ed25519 signature",
            "signature",
            reason="it carries no signature",
            step="unsigned",
        )
    assert isinstance(record, dict)
    ring = Trusted(keys) if isinstance(keys, Mapping) else keys
    kid = sig.get("key_id")
    pub, note = ring.pick(kid)
    alg_ok = sig.get("alg") == "ed25519"
    if pub is None:
        message = (
            f"the {what} is signed by key {kid!r}, which is not a trusted server key: it is "
            "not one of the server keys this client trusts"
            if alg_ok
            else f"the {what} carries no Ed25519 signature"
        )
        raise _fail(what, message, "signature", reason=note, step="key")
    try:
        verify_record(record, pub, body_json=body_json)
    except SignatureError as exc:
        step = "alg" if not alg_ok else "value"
        message = (
            f"the {what} carries no Ed25519 signature"
            if not alg_ok
            else f"the {what}'s signature does not match it (key {kid})"
        )
        raise _fail(what, message, "signature", reason=str(exc), step=step, note=note) from None
    except (ValueError, TypeError) as exc:  # e.g. a lone surrogate: no canonical JSON
        raise _fail(
            what,
            f"the {what} has no canonical JSON to check its signature over ({exc})",
            "signature",
            reason=f"the record has no canonical JSON to check ({exc})",
            step="canonical",
            note=note,
        ) from None
    late = ring.retired_problem(kid, record)
    if late is not None:
        raise _fail(
            what, f"the {what}: {late}", "signature", reason=late, step="retired", note=note
        )
    return str(kid)


def signature_body(raw: bytes, sig: Mapping[str, Any]) -> bytes | None:
    """The canonical JSON of a record without its ``signature``, cut from ``raw`` (the
    record's canonical JSON): ``raw`` less its top-level ``"signature":{…}`` member. The
    member's bytes are found by value: a ``"`` inside a JSON string is always escaped, so
    it occurs once in ``raw`` only as the top-level member (None: not found once)."""
    member = b'"signature":' + canonical_json(dict(sig))
    at = raw.find(member)
    if at < 0 or raw.find(member, at + 1) >= 0:
        return None
    end = at + len(member)
    if raw[at - 1 : at] == b",":
        return raw[: at - 1] + raw[end:]
    if raw[end : end + 1] == b",":
        return raw[:at] + raw[end + 1 :]
    return raw[:at] + raw[end:]


def check_seat_signature(
    key: str | Ed25519PublicKey,
    sig: Any,
    match_id: str,
    prev: str | bytes,
    event: Mapping[str, Any],
) -> None:
    """A seat's signature ``sig`` over ``event`` after the chain head ``prev`` (fairness-v2.md
    §7: the message :func:`fairness.protocol.seat_sig_message`), by the seat's key from the lock
    (base64, or parsed); else RecordError ``signature`` (``reason``: what is wrong)."""
    try:
        verify_bytes(key, sig, seat_sig_message(match_id, prev, event))
    except (SignatureError, ValueError, TypeError) as exc:
        raise _fail(
            "event", f"the event's seat signature: {exc}", "signature", reason=str(exc)
        ) from None


def seat_key(b64: str) -> Ed25519PublicKey | str:
    """A seat's key from the lock, parsed once; the string itself when it is no Ed25519 key
    (:func:`check_seat_signature` then says so at each use)."""
    try:
        return public_key(b64)
    except FairnessError:
        return b64


# -- opening a record ------------------------------------------------------------------------


def _signed_names() -> tuple[str, ...]:
    return tuple(name for name, p in PROTOCOLS.items() if p.signed)


class Read(dict[str, Any]):
    """A record's JSON object as read from ``text``, which it keeps: an answer carries the
    text as it is (``service.matches.view_json``) instead of serialising the record again."""

    __slots__ = ("text",)

    def __init__(self, text: str, value: dict[str, Any] | None = None) -> None:
        """The object ``text`` holds (``value``: already parsed from it)."""
        super().__init__(loads_strict(text) if value is None else value)
        self.text = text


def _as_json(raw: Any, what: str) -> Any:
    """``raw`` as read: a JSON value, or its text (strict JSON, §1: a :class:`Read`)."""
    if isinstance(raw, (str, bytes, bytearray)):
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", "replace")
        try:
            value = loads_strict(text)
        except ValueError as exc:
            raise _fail(what, f"the {what} is not JSON ({exc})", "shape") from None
        return Read(text, value) if isinstance(value, dict) else value
    if isinstance(raw, Mapping) and not isinstance(raw, dict):
        return dict(raw)
    return raw


def open_signed(
    raw: Any,
    keys: Keys | None,
    rtype: str,
    *,
    what: str | None = None,
    protocols: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``raw`` as a JSON object of ``type`` ``rtype`` and one of ``protocols`` (default: the
    record kind's, :data:`RECORD_PROTOCOLS`), signed by one of ``keys`` (unchecked when
    None); else RecordError (``kind``: shape, signature, type, protocol, in that order)."""
    what = what or WHAT.get(rtype, rtype)
    record = _as_json(raw, what)
    if not isinstance(record, dict):
        raise _fail(what, f"the {what} is not a JSON object", "shape")
    if keys is not None:
        check_signature(record, keys, what)
    if record.get("type") != rtype:
        raise _fail(what, f"the {what} has type {record.get('type')!r}, not {rtype!r}", "type")
    allowed = tuple(protocols or RECORD_PROTOCOLS.get(rtype) or _signed_names())
    if record.get("protocol") not in allowed:
        raise _fail(
            what,
            f"the {what} has protocol {record.get('protocol')!r}, not "
            f"{' or '.join(map(repr, allowed))}",
            "protocol",
        )
    return record


def _head(rtype: str, match_id: str, protocol: FairProtocol = V2) -> dict[str, Any]:
    """The fields every record starts with: its type, protocol and match."""
    return {"type": rtype, "protocol": protocol.name, "match_id": match_id}


class _Record:
    """A record that signs itself: ``sign(signer)`` adds the signature to ``to_json()``."""

    __slots__ = ()
    #: the record's ``type``, and its match
    TYPE: ClassVar[str]
    match_id: str

    def to_json(self) -> dict[str, Any]:
        """The unsigned record: its head, then its fields in order (a record whose fields
        are not its JSON's writes its own)."""
        return {**_head(self.TYPE, self.match_id), **asdict(self)}  # type: ignore[call-overload]

    def sign(self, signer: RecordSigner | None) -> dict[str, Any]:
        """The signed record (unsigned when ``signer`` is None: a test's placeholder)."""
        record = self.to_json()
        return record if signer is None else signer.signed(record)


@dataclass(frozen=True, slots=True)
class Commit(_Record):
    """The commit record (§1): the server seed's commitment before any seat commits."""

    match_id: str
    game: str
    ruleset: str
    commitment: str
    seats: tuple[tuple[str, bool], ...]  # (name, house) per seat
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            **_head("commit", self.match_id),
            "game": self.game,
            "ruleset": self.ruleset,
            "commitment": self.commitment,
            "seats": [
                {"seat": i, "name": name, "house": house}
                for i, (name, house) in enumerate(self.seats)
            ],
            "created_at": self.created_at,
        }

    @classmethod
    def open(cls, raw: Any, keys: Keys | None) -> Commit:
        """The commit record ``raw`` states, signed by one of ``keys`` (unchecked when None):
        its match, game, ruleset (a JSON object's text), server commitment, time and seats
        (numbered from 0, each with a name and a house flag); else RecordError."""
        what = "commit record"
        record = open_signed(raw, keys, "commit")
        for name in ("match_id", "game", "ruleset", "commitment", "created_at"):
            if not isinstance(record.get(name), str):
                raise _fail(what, f"the {what}'s {name} is not a string", "shape")
        seats = record.get("seats")
        if not isinstance(seats, list) or not seats:
            raise _fail(what, f"the {what} lists no seats", "shape")
        for i, s in enumerate(seats):
            if (
                not isinstance(s, dict)
                or s.get("seat") != i
                or isinstance(s.get("seat"), bool)
                or not isinstance(s.get("name"), str)
                or not isinstance(s.get("house"), bool)
            ):
                raise _fail(
                    what,
                    f"the {what}'s seat entry {i} is not seat {i}, named, house or not",
                    "shape",
                )
        try:
            rules = json.loads(record["ruleset"])
        except ValueError:
            rules = None
        if not isinstance(rules, dict):
            raise _fail(what, f"the {what}'s ruleset is not a JSON object", "shape")
        return cls(
            match_id=record["match_id"],
            game=record["game"],
            ruleset=record["ruleset"],
            commitment=record["commitment"],
            seats=tuple((s["name"], s["house"]) for s in seats),
            created_at=record["created_at"],
        )


@dataclass(frozen=True, slots=True)
class LockSeat:
    """One seat as the lock fixes it: its seed commitment, key and roll-chain tip."""

    seat: int
    name: str
    house: bool
    seed_commitment: str | None
    key: str | None
    roll_chain: str | None

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> LockSeat:
        """The seat a lock's entry (or a seat row's fields) states; a missing field is None."""
        values: list[Any] = [entry.get(k) for k in LOCK_SEAT_FIELDS]
        return cls(*values)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in LOCK_SEAT_FIELDS}


@dataclass(frozen=True, slots=True)
class Lock(_Record):
    """The lock record (§3): every seat's commitment, fixed and logged before any reveal."""

    match_id: str
    game: str
    ruleset: str
    commitment: str
    seats: tuple[LockSeat, ...]
    locked_at: str
    reveal_by: str
    end_by: str
    #: the match's protocol (any with seat commitments: ``signed``)
    protocol: FairProtocol = V2
    #: the signed record it was opened from (a :class:`Read` when read from text); None
    #: for a lock built here
    signed: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            **_head("lock", self.match_id, self.protocol),
            "game": self.game,
            "ruleset": self.ruleset,
            "commitment": self.commitment,
            "seats": [s.to_json() for s in self.seats],
            "locked_at": self.locked_at,
            "reveal_by": self.reveal_by,
            "end_by": self.end_by,
        }

    @property
    def roll_tips(self) -> tuple[str | None, ...]:
        """Each seat's roll-chain tip c[0] (hex; None for a seat without a chain), §6."""
        return tuple(s.roll_chain for s in self.seats)

    def match_key(
        self, server_seed: str | bytes, reveals: Sequence[tuple[str, str | bytes]]
    ) -> bytes:
        """K (§4) of this lock's match: the revealed server seed and each seat's
        (client_seed, nonce), in seat order."""
        return self.protocol.match_key(server_seed, self.match_id, self.game, self.ruleset, reveals)

    @staticmethod
    def chain_start(record: Mapping[str, Any]) -> bytes:
        """chain[-1]: SHA-256 of the canonical signed lock (§7)."""
        return chain_start(record)

    @classmethod
    def open(cls, raw: Any, keys: Keys | None, *, protocols: Sequence[str] | None = None) -> Lock:
        """The lock ``raw`` states (a JSON object or its text), signed by one of ``keys``
        (unchecked when None); else RecordError: ``shape``, ``signature``, ``type``,
        ``protocol`` (one with seat commitments, or of ``protocols``), then ``shape`` of its
        fields and seats. ``signed`` is the record as read (with its ``text`` when read from
        text)."""
        record = open_signed(raw, keys, "lock", protocols=protocols)
        protocol = protocol_for(record)
        fields = ("match_id", "game", "ruleset", "commitment", "locked_at", "reveal_by", "end_by")
        for name in fields:
            if not isinstance(record.get(name), str):
                raise _fail("lock", f"the lock's {name} is not a string", "shape")
        seats = record.get("seats")
        if not isinstance(seats, list) or not seats:
            raise _fail("lock", "the lock lists no seats", "shape")
        parsed = []
        for i, s in enumerate(seats):
            if not isinstance(s, Mapping) or s.get("seat") != i or isinstance(s["seat"], bool):
                raise _fail("lock", f"the lock's seat entry {i} is not seat {i}", "shape")
            try:
                for name in ("seed_commitment", "roll_chain"):
                    if s.get(name) is not None:
                        parse_hex(s[name], 32, name)
            except FairnessError as exc:
                raise _fail("lock", f"the lock's seat {i}: {exc}", "shape") from None
            key = s.get("key")
            if key is not None and not isinstance(key, str):
                raise _fail("lock", f"the lock's seat {i}: key is not a base64 string", "shape")
            if s.get("seed_commitment") is None:
                raise _fail("lock", f"the lock's seat {i} has no seed_commitment", "shape")
            if not isinstance(s.get("name"), str) or not isinstance(s.get("house"), bool):
                raise _fail("lock", f"the lock's seat {i} has no name or house flag", "shape")
            parsed.append(LockSeat.of(s))
        try:
            parse_hex(record["commitment"], 32, "commitment")
        except FairnessError as exc:
            raise _fail("lock", f"the lock's {exc}", "shape") from None
        times = [when(record[k], "lock", k) for k in ("locked_at", "reveal_by", "end_by")]
        if not times[0] <= times[1] <= times[2]:
            raise _fail("lock", "the lock's times are out of order", "shape")
        return cls(
            match_id=record["match_id"],
            game=record["game"],
            ruleset=record["ruleset"],
            commitment=record["commitment"],
            seats=tuple(parsed),
            locked_at=record["locked_at"],
            reveal_by=record["reveal_by"],
            end_by=record["end_by"],
            protocol=protocol,
            signed=record,
        )

    @classmethod
    def parse(cls, record: Any) -> Lock:
        """The lock a JSON object states, its signature unchecked: :meth:`open` without keys."""
        return cls.open(record, None)

    def check_commit(self, commit: Mapping[str, Any]) -> None:
        """The lock continues ``commit`` (§3a.4): the same match, game, ruleset, server
        commitment and seats (number, names, house)."""
        for k in ("match_id", "game", "ruleset", "commitment"):
            if getattr(self, k) != commit.get(k):
                raise _fail(
                    "lock",
                    f"the lock's {k} {getattr(self, k)!r} is not the commit "
                    f"record's {commit.get(k)!r}",
                    "commit",
                )
        want = [(s.get("seat"), s.get("name"), s.get("house")) for s in commit.get("seats", [])]
        if [(s.seat, s.name, s.house) for s in self.seats] != want:
            raise _fail("lock", "the lock's seats are not the commit record's", "commit")


@dataclass(frozen=True, slots=True)
class Receipt(_Record):
    """A receipt (§7): the server signs chain[seq] and its time ``at``."""

    match_id: str
    seq: int
    chain: str
    at: str

    TYPE: ClassVar[str] = "receipt"


@dataclass(frozen=True, slots=True)
class Head(Receipt):
    """A signed head (§7, heads): what the server showed at time ``at`` — the chain head
    ``chain`` after event ``seq`` (−1: the lock's ``chain[-1]``), a receipt's fields. Every
    seat view and every event-stream answer carries one. An event after ``seq`` whose ``at``
    is before this ``at`` was back-dated: the head and the event (chained onto it) are
    signed proof."""

    TYPE: ClassVar[str] = "head"


def request_sha256(body: bytes) -> str:
    """The hash a refusal signs for a request (§7, refusals): SHA-256 of its body, the
    bytes exactly as sent (a seat's request body is unique: it holds the seat's signature
    over the match and the chain head, or its commitment, or its seed and nonce)."""
    return hashlib.sha256(body).hexdigest()


@dataclass(frozen=True, slots=True)
class Refusal(_Record):
    """A signed refusal (§7, refusals): the server refused the request whose
    :func:`request_sha256` is ``request`` with HTTP ``status`` and error code ``reason``, at
    ``at``. A seat keeps it as the answer to its request: a refused request is not censored;
    a request that met no signed refusal and no receipt is."""

    match_id: str
    request: str
    status: int
    reason: str
    at: str

    TYPE: ClassVar[str] = "refusal"


@dataclass(frozen=True, slots=True)
class Reveal(_Record):
    """The reveal record (§8): the server seed, the final chain head and the SHA-256 of the
    signed transcript, logged when the match ends."""

    match_id: str
    lock_index: int | None
    server_seed: str
    chain: str | None
    transcript_sha256: str
    result: Mapping[str, Any]
    house: tuple[int, ...]
    ended_at: str | None

    @classmethod
    def of_transcript(
        cls,
        signed: Mapping[str, Any],
        *,
        lock_index: int | None,
        chain: str | None,
        result: Mapping[str, Any],
        ended_at: str | None,
        signed_json: bytes | None = None,
    ) -> Reveal:
        """The reveal of a signed transcript (its server seed, hash and house seats);
        ``signed_json``: the transcript's canonical JSON, when its signer made it."""
        if signed_json is None:
            signed_json = canonical_json(dict(signed))
        return cls(
            match_id=signed["match_id"],
            lock_index=lock_index,
            server_seed=signed["server_seed"],
            chain=chain,
            transcript_sha256=hashlib.sha256(signed_json).hexdigest(),
            result=result,
            house=tuple(st["seat"] for st in signed["seats"] if st["house"]),
            ended_at=ended_at,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **_head("reveal", self.match_id),
            "lock_index": self.lock_index,
            "server_seed": self.server_seed,
            "chain": self.chain,
            "transcript_sha256": self.transcript_sha256,
            "reason": self.result.get("reason"),
            "forfeited": self.result.get("forfeited", []),
            "house": list(self.house),
            "result": dict(self.result),
            "ended_at": self.ended_at,
        }


#: how a message names a record kind (by its type, when not so)
WHAT = {
    "commit": "commit record",
    "reveal": "reveal record",
    "key_announcement": "key announcement",
    "tree_head": "tree head",
}

#: the protocols a record kind may name; any other kind: any signed one (a match's records
#: name its protocol)
RECORD_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "key_announcement": (PROTOCOL_V2,),
    "tree_head": (PROTOCOL_V1, PROTOCOL_V2),
}


def _chain_shape(record: dict[str, Any], what: str, *, need_at: bool) -> dict[str, Any]:
    """A receipt's or signed head's fields (§7): its match, ``seq`` (−1: the lock's
    chain[-1]), ``chain`` (64 lowercase hex) and ``at`` (a time string; a receipt's
    may be absent)."""
    if not isinstance(record.get("match_id"), str):
        raise _fail(what, f"the {what} has no match_id", "shape")
    seq = record.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < -1:
        raise _fail(what, f"the {what}'s seq is not -1 or an event number: {seq!r}", "shape")
    chain = record.get("chain")
    if not isinstance(chain, str) or len(chain) != 64 or not HEX_DIGITS.issuperset(chain):
        raise _fail(what, f"the {what}'s chain is not 64 lowercase hex", "shape")
    if (need_at or "at" in record) and not isinstance(record.get("at"), str):
        raise _fail(what, f"the {what}'s at is not a time string", "shape")
    return record


def open_receipt(raw: Any, keys: Keys | None) -> dict[str, Any]:
    """A receipt (§7) signed by one of ``keys``: its match, seq, chain and time."""
    return _chain_shape(open_signed(raw, keys, "receipt"), "receipt", need_at=False)


def open_head(raw: Any, keys: Keys | None) -> dict[str, Any]:
    """A signed head (§7, heads) signed by one of ``keys``: its match, seq, chain and time."""
    return _chain_shape(open_signed(raw, keys, "head"), "head", need_at=True)


def open_refusal(raw: Any, keys: Keys | None) -> dict[str, Any]:
    """A signed refusal (§7, refusals) signed by one of ``keys``."""
    return open_signed(raw, keys, "refusal")


def open_reveal(raw: Any, keys: Keys | None) -> dict[str, Any]:
    """The reveal record (§8) signed by one of ``keys``."""
    return open_signed(raw, keys, "reveal")


def open_tree_head(
    raw: Any,
    keys: Keys | None,
    *,
    what: str | None = None,
    protocols: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The log's signed tree head (fairness-v1.md §7) signed by one of ``keys``: a
    ``tree_size`` (an integer, 0 or more) and a ``root_hash`` (64 hex)."""
    what = what or "tree head"
    record = open_signed(raw, keys, "tree_head", what=what, protocols=protocols)
    size = record.get("tree_size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise _fail(what, f"the {what} has no valid tree_size", "shape")
    root = record.get("root_hash")
    if not isinstance(root, str) or len(root) != 64:
        raise _fail(what, f"the {what} has no valid root_hash", "shape")
    try:
        bytes.fromhex(root)
    except ValueError:
        raise _fail(what, f"the {what} has no valid root_hash", "shape") from None
    return record


#: a transcript's fields and their JSON types, by its protocol (newest first): qahwa-fair/3
#: (fairness-v3 §9a) is a qahwa-fair/2 transcript (fairness-v2 §9), then qahwa-fair/1's
_TRANSCRIPT_V2: dict[str, type | tuple[type, ...]] = {
    "match_id": str,
    "game": str,
    "ruleset": str,
    "commitment": str,
    "server_seed": str,
    "lock": dict,
    "lock_index": int,
    "seats": list,
    "events": list,
    "chain": str,
}
TRANSCRIPT_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    PROTOCOL_V3: _TRANSCRIPT_V2,
    PROTOCOL_V2: _TRANSCRIPT_V2,
    PROTOCOL_V1: {
        k: v for k, v in _TRANSCRIPT_V2.items() if k not in ("lock", "lock_index", "chain")
    },
}


def open_transcript(
    raw: Any, keys: Keys | None, *, what: str | None = None, body_json: bytes | None = None
) -> dict[str, Any]:
    """A transcript (fairness-v1.md §6, v2 §9, v3 §9a): a JSON object signed by one of
    ``keys`` (unchecked when None), with the retirement rule of ``keys`` (a retired key
    signs nothing after its ``retired_at``: the transcript's ``ended_at`` and every event's
    ``at`` are before it), naming a protocol of :data:`TRANSCRIPT_FIELDS` and carrying that
    protocol's fields, each of its JSON type; else RecordError ``shape``, ``signature`` or
    ``protocol``, worded as ``verify`` says it. ``body_json``: its canonical JSON without
    the signature, when already made. Its rules are :mod:`verify_cli.rules`'."""
    what = what or "transcript"
    doc = _as_json(raw, what)
    if not isinstance(doc, dict):
        raise _fail(what, "not a transcript: the document is not a JSON object", "shape")
    if keys is not None:
        check_signature(doc, keys, what, body_json=body_json)
    name = doc.get("protocol")
    if name is None:
        raise _fail(what, "not a transcript: it has no 'protocol' field", "protocol")
    fields = TRANSCRIPT_FIELDS.get(name) if isinstance(name, str) else None
    if fields is None:
        text = json.dumps(name, ensure_ascii=False, separators=(",", ":"))
        known = " and ".join(map(repr, TRANSCRIPT_FIELDS))
        raise _fail(
            what,
            f"unknown protocol {text if len(text) <= 40 else text[:39] + '…'} (this tool "
            f"verifies {known})",
            "protocol",
        )
    for field_name, typ in fields.items():
        if field_name not in doc:
            raise _fail(what, f"not a transcript: field {field_name!r} is missing", "shape")
        value = doc[field_name]
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise _fail(what, f"not a transcript: field {field_name!r} has the wrong type", "shape")
    return doc


# -- a sealed deal's steps (fairness-v3 §9a): what a seat sends, and a hand's record of it ---
# Each opener takes the step (or the hand's recorded entry) as JSON and returns its fields as
# bytes, else RecordError ``shape`` naming the field as ``names`` say (a step's ``'key'``, a
# recorded hand's ``key of seat 0``); the proofs in them are the sealed crypto's to check.


def _shape(what: str, message: str) -> RecordError:
    return _fail("sealed step", f"{what}: {message}", "shape")


def open_hex(value: Any, size: int, what: str) -> bytes:
    """``size`` bytes in their one written form, lowercase hex."""
    if not isinstance(value, str):
        raise _shape(what, "a hex string expected")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise _shape(what, "not hex") from None
    if len(raw) != size or value != raw.hex():
        raise _shape(what, f"{size} bytes of lowercase hex expected")
    return raw


def open_b64(value: Any, what: str) -> bytes:
    """Bytes in their one written form, canonical base64."""
    if not isinstance(value, str):
        raise _shape(what, "a base64 string expected")
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:  # binascii.Error too
        raise _shape(what, "not base64") from None
    if base64.b64encode(raw).decode("ascii") != value:
        raise _shape(what, "not canonical base64")
    return raw


def open_item(value: Any, n: int, what: str = "'item'") -> int:
    """An item's position in a hand of ``n`` items."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise _fail(
            "sealed step", f"{what} must be an item position 0 to {n - 1}, got {value!r}", "shape"
        )
    return value


def open_key_step(
    raw: Mapping[str, Any], names: tuple[str, str] = ("'key'", "'proof'")
) -> tuple[bytes, bytes]:
    """A seat's key (§3, 32 bytes) and the proof of it (64 bytes), in hex."""
    return open_hex(raw.get("key"), 32, names[0]), open_hex(raw.get("proof"), 64, names[1])


def open_shuffle_step(
    raw: Mapping[str, Any], names: tuple[str, str] = ("'deck'", "'proof'")
) -> tuple[bytes, bytes]:
    """A seat's shuffled deck (§5.5) and the proof of it, in base64."""
    return open_b64(raw.get("deck"), names[0]), open_b64(raw.get("proof"), names[1])


def open_share(
    raw: Mapping[str, Any], names: tuple[str, str] = ("'share'", "'proof'")
) -> tuple[bytes, bytes]:
    """A seat's share of an item (§6, 32 bytes) and the proof of it (96 bytes), in hex: one
    of a share step's ``shares``, an open step's, or a recorded hand's."""
    return open_hex(raw.get("share"), 32, names[0]), open_hex(raw.get("proof"), 96, names[1])


def open_revealed_key(raw: Mapping[str, Any], name: str = "'secret'") -> bytes:
    """A seat's revealed key (§3, the ``secret``: 32 bytes in hex)."""
    return open_hex(raw.get("secret"), 32, name)


def when(value: Any, what: str, name: str) -> float:
    """Epoch seconds of a record's RFC 3339 time field ``name`` (RecordError ``shape``)."""
    t = parse_rfc3339(value)
    if t is None:
        raise _fail(what, f"the {what}'s {name} is not an RFC 3339 time", "shape")
    return t


@dataclass(frozen=True, slots=True)
class Announcement:
    """A key announcement (fairness-v2.md, "key announcements"), opened: the key it names
    (``key_id``, base64 ``public_key``), from when it signs, and the key that signed it."""

    key_id: str
    public_key: str
    not_before: str
    created_at: str
    signed_by: str
    signed: Mapping[str, Any] = field(compare=False, repr=False)

    @classmethod
    def open(cls, raw: Any, keys: Keys) -> Announcement:
        """A ``key_announcement`` signed by one of ``keys`` that announces a well-formed key
        other than its own, announced no later than it signs; else RecordError (``kind``:
        shape, signature, type, protocol)."""
        what = "key announcement"
        rec = open_signed(raw, keys, "key_announcement")
        key = rec.get("key")
        if not isinstance(key, dict) or key.get("alg") != "ed25519":
            raise _fail(what, "the key announcement names no Ed25519 key", "shape")
        kid, pub = key.get("key_id"), key.get("public_key")
        if not isinstance(kid, str) or not isinstance(pub, str):
            raise _fail(what, "the announced key has no key_id or public_key", "shape")
        try:
            derived = key_id_of(public_key(pub))
        except FairnessError:
            raise _fail(what, "the announced public key is not an Ed25519 key", "shape") from None
        if derived != kid:
            raise _fail(
                what, f"the announced key_id {kid!r} is not its public key's ({derived})", "shape"
            )
        signer = rec["signature"]["key_id"]
        if kid == signer:
            raise _fail(what, "a key announcement signed by the key it announces", "signature")
        created, not_before = rec.get("created_at"), rec.get("not_before")
        if when(created, what, "created_at") > when(not_before, what, "not_before"):
            raise _fail(
                what, "the key was announced after it signs (created_at > not_before)", "shape"
            )
        assert isinstance(created, str) and isinstance(not_before, str)
        return cls(kid, pub, not_before, created, signer, rec)


def causer(event: Mapping[str, Any]) -> int | None:
    """The seat that caused an event (its signer, when keyed, §7): an action's seat, a
    resignation's seat; None for chance events and the server's ends."""
    if event.get("type") == "action" or (
        event.get("type") == "end" and event.get("reason") == "resigned"
    ):
        seat = event.get("seat")
        return seat if isinstance(seat, int) and not isinstance(seat, bool) else None
    return None


def open_event(
    raw: Any, lock: Lock | None, prev: str | bytes, keys: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An event of ``lock``'s match after the chain head ``prev`` (fairness-v2.md §7): a JSON
    object; an event a keyed seat caused (:func:`causer`) carries that seat's ``sig`` over
    it, by its key from the lock, and no other event carries one. RecordError ``shape`` or
    ``signature`` (``step``: ``unkeyed`` — a sig where no keyed seat caused it;
    ``unsigned`` — a keyed seat's event without one; ``value`` — a sig that does not check
    out, ``reason`` says why). ``keys``: the seats' keys parsed already (key → parsed), a
    cache kept by a caller that opens many events. ``lock`` None: a lock that did not open,
    so no seat is keyed."""
    event = _as_json(raw, "event")
    if not isinstance(event, dict):
        raise _fail("event", "the event is not a JSON object", "shape")
    seat = causer(event)
    seats = lock.seats if lock is not None else ()
    key = seats[seat].key if seat is not None and 0 <= seat < len(seats) else None
    if key is None:
        if "sig" in event:
            who = (
                f"seat {seat} registered no key in the lock"
                if seat is not None
                else "no seat caused it"
            )
            raise _fail(
                "event",
                f"the event carries a sig, but {who}",
                "signature",
                reason=who,
                step="unkeyed",
            )
        return event
    if "sig" not in event:
        raise _fail(
            "event",
            f"the event ({event.get('type')} by keyed seat {seat}) carries no signature",
            "signature",
            step="unsigned",
        )
    assert lock is not None
    loaded = keys.get(key) if keys is not None else None
    if loaded is None:
        loaded = seat_key(key)
        if keys is not None:
            keys[key] = loaded
    try:
        check_seat_signature(loaded, event["sig"], lock.match_id, prev, event)
    except RecordError as exc:
        exc.step = "value"
        raise
    return event


#: each record kind's opener, by its ``type``: ``opener(raw, keys) -> record``
OPENERS: dict[str, Callable[[Any, Any], Any]] = {
    "commit": Commit.open,
    "lock": Lock.open,
    "receipt": open_receipt,
    "head": open_head,
    "refusal": open_refusal,
    "reveal": open_reveal,
    "key_announcement": Announcement.open,
    "tree_head": open_tree_head,
}


def open(raw: Any, keys: Keys | None) -> Any:  # noqa: A001 - note.Open's name
    """Open a signed server record of any kind (:data:`OPENERS`) by the ``type`` it names:
    the record, or RecordError. (A transcript and an event are opened with what they
    need beside the keys: :func:`open_transcript`, :func:`open_event`.)"""
    record = _as_json(raw, "record")
    rtype = record.get("type") if isinstance(record, dict) else None
    opener = OPENERS.get(rtype) if isinstance(rtype, str) else None
    if opener is None:
        raise _fail("record", f"the record has type {rtype!r}, which is no signed record", "type")
    return opener(record, keys)


def lock_seats(seats: Sequence[Mapping[str, Any]]) -> tuple[LockSeat, ...]:
    """``LockSeat`` per seat from mappings holding :data:`LOCK_SEAT_FIELDS`."""
    return tuple(LockSeat.of(s) for s in seats)
