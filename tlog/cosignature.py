"""Cosignatures (c2sp.org/tlog-cosignature, Ed25519 v1): a witness's timestamped signature
over a checkpoint, ``key id || timestamp (u64, big-endian) || Ed25519 signature``, where the
signed message is ``cosignature/v1\\ntime <t>\\n`` followed by the checkpoint text."""

from __future__ import annotations

import time

from .note import (
    ALG_COSIGNATURE_V1,
    Ed25519Key,
    NoteError,
    Signature,
    check_text,
    cosignature_message,
)


class CosignatureSigner(Ed25519Key):
    """A witness key (type 0x04) with a name."""

    alg = ALG_COSIGNATURE_V1

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
