"""The match service: one typed match and the phases that use it, composed.

- :mod:`.match`: :class:`Match`, one match in one transaction — ``act``, ``commit``,
  ``reveal``, ``resign`` and ``timeout`` each return ``(events, receipt)`` — and
  :class:`Parts`, what the phases share (database, settings, signer, store, the locks
  parsed once), which opens a match with its deadlines settled; and :class:`Play`, the play
  requests. **A move reads top to bottom there.**
- :mod:`.seating`: creation, the commit and reveal requests;
- :mod:`.reads`: views, the lock, events, transcripts;
- :mod:`.deadlines`: the sweep and its heartbeat.

:class:`MatchService` holds one of each over one :class:`Parts` and answers for them (its
methods are theirs); none of them stands on another. It knows no HTTP: it raises
:mod:`service.errors` and the routes stay thin. State lives in the database (the event log
is the truth); :mod:`service.store` owns the transactions and the engine cache. Every
method takes the match id first and the rest by keyword.

New matches and sessions are qahwa-fair/2 (fairness-v2.md; a sealed deal's qahwa-fair/3):
commit → lock (signed, logged) → reveal → play, every event chained, receipts for every
accepted seat request, seat signatures for keyed seats, and the ends of §7 (``no_reveal``,
``timeout``, ``resigned``, ``expired``). Matches made before (qahwa-fair/1 rows) are
read-only: served, never written.
"""

from __future__ import annotations

from fairness import SecretBox
from fairness.records import Read as StoredLock  # a lock as stored: the record, its text kept

from ..clock import SYSTEM_CLOCK, Clock
from ..db import Database
from ..keys import RecordSigner
from ..settings import Settings
from .deadlines import Deadlines
from .match import NOT_LOCKED, Match, Parts, Play, view_json
from .reads import Reads
from .seating import Seating


class MatchService:
    """Every phase of a match over one database, signer and engine cache."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        signer: RecordSigner,
        box: SecretBox,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.parts = parts = Parts(db, settings, signer, box, clock)
        self.db, self.settings, self.signer, self.store = db, settings, signer, parts.store
        self.seating = seating = Seating(parts)
        self.play = play = Play(parts)
        self.reads = reads = Reads(parts)
        self.deadlines = deadlines = Deadlines(parts)
        # the requests, as the routes call them: the phases' own methods
        self.create, self.create_match = seating.create, seating.create_match
        self.commit, self.reveal, self.v1_seating = (
            seating.commit,
            seating.reveal,
            seating.v1_seating,
        )
        self.act, self.resign = play.act, play.resign
        self.public, self.state, self.lock = reads.public, reads.state, reads.lock
        self.events, self.transcript = reads.events, reads.transcript
        self.sweep, self.resume = deadlines.sweep, deadlines.resume
        self.writing, self.reading, self.end_if_due = parts.writing, parts.reading, parts.end_if_due

    @property
    def outage_seconds(self) -> float:
        return self.parts.outage_seconds


__all__ = ["NOT_LOCKED", "Match", "MatchService", "Parts", "StoredLock", "view_json"]
