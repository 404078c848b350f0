"""The rules engines of qahwa's games, all on one interface (:mod:`games.base`).

Errors: see :mod:`games.errors`. ``games.replay`` is the replay loop's module (its
function is :func:`games.replay.replay`).
"""

from . import replay
from .base import Action, Chance, Engine, Event, Outcome
from .errors import (
    ActionError,
    GameError,
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    ReplayError,
    RulesetError,
    UnknownGameError,
)
from .registry import GAME_IDS, available_games, engine_class, find_engine

__all__ = [
    "GAME_IDS",
    "Action",
    "ActionError",
    "Chance",
    "Engine",
    "Event",
    "GameError",
    "IllegalActionError",
    "MalformedActionError",
    "MatchOverError",
    "NotYourTurnError",
    "Outcome",
    "ReplayError",
    "RulesetError",
    "UnknownGameError",
    "available_games",
    "engine_class",
    "find_engine",
    "replay",
]
