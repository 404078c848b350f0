"""Play a whole match over HTTP with random legal actions (tests, demos)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from fairness import commitment, load_public_key, match_key, verify_record
from games import GAME_IDS
from games.base import Engine, replay
from games.errors import RulesetError
from games.registry import engine_class

MAX_ACTIONS = 20_000


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create_match(client: httpx.Client, game: str, ruleset: dict[str, Any] | None = None,
                 names: Sequence[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"game": game, "ruleset": ruleset or {}}
    if names is not None:
        body["seats"] = [{"name": n} for n in names]
    r = client.post("/v1/matches", json=body)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def seed_all(client: httpx.Client, created: dict[str, Any], prefix: str = "seed") -> None:
    for seat in created["seats"]:
        r = client.post(f"/v1/matches/{created['match_id']}/seats/{seat['seat']}/seed",
                        json={"client_seed": f"{prefix}-{seat['seat']}"},
                        headers=auth(seat["token"]))
        assert r.status_code == 200, r.text


def play_actions(client: httpx.Client, match_id: str, tokens: Sequence[str], rnd: random.Random,
                 limit: int = MAX_ACTIONS,
                 on_response: Callable[[httpx.Response], None] | None = None) -> int:
    """Play up to ``limit`` random legal actions; returns how many were played."""
    played = 0
    seat_of_turn: int | None = 0
    while played < limit:
        r = client.get(f"/v1/matches/{match_id}/state", headers=auth(tokens[seat_of_turn or 0]))
        assert r.status_code == 200, r.text
        if on_response:
            on_response(r)
        view = r.json()
        if view["status"] != "playing":
            break
        seat_of_turn = view["turn"]
        assert seat_of_turn is not None
        if view["seat"] != seat_of_turn:
            continue
        legal = view["legal_actions"]
        assert legal, f"seat {seat_of_turn} to act with no legal action"
        # like simulate_match's bots: pick from the engine's suggestions (a subset of legal)
        choices = view.get("suggested_actions") or legal
        assert all(a in legal for a in choices)
        action = rnd.choice(choices)
        r = client.post(f"/v1/matches/{match_id}/actions",
                        json={"action": action, "version": view["version"]},
                        headers=auth(tokens[seat_of_turn]))
        assert r.status_code == 200, r.text
        if on_response:
            on_response(r)
        played += 1
    return played


def play_to_end(client: httpx.Client, game: str, ruleset: dict[str, Any] | None = None,
                seed: int = 0, names: Sequence[str] | None = None,
                on_response: Callable[[httpx.Response], None] | None = None) -> str:
    """Create a match, give every seat a seed, play random legal actions to the end.

    ``client`` has the server's base URL. Returns the match id.
    """
    rnd = random.Random(seed)
    created = create_match(client, game, ruleset, names)
    seed_all(client, created, prefix=f"s{seed}")
    tokens = [s["token"] for s in created["seats"]]
    play_actions(client, created["match_id"], tokens, rnd, on_response=on_response)
    r = client.get(f"/v1/matches/{created['match_id']}")
    assert r.json()["status"] == "finished", r.text
    return str(created["match_id"])

# Rulesets that keep a whole match short (keys the engines document); {} if an engine
# rejects one (its defaults are then used).
SHORT: dict[str, dict[str, Any]] = {
    "iraqi_domino": {"target": 1, "players": 2},
    "mexican_train": {"rounds": 1, "players": 2},
    "qahve": {"target": 1},
    "hokm": {"target": 1},
    "shelem": {"target": 5},
    "tawla": {"match_length": 1},
    "mahbusa": {"match_length": 1},
}


def short_ruleset(game: str) -> dict[str, Any]:
    ruleset = SHORT.get(game, {})
    try:
        engine_class(game).parse_ruleset(ruleset)
    except RulesetError:
        return {}
    return ruleset


# Every game (the plain rng session aside): a missing engine fails, it does not vanish.
GAMES = [g for g in GAME_IDS if g != "rng"]


def public_key(client: httpx.Client) -> Any:
    keys = client.get("/v1/keys").json()["keys"]
    current = [k for k in keys if k["current"]]
    assert len(current) == 1
    return load_public_key(current[0]["public_key"])


def check_transcript(client: httpx.Client, doc: dict[str, Any]) -> Engine:
    """Signature, commitment and a full replay of a transcript; returns the replayed engine."""
    verify_record(doc, public_key(client))
    assert commitment(doc["server_seed"]) == doc["commitment"]
    key = match_key(doc["server_seed"], doc["match_id"], doc["game"], doc["ruleset"],
                    [s["client_seed"] for s in doc["seats"]])
    engine = replay(engine_class(doc["game"]), doc["ruleset"], key, doc["events"])
    assert engine.outcome is not None
    assert engine.outcome.to_json() == doc["result"]
    return engine
