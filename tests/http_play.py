"""Play a whole match over HTTP with random legal actions, through ``qahwa_client``."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx

from fairness import commitment, load_public_key, match_key, verify_record
from games import GAME_IDS
from games.base import Engine, replay
from games.errors import RulesetError
from games.registry import engine_class
from qahwa_client import Client, Match

MAX_ACTIONS = 20_000


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def qahwa(client: httpx.Client) -> Client:
    """The qahwa client over a test's ``httpx.Client`` (whose base URL is the server's)."""
    return Client(str(client.base_url), http=client)


def create_match(client: httpx.Client, game: str, ruleset: dict[str, Any] | None = None,
                 names: Sequence[str] | None = None) -> dict[str, Any]:
    """Create a match; the creation answer as JSON (seats with their tokens)."""
    match = qahwa(client).create_match(game, ruleset or {}, names)
    return match.created.model_dump(mode="json")


def seed_all(client: httpx.Client, created: dict[str, Any], prefix: str = "seed") -> None:
    qc = qahwa(client)
    for seat in created["seats"]:
        qc_seat = Match(qc, _created(created)).seat(seat["seat"])
        qc_seat.send_seed(f"{prefix}-{seat['seat']}")


def _created(created: dict[str, Any]) -> Any:
    from qahwa_client.models import MatchCreatedOut

    return MatchCreatedOut.model_validate(created)


def play_actions(client: httpx.Client, match_id: str, tokens: Sequence[str], rnd: random.Random,
                 limit: int = MAX_ACTIONS,
                 on_response: Callable[[httpx.Response], None] | None = None) -> int:
    """Play up to ``limit`` random legal actions; returns how many were played.

    ``on_response`` sees every response the bots got (read), e.g. to look for leaks.
    """
    from qahwa_client import Seat

    qc = qahwa(client)
    seats = [Seat(qc, match_id, i, tok) for i, tok in enumerate(tokens)]

    def hook(r: httpx.Response) -> None:
        r.read()
        assert on_response is not None
        on_response(r)

    if on_response is not None:
        client.event_hooks["response"].append(hook)
    try:
        return _play(seats, rnd, limit)
    finally:
        if on_response is not None:
            client.event_hooks["response"].remove(hook)


def client_moves(seats: Sequence[Any], rnd: random.Random,
                 limit: int = MAX_ACTIONS) -> Iterator[tuple[int, dict[str, Any], Any]]:
    """Random legal actions through ``qahwa_client`` seats (one per seat, in seat order)
    until the match ends or ``limit`` were played: yields ``(seat, action, answer)`` after
    each accepted action."""
    played = 0
    seat_of_turn: int | None = 0
    while played < limit:
        view = seats[seat_of_turn or 0].state()
        if view.status != "playing":
            break
        seat_of_turn = view.turn
        assert seat_of_turn is not None
        if view.seat != seat_of_turn:
            continue
        legal = view.legal_actions
        assert legal, f"seat {seat_of_turn} to act with no legal action"
        # like simulate_match's bots: pick from the engine's suggestions (a subset of legal)
        choices = getattr(view, "suggested_actions", None) or legal
        assert all(a in legal for a in choices)
        action = rnd.choice(choices)
        out = seats[seat_of_turn].act(action)
        assert out.version == view.version + 1
        yield seat_of_turn, action, out
        played += 1


def _play(seats: Sequence[Any], rnd: random.Random, limit: int) -> int:
    return sum(1 for _ in client_moves(seats, rnd, limit))


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
    public = qahwa(client).match(created["match_id"])
    assert public.status == "finished", public
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
