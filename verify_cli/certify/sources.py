"""Where the kit's draws come from: the qahwa-fair/2 derivation, or a file of words.

A *source* hands out draw streams (``uniform``, ``dice``, ``shuffle``, ``word``). The
derivation source makes matches as the server does — a fresh 64-byte server seed, a match
id, one (client seed, nonce) per seat, ``K = V2.match_key(…)`` — and returns
``fairness.Stream(K, label)`` with the labels the games use. A :class:`WordStream` reads
big-endian 32-bit words from bytes (``--source FILE``) and maps them with ``fairness.Stream``'s
algorithms (fairness-v1.md §3: rejection sampling, Durstenfeld Fisher–Yates), so a lab can
feed the kit a stream it knows and see what the kit makes of it.
"""

from __future__ import annotations

import hashlib
import os
import random
import struct
from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

from fairness import V2, Stream, canonical_ruleset
from games.registry import engine_class

T = TypeVar("T")


class Draws(Protocol):
    def word(self) -> int: ...
    def uniform(self, n: int) -> int: ...
    def dice(self, count: int, sides: int = 6) -> list[int]: ...
    def shuffle(self, items: Sequence[T]) -> list[T]: ...


class SourceExhausted(Exception):
    """A word file ran out before the tests asked had their samples."""


class Source(Protocol):
    name: str

    def stream(self, test: str, game: str, index: int, per_match: int, label: str) -> Draws:
        """The stream of draw ``index`` of ``test``: a new match every ``per_match`` draws."""
        ...

    def raw(self, nwords: int) -> bytes:
        """``nwords`` raw words (4 bytes each, big-endian) for the bit and byte tests."""
        ...

    def describe(self) -> dict[str, object]: ...


