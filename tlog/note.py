"""Signed notes (c2sp.org/signed-note) with Ed25519 keys, and verifier keys (vkeys).

A note is a text ending in a newline, a blank line, and signature lines ``— <name>
base64(key id || signature)``. A key is identified by its name and 32-bit key id,
``SHA-256(name || 0x0A || type || public key)[:4]``. Type 0x01 signs the note text with
Ed25519; type 0x04 (c2sp.org/tlog-cosignature v1) signs a timestamped message over a
checkpoint (see :mod:`tlog.cosignature`, which builds on the classes here).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Self

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALG_ED25519 = 0x01
ALG_COSIGNATURE_V1 = 0x04
SIG_PREFIX = "\u2014 "  # em dash, space
MAX_SIGNATURES = 100
COSIGNATURE_HEADER = b"cosignature/v1\n"


class NoteError(ValueError):
    """A note, signature or key that is malformed or does not verify."""


class UnverifiedNote(NoteError):
    """A well-formed note that no known key signed."""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str, what: str) -> bytes:
    """Strict standard base64 (canonical padding, no whitespace)."""
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise NoteError(f"{what} is not base64") from None
    if b64(data) != text:
        raise NoteError(f"{what} is not canonical base64")
    return data


def check_key_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" or ord(c) < 0x20 for c in name):
        raise NoteError(f"bad key name {name!r}: non-empty, with no spaces or '+'")


def key_id(name: str, alg: int, public_key: bytes) -> int:
    check_key_name(name)
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([alg]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def cosignature_message(text: str, timestamp: int) -> bytes:
    """What a v1 cosignature signs: the header, the time line, the checkpoint text."""
    return COSIGNATURE_HEADER + f"time {timestamp}\n".encode("ascii") + text.encode("utf-8")


@dataclass(frozen=True)
class Verifier:
    """A public key that verifies note signatures: type 0x01 (Ed25519 over the note text)
    or 0x04 (timestamped cosignature v1)."""

    name: str
    alg: int
    public_key: bytes
    key_id: int = field(init=False)

    def __post_init__(self) -> None:
        if self.alg not in (ALG_ED25519, ALG_COSIGNATURE_V1):
            raise NoteError(f"unsupported signature type 0x{self.alg:02x}")
        if len(self.public_key) != 32:
            raise NoteError("an Ed25519 public key has 32 bytes")
        object.__setattr__(self, "key_id", key_id(self.name, self.alg, self.public_key))

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.key_id:08x}+{b64(bytes([self.alg]) + self.public_key)}"

    def verify(self, text: str, sig: bytes) -> bool:
        """Whether ``sig`` (without the key id) signs the note ``text``."""
        pub = Ed25519PublicKey.from_public_bytes(self.public_key)
        if self.alg == ALG_ED25519:
            message, raw = text.encode("utf-8"), sig
        else:
            if len(sig) != 8 + 64:
                return False
            ts = int.from_bytes(sig[:8], "big")
            if ts >= 1 << 63:
                return False
            message, raw = cosignature_message(text, ts), sig[8:]
        try:
            pub.verify(raw, message)
        except InvalidSignature:
            return False
        return True


def parse_vkey(vkey: str) -> Verifier:
    """A verifier from ``<name>+<hex key id>+<base64(type || key)>``."""
    parts = vkey.strip().split("+", 2)
    if len(parts) != 3:
        raise NoteError(f"a vkey is <name>+<key id>+<key>, not {vkey!r}")
    name, hex_id, key_b64 = parts
    check_key_name(name)
    if len(hex_id) != 8 or any(c not in "0123456789abcdefABCDEF" for c in hex_id):
        raise NoteError(f"vkey {vkey!r}: the key id is 8 hex digits")
    raw = unb64(key_b64, f"vkey {name!r}'s key")
    if len(raw) != 33:
        raise NoteError(f"vkey {name!r}: the key is a type byte and 32 bytes")
    v = Verifier(name, raw[0], raw[1:])
    if v.key_id != int(hex_id, 16):
        raise NoteError(f"vkey {name!r}: the key id {hex_id} does not match its key")
    return v


class Ed25519Key:
    """A named Ed25519 private key of one signature type (``alg``), with its verifier: the
    base of :class:`NoteSigner` (0x01) and :class:`tlog.CosignatureSigner` (0x04)."""

    alg: int

    def __init__(self, name: str, private: Ed25519PrivateKey) -> None:
        check_key_name(name)
        self.name = name
        self._private = private
        pub = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = Verifier(name, self.alg, pub)

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> Self:
        if len(seed) != 32:
            raise NoteError("an Ed25519 seed has 32 bytes")
        return cls(name, Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def key_id(self) -> int:
        return self.verifier.key_id

    @property
    def vkey(self) -> str:
        return self.verifier.vkey


class NoteSigner(Ed25519Key):
    """An Ed25519 note key (type 0x01) with a name."""

    alg = ALG_ED25519

    def sign(self, text: str) -> Signature:
        return Signature(self.name, self.key_id, self._private.sign(text.encode("utf-8")))


@dataclass(frozen=True)
class Signature:
    name: str
    key_id: int
    sig: bytes  # after the key id

    @property
    def line(self) -> str:
        return f"{SIG_PREFIX}{self.name} {b64(self.key_id.to_bytes(4, 'big') + self.sig)}\n"


def parse_signature_line(line: str) -> Signature:
    """One ``— <name> <base64>`` line (without its newline)."""
    if not line.startswith(SIG_PREFIX):
        raise NoteError(f"a signature line starts with an em dash and a space: {line[:40]!r}")
    name, sep, data = line[len(SIG_PREFIX) :].partition(" ")
    if not sep or " " in data:
        raise NoteError(f"a signature line is '— <name> <signature>': {line[:60]!r}")
    check_key_name(name)
    raw = unb64(data, f"the signature by {name!r}")
    if len(raw) < 5:
        raise NoteError(f"the signature by {name!r} is too short")
    return Signature(name, int.from_bytes(raw[:4], "big"), raw[4:])


def _check_chars(msg: str) -> None:
    for c in msg:
        if ord(c) < 0x20 and c != "\n":
            raise NoteError(f"a note holds no control characters (found U+{ord(c):04X})")


def split_note(msg: str | bytes) -> tuple[str, list[Signature]]:
    """The text and the signatures of a signed note (nothing verified)."""
    if isinstance(msg, bytes):
        try:
            msg = msg.decode("utf-8")
        except UnicodeDecodeError:
            raise NoteError("a note is UTF-8") from None
    _check_chars(msg)
    cut = msg.rfind("\n\n")
    if cut < 0:
        raise NoteError("a signed note has a text, a blank line and signature lines")
    text, block = msg[: cut + 1], msg[cut + 2 :]
    if not block.endswith("\n"):
        raise NoteError("a signed note ends with a newline")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note with more than {MAX_SIGNATURES} signatures")
    return text, [parse_signature_line(line) for line in lines]


def check_text(text: str) -> None:
    _check_chars(text)
    if not text.endswith("\n"):
        raise NoteError("a note text ends with a newline")


@dataclass
class Note:
    text: str
    verified: list[tuple[Verifier, Signature]]
    unknown: list[Signature]

    def signed_by(self, v: Verifier) -> bool:
        return any(w == v for w, _ in self.verified)


def open_note(msg: str | bytes, verifiers: Iterable[Verifier]) -> Note:
    """Verify a signed note: every signature by a known key (name and key id) must verify,
    unknown ones are kept aside, and at least one known key must have signed
    (:class:`UnverifiedNote` otherwise)."""
    text, sigs = split_note(msg)
    known = {(v.name, v.key_id): v for v in verifiers}
    verified: dict[tuple[str, int], tuple[Verifier, Signature]] = {}  # each key's first
    unknown: list[Signature] = []
    for s in sigs:
        v = known.get((s.name, s.key_id))
        if v is None:
            unknown.append(s)
            continue
        if not v.verify(text, s.sig):
            raise NoteError(f"the signature by {s.name} ({s.key_id:08x}) does not verify")
        verified.setdefault((s.name, s.key_id), (v, s))
    if not verified:
        names = ", ".join(sorted({s.name for s in sigs}))
        raise UnverifiedNote(f"no known key signed this note (signed by: {names})")
    return Note(text, list(verified.values()), unknown)


def sign_note(text: str, signers: Sequence[NoteSigner]) -> str:
    """The signed note of ``text`` (ending in a newline) with one line per signer."""
    check_text(text)
    if not signers:
        raise NoteError("a signed note needs a signer")
    return text + "\n" + "".join(s.sign(text).line for s in signers)
