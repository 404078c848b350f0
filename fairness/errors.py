"""Errors raised by :mod:`fairness`.

The tree, in one place::

    FairnessError(ValueError)        any bad input to the derivation or its helpers
    ├── SeedError                    server seed not 32 bytes / not 64 lowercase hex
    ├── ClientSeedError              client seed empty, too long, NUL or unprintable
    ├── LabelError                   label empty, not printable ASCII, or bad live entropy
    ├── RangeError                   n, count or sides out of range
    ├── ItemsError                   unknown item list or item code
    └── SignatureError               a signature or key that does not check out
        └── KeyFileError             a signing key that cannot be loaded
    SecretBoxError(FairnessError)    a sealed seed that cannot be opened (wrong key, tampered)
"""

from __future__ import annotations


class FairnessError(ValueError):
    """Base class of every error raised by the fairness package."""


class SeedError(FairnessError):
    """A server seed that is not 32 bytes (64 lowercase hex characters)."""


class ClientSeedError(FairnessError):
    """A client seed that is empty, longer than 128 bytes, or has NUL/unprintable characters."""


class LabelError(FairnessError):
    """A chance label or live-entropy string that breaks the spec's rules."""


class RangeError(FairnessError):
    """An integer argument (n, count, sides) out of its allowed range."""


class ItemsError(FairnessError):
    """An unknown canonical item list or item code."""


class SignatureError(FairnessError):
    """A signature that does not verify, or a malformed signature record."""


class KeyFileError(SignatureError):
    """A signing key that cannot be loaded from a file or the environment."""


class SecretBoxError(FairnessError):
    """A sealed secret that cannot be opened: wrong master key or tampered ciphertext."""
