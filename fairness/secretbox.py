"""Seeds kept secret at rest: AES-256-GCM under the server's master key."""

from __future__ import annotations

import base64
import os
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .errors import SecretBoxError

_VERSION = b"\x01"


def new_master_key() -> bytes:
    return secrets.token_bytes(32)


def load_master_key(b64: str) -> bytes:
    try:
        key = base64.b64decode(b64.strip(), validate=True)
    except ValueError:
        raise SecretBoxError("master key is not base64") from None
    if len(key) != 32:
        raise SecretBoxError(f"master key must be 32 bytes, got {len(key)}")
    return key


class SecretBox:
    """seal/open small secrets; the associated data binds a sealed seed to its match id."""

    def __init__(self, master_key: bytes) -> None:
        if not isinstance(master_key, bytes) or len(master_key) != 32:
            raise SecretBoxError("master key must be 32 bytes")
        self._aead = AESGCM(master_key)

    def seal(self, plaintext: bytes, aad: str = "") -> str:
        nonce = os.urandom(12)
        ct = self._aead.encrypt(nonce, plaintext, aad.encode("utf-8"))
        return base64.b64encode(_VERSION + nonce + ct).decode("ascii")

    def open(self, sealed: str, aad: str = "") -> bytes:
        try:
            blob = base64.b64decode(sealed, validate=True)
        except ValueError:
            raise SecretBoxError("sealed value is not base64") from None
        if len(blob) < 1 + 12 + 16 or blob[:1] != _VERSION:
            raise SecretBoxError("sealed value is malformed")
        try:
            return self._aead.decrypt(blob[1:13], blob[13:], aad.encode("utf-8"))
        except InvalidTag:
            raise SecretBoxError("sealed value does not open under this key") from None
