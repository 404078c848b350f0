"""verify on the forms of issue 15: hokm for 2, 3 and 4 with the cut, two-player shelem's
hidden piles; the draws are shown through the engines' own deal functions."""

from __future__ import annotations

from typing import Any

import pytest

from fairness import PROTOCOL
from games.deals import cut_deck, hokm_deal
from games.hokm import HokmEngine
from games.transcript import simulate_match
from tests.verify.test_verify_cli_helpers import KEYS, SIGNER
from verify_cli.core import VERIFIED, verify_document
from verify_cli.render import cards_text


def verified(game: str, ruleset: dict[str, Any], seed: int) -> tuple[dict[str, Any], Any]:
    doc, engine = simulate_match(game, ruleset, seed=seed, protocol=PROTOCOL)
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED, rep["checks"]
    return rep, engine


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hokm_every_table_size_verifies_and_shows_its_deal(players: int) -> None:
    rep, engine = verified("hokm", {"players": players, "target": 2}, seed=players)
    texts = [d["text"] for d in rep["draws"]]
    assert texts[0].startswith("first hakem: seat ")
    deal0 = next(t for t in texts if t.startswith("hand 0"))
    assert "tapped (dealt uncut)" in deal0  # the bots tap
    assert all(f"seat {s} (bot{s}):" in deal0 for s in range(players))
    assert ("stock (42, top first)" in deal0) == (players == 2)


def test_a_hokm_cut_is_shown_as_dealt(monkeypatch: pytest.MonkeyPatch) -> None:
    def cutting(self: HokmEngine, seat: int) -> list[dict[str, Any]]:
        return [{"type": "cut", "k": 20}] if self.phase == "cut" else self.legal_actions(seat)

    monkeypatch.setattr(HokmEngine, "bot_actions", cutting)
    rep, engine = verified("hokm", {"players": 3, "target": 1}, seed=5)
    deal0 = next(d["text"] for d in rep["draws"] if d["text"].startswith("hand 0"))
    hakem = engine.history[0]["hakem"]
    assert (
        f"hakem seat {hakem} (bot{hakem}), cut at 20:" in deal0 and engine.history[0]["cut"] == 20
    )
    doc, _ = simulate_match("hokm", {"players": 3, "target": 1}, seed=5, protocol=PROTOCOL)
    shuffle = next(e for e in doc["events"] if e.get("label") == "h0/shuffle")
    dealt = hokm_deal(cut_deck(shuffle["result"], 20), hakem, 3)
    assert f"seat {hakem} (bot{hakem}): {cards_text(dealt.full(hakem))}" in deal0


def test_two_player_shelem_reports_the_reveal() -> None:
    rep, _ = verified("shelem", {"players": 2, "target": 200}, seed=4)
    reveals = [d for d in rep["draws"] if d["kind"] == "reveal"]
    assert reveals and reveals[0]["text"].startswith(
        "hand 0: the pile tops turn up: seat 0 (bot0) "
    )
    deal0 = next(d["text"] for d in rep["draws"] if d["text"].startswith("hand 0"))
    assert "piles (face down until the other player answers the first lead" in deal0


def test_mahbusa_verifies_with_its_rolls_and_boards() -> None:
    rep, engine = verified("mahbusa", {"match_length": 2}, seed=6)
    texts = [d["text"] for d in rep["draws"]]
    assert texts[0].startswith("game 0 opening roll 0: seat 0 (bot0) ")
    assert any(t.startswith("game 0 roll 1 for seat ") for t in texts)
    ends = [d for d in rep["draws"] if d["kind"] == "board"]
    assert len(ends) == len(engine.games)
    first = engine.games[0]
    assert ends[0]["text"].startswith("game 0 ends: ") and first["how"] in ends[0]["text"]
