"""Sealed tables in the service and through qahwa_client (issue 34).

The API says which kind of table a seat sits at (``"deal": "sealed" | "seeded"`` in every
view, the public match and the creation answer); the built-in /play lobby refuses sealed
tables for now (their house seats are `qahwa house`'s)."""

from __future__ import annotations

from typing import Any

import httpx
from live_server import LiveServer

from qahwa_client import Client


def test_a_seeded_table_says_so_everywhere(server: LiveServer) -> None:
    with Client(server.url) as qc:
        m = qc.create_match("iraqi_domino", {"players": 2, "target": 1})
        assert m.created.deal == "seeded"
        assert qc.match(m.match_id).deal == "seeded"
        assert m.seats[0].state().deal == "seeded"
        m.start()
        view = m.seats[0].state()
        assert view.deal == "seeded" and view.status == "playing"
        raw: dict[str, Any] = httpx.get(f"{server.url}/v1/matches/{m.match_id}").json()
        assert raw["deal"] == "seeded"


def test_the_play_lobby_refuses_a_sealed_table_clearly(server: LiveServer) -> None:
    r = httpx.post(
        f"{server.url}/play/tables",
        json={"game": "hokm", "ruleset": {"players": 4, "deal": "sealed"}},
    )
    assert r.status_code == 422
    assert "sealed" in r.text and "qahwa house" in r.text
