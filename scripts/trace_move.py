"""Trace one move through the service: the project files and functions a POSTed action passes.

Issue 48's target: a move (``POST /v1/matches/{id}/actions``) passes through at most 15 of
the project's files. This builds the app in-process (``service.app.create_app`` on a
temporary SQLite database, FastAPI's ``TestClient``), creates a keyed qahwa-fair/2 hokm match,
commits, reads the lock and reveals every seat, plays one action (warming what a running
match keeps warm), then ``sys.setprofile`` (and ``threading.setprofile``) records every
Python call made, in the threads serving the request, while one more action is POSTed and
answered. A *project file* is a ``.py`` file under this repository (not the venv's packages,
not this script); a *function* is one (file, first line) pair.

    python scripts/trace_move.py            # the counts
    python scripts/trace_move.py --list     # and every file with its functions
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import warnings
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GAME = "hokm"
#: the threads that serve a request under the test client: its event loop's and the worker
#: threads a synchronous route runs in (not the log's background checkpointing)
REQUEST_THREADS = ("asyncio-portal", "AnyIO worker")


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _match(client: Any, operator_key: str) -> tuple[str, list[str], list[Any]]:
    """A started keyed match: its id, its seats' tokens and signers."""
    from fairness import Signer, new_nonce, public_key_b64, seed_commitment

    created = client.post("/v1/matches", json={"game": GAME}, headers=_auth(operator_key))
    assert created.is_success, created.text
    body = created.json()
    mid, tokens = body["match_id"], [s["token"] for s in body["seats"]]
    signers = [Signer.generate() for _ in tokens]
    nonces = [new_nonce().hex() for _ in tokens]
    for i, tok in enumerate(tokens):
        r = client.post(
            f"/v1/matches/{mid}/seats/{i}/commit",
            headers=_auth(tok),
            json={
                "seed_commitment": seed_commitment(mid, i, nonces[i], f"trace-{i}"),
                "key": public_key_b64(signers[i].public_key),
            },
        )
        assert r.is_success, r.text
    assert client.get(f"/v1/matches/{mid}/lock").is_success
    for i, tok in enumerate(tokens):
        r = client.post(
            f"/v1/matches/{mid}/seats/{i}/reveal",
            headers=_auth(tok),
            json={"client_seed": f"trace-{i}", "nonce": nonces[i]},
        )
        assert r.is_success, r.text
    return mid, tokens, signers


def _act(client: Any, mid: str, tokens: list[str], signers: list[Any], on: list[bool]) -> None:
    """The seat on turn reads its view, then POSTs its first suggested action, signed (only
    the POST is recorded: ``on[0]`` while it runs)."""
    from fairness import seat_sig_message

    view = client.get(f"/v1/matches/{mid}/state", headers=_auth(tokens[0])).json()
    mover = view["turn"]
    view = client.get(f"/v1/matches/{mid}/state", headers=_auth(tokens[mover])).json()
    action = view["suggested_actions"][0]
    event = {"type": "action", "seat": mover, "action": action}
    sig = signers[mover].sign_bytes(seat_sig_message(mid, view["chain"], event))
    body = {"action": action, "version": view["version"], "sig": sig}
    on[0] = True
    try:
        r = client.post(f"/v1/matches/{mid}/actions", json=body, headers=_auth(tokens[mover]))
    finally:
        on[0] = False
    assert r.is_success, r.text


def trace() -> dict[str, set[tuple[int, str]]]:
    """{project file: {(first line, function)}} of one POSTed action (the match's second:
    the first warms the caches a running match has)."""
    from fastapi.testclient import TestClient

    from service.app import create_app
    from service.db import Database
    from service.operators import ensure_first_key
    from service.settings import Settings

    seen: dict[str, set[tuple[int, str]]] = defaultdict(set)
    root = str(ROOT) + os.sep
    skip = (str(ROOT / ".venv"), __file__)
    on = [False]

    def profile(frame: FrameType, what: str, _arg: Any) -> None:
        path = frame.f_code.co_filename
        if (
            on[0]
            and what == "call"
            and path.startswith(root)
            and not path.startswith(skip)
            and threading.current_thread().name.startswith(REQUEST_THREADS)
        ):
            seen[path[len(root) :]].add((frame.f_code.co_firstlineno, frame.f_code.co_name))

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            database_url=f"sqlite:///{tmp}/trace.db",
            data_dir=Path(tmp),
            rate_per_second_per_ip=0,
            rate_per_second_per_token=0,
        )
        app = create_app(settings)
        ensure_first_key(Database(settings.database_url), settings.operator_key_path)
        key = settings.operator_key_path.read_text(encoding="ascii").strip()
        # the app runs in the test client's own thread: every thread started from here on is
        # profiled (and this one), recording only while ``on``
        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            with TestClient(app) as client:
                mid, tokens, signers = _match(client, key)
                _act(client, mid, tokens, signers, [False])
                _act(client, mid, tokens, signers, on)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    return seen


def main(argv: list[str]) -> int:
    warnings.simplefilter("ignore")
    seen = trace()
    functions = sum(len(f) for f in seen.values())
    if "--list" in argv:
        for path in sorted(seen):
            names = ", ".join(n for _, n in sorted(seen[path]))
            print(f"{path} ({len(seen[path])}): {names}")
    print(
        f"a move (POST an action) passes {len(seen)} project files and {functions} functions "
        "(target 15 files; scripts/trace_move.py)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
