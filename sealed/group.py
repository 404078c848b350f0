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
from dataclasses import dataclass
from typing import Any, ClassVar, Self

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
_mul = _lib.crypto_scalarmult_ristretto255
_mul_base = _lib.crypto_scalarmult_ristretto255_base
_buf = ctypes.create_string_buffer
_UNWRITTEN = b"\xff" * 32  # no point encodes so (not canonical): shows libsodium wrote nothing

#: the order of the group, ℓ = 2^252 + 27742317777372353535851937790883648493
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(32)
#: the standard generator G (RFC 9496 §4.4), as encoded
G = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")


def point(p: bytes, what: str) -> bytes:
    """``p`` checked as a point from outside: a canonical encoding of a group element (the
    identity included); a clear error naming ``what`` otherwise."""
    if not isinstance(p, bytes) or len(p) != 32 or _valid(p) != 1:
        raise SealedError(f"{what}: not a canonical ristretto255 point")
    return p


def scalar(s: bytes, what: str) -> bytes:
    """``s`` checked as a canonical scalar: 32 bytes, little-endian, below ℓ."""
    if not isinstance(s, bytes) or len(s) != 32 or int.from_bytes(s, "little") >= L:
        raise SealedError(f"{what}: not a canonical scalar (32 bytes little-endian below ℓ)")
    return s


@dataclass(frozen=True, slots=True)
class Proof:
    """A proof as fairness-v3 encodes it: its commitments (points), then its response (a
    scalar), 32 bytes each, concatenated. ``LABEL`` names its kind: the proof is "``LABEL``
    proof" in a refusal and its challenge's domain is "qahwa-fair/3 ``LABEL``"."""

    LABEL: ClassVar[str]

    @classmethod
    def challenge(cls, ctx: bytes, *parts: bytes) -> bytes:
        """e = Hs("qahwa-fair/3 " || LABEL || 0x00 || ctx || G || parts…) (Fiat–Shamir)."""
        return hash_scalar(f"qahwa-fair/3 {cls.LABEL}\x00".encode(), ctx, G, *parts)

    def encode(self) -> bytes:
        names: tuple[str, ...] = self.__match_args__
        return b"".join([getattr(self, name) for name in names])

    @classmethod
    def decode(cls, b: bytes) -> Self:
        names: tuple[str, ...] = cls.__match_args__
        what = f"{cls.LABEL} proof"
        if not isinstance(b, bytes) or len(b) != 32 * len(names):
            parts = " || ".join(names)
            raise SealedError(f"{what}: {32 * len(names)} bytes expected ({parts})")
        values = [point(b[32 * i : 32 * i + 32], f"{what} {n}") for i, n in enumerate(names[:-1])]
        values.append(scalar(b[-32:], f"{what} {names[-1]}"))
        return cls(*values)


def _call(fn: Any, *args: bytes) -> bytes:
    """The 32 bytes libsodium's ``fn`` writes (a function that cannot fail)."""
    out = _buf(32)
    fn(out, *args)
    return out.raw


def _point_op(fn: Any, p: bytes, q: bytes) -> bytes:
    """The point libsodium's ``fn`` makes of p and q; refuses a p or q that is no point
    (libsodium's -1)."""
    out = _buf(32)
    if fn(out, p, q) != 0:
        raise SealedError("not a canonical ristretto255 point")
    return out.raw


def from_hash(h: bytes) -> bytes:
    """ristretto255 from a 64-byte uniform string (RFC 9496 §4.3.4, libsodium's from_hash)."""
    return _call(_from_hash, h)


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
    return _call(_mul_base, s)


def add(p: bytes, q: bytes) -> bytes:
    """p + q; refuses a p or q that is no point."""
    return _point_op(_add, p, q)


def sub(p: bytes, q: bytes) -> bytes:
    """p − q; refuses a p or q that is no point."""
    return _point_op(_sub, p, q)


def total(points: Iterable[bytes]) -> bytes:
    """The sum of the points (the identity for none)."""
    rest = iter(points)
    acc = next(rest, IDENTITY)
    for p in rest:
        acc = add(acc, p)
    return acc


# -- scalars: secret ones through libsodium --------------------------------------------


def random_scalar() -> bytes:
    return _call(_srandom)


def reduce64(h: bytes) -> bytes:
    """A 64-byte string mod ℓ."""
    return _call(_sreduce, h)


def s_add(a: bytes, b: bytes) -> bytes:
    return _call(_sadd, a, b)


def s_mul(a: bytes, b: bytes) -> bytes:
    return _call(_smul, a, b)


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
