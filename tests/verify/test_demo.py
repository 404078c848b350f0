"""``qahwa demo``: bots play through qahwa_client, the ``verify`` command checks the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from service.cli import app
from service.demo import forms_of, run_demo
from tests.support.live_server import LiveServer
from tests.support.pty_run import run_on_terminal

ROOT = Path(__file__).resolve().parents[2]


def test_demo_plays_and_verify_passes() -> None:
    lines: list[str] = []
    with LiveServer() as srv:
        rc = run_demo(srv.url, ["iraqi_domino", "rng"], seed=4, echo=lines.append)
    assert rc == 0, lines
    # every form of the game, each seated by the conforming client and held to its receipts
    assert sum(line.startswith("iraqi_domino (") and " match m_" in line for line in lines) == len(
        forms_of("iraqi_domino")
    )
    assert sum("every seat checked the lock and revealed" in line for line in lines) == 2
    assert sum("receipts agree with the transcript" in line for line in lines) == 2
    assert any(line.startswith("rng: session r_") and "lock checked" in line for line in lines)
    assert any("--receipt FILE" in line for line in lines)
    assert all(len(line) <= 80 for line in lines), [x for x in lines if len(x) > 80]


def test_demo_stops_a_match_whose_lock_fails_a_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from qahwa_client.client import Client

    real = Client.log_proof

    def elsewhere(self: Client, index: int, tree_size: int | None = None) -> dict[str, Any]:
        proof = real(self, index, tree_size)
        proof["index"] = index + 1  # a proof of another entry
        return proof

    monkeypatch.setattr(Client, "log_proof", elsewhere)
    lines: list[str] = []
    with LiveServer() as srv:
        rc = run_demo(srv.url, ["tawla"], seed=4, echo=lines.append, verify=False)
    assert rc == 2
    assert any("is not this seat's own" in line for line in lines), lines


def test_demo_reports_a_game_the_server_refuses() -> None:
    lines: list[str] = []
    with LiveServer() as srv:
        rc = run_demo(srv.url, ["chess"], seed=1, echo=lines.append, verify=False)
    assert rc == 2
    assert any("chess" in line for line in lines)


def test_demo_command_takes_game_and_seed() -> None:
    out = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "80"})
    assert out.exit_code == 0
    assert "--game" in out.output and "--seed" in out.output


def test_qahwa_demo_end_to_end_fits_an_80_column_terminal() -> None:
    rc, shown = run_on_terminal(
        [sys.executable, "-m", "service.cli", "demo", "--game", "rng", "--seed", "2"],
        cols=80,
        cwd=ROOT,
    )
    assert rc == 0, shown
    assert shown.index("rng: session") < shown.index("VERIFIED  rng match")
    long = [line for line in shown.splitlines() if len(line) > 80]
    assert not long, long
