"""The service as users run it: ``qahwa serve`` in a subprocess, killed and restarted."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.http_play import GAMES, auth, check_transcript, play_actions, started
from tests.support.live_server import Serve


def _state(c: httpx.Client, mid: str, tokens: list[str]) -> list[dict[str, Any]]:
    """Each seat's view, without its signed head (signed at the answer's own time), which
    is checked to sign the view's chain head."""
    views = [c.get(f"/v1/matches/{mid}/state", headers=auth(t)).json() for t in tokens]
    for v in views:
        head = v.pop("head", None)
        assert head is None or head["chain"] == v["chain"]
    return views


def test_kill_and_restart_continues(tmp_path: Path) -> None:
    game = GAMES[0]
    url = f"sqlite:///{tmp_path / 'q.db'}"
    srv = Serve(tmp_path, url)
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            key_before = c.get("/v1/keys").json()
            created, seats = started(c, game)
            mid = created["match_id"]
            tokens = [st.token for st in seats]
            assert play_actions(c, seats, random.Random(1), limit=5) == 5
            before = _state(c, mid, tokens)
            events_before = c.get(f"/v1/matches/{mid}/events").json()
    finally:
        srv.kill()  # SIGKILL: no clean shutdown
    assert (tmp_path / "master.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "signing.key").stat().st_mode & 0o777 == 0o600
    srv = Serve(tmp_path, url)
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            assert c.get("/v1/keys").json() == key_before
            assert _state(c, mid, tokens) == before
            assert c.get(f"/v1/matches/{mid}/events").json() == events_before
            for st in seats:
                st.client = c  # the same seats, over the restarted server
            play_actions(c, seats, random.Random(2))
            assert c.get(f"/v1/matches/{mid}").json()["status"] == "finished"
            doc = c.get(f"/v1/matches/{mid}/transcript").json()
            check_transcript(c, doc, [r for st in seats for r in st.receipts])
            assert doc["events"][: len(events_before["events"])] != []
    finally:
        srv.kill()


@pytest.mark.parametrize("args", [(), ("--no-access-log",)])
def test_access_log_is_on_unless_turned_off(tmp_path: Path, args: tuple[str, ...]) -> None:
    """``qahwa serve`` logs a line per request (uvicorn's access log); ``--no-access-log``
    (as ``make bench-api`` runs it, like its bare endpoint) turns that off, nothing else."""
    srv = Serve(tmp_path, f"sqlite:///{tmp_path / 'q.db'}", args=args)
    try:
        assert httpx.get(srv.url + "/v1/keys", timeout=10).status_code == 200
        time.sleep(0.3)
    finally:
        srv.kill()
    text = (tmp_path / f"serve-{srv.port}.log").read_text(errors="replace")
    assert "qahwa: serving on" in text
    assert ('"GET /v1/keys HTTP/1.1" 200' in text) is (not args), text
