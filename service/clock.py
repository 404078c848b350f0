"""The service's one source of time, injected (``create_app(settings, clock=…)``).

Everything that measures a deadline or a rate asks the app's :class:`Clock`: the
qahwa-fair/2 deadlines (``reveal_by``, ``end_by``, a seat's turn ``deadline``), the idle
timeout, the sweep and its heartbeat (``MatchService``/``Store``), the creation rate per
operator key (``Operators``) and the request rate per address (``AddressLimit``). The
timestamps a match records (``created_at``, ``started_at``, ``ended_at``, the log entries)
come from it too, so they agree with its deadlines. Tests give the app a clock they move
by hand (``tests/support/fake_clock.py``) instead of sleeping.

What is not a deadline stays on the machine's clock: how long a long poll or a stream
waits for events, the checkpoint and witness timers, the metrics' cache, request timing.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """The time as epoch seconds (deadlines stored in rows, timestamps)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary start that never go back (intervals, rate buckets)."""
        ...


class SystemClock:
    """The machine's clock: :func:`time.time` and :func:`time.monotonic`."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK: Clock = SystemClock()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_of(ts: float) -> str:
    """Epoch seconds as RFC 3339 UTC with milliseconds, ending in ``Z`` (the service's
    timestamps): cut down to the millisecond, so never a time after ``ts``.
    (``datetime.fromtimestamp`` rounds to the microsecond first, which wrote ``….124Z`` for
    a time less than half a microsecond before .124: a signing key registered at such a
    time was not yet in force at that same time, and the app refused to start.)"""
    ms = math.floor(ts * 1000)
    if ms / 1000 > ts:  # the product rounded up to the next millisecond
        ms -= 1
    return (
        (_EPOCH + timedelta(milliseconds=ms))
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def now_iso() -> str:
    """The machine's time as :func:`iso_of` writes it."""
    return iso_of(time.time())


def epoch_of(text: str) -> float:
    """An :func:`iso_of` time as epoch seconds."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
