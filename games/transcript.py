"""Transcript documents (fairness-v1.md §6) and random-bot matches for tests and demos.

The service builds its transcripts with :func:`build_transcript`; tests, benches and the
demo make genuine ones offline with :func:`simulate_match` (the same engines, the same
derivation, random legal bots).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from fairness import PROTOCOL, canonical_ruleset, commitment, match_key, new_server_seed

from .base import Chance, Engine, Event
from .registry import engine_class


def build_transcript(
    *,
    match_id: str,
    game: str,
    ruleset: str,
    server_seed: bytes,
    seats: Sequence[Mapping[str, Any]],
    events: Sequence[Event],
    result: Mapping[str, Any] | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The unsigned transcript; sign it with ``fairness.Signer.signed``."""
    doc: dict[str, Any] = {
        "protocol": PROTOCOL,
        "match_id": match_id,
        "game": game,
        "ruleset": ruleset,
        "commitment": commitment(server_seed),
        "server_seed": server_seed.hex(),
        "seats": [dict(s) for s in seats],
        "events": [dict(e) for e in events],
        "result": dict(result) if result is not None else None,
    }
    if extra:
        for k, v in extra.items():
            doc.setdefault(k, v)
    return doc


def transcript_key(doc: Mapping[str, Any]) -> bytes:
    """The match key K of a transcript: its revealed seed, ids, ruleset string as given and
    the seats' client seeds in seat order."""
    return match_key(
        bytes.fromhex(doc["server_seed"]), doc["match_id"], doc["game"], doc["ruleset"],
        [s["client_seed"] for s in doc["seats"]],
    )


def simulate_match(
    game: str,
    ruleset: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    server_seed: bytes | None = None,
    match_id: str | None = None,
    client_seeds: Sequence[str] | None = None,
    max_actions: int = 100_000,
    resign_at: int | None = None,
) -> tuple[dict[str, Any], Engine]:
    """Play a whole match with random legal bots; return (unsigned transcript, engine).

    ``seed`` drives the bots' choices (a ``random.Random``) and, when ``server_seed`` is not
    given, the server seed too, so the same arguments give the same transcript.
    ``resign_at``: seat 0 resigns after that many actions (tests of the end event).
    """
    bots = random.Random(seed)
    if server_seed is None:
        server_seed = random.Random(f"server-{seed}").randbytes(32) if seed >= 0 else new_server_seed()
    cls = engine_class(game)
    parsed = cls.parse_ruleset(dict(ruleset or {}))
    ruleset_str = canonical_ruleset(parsed)
    n = cls.seat_count(parsed)
    match_id = match_id or f"sim-{game}-{seed}"
    if client_seeds is None:
        client_seeds = [f"seat{s}-seed{seed}" for s in range(n)]
    key = match_key(server_seed, match_id, game, ruleset_str, list(client_seeds))
    chance = Chance(key)
    engine = cls(parsed, chance)
    events: list[Event] = list(chance.take_events())
    actions = 0
    while engine.outcome is None:
        if actions >= max_actions:
            raise RuntimeError(f"{game}: no end after {max_actions} actions")
        if resign_at is not None and actions >= resign_at:
            engine.end_match("resigned", 0)
            events.append({"type": "end", "reason": "resigned", "seat": 0})
            break
        seat = engine.turn
        assert seat is not None
        legal = engine.legal_actions(seat)
        if not legal:
            raise RuntimeError(f"{game}: seat {seat} to act with no legal action")
        action = bots.choice(engine.bot_actions(seat))
        engine.apply(seat, action)
        events.append({"type": "action", "seat": seat, "action": action})
        events.extend(chance.take_events())
        actions += 1
    numbered = [{"seq": i, **e} for i, e in enumerate(events)]
    seats = [
        {"seat": s, "name": f"bot{s}", "client_seed": cs, "seed_source": "player"}
        for s, cs in enumerate(client_seeds)
    ]
    assert engine.outcome is not None
    doc = build_transcript(
        match_id=match_id, game=game, ruleset=ruleset_str, server_seed=server_seed,
        seats=seats, events=numbered, result=engine.outcome.to_json(),
    )
    return doc, engine
