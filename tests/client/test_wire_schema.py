"""What the server sends is what its OpenAPI document says, to the last action and event.

The document types actions, events, views, records and transcripts per game and kind
(qahwa_wire); fields the Python side keeps as received JSON (``SchemaOf``) are typed only
there, so this holds every answer of whole matches of the seven games (v2, keyed seats,
played to the end; one resigned mid-play, its shuffles still hidden; a plain rng session) to
the schema the document gives its route and status, with a JSON Schema validator."""

from __future__ import annotations

import random
import re
import secrets
from collections import Counter
from typing import Any

import httpx
import jsonschema_rs
import pytest

from tests.support.http_play import (
    GAMES,
    create_match,
    play_to_end,
    seat_moves,
    seed_all,
    short_ruleset,
)
from tests.support.live_server import LiveServer

Route = tuple[str, re.Pattern[str]]


class Checker:
    """A response hook: every JSON answer of a documented route against its schema."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.routes: list[tuple[str, str, re.Pattern[str]]] = []
        for path, ops in doc["paths"].items():
            pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
            self.routes.extend((method.upper(), path, pattern) for method in ops)
        self.validators: dict[tuple[str, str, int], Any] = {}
        self.seen: Counter[str] = Counter()

    def validator(self, method: str, path: str, status: int) -> Any:
        key = (method, path, status)
        if key not in self.validators:
            response = self.doc["paths"][path][method.lower()]["responses"][str(status)]
            schema = response["content"]["application/json"]["schema"]
            self.validators[key] = jsonschema_rs.validator_for(
                {**schema, "components": self.doc["components"]}
            )
        return self.validators[key]

    def __call__(self, r: httpx.Response) -> None:
        r.read()
        if not 200 <= r.status_code < 300 or "json" not in r.headers.get("content-type", ""):
            return
        method, path = r.request.method, r.request.url.path
        # a literal route (/v1/matches/{id}/lock) before a templated one of the same shape
        hits = sorted(
            (p for m, p, rx in self.routes if m == method and rx.match(path)),
            key=lambda p: p.count("{"),
        )
        if not hits:
            return
        errors = [
            str(e) for e in self.validator(method, hits[0], r.status_code).iter_errors(r.json())
        ]
        assert not errors, f"{method} {path} ({hits[0]}): {errors[:3]}"
        self.seen[f"{method} {hits[0]}"] += 1


@pytest.fixture(scope="module")
def server() -> Any:
    with LiveServer() as srv:
        yield srv


def checked_client(server: Any) -> tuple[httpx.Client, Checker]:
    checker = Checker(httpx.get(server.url + "/openapi.json", timeout=60).json())
    client = httpx.Client(base_url=server.url, timeout=60)
    client.event_hooks["response"].append(checker)
    return client, checker


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_match_answers_as_documented(server: Any, game: str) -> None:
    client, checker = checked_client(server)
    with client:
        match_id = play_to_end(client, game, short_ruleset(game), seed=5)
        client.get(f"/v1/matches/{match_id}/events")
        client.get(f"/v1/matches/{match_id}/transcript")
    for op in (
        "POST /v1/matches",
        "POST /v1/matches/{match_id}/seats/{seat}/commit",
        "GET /v1/matches/{match_id}/lock",
        "POST /v1/matches/{match_id}/seats/{seat}/reveal",
        "GET /v1/matches/{match_id}/state",
        "POST /v1/matches/{match_id}/actions",
        "GET /v1/matches/{match_id}",
        "GET /v1/matches/{match_id}/events",
        "GET /v1/matches/{match_id}/transcript",
    ):
        assert checker.seen[op], f"{op} was not checked"


@pytest.mark.parametrize("game", ["hokm", "tawla"])
def test_a_resigned_match_with_hidden_events_answers_as_documented(server: Any, game: str) -> None:
    client, checker = checked_client(server)
    with client:
        created = create_match(client, game, short_ruleset(game))
        seats = seed_all(client, created)
        for _, _ in zip(range(4), seat_moves(seats, random.Random(3)), strict=False):
            pass
        mid = created["match_id"]
        page = client.get(f"/v1/matches/{mid}/events").json()
        assert page["game"] == game
        if game == "hokm":
            assert any(e.get("hidden") for e in page["events"])  # the deal, still secret
        client.get(f"/v1/matches/{mid}")
        seats[0].resign()
        transcript = client.get(f"/v1/matches/{mid}/transcript").json()
        assert transcript["events"][-1]["type"] == "end"
    assert checker.seen["POST /v1/matches/{match_id}/resign"] == 1
    assert checker.seen["GET /v1/matches/{match_id}/transcript"] == 1


def test_a_plain_session_answers_as_documented(server: Any) -> None:
    client, checker = checked_client(server)
    with client:
        created = client.post("/v1/rng", json={}).json()
        sid, auth = created["session_id"], {"Authorization": f"Bearer {created['token']}"}
        client.post(
            f"/v1/rng/{sid}/seed",
            headers=auth,
            json={"client_seed": "schema", "nonce": secrets.token_hex(32)},
        )
        for draw in (
            {"kind": "dice", "count": 3, "sides": 8},
            {"kind": "uniform", "n": 9},
            {"kind": "shuffle", "n": 6},
        ):
            client.post(f"/v1/rng/{sid}/draws", headers=auth, json=draw)
        assert client.get(f"/v1/rng/{sid}/events").json()["game"] == "rng"
        client.get(f"/v1/rng/{sid}")
        client.post(f"/v1/rng/{sid}/close", headers=auth)
        client.get(f"/v1/rng/{sid}/transcript")
    assert sum(checker.seen.values()) >= 9
    assert checker.seen["POST /v1/rng/{session_id}/draws"] == 3


def test_the_checker_catches_an_answer_off_the_schema(server: Any) -> None:
    """The oracle can fail: an event page whose action is another game's is refused."""
    client, checker = checked_client(server)
    with client:
        doc = checker.doc
    page = {
        "match_id": "m_x",
        "game": "tawla",
        "status": "playing",
        "version": 3,
        "next_seq": 1,
        "events": [
            {"seq": 0, "type": "action", "seat": 0, "action": {"type": "play", "card": "AS"}}
        ],
    }
    check = checker.validator("GET", "/v1/matches/{match_id}/events", 200)
    assert not check.is_valid(page)
    page["game"] = "hokm"
    assert check.is_valid(page)
    page["events"][0]["action"] = {"type": "play", "card": "AS", "extra": 1}
    assert not check.is_valid(page)
    view = checker.validator("GET", "/v1/matches/{match_id}/state", 200)
    assert doc["paths"]["/v1/matches/{match_id}/state"]["get"]
    assert not view.is_valid({"game": "tawla", "status": "playing"})
