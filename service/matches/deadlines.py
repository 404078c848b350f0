"""Deadlines (fairness-v2.md §3, §7) off the request path (a request meets its match with
them settled: :meth:`.match.Parts.writing`): the periodic sweep, which ends every match past
one (:meth:`.match.Match.timeout`), and its heartbeat, which extends the turn deadlines that
passed while nothing was serving."""

from __future__ import annotations

import json

from sqlalchemy import and_, or_, select, update

from ..models import Heartbeat
from ..store import _MATCHES, PLAYING, SEATING
from .match import TURN_SECONDS, Phase


class Deadlines(Phase):
    """The sweep and the heartbeat."""

    def resume(self, now: float | None = None) -> int:
        """The heartbeat: if nothing served since the last one for longer than
        :attr:`outage_seconds`, every turn deadline that passed meanwhile is extended to
        ``now + turn_seconds`` (fairness-v2.md §7). Returns how many were extended."""
        now = self.parts.store.clock.now() if now is None else now
        extended = 0
        with self.parts.db.write() as s:
            self.parts.db.lock_table(s, "service_heartbeat")
            beat = s.get(Heartbeat, 1)
            if beat is not None and now - beat.at > self.parts.outage_seconds:
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
                    self.parts.store.cache.pop(mid)
                    extended += 1
            if beat is None:
                s.add(Heartbeat(id=1, at=now))
            else:
                beat.at = max(beat.at, now)
                s.add(beat)
        self.parts.last_beat = now
        return extended

    def sweep(self) -> int:
        """The periodic sweep: the heartbeat, then end every match past a deadline; returns
        how many ended."""
        now = self.parts.store.clock.now()
        self.resume(now)
        cutoff = now - self.parts.settings.idle_timeout_seconds
        # every running match is qahwa-fair/2 or later (migration 0008 ended the v1 ones)
        with self.parts.db.read() as s:
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
        return sum(1 for mid, kind in rows if self.parts.end_if_due(mid, kind=kind))
