"""Sealed tables (qahwa-fair/3, issue 34) as the service sees them.

A sealed match is an ordinary qahwa-fair/2 match (commit, lock, reveals, the event chain,
receipts, timeouts) whose ruleset says ``{"deal": "sealed"}``: the registry gives it the
game's sealed engine, every deal step (key, shuffle, share, opening, key reveal) is a seat
action that the engine verifies before it is accepted (an invalid step is the engine's
error: 422, nothing changes), and a missing step is owed like any action, so it times out
like one. The service makes no step itself and holds no key that opens an item: house seats
are played by house bots (``qahwa house``, qahwa_client), like every other seat.

What is left here is what the service says about a table: which kind it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from fairness import PROTOCOL_V2, PROTOCOL_V3
from games import Engine, engine_class
from games.registry import engine_for

SEALED: Final = "sealed"
SEEDED: Final = "seeded"
#: the ruleset's canonical JSON (fairness.canonical_ruleset: sorted keys, no spaces) of a
#: sealed table holds exactly this member
_SEALED_MEMBER = '"deal":"sealed"'


def deal_of(ruleset: str) -> Literal["sealed", "seeded"]:
    """The table kind of a match from its canonical ruleset string: ``"sealed"`` (hands
    hidden from the operator, qahwa-fair/3) or ``"seeded"`` (qahwa-fair/2's deals)."""
    return SEALED if _SEALED_MEMBER in ruleset else SEEDED


def engine_of(game: str, ruleset: str | Mapping[str, Any] | None) -> type[Engine]:
    """The engine class of a match: the game's sealed engine when its ruleset (the stored
    canonical string, or a ruleset as asked for) says ``"deal": "sealed"``, else the game's
    own (games.registry.engine_for; RulesetError for a game without a sealed deal)."""
    if isinstance(ruleset, str):
        if _SEALED_MEMBER not in ruleset:
            return engine_class(game)
        parsed: Mapping[str, Any] | None = json.loads(ruleset)
    else:
        parsed = ruleset
    return engine_for(game, parsed)


def transcript_protocol(ruleset: str) -> str:
    """A sealed match's transcript says ``"protocol": "qahwa-fair/3"`` (its events carry every
    deal step; fairness-v3 §9a); a seeded one stays qahwa-fair/2."""
    return PROTOCOL_V3 if deal_of(ruleset) == SEALED else PROTOCOL_V2
