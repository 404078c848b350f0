"""The match service, by phase: seating (creation, commits, the lock, reveals), play (a
seat's action, a resignation), deadlines (the ends of §3 and §7, the sweep and its
heartbeat) and reads (views, the lock, events, transcripts), over what they share
(:mod:`.core`: the lock parsed once, receipts, the end of a match).

It knows no HTTP: it raises :mod:`service.errors` and the routes stay thin. State lives in
the database (the event log is the truth); :mod:`service.store` owns the transactions and
the engine cache, and each request runs once in one transaction on the match
(:meth:`Deadlines.writing`, :meth:`Deadlines.reading`). Every method takes the match id
first and the rest by keyword.

New matches and sessions are qahwa-fair/2 (fairness-v2.md): commit → lock (signed, logged)
→ reveal → play, every event chained, receipts for every accepted seat request, seat
signatures for keyed seats, and the ends of §7 (``no_reveal``, ``timeout``, ``resigned``,
``expired``). Matches made before (qahwa-fair/1 rows) are read-only: served, never written.
"""

from __future__ import annotations

from fairness.records import Read as StoredLock  # a lock as stored: the record, its text kept

from .core import NOT_LOCKED, view_json
from .play import Play
from .seating import Seating


class MatchService(Seating, Play):
    """Every phase of a match over one database, signer and engine cache."""


__all__ = ["NOT_LOCKED", "MatchService", "StoredLock", "view_json"]
