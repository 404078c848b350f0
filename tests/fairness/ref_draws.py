"""The draws of qahwa-fair/1 §5 and /2 §6 written out from the specs, over a stream of
32-bit words (each version's test module derives its own words: the keys and blocks
differ, the sampling does not)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


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
