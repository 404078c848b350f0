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

from typing import Final, Literal

SEALED: Final = "sealed"
SEEDED: Final = "seeded"
#: the ruleset's canonical JSON (fairness.canonical_ruleset: sorted keys, no spaces) of a
#: sealed table holds exactly this member
_SEALED_MEMBER = '"deal":"sealed"'


def deal_of(ruleset: str) -> Literal["sealed", "seeded"]:
    """The table kind of a match from its canonical ruleset string: ``"sealed"`` (hands
    hidden from the operator, qahwa-fair/3) or ``"seeded"`` (qahwa-fair/2's deals)."""
    return SEALED if _SEALED_MEMBER in ruleset else SEEDED
