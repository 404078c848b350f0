"""One object per protocol version, with one set of names, chosen once per match.

python-chess picks a board class per variant and then calls the same methods whatever the
variant; qahwa picks a :class:`FairProtocol` per match (:func:`protocol_for` a transcript, a
record, a stored row or a protocol string) and then asks it, never ``if v2``:

- ``new_server_seed()``, ``parse_server_seed(seed)``, ``commitment(seed)``,
  ``new_client_seed()``: the server seed and its commitment (v1: 32 bytes, v2: 64);
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
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .derive import PROTOCOL, client_seed_part, key_input, parse_hex
from .derive import match_key as _match_key_v1
from .errors import FairnessError
from .v2 import PROTOCOL_V2, loads_strict, parse_nonce

#: sealed deals (docs/spec/fairness-v3.md)
PROTOCOL_V3 = "qahwa-fair/3"

#: a seat's input to K: its client seed (v1), or its (client seed, nonce) pair (v2 and later)
SeatInput = str | tuple[str, str | bytes]


class UnknownProtocolError(FairnessError):
    """A protocol string no :class:`FairProtocol` is registered for."""


class FairProtocol:
    """What one protocol version does; one instance per version (:data:`V1`, :data:`V2`)."""

    name: ClassVar[str]
    version: ClassVar[int]
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

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def __str__(self) -> str:
        return self.name

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

    def new_client_seed(self) -> str:
        """A random client seed for a seat that gave none."""
        return secrets.token_hex(16)

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


class ProtocolV1(FairProtocol):
    """qahwa-fair/1 (docs/spec/fairness-v1.md): 32-byte seeds, K = HMAC-SHA256 over the
    client seeds; no seat commitments, no signatures per action. Read-only in the service."""

    name = records = PROTOCOL
    version = 1
    seed_bytes = 32
    key_bytes = 32
    signed = False
    timed = False
    end_reasons = ("resigned", "abandoned")

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
    version = 2
    seed_bytes = 64
    key_bytes = 64
    signed = True
    timed = True
    end_reasons = ("resigned", "timeout", "expired")

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


class ProtocolV3(ProtocolV2):
    """qahwa-fair/3 (docs/spec/fairness-v3.md §9a): a qahwa-fair/2 match (its commit, lock,
    reveals and K unchanged) whose items are dealt sealed, every deal step a seat action; the
    transcript names this protocol, its ruleset ``"deal": "sealed"``."""

    name = PROTOCOL_V3
    version = 3
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


def signed_protocol(what: Any) -> bool:
    """Whether ``what`` (as :func:`protocol_for` takes it) names a known protocol whose
    matches are signed (seat commitments, a lock, receipts, signed events: v2 and later);
    False for qahwa-fair/1 and for anything that names no known protocol."""
    try:
        return protocol_for(what).signed
    except UnknownProtocolError:
        return False
