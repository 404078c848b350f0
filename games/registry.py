"""Game ids → engine classes: :func:`find_engine` chooses a match's variant, the engine class
carrying its protocol and deal (python-chess's ``find_variant``). Each game module exposes
``ENGINE``; a game with a sealed deal also ``games.sealed_<game>.ENGINE``."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from typing import Any

from fairness import CURRENT, V3, FairProtocol

from .base import Engine, check_protocol, variant
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

#: the games with a sealed engine (``games.sealed_<game>``)
SEALED_GAMES: tuple[str, ...] = ("hokm", "iraqi_domino", "mexican_train", "qahve", "shelem")
#: the games whose chance is public (dice): a sealed deal means nothing for them
NO_SEALED_DEAL: tuple[str, ...] = ("tawla", "mahbusa", "rng")


class Seeded:
    """The default deal (fairness-v3 §9a): the items are dealt from the seeds, by the game's
    own module (``games.<game>``), as a match of the protocol its row or transcript names."""

    name = "seeded"

    def engine(self, game: str, protocol: FairProtocol) -> type[Engine]:
        cls = self.load(game)
        try:
            return variant(cls, protocol)
        except RulesetError:
            raise RulesetError(self.refusal(protocol)) from None

    def load(self, game: str) -> type[Engine]:
        return _load(f"games.{game}", game)

    def refusal(self, protocol: FairProtocol) -> str:
        """Why a match of ``protocol`` cannot deal this way."""
        return (
            f"a {protocol} match is a {protocol.deal} match: its ruleset must say 'deal': "
            f"'{protocol.deal}'"
        )


class Sealed(Seeded):
    """A sealed deal (qahwa-fair/3, fairness-v3 §9a): ``games.sealed_<game>``, whose class
    plays qahwa-fair/3 and takes the qahwa-fair/2 its row and records name."""

    name = "sealed"

    def load(self, game: str) -> type[Engine]:
        if game in NO_SEALED_DEAL:
            raise RulesetError(
                f"{game} has no sealed deal: its chance is public dice, nothing is dealt face "
                "down ('deal' must be 'seeded')"
            )
        if game not in SEALED_GAMES:
            raise RulesetError(f"a sealed deal of {game} is not implemented yet")
        return _load(f"games.sealed_{game}", game)

    def refusal(self, protocol: FairProtocol) -> str:
        return f"a sealed deal is {V3}: it has no {protocol} form"


#: the deals a ruleset may name (``"deal"``, fairness-v3 §9a); seeded is the default
DEALS: dict[str, Seeded] = {"seeded": Seeded(), "sealed": Sealed()}


def deal_of(ruleset: Mapping[str, Any] | None) -> str:
    """The deal a ruleset asks for: ``seeded`` (the default) or ``sealed``."""
    if ruleset is None:
        return "seeded"
    if not isinstance(ruleset, Mapping):
        raise RulesetError("ruleset must be a JSON object")
    name = ruleset.get("deal", "seeded")
    if not isinstance(name, str) or name not in DEALS:
        raise RulesetError(f"ruleset key 'deal' must be one of {list(DEALS)}, got {name!r}")
    return str(name)


def find_engine(
    game: str,
    ruleset: str | Mapping[str, Any] | None = None,
    *,
    protocol: str | FairProtocol | None = None,
) -> type[Engine]:
    """The variant class of a match: the engine that plays ``game`` with ``ruleset``'s deal
    under ``protocol``, carrying both (``cls.PROTOCOL``, ``cls.PROTOCOL.deal``).

    ``ruleset``: a ruleset as asked for, or its JSON string (a stored row's, a transcript's);
    ``protocol``: the name a match's row, records or transcript carry (None: a new match).
    A sealed deal is qahwa-fair/3, whose row and records say qahwa-fair/2 (``V3.records``):
    both names give the sealed class, whose ``PROTOCOL`` is qahwa-fair/3, the transcript's.
    UnknownGameError, or RulesetError for a deal the game or protocol does not have.
    """
    if not isinstance(game, str) or game not in GAME_IDS:
        raise UnknownGameError(f"unknown game {game!r}; known: {', '.join(GAME_IDS)}")
    name = protocol.name if isinstance(protocol, FairProtocol) else protocol
    if isinstance(ruleset, str):
        return _of_string(game, ruleset, name)
    return _find(game, deal_of(ruleset), name)


def engine_class(game: str) -> type[Engine]:
    """``find_engine(game)``: the game dealt from the seeds under the current protocol."""
    return find_engine(game)


@functools.lru_cache(maxsize=256)
def _of_string(game: str, ruleset: str, protocol: str | None) -> type[Engine]:
    """A stored or transcript ruleset deals sealed when it is a JSON object whose ``deal`` is
    ``sealed``; any other string deals from the seeds (its engine's parse refuses it)."""
    try:
        parsed = json.loads(ruleset)
    except ValueError:
        parsed = None
    name = parsed.get("deal") if isinstance(parsed, dict) else None
    return _find(game, name if isinstance(name, str) and name in DEALS else "seeded", protocol)


@functools.cache
def _find(game: str, deal: str, protocol: str | None) -> type[Engine]:
    return DEALS[deal].engine(game, CURRENT if protocol is None else check_protocol(protocol))


def _load(module: str, game: str) -> type[Engine]:
    try:
        engine: type[Engine] = importlib.import_module(module).ENGINE
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise UnknownGameError(f"game {game!r} is not implemented yet") from None
        raise
    return engine


def available_games() -> list[str]:
    """The game ids whose engines are importable (``rng`` excluded)."""
    out = []
    for g in GAME_IDS:
        if g == "rng":
            continue
        try:
            find_engine(g)
        except UnknownGameError:
            continue
        out.append(g)
    return out
