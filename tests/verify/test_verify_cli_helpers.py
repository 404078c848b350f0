"""Shared helpers for the verify CLI tests: genuine signed transcripts made offline
(qahwa-fair/1 by ``full_match`` / ``resigned_match``, qahwa-fair/2 by ``v2_match``)."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    Signer,
    chain_head,
    chain_next,
    chain_start,
    public_key_b64,
)
from games import GAME_IDS
from games.transcript import simulate_match
from verify_cli.keys import parse_keys
from verify_cli.main import app

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


#: the tests' server key, as ``verify --key`` parses it
KEYS = parse_keys(key_b64(), source="file", origin="test-key")


def derive_args(
    seed: str,
    match_id: str,
    ruleset: str,
    seeds: Sequence[str],
    nonces: Sequence[str] = (),
    protocol: str | None = None,
) -> list[str]:
    """``verify derive``'s options for a tawla match: the server seed, the match id, the
    ruleset, each seat's client seed (with its nonce, when ``nonces`` has one)."""
    args = ["derive", *(["--protocol", protocol] if protocol else []), "--server-seed", seed]
    args += ["--match-id", match_id, "--game", "tawla", "--ruleset", ruleset]
    for i, client_seed in enumerate(seeds):
        args += ["--client-seed", client_seed, *(["--nonce", nonces[i]] if i < len(nonces) else [])]
    return args


def run(*args: str) -> Result:
    """``verify ARGS`` in this process."""
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def keys_doc() -> dict[str, Any]:
    return {"keys": [{"key_id": SIGNER.key_id, "alg": "ed25519", "public_key": key_b64()}]}


# -- qahwa-fair/2 ------------------------------------------------------------------------------


@functools.cache
def _v2(game: str, ruleset_json: str, seed: int, keyed: bool, extra: str) -> dict[str, Any]:
    doc, _ = simulate_match(
        game,
        json.loads(ruleset_json),
        seed=seed,
        protocol=PROTOCOL_V2,
        signer=SIGNER,
        keyed=keyed,
        max_actions=FULL_MAX_ACTIONS,
        **{"timed": True, **json.loads(extra)},
    )
    return doc


def v2_match(
    game: str,
    ruleset: dict[str, Any] | None = None,
    *,
    seed: int = 1,
    keyed: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A whole random-bot qahwa-fair/2 match, its lock and transcript signed by SIGNER, with
    the event times a server writes (``extra``: simulate_match's resign_at, end_reason,
    no_reveal, house, timed)."""
    return copy.deepcopy(
        _v2(
            game,
            json.dumps(ruleset or {}, sort_keys=True),
            seed,
            keyed,
            json.dumps(extra, sort_keys=True),
        )
    )


def rechain(doc: dict[str, Any]) -> dict[str, Any]:
    """What a lying server does after editing a v2 transcript: seq renumbered, the chain
    recomputed and the whole re-signed with its genuine key."""
    doc["events"] = [{**e, "seq": i} for i, e in enumerate(doc["events"])]
    doc["chain"] = chain_head(doc["lock"], doc["events"]).hex()
    return SIGNER.signed(doc)


def receipts_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The receipts the server gave while the match ran: seq -1 (commit, reveal), then one
    per event (fairness-v2.md §7), signed by SIGNER."""
    out = []
    h = chain_start(doc["lock"])
    out.append(
        SIGNER.signed(
            {
                "type": "receipt",
                "protocol": PROTOCOL_V2,
                "match_id": doc["match_id"],
                "seq": -1,
                "chain": h.hex(),
            }
        )
    )
    for ev in doc["events"]:
        h = chain_next(h, ev)
        out.append(
            SIGNER.signed(
                {
                    "type": "receipt",
                    "protocol": PROTOCOL_V2,
                    "match_id": doc["match_id"],
                    "seq": ev["seq"],
                    "chain": h.hex(),
                }
            )
        )
    return out
