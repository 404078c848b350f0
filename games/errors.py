"""Errors raised by :mod:`games`.

The tree, in one place::

    GameError(ValueError)
    ├── UnknownGameError          a game id that no engine implements
    ├── RulesetError              unknown ruleset key or bad value
    ├── ActionError               an action that cannot be applied now (state unchanged)
    │   ├── MalformedActionError  not an object, unknown type, missing or bad fields
    │   ├── NotYourTurnError      this seat may not act now
    │   ├── IllegalActionError    well-formed, but the rules forbid it (the message says why)
    │   └── MatchOverError        the match has ended
    └── ReplayError               transcript events that do not replay (names the event)
"""

from __future__ import annotations

from typing import Any


class GameError(ValueError):
    """Base of every error raised by the games package."""


class UnknownGameError(GameError):
    """No engine for this game id."""


class RulesetError(GameError):
    """A ruleset with an unknown key or a bad value."""


class ActionError(GameError):
    """An action that cannot be applied now; the match state is unchanged.

    ``kind`` is what a replay reports when a transcript's action is refused this way:
    ``"action"``, or ``"roll_chain"`` for a fresh-roll value that is not the seat's next
    value on its roll chain (fairness-v2.md §6).
    """

    kind: str = "action"


class MalformedActionError(ActionError):
    """The action is not an object of a known type with the right fields."""


class NotYourTurnError(ActionError):
    """The seat may not act now (it is another seat's turn)."""


class IllegalActionError(ActionError):
    """A well-formed action that the game's rules do not allow now."""


class MatchOverError(ActionError):
    """The match has already ended."""


#: what a :class:`ReplayError` can be about (its ``kind``)
REPLAY_KINDS = frozenset(
    {"ruleset", "chance", "action", "end", "event", "seq", "truncated", "roll_chain"}
)


class ReplayError(GameError):
    """A transcript whose events do not replay.

    ``kind`` says what broke, so that a verifier need not read the message:
    ``ruleset`` (not JSON, refused by the rules, or not canonical in v2), ``chance`` (a
    chance event that differs from its recomputation or that the rules did not draw),
    ``action`` (an action the rules refuse), ``end`` (an end event the rules refuse),
    ``event`` (not an event: not an object, an unknown type or unexpected fields), ``seq``
    (a sequence number out of order), ``truncated`` (the events stop where the rules still
    draw) and ``roll_chain`` (a fresh-roll value off its seat's roll chain).
    ``seq`` is the event that failed (or None for the result / a missing event),
    ``expected`` what the replay produced, ``found`` what the transcript holds.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "event",
        seq: int | None = None,
        expected: Any = None,
        found: Any = None,
    ) -> None:
        if kind not in REPLAY_KINDS:
            raise ValueError(f"unknown replay error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.seq = seq
        self.expected = expected
        self.found = found
