"""The service's fixed strings as StrEnums: what kind a row is, its status, how a match
ended, the types of events and log records, where a seed came from.

Each member *is* its string (``StrEnum``): it compares and hashes equal to the old literal
and is written unchanged to JSON and the database, so the wire and the stored rows are
byte-identical to what they were with plain strings; values read back from the database
or a request are plain ``str`` and compare equal to the members.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """A ``matches`` row is a game match or a plain rng session (``matches.kind``)."""

    MATCH = "match"
    RNG = "rng"


class Status(StrEnum):
    """A match's or an rng session's status (``matches.status``)."""

    SEATING = "seating"
    PLAYING = "playing"
    FINISHED = "finished"


class EndReason(StrEnum):
    """Why a match ended (an end event's and a result's ``reason``)."""

    RESIGNED = "resigned"
    ABANDONED = "abandoned"  # qahwa-fair/1: idle
    NOT_LOCKED = "not_locked"  # qahwa-fair/2 §3: never locked
    NO_REVEAL = "no_reveal"  # §3: a seat did not reveal by reveal_by
    TIMEOUT = "timeout"  # §7: the seat owing a step missed its turn deadline
    EXPIRED = "expired"  # §7: end_by passed


class EventType(StrEnum):
    """An event's ``type`` in the event log and the transcript."""

    CHANCE = "chance"
    ACTION = "action"
    END = "end"


class RecordType(StrEnum):
    """A signed record's ``type`` (the log's records, receipts, tree heads)."""

    COMMITMENT = "commitment"  # qahwa-fair/1's commitment record
    COMMIT = "commit"
    LOCK = "lock"
    REVEAL = "reveal"
    RECEIPT = "receipt"
    TREE_HEAD = "tree_head"


class SeedSource(StrEnum):
    """Who chose a seat's client seed (``seats.seed_source``)."""

    PLAYER = "player"
    SERVER = "server"


__all__ = ["EndReason", "EventType", "Kind", "RecordType", "SeedSource", "Status"]
