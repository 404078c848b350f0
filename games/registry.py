"""Game ids → engine classes. Each game module exposes ``ENGINE``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .base import Engine
from .errors import RulesetError, UnknownGameError

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


#: the deals a ruleset may name (``"deal"``, fairness-v3 §9a); seeded is the default
DEALS: tuple[str, ...] = ("seeded", "sealed")
#: the games with a sealed engine (``games.sealed_<game>``)
SEALED_GAMES: tuple[str, ...] = ("hokm", "iraqi_domino", "mexican_train", "qahve", "shelem")
#: the games whose chance is public (dice): a sealed deal means nothing for them
NO_SEALED_DEAL: tuple[str, ...] = ("tawla", "mahbusa", "rng")


def deal_of(ruleset: Mapping[str, Any] | None) -> str:
    """The deal a ruleset asks for: ``seeded`` (the default) or ``sealed``."""
    if ruleset is None:
        return "seeded"
    if not isinstance(ruleset, Mapping):
        raise RulesetError("ruleset must be a JSON object")
    deal = ruleset.get("deal", "seeded")
    if not isinstance(deal, str) or deal not in DEALS:
        raise RulesetError(f"ruleset key 'deal' must be one of {list(DEALS)}, got {deal!r}")
    return deal


def engine_for(game: str, ruleset: Mapping[str, Any] | None) -> type[Engine]:
    """The engine class for a game and a ruleset: the sealed engine when the ruleset says
    ``"deal": "sealed"`` (RulesetError for a game without one), else :func:`engine_class`."""
    seeded = engine_class(game)
    if deal_of(ruleset) == "seeded":
        return seeded
    if game in NO_SEALED_DEAL:
        raise RulesetError(
            f"{game} has no sealed deal: its chance is public dice, nothing is dealt face "
            "down ('deal' must be 'seeded')"
        )
    if game not in SEALED_GAMES:
        raise RulesetError(f"a sealed deal of {game} is not implemented yet")
    module = importlib.import_module(f"games.sealed_{game}")
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
