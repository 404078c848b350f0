"""Ed25519 keys and signatures over canonical JSON records (fairness-v1.md §6): making
them. Checking them is :mod:`fairness.records`' (``check_signature``, ``verify_record``)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .canonical import canonical_json
from .errors import KeyFileError

ALG = "ed25519"


def _raw_public(pub: Ed25519PublicKey) -> bytes:
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(pub: Ed25519PublicKey) -> str:
    """A short stable id: the first 16 hex digits of SHA-256 of the raw public key."""
    return hashlib.sha256(_raw_public(pub)).hexdigest()[:16]


def public_key_b64(pub: Ed25519PublicKey) -> str:
    return base64.b64encode(_raw_public(pub)).decode("ascii")


def load_public_key(b64: str) -> Ed25519PublicKey:
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
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed_b64(cls, b64: str) -> Signer:
        try:
            raw = base64.b64decode(b64.strip(), validate=True)
            return cls(Ed25519PrivateKey.from_private_bytes(raw))
        except (ValueError, TypeError) as exc:
            raise KeyFileError(f"signing key is not 32 base64-encoded bytes: {exc}") from None

    def private_b64(self) -> str:
        raw = self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return base64.b64encode(raw).decode("ascii")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Signer:
        """Load a key file: PEM (PKCS#8) or one line of base64 of the 32 raw bytes."""
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


#: the fields that carry a signed record's own time, most specific first: a tree head's
#: ``timestamp``, a reveal's or transcript's ``ended_at``, a lock's ``locked_at``, a commit
#: record's ``created_at`` (receipts carry none)
TIME_FIELDS = ("timestamp", "ended_at", "locked_at", "created_at")


def signed_time(record: dict[str, Any]) -> tuple[str, float] | None:
    """``(field, epoch seconds)`` of the time a record says it was signed
    (:data:`TIME_FIELDS`), or None when it names none (or not as RFC 3339)."""
    from datetime import datetime

    for name in TIME_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            try:
                when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            if when.tzinfo is None:
                return None
            return name, when.timestamp()
    return None
