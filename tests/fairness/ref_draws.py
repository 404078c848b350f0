"""The draws of qahwa-fair/1 §5 and /2 §6 written out from the specs, over a stream of
32-bit words: HMAC blocks of the label under the key (SHA-256 for qahwa-fair/1, SHA-512 for
/2; each version's test module derives its own keys), and the inputs the two versions'
reference tests draw alike."""

from __future__ import annotations

import hmac
import struct
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

printable = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"))
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
#: the match's texts that K binds besides the seeds, for both versions' key tests
KEY_TEXTS = {"match_id": any_text, "game": any_text, "ruleset": any_text}
label = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40)
#: the item lists both versions shuffle (qahwa-fair/1 adds its plain sessions' ranges)
SHUFFLED = [
    "deck52",
    "deck_qahve",
    "tiles:6",
    "tiles:12",
    "tiles:12-without:12-12",
    "tiles:12-without:3-3",
]


def hmac_words(key: bytes, label: str, digest: str) -> Iterator[int]:
    """The big-endian 32-bit words of HMAC-``digest``(key, label ‖ 0x00 ‖ u32 block) for
    block 0, 1, …"""
    b = 0
    while True:
        block = hmac.new(key, label.encode("ascii") + b"\x00" + struct.pack(">I", b), digest)
        yield from struct.unpack(f">{block.digest_size // 4}I", block.digest())
        b += 1


class RefDraws:
    def __init__(self, words: Iterator[int]) -> None:
        self.words = words
        self.read = 0  # words read so far
        self.rejected = 0

    def uniform(self, n: int) -> int:
        """Rejection sampling: a word at or above the largest multiple of n is drawn again."""
        limit = 2**32 - (2**32 % n)
        while True:
            w = next(self.words)
            self.read += 1
            if w < limit:
                return w % n
            self.rejected += 1

    def dice(self, count: int, sides: int = 6) -> list[int]:
        return [1 + self.uniform(sides) for _ in range(count)]

    def shuffle(self, items: list[Any]) -> list[Any]:
        """Fisher-Yates from the last position down."""
        a = list(items)
        for i in range(len(a) - 1, 0, -1):
            j = self.uniform(i + 1)
            a[i], a[j] = a[j], a[i]
        return a


class HmacDraws(RefDraws):
    """The draws over :func:`hmac_words` of ``label`` under ``key``, with the HMAC hash
    ``digest`` of each version's subclass."""

    digest = ""

    def __init__(self, key: bytes, label: str) -> None:
        super().__init__(hmac_words(key, label, self.digest))
