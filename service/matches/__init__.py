"""The match service: one typed match and the phases that use it, composed.

:mod:`.match` holds :class:`Match` (one match in one transaction: ``act``, ``commit``,
``reveal``, ``resign`` and ``timeout`` each return ``(events, receipt)``), :class:`Parts`
(what the phases share, which opens a match with its deadlines settled) and :class:`Play`:
**a move reads top to bottom there.** :mod:`.seating` creates matches and answers commits
and reveals, :mod:`.reads` the views, the lock, events and transcripts, :mod:`.deadlines`
sweeps. :class:`MatchService` is the :class:`Parts` with one of each phase, answering with
their methods; no phase stands on another. It knows no HTTP: it raises
:mod:`service.errors`, and every method takes the match id first and the rest by keyword.
"""

from __future__ import annotations

from fairness import SecretBox

from ..clock import SYSTEM_CLOCK, Clock
from ..db import Database
from ..keys import RecordSigner
from ..settings import Settings
from .deadlines import Deadlines
from .match import NOT_LOCKED, Match, Parts, Play, view_json
from .reads import Reads
from .seating import Seating


class MatchService(Parts):
    """Every phase of a match over one database, signer and engine cache."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        signer: RecordSigner,
        box: SecretBox,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(db, settings, signer, box, clock)
        self.seating = seating = Seating(self)
        self.play = play = Play(self)
        self.reads = reads = Reads(self)
        self.deadlines = deadlines = Deadlines(self)
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


__all__ = ["NOT_LOCKED", "Match", "MatchService", "Parts", "view_json"]
