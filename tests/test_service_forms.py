"""The forms of issue 15 over HTTP: hokm for 2, 3 and 4 (cut on), two-player shelem with
its hidden piles and mahbusa play to the end with the suggested actions, and their
transcripts verify with ``verify``'s own checker."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_play import check_transcript, create_match, play_actions, seed_all
from live_server import LiveServer

from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys

FORMS: list[tuple[str, dict[str, Any]]] = [
    ("hokm", {"players": 4, "target": 1}),
    ("hokm", {"players": 3, "target": 1}),
    ("hokm", {"players": 2, "target": 1}),
    ("shelem", {"players": 2, "target": 5}),
    ("mahbusa", {"match_length": 1}),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as srv:
        yield srv


@pytest.fixture()
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def hidden_piles_check(r: httpx.Response) -> bool:
    """Every shelem view before the reveal shows pile sizes only (True: it was one)."""
    body = r.json()
    view = body.get("view", body) if isinstance(body, dict) else {}
    if isinstance(view, dict) and view.get("piles_revealed") is False:
        assert all(p["top"] is None for ps in view["piles"] for p in ps)
        assert all(p["count"] == 4 for ps in view["piles"] for p in ps)
        return True
    return False


@pytest.mark.parametrize(("game", "ruleset"), FORMS, ids=lambda x: str(x))
def test_form_plays_to_the_end_and_verifies(client: httpx.Client, game: str,
                                            ruleset: dict[str, Any]) -> None:
    created = create_match(client, game, ruleset)
    mid = created["match_id"]
    seed_all(client, created, prefix="f")
    tokens = [s["token"] for s in created["seats"]]
    seen: list[bool] = []

    def on_response(r: httpx.Response) -> None:
        seen.append(hidden_piles_check(r))

    play_actions(client, mid, tokens, random.Random(5), limit=5000, on_response=on_response)
    assert client.get(f"/v1/matches/{mid}").json()["status"] == "finished"
    doc = client.get(f"/v1/matches/{mid}/transcript").json()
    engine = check_transcript(client, doc)
    assert engine.outcome is not None and engine.outcome.reason == "finished"
    assert any(seen) == (game == "shelem")  # the piles were seen face down before the reveal
    keys = parse_keys(client.get("/v1/keys").text, source="server", origin="test server")
    rep = verify_document(doc, keys)
    assert rep["status"] == VERIFIED, rep["checks"]
    actions = [e["action"]["type"] for e in doc["events"] if e["type"] == "action"]
    if game == "hokm":
        assert actions.count("tap") >= 1 and "cut" not in actions  # bots tap the deck
        assert len(doc["seats"]) == ruleset["players"]
    if game == "hokm" and ruleset["players"] == 2:
        assert "draw" in actions and "discard" in actions
