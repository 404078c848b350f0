"""Cosignatures (c2sp.org/tlog-cosignature, Ed25519 v1): a witness's timestamped signature
over a checkpoint, ``key id || timestamp (u64, big-endian) || Ed25519 signature``, where the
signed message is ``cosignature/v1\\ntime <t>\\n`` followed by the checkpoint text."""

from __future__ import annotations

import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .note import (
    ALG_COSIGNATURE_V1,
    NoteError,
    Signature,
    Verifier,
    check_key_name,
    check_text,
    cosignature_message,
)


class CosignatureSigner:
    """A witness key (type 0x04) with a name."""

    alg = ALG_COSIGNATURE_V1

    def __init__(self, name: str, private: Ed25519PrivateKey) -> None:
        check_key_name(name)
        self.name = name
        self._private = private
        pub = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = Verifier(name, self.alg, pub)

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> CosignatureSigner:
        if len(seed) != 32:
            raise NoteError("an Ed25519 seed has 32 bytes")
        return cls(name, Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def vkey(self) -> str:
        return self.verifier.vkey

    def cosign(self, text: str, timestamp: int | None = None) -> Signature:
        """The cosignature of the checkpoint ``text`` at ``timestamp`` (default: now)."""
        check_text(text)
        ts = int(time.time()) if timestamp is None else timestamp
        if not 0 < ts < 1 << 63:
            raise NoteError(f"a cosignature's timestamp is 1 to 2^63-1, not {ts}")
        sig = self._private.sign(cosignature_message(text, ts))
        return Signature(self.name, self.verifier.key_id, ts.to_bytes(8, "big") + sig)


def cosignature_time(sig: Signature) -> int:
    """The timestamp a cosignature carries."""
    if len(sig.sig) != 72:
        raise NoteError(f"the cosignature by {sig.name} is not 72 bytes")
    return int.from_bytes(sig.sig[:8], "big")
