"""qahwa-fair/2's signed records (fairness-v2.md §1-§8), each built, signed, serialised and
checked in one place, the way :mod:`tlog` keeps prover and checker side by side.

A record is an immutable value. ``to_json()`` is the unsigned record in the key order the
service has always written it (canonical JSON sorts the keys, so the signed bytes never
depend on it); ``sign(signer)`` adds the ``signature`` object; ``Lock.check(record, keys)``
parses a signed lock and raises :class:`RecordError` (with a ``kind``) when it is not one.
Only signing and checking a signature need ``cryptography`` (imported then): the verify
page's Python parses records without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from .canonical import canonical_json
from .derive import parse_hex
from .errors import FairnessError, SignatureError
from .protocol import V2, FairProtocol, UnknownProtocolError, protocol_for
from .v2 import chain_start


class Signer(Protocol):
    """What signs a record: :class:`fairness.Signer`, or the service's key ring."""

    def signed(self, record: dict[str, Any]) -> dict[str, Any]: ...


#: the seat fields a lock fixes per seat (§3), in the order it lists them
LOCK_SEAT_FIELDS = ("seat", "name", "house", "seed_commitment", "key", "roll_chain")


class RecordError(FairnessError):
    """A record is not the one the protocol asks for. ``kind`` names the check that failed:
    ``shape``, ``signature``, ``type``, ``protocol``, ``commit`` (it differs from the
    commit record) or ``seat`` (a seat's entry differs from what that seat committed)."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _head(rtype: str, match_id: str, protocol: FairProtocol = V2) -> dict[str, Any]:
    """The fields every record starts with: its type, protocol and match."""
    return {"type": rtype, "protocol": protocol.name, "match_id": match_id}


class _Record:
    """A record that signs itself: ``sign(signer)`` adds the signature to ``to_json()``."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def sign(self, signer: Signer | None) -> dict[str, Any]:
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
    def parse(cls, record: Any) -> Lock:
        """The lock a JSON object states (RecordError ``type``/``protocol``/``shape``)."""
        if not isinstance(record, Mapping):
            raise RecordError("the lock is not a JSON object", kind="shape")
        if record.get("type") != "lock":
            raise RecordError(f"the lock has type {record.get('type')!r}, not 'lock'", kind="type")
        try:
            protocol = protocol_for(record)
        except UnknownProtocolError:
            protocol = None
        if protocol is None or not protocol.signed:
            raise RecordError(
                f"the lock has protocol {record.get('protocol')!r}, not one with a lock",
                kind="protocol",
            )
        fields = ("match_id", "game", "ruleset", "commitment", "locked_at", "reveal_by", "end_by")
        for name in fields:
            if not isinstance(record.get(name), str):
                raise RecordError(f"the lock's {name} is not a string", kind="shape")
        seats = record.get("seats")
        if not isinstance(seats, list) or not seats:
            raise RecordError("the lock lists no seats", kind="shape")
        parsed = []
        for i, s in enumerate(seats):
            if not isinstance(s, Mapping) or s.get("seat") != i or isinstance(s["seat"], bool):
                raise RecordError(f"the lock's seat entry {i} is not seat {i}", kind="shape")
            try:
                for name in ("seed_commitment", "roll_chain"):
                    if s.get(name) is not None:
                        parse_hex(s[name], 32, name)
            except FairnessError as exc:
                raise RecordError(f"the lock's seat {i}: {exc}", kind="shape") from None
            if s.get("key") is not None and not isinstance(s["key"], str):
                raise RecordError(f"the lock's seat {i}: key is not a base64 string", kind="shape")
            parsed.append(LockSeat.of(s))
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
        )

    @classmethod
    def check(cls, record: Any, keys: Mapping[str, str]) -> Lock:
        """A lock signed by one of ``keys`` (key_id → base64 Ed25519 public key), parsed;
        else RecordError (``signature`` first, then as :meth:`parse`)."""
        if not isinstance(record, Mapping):
            raise RecordError("the lock is not a JSON object", kind="shape")
        sig = record.get("signature")
        key_id = sig.get("key_id") if isinstance(sig, Mapping) else None
        if not isinstance(key_id, str) or key_id not in keys:
            raise RecordError(
                f"the lock is signed by key {key_id!r}, which is not a trusted server key",
                kind="signature",
            )
        from .signing import load_public_key, verify_record

        try:
            verify_record(dict(record), load_public_key(keys[key_id]))
        except SignatureError as exc:
            raise RecordError(f"the lock's signature: {exc}", kind="signature") from None
        return cls.parse(record)

    def check_commit(self, commit: Mapping[str, Any]) -> None:
        """The lock continues ``commit`` (§3a.4): the same match, game, ruleset, server
        commitment and seats (number, names, house)."""
        for k in ("match_id", "game", "ruleset", "commitment"):
            if getattr(self, k) != commit.get(k):
                raise RecordError(
                    f"the lock's {k} {getattr(self, k)!r} is not the commit "
                    f"record's {commit.get(k)!r}",
                    kind="commit",
                )
        want = [(s.get("seat"), s.get("name"), s.get("house")) for s in commit.get("seats", [])]
        if [(s.seat, s.name, s.house) for s in self.seats] != want:
            raise RecordError("the lock's seats are not the commit record's", kind="commit")


@dataclass(frozen=True, slots=True)
class Receipt(_Record):
    """A receipt (§7): the server signs chain[seq] and its time ``at``."""

    match_id: str
    seq: int
    chain: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {**_head("receipt", self.match_id), **asdict(self)}


@dataclass(frozen=True, slots=True)
class Head(_Record):
    """A signed head (§7, heads): what the server showed at time ``at`` — the chain head
    ``chain`` after event ``seq`` (−1: the lock's ``chain[-1]``). Every seat view and every
    event-stream answer carries one. An event after ``seq`` whose ``at`` is before this
    ``at`` was back-dated: the head and the event (chained onto it) are signed proof."""

    match_id: str
    seq: int
    chain: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {**_head("head", self.match_id), **asdict(self)}


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

    def to_json(self) -> dict[str, Any]:
        return {**_head("refusal", self.match_id), **asdict(self)}


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
    ) -> Reveal:
        """The reveal of a signed transcript (its server seed, hash and house seats)."""
        return cls(
            match_id=signed["match_id"],
            lock_index=lock_index,
            server_seed=signed["server_seed"],
            chain=chain,
            transcript_sha256=hashlib.sha256(canonical_json(dict(signed))).hexdigest(),
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


def lock_seats(seats: Sequence[Mapping[str, Any]]) -> tuple[LockSeat, ...]:
    """``LockSeat`` per seat from mappings holding :data:`LOCK_SEAT_FIELDS`."""
    return tuple(LockSeat.of(s) for s in seats)


__all__ = [
    "LOCK_SEAT_FIELDS",
    "Commit",
    "Head",
    "Lock",
    "LockSeat",
    "Receipt",
    "RecordError",
    "Refusal",
    "Reveal",
    "lock_seats",
    "request_sha256",
]
