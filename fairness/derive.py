"""The qahwa-fair/1 derivation (fairness-v1.md §1-3), byte for byte."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import ClientSeedError, LabelError, RangeError, SeedError

PROTOCOL = "qahwa-fair/1"
SEED_BYTES = 32
MAX_CLIENT_SEED_BYTES = 128
MAX_ENTROPY_CHARS = 64
_TWO32 = 1 << 32
HEX_DIGITS = frozenset("0123456789abcdef")  # lowercase hex, the one written form
_WORDS = struct.Struct(">8I").unpack
_WORDS16 = struct.Struct(">16I").unpack
_PAIR = struct.Struct(">2I").unpack_from  # a block's first two words

T = TypeVar("T")
S = TypeVar("S")


def u32be(x: int) -> bytes:
    return x.to_bytes(4, "big")


def lp(data: bytes) -> bytes:
    return u32be(len(data)) + data


def new_server_seed() -> bytes:
    """32 fresh bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def parse_hex(value: Any, nbytes: int, what: str) -> bytes:
    """``nbytes`` bytes written as exactly ``2 * nbytes`` lowercase hex, else SeedError."""
    if isinstance(value, bytes):
        if len(value) != nbytes:
            raise SeedError(f"{what} must be {nbytes} bytes, got {len(value)}")
        return value
    if not isinstance(value, str):
        raise SeedError(f"{what} must be a hex string")
    if len(value) != 2 * nbytes:
        raise SeedError(f"{what} must be {2 * nbytes} hex characters, got {len(value)}")
    if not HEX_DIGITS.issuperset(value):
        if HEX_DIGITS.issuperset(value.lower()):
            raise SeedError(f"{what} must be lowercase hex (0-9, a-f), not uppercase")
        raise SeedError(f"{what} is not hexadecimal ({2 * nbytes} characters 0-9, a-f)")
    return bytes.fromhex(value)


def parse_server_seed(seed: str | bytes) -> bytes:
    """Accept a seed as 32 raw bytes or 64 lowercase hex characters; return the raw bytes.

    A seed has one written form (fairness-v1.md §1: 64 lowercase hex), so that every
    verifier reads a transcript the same way: uppercase hex, spaces, a ``0x`` prefix, other
    characters or another length are a :class:`SeedError`.
    """
    return parse_hex(seed, SEED_BYTES, "server seed")


def commitment(seed: str | bytes) -> str:
    """SHA-256 of the 32 raw seed bytes, as 64 lowercase hex."""
    return hashlib.sha256(parse_server_seed(seed)).hexdigest()


def check_client_seed(seed: str) -> str:
    """Return the seed if it is 1-128 UTF-8 bytes of printable characters, else raise."""
    if not isinstance(seed, str):
        raise ClientSeedError("client seed must be a string")
    if seed == "":
        raise ClientSeedError("client seed is empty")
    if "\x00" in seed:
        raise ClientSeedError("client seed contains a NUL character")
    if not seed.isprintable():
        raise ClientSeedError("client seed contains unprintable characters")
    n = len(seed.encode("utf-8"))
    if n > MAX_CLIENT_SEED_BYTES:
        raise ClientSeedError(
            f"client seed is {n} bytes; at most {MAX_CLIENT_SEED_BYTES} are allowed"
        )
    return seed


def new_client_seed() -> str:
    """A random client seed for a seat that gave none (marked seed_source=server)."""
    return secrets.token_hex(16)


def check_label(label: str) -> str:
    if not isinstance(label, str) or label == "":
        raise LabelError("label must be a non-empty string")
    # printable ASCII is exactly 0x20 .. 0x7E (str.isprintable counts the space)
    if len(label) > 256 or not (label.isascii() and label.isprintable()):
        raise LabelError(f"label {label!r} must be at most 256 printable ASCII characters")
    return label


def check_entropy(entropy: str) -> str:
    """Live entropy: 1-64 printable ASCII characters, no '|'."""
    if not isinstance(entropy, str) or not 1 <= len(entropy) <= MAX_ENTROPY_CHARS:
        raise LabelError(f"entropy must be 1 to {MAX_ENTROPY_CHARS} characters")
    if not all(0x20 <= ord(c) < 0x7F for c in entropy) or "|" in entropy:
        raise LabelError("entropy must be printable ASCII without '|'")
    return entropy


def entropy_label(label: str, entropy: str | None) -> str:
    """The label of a roll carrying live entropy: ``label | entropy``."""
    if entropy is None:
        return label
    return label + "|" + check_entropy(entropy)


