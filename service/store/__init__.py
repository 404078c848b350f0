"""Match state, by role (docs/architecture.md):

- ``sql``: the ``matches`` row (:class:`MatchRow`) and the prebuilt Core statements;
- ``cache``: the engine cache (:class:`EngineCache`) and :func:`catch_up`;
- ``tx``: :class:`Store` (the transactions of one process) and :class:`Tx` (one transaction
  on one match).

The rest of the service imports from here.
"""

from ..clock import iso_of, now_iso
from ..lru import LRU
from .cache import catch_up
from .sql import KIND_MATCH, KIND_RNG, MatchRow, dumps, hash_token
from .tx import FINISHED, PLAYING, SEATING, Store, Tx

__all__ = [
    "FINISHED",
    "KIND_MATCH",
    "KIND_RNG",
    "LRU",
    "PLAYING",
    "SEATING",
    "MatchRow",
    "Store",
    "Tx",
    "catch_up",
    "dumps",
    "hash_token",
    "iso_of",
    "now_iso",
]
