"""The rng sessions' limits (docs/deploy.md "Limits"; the per-request limits, per credential
and per address, are :class:`service.front.RequestLimit`).

- An rng session takes at most ``QAHWA_MAX_SESSION_DRAWS`` draws and at most
  ``QAHWA_MAX_TRANSCRIPT_BYTES`` bytes of draw results (the JSON of every ``result``, which
  is what makes a transcript large: a 1,000-card shuffle is about 3.9 kB); then 409
  ``session_full`` and nothing changes. Closing stays possible.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from .errors import Conflict


def check_session_room(draws: Sequence[object], *, max_draws: int) -> None:
    """Before a draw: 409 ``session_full`` when the session has had its ``max_draws``."""
    if len(draws) >= max_draws:
        raise Conflict(
            f"this session has had its {max_draws} draws "
            "(QAHWA_MAX_SESSION_DRAWS); close it and open a new one",
            "session_full",
        )


class ResultBytes:
    """The JSON size of each rng session's draw results, counted as draws are added (kept
    per process, recounted from the engine whenever it does not match)."""

    def __init__(self) -> None:
        self._sizes: dict[str, tuple[int, int]] = {}  # session id -> (draws, bytes)
        self._guard = threading.Lock()

    def total(self, session_id: str, draws: Sequence[object]) -> int:
        with self._guard:
            known = self._sizes.get(session_id)
        if known is not None and known[0] == len(draws):
            return known[1]
        size = sum(len(json.dumps(d, separators=(",", ":"))) for d in draws)
        self._remember(session_id, len(draws), size)
        return size

    def add(self, session_id: str, draws: Sequence[object], before: int, *, max_bytes: int) -> None:
        """After a draw (``before``: the bytes before it): 409 ``session_full`` if the
        results now pass ``max_bytes`` (the caller's transaction then rolls back)."""
        new = before + sum(
            len(json.dumps(d, separators=(",", ":"))) for d in draws[len(draws) - 1 :]
        )
        if new > max_bytes:
            self.forget(session_id)
            raise Conflict(
                f"this draw would take the session's results past {max_bytes} "
                "bytes (QAHWA_MAX_TRANSCRIPT_BYTES); close it and open a new one",
                "session_full",
            )
        self._remember(session_id, len(draws), new)

    def _remember(self, session_id: str, n: int, size: int) -> None:
        with self._guard:
            self._sizes[session_id] = (n, size)
            while len(self._sizes) > 4096:
                self._sizes.pop(next(iter(self._sizes)))

    def forget(self, session_id: str) -> None:
        with self._guard:
            self._sizes.pop(session_id, None)
