"""``qahwa demo``: random bots play one qahwa-fair/2 match of each game and form through
``qahwa_client``, a conforming client (fairness-v2.md §3a), then the ``verify`` command
checks every transcript with the seats' receipts.

Each seat makes its own seed, nonce, roll chain and key, commits, checks the signed lock
(and its place in the log) before it reveals, signs every action over the chain head, sends
its roll-chain values only when they are owed and keeps every receipt; after the match it
holds the transcript to its lock and receipts. The service never imports ``verify_cli``: the
verification runs ``python -m verify_cli`` in a child process, exactly as a player would run
``verify --server URL --match ID --receipt FILE``.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from games import available_games, engine_class
from qahwa_client import ApiError, Client, ClientError, Seat

# Every game in each of its forms, on the short side so a newcomer sees them all within a few
# minutes: Shelem to 330 (a common target; the spec's default is 1200), hokm at every table
# size with the drawn cut and without, tawla (to 3) and mahbusa with fresh rolls (the default)
# and one tawla without; the others as they default.
DEMO_FORMS: dict[str, list[dict[str, Any]]] = {
    "hokm": [{"players": 4}, {"players": 3}, {"players": 2}, {"players": 4, "cut": False}],
    "shelem": [{"target": 330}, {"players": 2, "target": 330}],
    "iraqi_domino": [{}, {"players": 3}],
    "mexican_train": [{"players": 3, "rounds": 2}],
    "tawla": [{"match_length": 3}, {"fresh_rolls": False, "match_length": 1}],
}
MAX_ACTIONS = 20_000
WIDTH = 80


class DemoError(Exception):
    """The server did not behave as the API says (a one-line reason)."""


def forms_of(game: str) -> list[dict[str, Any]]:
    return DEMO_FORMS.get(game, [{}])


def play(seats: Sequence[Seat], rnd: random.Random, max_actions: int = MAX_ACTIONS) -> int:
    """Random legal bots (picking from ``suggested_actions``) play to the end; each seat acts
    through its own handle, so its actions are signed with its own key."""
    played, turn = 0, 0
    while True:
        view = seats[turn].state()
        if view.status == "finished":
            return played
        if view.status == "seating":
            raise DemoError("the match did not start after every seat revealed")
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
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def run_demo(
    base_url: str,
    games: Sequence[str] | None = None,
    *,
    seed: int | None = None,
    echo: Callable[[str], None] = print,
    verify: bool = True,
    operator_key: str | None = None,
) -> int:
    """Play, then verify with the ``verify`` command; its exit code (2: server trouble)."""
    rnd = random.Random(seed)
    wanted = list(games) if games else [*available_games(), "rng"]
    matches: list[str] = []
    sessions: list[str] = []
    failed = False
    with (
        tempfile.TemporaryDirectory(prefix="qahwa-demo-receipts-") as tmp,
        Client(base_url, operator_key=operator_key) as qc,
    ):
        receipt_files: list[Path] = []
        for game in wanted:
            forms = [{}] if game == "rng" else forms_of(game)
            for ruleset in forms:
                try:
                    if game == "rng":
                        sessions.append(_rng(qc, rnd, echo))
                        continue
                    mid, files = _match(qc, game, ruleset, rnd, echo, Path(tmp))
                    matches.append(mid)
                    receipt_files += files
                except (ApiError, ClientError, DemoError, ValueError) as exc:
                    echo(_fit(f"  {game}: {exc}"))
                    failed = True
        if not verify:
            return 2 if failed else 0
        sources = [f"{base_url.rstrip('/')}/v1/rng/{sid}/transcript" for sid in sessions]
        args = [
            sys.executable,
            "-m",
            "verify_cli",
            "check",
            "--server",
            base_url,
            "--draws",
            "3",
            "--jobs",
            "1",
            *sources,
        ]
        for mid in matches:
            args += ["--match", mid]
        for f in receipt_files:
            args += ["--receipt", str(f)]
        echo("")
        echo(_fit("verifying with: verify --server URL --match ID --receipt FILE …"))
        sys.stdout.flush()
        rc = subprocess.run(args, check=False).returncode if (matches or sessions) else 2
    return 2 if failed else rc


def _match(
    qc: Client,
    game: str,
    ruleset: dict[str, Any],
    rnd: random.Random,
    echo: Callable[[str], None],
    tmp: Path,
) -> tuple[str, list[Path]]:
    cls = engine_class(game)
    n = cls.seat_count(cls.parse_ruleset(ruleset))
    match = qc.create_match(game, ruleset, [f"bot {i}" for i in range(n)])
    form = ", ".join(f"{k} {v}" for k, v in ruleset.items()) or "defaults"
    echo(_fit(f"{game} ({form}): match {match.match_id}, {n} seats"))
    match.start()  # each seat: commit, check the signed lock and its log entry, reveal
    echo(
        _fit(
            f"  lock at log index {match.seats[0].log_index}: every seat checked the lock "
            "and revealed"
        )
    )
    played = play(match.seats, rnd)
    match.check_transcript()  # the lock each seat revealed against, and every receipt
    receipts = sum(len(s.receipts) for s in match.seats)
    echo(_fit(f"  played {played} signed actions; {receipts} receipts agree with the transcript"))
    files = [s.save_receipts(tmp / f"{match.match_id}-seat{s.seat}.json") for s in match.seats]
    return match.match_id, files


def _rng(qc: Client, rnd: random.Random, echo: Callable[[str], None]) -> str:
    sess = qc.rng()
    sess.send_seed()  # a fresh seed and nonce, sent only after the commit record
    for draw in (
        {"kind": "dice", "count": 2, "sides": 6},
        {"kind": "uniform", "n": 37},
        {"kind": "shuffle", "n": 52},
    ):
        sess.draw(draw)
    sess.close()
    sess.check_transcript()
    echo(_fit(f"rng: session {sess.session_id}, lock checked, 3 draws, closed"))
    return sess.session_id
