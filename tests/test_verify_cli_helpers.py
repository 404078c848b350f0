"""Shared helpers for the verify CLI tests: genuine signed transcripts made offline."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from fairness import PROTOCOL, Signer, public_key_b64
from games import GAME_IDS
from games.transcript import simulate_match

SIGNER = Signer.generate()
FULL_MAX_ACTIONS = 5000


def games_and_rng() -> list[str]:
    return list(GAME_IDS)  # every game and the plain rng session: none may vanish


@functools.cache
def _full(game: str, seed: int) -> dict[str, Any]:
    # An engine that cannot finish a random-bot match within FULL_MAX_ACTIONS raises
    # RuntimeError here, and the test that asked for the match fails: that is a bug.
    doc, _ = simulate_match(game, seed=seed, max_actions=FULL_MAX_ACTIONS, protocol=PROTOCOL)
    return SIGNER.signed(doc)


def full_match(game: str, seed: int = 1) -> dict[str, Any]:
    """A whole random-bot match, signed."""
    return copy.deepcopy(_full(game, seed))


@functools.cache
def _resigned(game: str, seed: int, at: int) -> dict[str, Any]:
    doc, _ = simulate_match(game, seed=seed, resign_at=at, protocol=PROTOCOL)
    return SIGNER.signed(doc)


def resigned_match(game: str, seed: int = 2, at: int = 40) -> dict[str, Any]:
    """A match seat 0 resigns after ``at`` actions (always ends), signed."""
    return copy.deepcopy(_resigned(game, seed, at))


def any_match(game: str, seed: int = 1) -> dict[str, Any]:
    return full_match(game, seed)


def resign(doc: dict[str, Any]) -> dict[str, Any]:
    """Re-sign a tampered document with the genuine key (a lying server)."""
    return SIGNER.signed(doc)


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def key_b64() -> str:
    return public_key_b64(SIGNER.public_key)


def keys_doc() -> dict[str, Any]:
    return {"keys": [{"key_id": SIGNER.key_id, "alg": "ed25519", "public_key": key_b64()}]}
