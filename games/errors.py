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
    """An action that cannot be applied now; the match state is unchanged."""


class MalformedActionError(ActionError):
    """The action is not an object of a known type with the right fields."""


class NotYourTurnError(ActionError):
    """The seat may not act now (it is another seat's turn)."""


class IllegalActionError(ActionError):
    """A well-formed action that the game's rules do not allow now."""


class MatchOverError(ActionError):
    """The match has already ended."""


class ReplayError(GameError):
    """A transcript whose events do not replay.

    ``seq`` is the event that failed (or None for the result / a missing event),
    ``expected`` what the replay produced, ``found`` what the transcript holds.
    """

    def __init__(
        self, message: str, *, seq: int | None = None, expected: Any = None, found: Any = None
    ) -> None:
        super().__init__(message)
        self.seq = seq
        self.expected = expected
        self.found = found
