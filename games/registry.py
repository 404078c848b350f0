"""Game ids → engine classes. Each game module exposes ``ENGINE``."""

from __future__ import annotations

import importlib

from .base import Engine
from .errors import UnknownGameError

GAME_IDS: tuple[str, ...] = (
    "iraqi_domino",
    "mexican_train",
    "qahve",
    "hokm",
    "shelem",
    "tawla",
    "mahbusa",
    "rng",
)


def engine_class(game: str) -> type[Engine]:
    """The engine class for a game id (UnknownGameError for anything else)."""
    if not isinstance(game, str) or game not in GAME_IDS:
        raise UnknownGameError(f"unknown game {game!r}; known: {', '.join(GAME_IDS)}")
    try:
        module = importlib.import_module(f"games.{game}")
    except ModuleNotFoundError as exc:
        if exc.name == f"games.{game}":
            raise UnknownGameError(f"game {game!r} is not implemented yet") from None
        raise
    engine: type[Engine] = module.ENGINE
    return engine


def available_games() -> list[str]:
    """The game ids whose engines are importable (``rng`` excluded)."""
    out = []
    for g in GAME_IDS:
        if g == "rng":
            continue
        try:
            engine_class(g)
        except UnknownGameError:
            continue
        out.append(g)
    return out
