"""``qahwa demo``: random bots play one match of each game through ``qahwa_client``, then the
``verify`` command checks every transcript.

The service never imports ``verify_cli``: the verification runs ``python -m verify_cli`` in
a child process, exactly as a player would run ``verify --server URL --match ID``.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from games import available_games, engine_class
from qahwa_client import ApiError, Client, Seat

# Real rulesets, on the short side so a newcomer sees every game within a few minutes:
# Shelem to 330 (a common target, the spec's default is 1200); the others as they default.
DEMO_RULESETS: dict[str, dict[str, Any]] = {"shelem": {"target": 330}}
MAX_ACTIONS = 20_000
WIDTH = 80


class DemoError(Exception):
    """The server did not behave as the API says (a one-line reason)."""


def play(seats: Sequence[Seat], rnd: random.Random, max_actions: int = MAX_ACTIONS) -> int:
    """Random legal bots (picking from ``suggested_actions``) play to the end."""
    played, turn = 0, 0
    while True:
        view = seats[turn].state()
        if view.status == "finished":
            return played
        if view.status == "seating":
            seats[turn].start()
            continue
        if view.turn is None:
            raise DemoError(f"status {view.status!r} with nobody to act")
        if view.turn != view.seat:
            turn = view.turn
            continue
        if played >= max_actions:
            raise DemoError(f"no end after {max_actions} actions")
        choices = [a for a in getattr(view, "suggested_actions", []) if a in view.legal_actions]
        seats[turn].act(rnd.choice(choices or view.legal_actions))
        played += 1


def _fit(text: str) -> str:
    return text if len(text) <= WIDTH else text[:WIDTH - 1] + "…"


def run_demo(base_url: str, games: Sequence[str] | None = None, *, seed: int | None = None,
             echo: Callable[[str], None] = print, verify: bool = True,
             operator_key: str | None = None) -> int:
    """Play (creating with ``operator_key``), then verify with the ``verify`` command; its
    exit code (2: server trouble)."""
    rnd = random.Random(seed)
    wanted = list(games) if games else [*available_games(), "rng"]
    matches: list[str] = []
    sessions: list[str] = []
    failed = False
    with Client(base_url) as qc:
        for game in wanted:
            try:
                if game == "rng":
                    sess = qc.rng(f"demo-{rnd.getrandbits(64):016x}", operator_key=operator_key)
                    for draw in ({"kind": "dice", "count": 2, "sides": 6},
                                 {"kind": "uniform", "n": 37}, {"kind": "shuffle", "n": 52}):
                        sess.draw(draw)
                    sess.close()
                    echo(_fit(f"rng: session {sess.session_id}, 3 draws, closed"))
                    sessions.append(sess.session_id)
                    continue
                cls = engine_class(game)
                ruleset = DEMO_RULESETS.get(game, {})
                n = cls.seat_count(cls.parse_ruleset(ruleset))
                match = qc.create_match(game, ruleset, [f"bot {i}" for i in range(n)],
                                        operator_key=operator_key)
                echo(_fit(f"{game}: match {match.match_id}, {n} seats, commitment "
                          f"{match.created.commitment[:12]}…"))
                for s in match.seats:
                    s.send_seed(f"demo-bot{s.seat}-{rnd.getrandbits(64):016x}")
                echo(_fit(f"  played {play(match.seats, rnd)} actions"))
                matches.append(match.match_id)
            except (ApiError, DemoError, ValueError) as exc:
                echo(_fit(f"  {game}: {exc}"))
                failed = True
    if not verify:
        return 2 if failed else 0
    sources = [f"{base_url.rstrip('/')}/v1/rng/{sid}/transcript" for sid in sessions]
    args = [sys.executable, "-m", "verify_cli", "check", "--server", base_url, "--draws", "3",
            "--jobs", "1", *sources]
    for mid in matches:
        args += ["--match", mid]
    echo("")
    echo(_fit("verifying with: verify --server URL --match ID …"))
    sys.stdout.flush()
    rc = subprocess.run(args, check=False).returncode if (matches or sessions) else 2
    return 2 if failed else rc
