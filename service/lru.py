"""A bounded mapping that forgets its least recently used entries: the one LRU cache the
service's in-memory caches share; each call holds the cache's own lock (a caller that needs
several calls to be atomic holds its own lock around them)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; :meth:`put` and a touching :meth:`get` make an entry the most
    recently used, and the least recently used one goes when there are too many."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU holds at least one entry, not {size}")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._guard = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @overload
    def get(self, key: K, *, touch: bool = True) -> V | None: ...
    @overload
    def get(self, key: K, default: V, *, touch: bool = True) -> V: ...
    def get(self, key: K, default: V | None = None, *, touch: bool = True) -> V | None:
        """The entry (``default`` when there is none); ``touch``: count this as a use."""
        with self._guard:
            try:
                value = self._entries[key]
            except KeyError:
                return default
            if touch:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._guard:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        with self._guard:
            return self._entries.pop(key, None)
