"""ristretto255 (RFC 9496) through libsodium, bundled in the ``rbcl`` wheel.

Points and scalars are their canonical 32-byte encodings (``bytes``). Every operation on a
point or a secret scalar is a libsodium call (constant time in libsodium); this module adds
only what the calls need: the output buffer and the reading of libsodium's return code.

Which libsodium functions are used, and why through ``rbcl``'s library handle rather than its
Python wrappers: the wrappers check each point again before every call (libsodium decodes and
checks it anyway, and this package checks every point from outside once, where it is parsed)
and refuse a product that is the identity, which a sealed deck needs (the starting deck's
first halves are the identity). The functions are the same libsodium symbols. Every addition
and multiplication still refuses an operand that does not decode (libsodium's return code),
so a value that skipped parsing cannot pass as the identity.

Limits, stated in docs/spec/fairness-v3.md §10: Python's own integers are not constant time,
so this package uses them only for public values (challenges, verifier arithmetic, lengths);
secret scalars stay ``bytes`` and go through libsodium's scalar functions. A permutation is
secret and is applied with Python list indexing (memory access depends on it): unavoidable
in Python, and what it could leak is local timing on the seat's own machine.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from collections.abc import Iterable

import rbcl

from .errors import SealedError

_lib = rbcl._sodium  # the libsodium handle rbcl loads (its wrappers call the same)


def _unlink_rbcl_copy() -> None:
    """rbcl writes its bundled libsodium to a temporary file on every import and keeps it;
    once loaded the file is not needed (POSIX keeps the mapping), so remove it."""
    module = sys.modules.get("rbcl._sodium")
    path = getattr(module, "lib_path", None)
    if isinstance(path, str) and os.name == "posix":
        try:
            os.unlink(path)
        except FileNotFoundError:  # another import of this process removed it already
            pass


_unlink_rbcl_copy()

for _name in (
    "crypto_core_ristretto255_is_valid_point",
    "crypto_core_ristretto255_from_hash",
    "crypto_core_ristretto255_add",
    "crypto_core_ristretto255_sub",
    "crypto_core_ristretto255_scalar_random",
    "crypto_core_ristretto255_scalar_reduce",
    "crypto_core_ristretto255_scalar_add",
    "crypto_core_ristretto255_scalar_mul",
    "crypto_core_ristretto255_scalar_negate",
    "crypto_scalarmult_ristretto255",
    "crypto_scalarmult_ristretto255_base",
):
    getattr(_lib, _name).restype = ctypes.c_int

_valid = _lib.crypto_core_ristretto255_is_valid_point
_from_hash = _lib.crypto_core_ristretto255_from_hash
_add = _lib.crypto_core_ristretto255_add
_sub = _lib.crypto_core_ristretto255_sub
_srandom = _lib.crypto_core_ristretto255_scalar_random
_sreduce = _lib.crypto_core_ristretto255_scalar_reduce
_sadd = _lib.crypto_core_ristretto255_scalar_add
_smul = _lib.crypto_core_ristretto255_scalar_mul
_sneg = _lib.crypto_core_ristretto255_scalar_negate
_mul = _lib.crypto_scalarmult_ristretto255
_mul_base = _lib.crypto_scalarmult_ristretto255_base
_buf = ctypes.create_string_buffer
_UNWRITTEN = b"\xff" * 32  # no point encodes so (not canonical): shows libsodium wrote nothing

#: the order of the group, ℓ = 2^252 + 27742317777372353535851937790883648493
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(32)
#: the standard generator G (RFC 9496 §4.4), as encoded
G = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")


def is_point(p: bytes) -> bool:
    """A canonical encoding of a group element (the identity included)."""
    return len(p) == 32 and _valid(p) == 1


def is_scalar(s: bytes) -> bool:
    """A canonical scalar: 32 bytes, little-endian, below ℓ."""
    return len(s) == 32 and int.from_bytes(s, "little") < L


def point(p: bytes, what: str) -> bytes:
    """``p`` checked as a point from outside (a clear error naming ``what`` otherwise)."""
    if not isinstance(p, bytes) or not is_point(p):
        raise SealedError(f"{what}: not a canonical ristretto255 point")
    return p


def scalar(s: bytes, what: str) -> bytes:
    if not isinstance(s, bytes) or not is_scalar(s):
        raise SealedError(f"{what}: not a canonical scalar (32 bytes little-endian below ℓ)")
    return s


def from_hash(h: bytes) -> bytes:
    """ristretto255 from a 64-byte uniform string (RFC 9496 §4.3.4, libsodium's from_hash)."""
    out = _buf(32)
    _from_hash(out, h)
    return out.raw


def mul(s: bytes, p: bytes) -> bytes:
    """s·p (the identity when s = 0 or p is the identity); refuses a p that is no point."""
    out = _buf(_UNWRITTEN, 32)
    if _mul(out, s, p) != 0:
        # -1 for an identity product (libsodium then wrote 32 zero bytes) or for a p that
        # does not decode (then it wrote nothing)
        if out.raw != IDENTITY:
            raise SealedError("not a canonical ristretto255 point")
    return out.raw


def base(s: bytes) -> bytes:
    """s·G."""
    out = _buf(32)
    _mul_base(out, s)
    return out.raw


def add(p: bytes, q: bytes) -> bytes:
    """p + q; refuses a p or q that is no point (libsodium's -1)."""
    out = _buf(32)
    if _add(out, p, q) != 0:
        raise SealedError("not a canonical ristretto255 point")
    return out.raw


def sub(p: bytes, q: bytes) -> bytes:
    out = _buf(32)
    if _sub(out, p, q) != 0:
        raise SealedError("not a canonical ristretto255 point")
    return out.raw


def total(points: Iterable[bytes]) -> bytes:
    """The sum of the points (the identity for none)."""
    acc = IDENTITY
    first = True
    for p in points:
        if first:
            acc, first = p, False
        else:
            acc = add(acc, p)
    return acc


# -- scalars: secret ones through libsodium --------------------------------------------


def random_scalar() -> bytes:
    out = _buf(32)
    _srandom(out)
    return out.raw


def reduce64(h: bytes) -> bytes:
    """A 64-byte string mod ℓ."""
    out = _buf(32)
    _sreduce(out, h)
    return out.raw


def s_add(a: bytes, b: bytes) -> bytes:
    out = _buf(32)
    _sadd(out, a, b)
    return out.raw


def s_mul(a: bytes, b: bytes) -> bytes:
    out = _buf(32)
    _smul(out, a, b)
    return out.raw


def s_neg(a: bytes) -> bytes:
    out = _buf(32)
    _sneg(out, a)
    return out.raw


def s_muladd(a: bytes, b: bytes, c: bytes) -> bytes:
    """a·b + c."""
    return s_add(s_mul(a, b), c)


# -- public scalars as integers ----------------------------------------------------------


def to_int(s: bytes) -> int:
    return int.from_bytes(s, "little")


def from_int(n: int) -> bytes:
    return (n % L).to_bytes(32, "little")


def hash_scalar(*parts: bytes) -> bytes:
    """Hs(x) = SHA-512(x) mod ℓ over the concatenation of the parts."""
    h = hashlib.sha512()
    for p in parts:
        h.update(p)
    return reduce64(h.digest())


def u32be(n: int) -> bytes:
    return n.to_bytes(4, "big")


def lp(b: bytes) -> bytes:
    return u32be(len(b)) + b
