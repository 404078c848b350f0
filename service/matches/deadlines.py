"""Deadlines (fairness-v2.md §3, §7): when a match must end, ending it, the turn deadline a
step arms, and the periodic sweep with its heartbeat.

Every request meets its match with its deadlines settled: :meth:`Deadlines.writing` and
:meth:`Deadlines.reading` check once, before the request's own work, and a match found past
a deadline is ended first, in a transaction of its own; the request then runs once, on the
ended match.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import and_, or_, select, update

from fairness import protocol_for
from games.ends import no_reveal_result

from ..errors import user_errors
from ..kinds import EndReason, EventType
from ..models import Heartbeat
from ..store import KIND_MATCH, PLAYING, SEATING, MatchRow, Tx
from ..store.sql import _MATCHES
from .core import NOT_LOCKED, TURN_SECONDS, Core


def arm(tx: Tx, since_us: int | None = None) -> None:
    """The seat that owes the next step owes it from the ``at`` of the event that put it
    on turn (``since_us``: the lock's ``locked_at`` for the first step after the reveals),
    and its deadline is that time plus ``turn_seconds`` (fairness-v2.md §7, times): the
    rule every verifier checks a timeout against. (Rng sessions have no turn deadline.)"""
    m = tx.m
    if m.kind != KIND_MATCH:
        return
    engine = tx.current
    assert engine is not None
    turn = engine.turn
    if engine.outcome is not None or turn is None:
        m.deadline, m.owes = None, None
        return
    if since_us is None:
        since_us = tx.head_at_us
    since = tx.store.clock.now() if since_us is None else since_us / 1_000_000
    m.owes = turn
    m.deadline = since + int(engine.ruleset.get("turn_seconds", TURN_SECONDS))


class Deadlines(Core):
    @property
    def outage_seconds(self) -> float:
        """A gap between heartbeats longer than this means nothing was serving (§7)."""
        return 3 * self.settings.sweep_interval_seconds

    def _due(self, m: MatchRow) -> EndReason | None:
        """Why the match must end now (§3/§7), or None (never for a read-only v1 match)."""
        if m.status not in (SEATING, PLAYING) or not protocol_for(m.protocol).signed:
            return None
        now = self.store.clock.now()
        if m.status == SEATING:
            if m.lock is None:
                idle = now - m.last_activity > self.settings.idle_timeout_seconds
                return EndReason.NOT_LOCKED if idle else None
            assert m.reveal_by is not None
            return EndReason.NO_REVEAL if now > m.reveal_by else None
        if m.end_by is not None and now >= m.end_by:
            return EndReason.EXPIRED
        # A turn deadline ends a match lazily only while this process's heartbeat is fresh;
        # after an outage the sweep first extends the deadlines that passed meanwhile.
        beat = self.last_beat
        if m.deadline is not None and now > m.deadline and beat is not None:
            return EndReason.TIMEOUT if now - beat <= self.outage_seconds else None
        return None

    @contextmanager
    def writing(self, match_id: str, *, kind: str) -> Iterator[Tx]:
        """A write transaction on the match, its deadlines settled first."""
        with self.store.write(match_id, kind=kind) as tx:
            if not self._settle(tx):
                yield tx
                return
        with self.store.write(match_id, kind=kind) as tx:
            yield tx

    @contextmanager
    def reading(self, match_id: str, *, kind: str) -> Iterator[Tx]:
        """A read of the match, its deadlines settled first (ending it is a write)."""
        with self.store.read(match_id, kind=kind) as tx:
            if self._due(tx.m) is None:
                yield tx
                return
        self.end_if_due(match_id, kind=kind)
        with self.store.read(match_id, kind=kind) as tx:
            yield tx

    def end_if_due(self, match_id: str, *, kind: str) -> bool:
        """End the match if a deadline passed (§3 and §7); whether it ended."""
        with self.store.write(match_id, kind=kind) as tx:
            return self._settle(tx)

    def _settle(self, tx: Tx) -> bool:
        """End the match of ``tx`` if a deadline passed; whether it ended."""
        m = tx.m
        reason = self._due(m)
        if reason is None:
            return False
        if reason == EndReason.NOT_LOCKED:
            tx.finish(NOT_LOCKED)
        elif reason == EndReason.NO_REVEAL:
            missing = [st.seat for st in tx.seats() if not st.revealed]
            with user_errors():
                cls = m.variant
                parsed = cls.parse_ruleset(json.loads(m.ruleset), protocol=m.proto)
            tx.append([{"type": EventType.END, "reason": EndReason.NO_REVEAL, "seats": missing}])
            self._finish(tx, no_reveal_result(cls, parsed, missing))
        elif reason == EndReason.EXPIRED:
            tx.append(tx.changing().end_match(EndReason.EXPIRED, []))
            self._finish(tx)
        else:  # TIMEOUT: the seat that owes the step forfeits
            engine = tx.changing()
            seat = m.owes if m.owes is not None else engine.turn
            assert seat is not None
            # its `at` is never before the deadline (fairness-v2.md §7: verifiers check it)
            tx.append(engine.end_match(EndReason.TIMEOUT, [seat]), not_before=m.deadline)
            self._finish(tx)
        m.version += 1
        return True

    def resume(self, now: float | None = None) -> int:
        """The heartbeat: if nothing served since the last one for longer than
        :attr:`outage_seconds`, every turn deadline that passed meanwhile is extended to
        ``now + turn_seconds`` (fairness-v2.md §7). Returns how many were extended."""
        now = self.store.clock.now() if now is None else now
        extended = 0
        with self.db.write() as s:
            self.db.lock_table(s, "service_heartbeat")
            beat = s.get(Heartbeat, 1)
            if beat is not None and now - beat.at > self.outage_seconds:
                rows = s.execute(
                    select(_MATCHES.c.id, _MATCHES.c.ruleset).where(
                        _MATCHES.c.status == PLAYING,
                        _MATCHES.c.deadline > beat.at,
                        _MATCHES.c.deadline <= now,
                    )
                ).all()
                for mid, ruleset in rows:
                    turn = int(json.loads(ruleset).get("turn_seconds", TURN_SECONDS))
                    s.execute(
                        update(_MATCHES).where(_MATCHES.c.id == mid).values(deadline=now + turn)
                    )
                    self.store.cache.pop(mid)
                    extended += 1
            if beat is None:
                s.add(Heartbeat(id=1, at=now))
            else:
                beat.at = max(beat.at, now)
                s.add(beat)
        self.last_beat = now
        return extended

    def sweep(self) -> int:
        """The periodic sweep: the heartbeat, then end every match past a deadline; returns
        how many ended."""
        now = self.store.clock.now()
        self.resume(now)
        cutoff = now - self.settings.idle_timeout_seconds
        # every running match is qahwa-fair/2 or later (migration 0008 ended the v1 ones)
        with self.db.read() as s:
            rows = s.execute(
                select(_MATCHES.c.id, _MATCHES.c.kind).where(
                    _MATCHES.c.status.in_([SEATING, PLAYING]),
                    or_(
                        and_(_MATCHES.c.lock.is_(None), _MATCHES.c.last_activity < cutoff),
                        and_(_MATCHES.c.status == SEATING, _MATCHES.c.reveal_by < now),
                        _MATCHES.c.end_by <= now,
                        _MATCHES.c.deadline < now,
                    ),
                )
            ).all()
        return sum(1 for mid, kind in rows if self.end_if_due(mid, kind=kind))