def match_key(
    server_seed: str | bytes,
    match_id: str,
    game: str,
    ruleset: str,
    client_seeds: Sequence[str],
) -> bytes:
    """K = HMAC-SHA256(server_seed, T) (fairness-v1.md §2)."""
    seed = parse_server_seed(server_seed)
    t = key_input(PROTOCOL, match_id, game, ruleset, client_seeds, client_seed_part)
    return hmac.new(seed, t, hashlib.sha256).digest()


def client_seed_part(client_seed: str) -> bytes:
    """A seat's client seed as T holds it: ``lp(client_seed)``."""
    return lp(check_client_seed(client_seed).encode("utf-8"))


def key_input(
    derivation: str,
    match_id: str,
    game: str,
    ruleset: str,
    seats: Sequence[S],
    seat_part: Callable[[S], bytes],
) -> bytes:
    """T, what K's HMAC is over (fairness-v1.md §2, fairness-v2.md §4): the derivation's
    name, 0x00, lp(match_id), lp(game), lp(ruleset), u32be(seat count), then each seat's
    ``seat_part`` in seat order."""
    for name, value in (("match_id", match_id), ("game", game), ("ruleset", ruleset)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string")
    parts = [
        derivation.encode("ascii"),
        b"\x00",
        lp(match_id.encode("utf-8")),
        lp(game.encode("utf-8")),
        lp(ruleset.encode("utf-8")),
        u32be(len(seats)),
    ]
    parts += [seat_part(s) for s in seats]
    return b"".join(parts)


#: HMAC's inner and outer pads (RFC 2104) as ``bytes.translate`` tables: byte x -> x ^ pad
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


class StreamKey:
    """A match key with HMAC's two keyed hash states computed once (RFC 2104).

    ``Stream(StreamKey(K), label)`` reads exactly the words of ``Stream(K, label)``; a
    match draws every label from one ``StreamKey``, so the key is hashed in once per match
    rather than once per draw. The states are only ever copied, never updated.
    """

    __slots__ = ("key", "_inner", "_outer", "_per_block", "_unpack")

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) not in (32, 64):
            raise SeedError("match key must be 32 bytes (qahwa-fair/1) or 64 (qahwa-fair/2)")
        self.key = key
        if len(key) == 32:
            new, self._per_block, self._unpack = hashlib.sha256, 8, _WORDS
        else:
            new, self._per_block, self._unpack = hashlib.sha512, 16, _WORDS16
        # the key is shorter than the hash's block (64 / 128 bytes): pad it with zeros
        padded = key.ljust(new().block_size, b"\x00")
        self._inner = new(padded.translate(_IPAD))
        self._outer = new(padded.translate(_OPAD))

    def dice(self, label: str, count: int, sides: int = 6) -> list[int]:
        """``Stream(self, label).dice(count, sides)``: the usual draw (a few dice from the
        label's first block, no word rejected) is computed here without building a Stream;
        anything else is left to the Stream."""
        if (
            type(count) is int
            and type(sides) is int
            and 1 <= count <= self._per_block
            and 2 <= sides <= _TWO32
            and type(label) is str
            and 0 < len(label) <= 256
            and label.isascii()
            and label.isprintable()
        ):
            h = self._inner.copy()
            h.update(label.encode("ascii") + b"\x00\x00\x00\x00\x00")  # label, 0x00, u32be(0)
            o = self._outer.copy()
            o.update(h.digest())
            limit = _TWO32 - (_TWO32 % sides)
            if count == 2:  # a pair of dice: the block's first two words
                w0, w1 = _PAIR(o.digest())
                if w0 < limit and w1 < limit:  # none rejected: die k is word k
                    return [1 + w0 % sides, 1 + w1 % sides]
            else:
                words = self._unpack(o.digest())[:count]
                if max(words) < limit:
                    return [1 + w % sides for w in words]
        return Stream(self, label).dice(count, sides)

    # hash states cannot be pickled; they are never changed, so a copy may share them
    def __reduce__(self) -> tuple[type[StreamKey], tuple[bytes]]:
        return (StreamKey, (self.key,))

    def __deepcopy__(self, memo: dict[int, object]) -> StreamKey:
        return self


