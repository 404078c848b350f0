"""A clock the tests move by hand (service/clock.py's ``Clock``): no test sleeps for a
deadline. ``LiveServer(clock=FakeClock())`` gives it to the app; ``clock.advance(121)`` is
two minutes later for every deadline, rate and timestamp the service measures."""

from __future__ import annotations

import threading
import time


class FakeClock:
    """Starts at the machine's time (or ``start``) and moves only by :meth:`advance` or
    :meth:`set`, never back: ``now()`` and ``monotonic()`` move together."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else float(start)
        self._mono = 1_000.0
        self._guard = threading.Lock()  # the app reads it from its threads

    def now(self) -> float:
        with self._guard:
            return self._now

    def monotonic(self) -> float:
        with self._guard:
            return self._mono

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a clock does not go back ({seconds} s)")
        with self._guard:
            self._now += seconds
            self._mono += seconds

    def step_back(self, seconds: float) -> None:
        """The wall clock steps back ``seconds`` (an operator's doing): ``now()`` only, the
        monotonic time goes on."""
        with self._guard:
            self._now -= seconds

    def set(self, when: float) -> None:
        """Move ``now()`` to ``when`` (epoch seconds, not earlier than now)."""
        self.advance(when - self.now())


class RunningClock(FakeClock):
    """The machine's time plus what the test added by :meth:`advance` (or :meth:`set`): a
    server that clients on the real clock play against for a long while (a rotation test),
    whose time must neither stand still nor drift from theirs beyond what the test moved."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self._mono = 0.0

    def now(self) -> float:
        with self._guard:
            return time.time() + self._now

    def monotonic(self) -> float:
        with self._guard:
            return time.monotonic() + self._mono

    def set(self, when: float) -> None:
        """Move ``now()`` to ``when`` if that is ahead of it (it never goes back)."""
        with self._guard:
            ahead = when - time.time() - self._now
            if ahead > 0:
                self._now += ahead
                self._mono += ahead

    def step_back(self, seconds: float) -> None:
        raise NotImplementedError("a running clock only moves forward")