class WordStream(Stream):
    """:class:`fairness.Stream`'s mappings over a word supply (bytes) instead of HMAC
    blocks; a subclass may change ``uniform`` (the kit's own tests use a modulo-biased one)."""

    def __init__(self, data: bytes | bytearray | memoryview, name: str = "words") -> None:
        # no key and no label: the words are the data's, read a block of 16 at a time
        self.name = name
        self.nbytes = len(data)
        self.data = bytes(memoryview(data)[: len(data) - len(data) % 4])
        self.taken = 0  # words moved from the data into the stream's buffer
        self._words: tuple[int, ...] = ()
        self._pos = 0
        self._block = 0

    @property
    def words_read(self) -> int:
        return self.taken - (len(self._words) - self._pos)

    def _more(self, nwords: int) -> tuple[int, ...]:
        """The data's next ``nwords`` words, each certainly read: all there, or none."""
        if 4 * (self.taken + nwords) > len(self.data):
            raise SourceExhausted(f"{self.name}: ran out after {len(self.data) // 4:,} words")
        words = struct.unpack_from(f">{nwords}I", self.data, 4 * self.taken)
        self.taken += nwords
        return words

    def _refill(self) -> tuple[int, ...]:
        self._words = words = self._more(max(1, min(16, len(self.data) // 4 - self.taken)))
        self._pos = 0
        return words

    def _prefetch(self, count: int) -> tuple[int, ...]:
        unread = self._words[self._pos :]
        if count > len(unread):
            unread += self._more(count - len(unread))
        self._words, self._pos = unread, 0
        return unread

    def take(self, nwords: int) -> bytes:
        """The next ``nwords`` words as the data has them (big-endian)."""
        start = self.words_read
        if 4 * (start + nwords) > len(self.data):
            raise SourceExhausted(f"{self.name}: ran out after {start:,} words")
        self.taken, self._words, self._pos = start + nwords, (), 0
        return self.data[4 * start : 4 * (start + nwords)]


class FileSource:
    """``--source FILE``: every draw of every test reads the next words of the file."""

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        name: str,
        stream_class: type[WordStream] = WordStream,
    ) -> None:
        self.name = name
        self.words = stream_class(data, name)

    def stream(self, test: str, game: str, index: int, per_match: int, label: str) -> Draws:
        return self.words

    def raw(self, nwords: int) -> bytes:
        return self.words.take(nwords)

    def describe(self) -> dict[str, object]:
        return {
            "kind": "file",
            "file": self.name,
            "bytes": self.words.nbytes,
            "words_read": self.words.words_read,
        }


class _Run:
    """Reproducible (``--seed``) or fresh randomness for the matches the kit makes."""

    def __init__(self, seed: str | None) -> None:
        self.seed = seed
        material = (
            hashlib.sha512(b"qahwa-certify\x00" + seed.encode("utf-8")).digest()
            if seed is not None
            else os.urandom(64)
        )
        self.rng = random.Random(material)
        self.run_id = hashlib.sha256(material).hexdigest()[:12]

    def server_seed(self) -> bytes:
        # a fresh run takes its server seeds from the operating system's CSPRNG, as the
        # server does (fairness-v2.md §1); a --seed run derives them reproducibly
        return self.rng.randbytes(64) if self.seed is not None else os.urandom(64)

    def bytes(self, n: int) -> bytes:
        return self.rng.randbytes(n)


class DerivationSource:
    """The qahwa-fair/2 derivation, with matches made as the server makes them."""

    name = "qahwa-fair/2 derivation"

    def __init__(self, seed: str | None = None) -> None:
        self.run = _Run(seed)
        self._cache: tuple[str, int, bytes] | None = None
        self.sample = 0  # 1 for the confirmation sample (new matches, new seeds)
        self._rulesets: dict[str, tuple[str, int]] = {}
        self.matches = 0

    def _ruleset(self, game: str) -> tuple[str, int]:
        if game not in self._rulesets:
            cls = engine_class(game)
            parsed = cls.parse_ruleset({}, protocol=V2)
            self._rulesets[game] = (canonical_ruleset(parsed), cls.seat_count(parsed))
        return self._rulesets[game]

    def key(self, test: str, game: str, match: int) -> bytes:
        test = f"{test}.s{self.sample}" if self.sample else test
        if self._cache is not None and self._cache[:2] == (test, match):
            return self._cache[2]
        ruleset, n = self._ruleset(game)
        raw = self.run.bytes(40 * n)  # per seat: an 8-byte client seed (as hex), a nonce
        seats = [(raw[40 * s : 40 * s + 8].hex(), raw[40 * s + 8 : 40 * s + 40]) for s in range(n)]
        match_id = f"certify-{self.run.run_id}-{test}-{match}"
        key = V2.match_key(self.run.server_seed(), match_id, game, ruleset, seats)
        self._cache = (test, match, key)
        self.matches += 1
        return key

    def stream(self, test: str, game: str, index: int, per_match: int, label: str) -> Draws:
        return Stream(self.key(test, game, index // per_match), label)

    def raw(self, nwords: int) -> bytes:
        return raw_stream(self.key("raw", "rng", 0), nwords)

    def describe(self) -> dict[str, object]:
        return {
            "kind": "derivation",
            "protocol": V2.name,
            "seed": self.run.seed,
            "fresh": self.run.seed is None,
            "run_id": self.run.run_id,
            "matches": self.matches,
        }


RAW_LABEL = "raw"


def raw_chunks(key: bytes, label: str = RAW_LABEL, words: int = 1024) -> Iterator[bytes]:
    """The words of ``Stream(key, label)`` as big-endian bytes, ``words`` words a chunk,
    without end: the derivation's block function, block 0, 1, 2, … (HMAC-SHA512 under a
    v2 key)."""
    w = Stream(key, label).word
    pack = struct.Struct(f">{words}I").pack
    while True:
        yield pack(*[w() for _ in range(words)])


def raw_stream(key: bytes, nwords: int, label: str = RAW_LABEL) -> bytes:
    """The first ``nwords`` words of ``Stream(key, label)`` as big-endian bytes."""
    chunks = raw_chunks(key, label)
    return b"".join(next(chunks) for _ in range(-(-nwords // 1024)))[: 4 * nwords]


def raw_key(seed: str | None) -> tuple[bytes, dict[str, object]]:
    """The key of a ``--raw`` dump: one match made like the kit's (``--seed`` reproducible)."""
    src = DerivationSource(seed)
    key = src.key("raw", "rng", 0)
    return key, {
        "protocol": V2.name,
        "label": RAW_LABEL,
        "seed": seed,
        "run_id": src.run.run_id,
    }