class Stream:
    """The word stream of one label: block(label, 0) || block(label, 1) || ...

    Reads HMAC blocks lazily and hands out 4-byte big-endian words. Block b is
    ``HMAC(K, label || 0x00 || u32be(b))``, computed as RFC 2104 defines it from the keyed
    inner and outer hash states (:class:`StreamKey`): the inner state is fed
    ``label || 0x00`` once and each block copies it and adds ``u32be(b)``.

    The match key's length names the protocol: a 32-byte K is qahwa-fair/1 (HMAC-SHA256,
    8 words per block), a 64-byte K is qahwa-fair/2 (HMAC-SHA512, 16 words per block,
    fairness-v2.md §4). Everything else (uniform, dice, shuffle) is the same. ``key`` may
    be a :class:`StreamKey` of K (the same stream, without keying HMAC again).
    """

    __slots__ = ("_inner", "_outer", "_block", "_words", "_pos", "_per_block", "_unpack")

    def __init__(self, key: bytes | StreamKey, label: str) -> None:
        keyed = key if isinstance(key, StreamKey) else StreamKey(key)
        self._inner = keyed._inner.copy()
        self._inner.update(check_label(label).encode("ascii") + b"\x00")
        self._outer = keyed._outer
        self._per_block, self._unpack = keyed._per_block, keyed._unpack
        self._block = 0
        self._words: tuple[int, ...] = ()
        self._pos = 0

    def _digest(self) -> bytes:
        """The next block's HMAC (block number ``_block``, then counted)."""
        h = self._inner.copy()
        h.update(self._block.to_bytes(4, "big"))  # u32be
        self._block += 1
        o = self._outer.copy()
        o.update(h.digest())
        return o.digest()

    def _refill(self) -> tuple[int, ...]:
        self._words = words = self._unpack(self._digest())
        self._pos = 0
        return words

    def _prefetch(self, count: int) -> tuple[int, ...]:
        """Make the buffer hold at least ``count`` unread words; return the unread words.

        Only for words that will certainly be read, so ``blocks_used`` is what reading
        them one by one would give.
        """
        unread = self._words[self._pos :]
        missing = count - len(unread)
        if 0 < missing <= self._per_block:  # one block more: its words as _refill reads them
            unread += self._unpack(self._digest())
        elif missing > 0:
            per = self._per_block
            nblocks = -(-missing // per)
            digests = [self._digest() for _ in range(nblocks)]
            unread += struct.unpack(f">{per * nblocks}I", b"".join(digests))
        self._words = unread
        self._pos = 0
        return unread

    def word(self) -> int:
        """The next word of the stream."""
        if self._pos >= len(self._words):
            self._refill()
        w = self._words[self._pos]
        self._pos += 1
        return w

    @property
    def blocks_used(self) -> int:
        """How many HMAC blocks (32 bytes in v1, 64 in v2) have been computed so far."""
        return self._block

    def uniform(self, n: int) -> int:
        """An unbiased integer in [0, n) by rejection sampling, 1 <= n <= 2^32."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _TWO32:
            raise RangeError(f"uniform(n) needs 1 <= n <= 2^32, got {n!r}")
        limit = _TWO32 - (_TWO32 % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def dice(self, count: int, sides: int = 6) -> list[int]:
        """``count`` dice of ``sides`` faces (1-based), first die first."""
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1000:
            raise RangeError(f"dice count must be 1 to 1000, got {count!r}")
        if isinstance(sides, bool) or not isinstance(sides, int) or not 2 <= sides <= _TWO32:
            raise RangeError(f"dice sides must be 2 to 2^32, got {sides!r}")
        limit = _TWO32 - (_TWO32 % sides)
        words = self._prefetch(count)  # each die reads at least one word
        if max(words[:count]) < limit:  # none rejected: die k is word k
            self._pos = count
            return [1 + w % sides for w in words[:count]]
        return [1 + self.uniform(sides) for _ in range(count)]

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """Durstenfeld Fisher-Yates on a copy: for i = len-1 .. 1, j = uniform(i + 1)."""
        a = list(items)
        if len(a) < 2:
            return a
        steps = len(a) - 1  # each step reads at least one word
        words = self._prefetch(steps)
        # Fast path: a word below 2^32 - len(a) is below every limit 2^32 - (2^32 mod n),
        # n <= len(a), so no word of these steps is rejected and step k uses word k.
        if max(words[:steps]) < _TWO32 - len(a):
            for i, w in zip(range(steps, 0, -1), words, strict=False):
                j = w % (i + 1)
                a[i], a[j] = a[j], a[i]
            self._pos = steps
            return a
        pos = 0
        for i in range(steps, 0, -1):
            n = i + 1
            limit = _TWO32 - (_TWO32 % n)
            while True:
                if pos >= len(words):
                    words = self._refill()
                    pos = 0
                w = words[pos]
                pos += 1
                if w < limit:
                    break
            j = w % n
            a[i], a[j] = a[j], a[i]
        self._pos = pos
        return a


def uniform(key: bytes, label: str, n: int) -> int:
    return Stream(key, label).uniform(n)


def dice(key: bytes, label: str, count: int, sides: int = 6) -> list[int]:
    return Stream(key, label).dice(count, sides)


def shuffle(key: bytes, label: str, items: Sequence[T]) -> list[T]:
    return Stream(key, label).shuffle(items)
