"""The engine cache: engines of recently used matches and how they catch up with the log.

Each process keeps the engine of recently used matches with the version and ``next_seq`` it
was built at (:class:`Cached`, in the LRU :class:`EngineCache`, which also hands out the
per-match thread locks). :func:`catch_up` applies the events logged since, checking every
chance event it draws against the log.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games import Engine
from games.replay import Replayer

from ..lru import LRU


@dataclass
class Cached:
    """An engine that has applied every event before ``next_seq``, at match ``version``."""

    version: int
    next_seq: int
    engine: Engine


class EngineCache(LRU[str, Cached]):
    """Engines by match id (least recently used dropped first); per-match thread locks."""

    def __init__(self, size: int = 512) -> None:
        super().__init__(size)
        self._locks = [threading.RLock() for _ in range(128)]

    def lock_for(self, match_id: str) -> threading.RLock:
        return self._locks[int(hashlib.sha256(match_id.encode()).hexdigest()[:8], 16) % 128]


def catch_up(engine: Engine, events: Sequence[dict[str, Any]], first_seq: int) -> None:
    """Apply logged events ``first_seq, first_seq + 1, …`` to an engine that has applied
    every earlier one, checking each chance event against what the engine draws.

    Raises ReplayError (the engine is then unusable) where the log and the engine disagree.
    The loop is :class:`games.replay.Replayer`, the one verify and the tests use.
    """
    Replayer(engine, next_seq=first_seq).feed(events).finish()
