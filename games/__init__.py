"""The rules engines of qahwa's games, all on one interface (:mod:`games.base`).

Errors: see :mod:`games.errors`.
"""

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
from .registry import GAME_IDS, available_games, engine_class
from .replay import replay  # the function; the module is games.replay via sys.modules

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
    "replay",
]
