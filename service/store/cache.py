"""The engine cache: engines of recently used matches and how they catch up with the log.

Each process keeps the engine of recently used matches with the version and ``next_seq`` it
was built at (:class:`Cached`, in the LRU :class:`EngineCache`, which also hands out the
per-match thread locks). :func:`catch_up` applies the events logged since, checking every
chance event it draws against the log.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games import Engine
from games.replay import Replayer


@dataclass
class Cached:
    """An engine that has applied every event before ``next_seq``, at match ``version``."""

    version: int
    next_seq: int
    engine: Engine


class EngineCache:
    """Engines by match id (least recently used dropped first); per-match thread locks."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._entries: OrderedDict[str, Cached] = OrderedDict()
        self._guard = threading.Lock()
        self._locks = [threading.RLock() for _ in range(128)]

    def lock_for(self, match_id: str) -> threading.RLock:
        return self._locks[int(hashlib.sha256(match_id.encode()).hexdigest()[:8], 16) % 128]

    def get(self, match_id: str) -> Cached | None:
        with self._guard:
            entry = self._entries.get(match_id)
            if entry is not None:
                self._entries.move_to_end(match_id)
            return entry

    def put(self, match_id: str, entry: Cached) -> None:
        with self._guard:
            self._entries[match_id] = entry
            self._entries.move_to_end(match_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def discard(self, match_id: str) -> None:
        with self._guard:
            self._entries.pop(match_id, None)


def catch_up(engine: Engine, events: Sequence[dict[str, Any]], first_seq: int) -> None:
    """Apply logged events ``first_seq, first_seq + 1, …`` to an engine that has applied
    every earlier one, checking each chance event against what the engine draws.

    Raises ReplayError (the engine is then unusable) where the log and the engine disagree.
    The loop is :class:`games.replay.Replayer`, the one verify and the tests use.
    """
    Replayer(engine, next_seq=first_seq).feed(events).finish()
