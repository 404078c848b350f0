"""``verify --server`` against a real server for what the log holds of a match:

- sealed matches (fairness-v3 §9c): a genuine sealed hokm match and a genuine sealed Iraqi
  dominoes match pass; a seeded transcript made up for a sealed match's id fails, and so
  does a sealed transcript made up for a seeded match (the downgrade rule reads the lock's
  signed ruleset);
- the log's reveal record (fairness-v2 §8): a real match cut short by the operator, ended as
  the person's timeout at the deadline, its result replayed and re-signed with the server's
  key, verifies offline but fails online, where its chain head and result are not the ones
  the reveal record signs; a reveal the log does not give is "not checked yet", never
  "verified".
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import tlog
from games.transcript import simulate_match
from qahwa_client import Client
from qahwa_client.client import Match
from service.matches import MatchService
from tests.service.test_times_and_downgrades import forge_timeout
from tests.support import made_up_v1
from tests.support.live_server import LiveServer
from verify_cli import log_check
from verify_cli.log_state import HttpFetch
from verify_cli.main import app

SEALED_HOKM = {"players": 4, "target": 1, "deal": "sealed"}
SEALED_IRAQI = {"players": 2, "target": 20, "deal": "sealed"}


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def rows(res: Any) -> dict[str, dict[str, Any]]:
    (rep,) = json.loads(res.stdout)["results"]
    return {c["name"]: c for c in rep["checks"]}


def play(match: Match, rnd: random.Random, limit: int = 3000) -> None:
    """docs/bot.md's loop over every seat of ``match`` until it ends."""
    turn = 0
    for _ in range(limit):
        seat = match.seats[turn]
        view = seat.state()
        if view.status != "playing":
            return
        if view.turn != view.seat:
            turn = view.turn or 0
            continue
        seat.act(rnd.choice(view.suggested_actions or view.legal_actions))
    raise AssertionError("the match did not end")


def played(srv: LiveServer, game: str, ruleset: dict[str, Any], seed: int) -> dict[str, Any]:
    """A genuine match played to its end on ``srv``, its transcript as the server serves it."""
    with Client(srv.url) as qc:
        m = qc.create_match(game, ruleset)
        m.start()
        play(m, random.Random(seed))
        doc = m.check_transcript()
    srv.app.state.log_c2sp.checkpoint_now()
    return doc


def made_up(svc: MatchService, game: str, ruleset: dict[str, Any], real: dict[str, Any]) -> Any:
    """A transcript sound by itself, made up by the operator for the match of the ``real``
    transcript and signed with its key (its own lock, named at the real lock's index: the
    log holds the real one)."""
    doc, _ = simulate_match(
        game,
        ruleset,
        seed=9,
        match_id=real["match_id"],
        lock_index=real["lock_index"],
        keyed=True,
        timed=True,
        signer=svc.signer,
    )
    return doc


@pytest.fixture(scope="module")
def sealed_server() -> Any:
    with LiveServer() as srv:
        yield srv


def verify_file(tmp_path: Path, name: str, doc: Any, srv: LiveServer, *more: str) -> Any:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return run(str(path), "--server", srv.url, "--no-state", "--json", *more)


@pytest.mark.parametrize(
    ("game", "ruleset"), [("hokm", SEALED_HOKM), ("iraqi_domino", SEALED_IRAQI)]
)
def test_a_genuine_sealed_match_verifies_online(
    sealed_server: LiveServer, tmp_path: Path, game: str, ruleset: dict[str, Any]
) -> None:
    doc = played(sealed_server, game, ruleset, seed=5)
    assert doc["protocol"] == "qahwa-fair/3"
    res = verify_file(tmp_path, "sealed.json", doc, sealed_server)
    assert res.exit_code == 0, res.output
    got = rows(res)
    assert got["log"]["ok"] is True, got["log"]
    assert got["downgrade"]["ok"] is True
    assert "qahwa-fair/2 lock of a sealed deal" in got["downgrade"]["detail"]


def test_made_up_transcripts_across_the_deal_fail_online(
    sealed_server: LiveServer, tmp_path: Path
) -> None:
    svc: MatchService = sealed_server.app.state.service
    sealed = played(sealed_server, "hokm", SEALED_HOKM, seed=6)
    seeded = played(sealed_server, "hokm", {"players": 4, "target": 1}, seed=6)
    assert seeded["protocol"] == "qahwa-fair/2"
    # a seeded transcript made up for the sealed match's id
    forged = made_up(svc, "hokm", {"players": 4, "target": 1}, sealed)
    res = verify_file(tmp_path, "seeded-for-sealed.json", forged, sealed_server)
    assert res.exit_code == 1, res.output
    down = rows(res)["downgrade"]
    assert down["ok"] is False, down
    assert "lock of a sealed deal, but the transcript is qahwa-fair/2" in down["detail"]
    # a sealed transcript made up for the seeded match's id
    forged = made_up(svc, "hokm", SEALED_HOKM, seeded)
    assert forged["protocol"] == "qahwa-fair/3"
    res = verify_file(tmp_path, "sealed-for-seeded.json", forged, sealed_server)
    assert res.exit_code == 1, res.output
    down = rows(res)["downgrade"]
    assert down["ok"] is False, down
    assert "is a qahwa-fair/2 lock, but the transcript is qahwa-fair/3" in down["detail"]


def test_a_cut_short_resigned_transcript_fails_against_the_reveal_record(
    sealed_server: LiveServer, tmp_path: Path
) -> None:
    svc: MatchService = sealed_server.app.state.service
    doc = played(sealed_server, "tawla", {"match_length": 1, "turn_seconds": 60}, seed=2)
    assert doc["result"]["reason"] != "timeout"
    res = verify_file(tmp_path, "genuine.json", doc, sealed_server)
    assert res.exit_code == 0, res.output
    reveal = rows(res)["reveal"]
    assert reveal["ok"] is True and f"so its {len(doc['events'])} events" in reveal["detail"]
    # the operator's forgery: cut, a timeout at the deadline, replayed, re-signed
    cut = forge_timeout(doc, svc, early_us=0)
    offline = tmp_path / "cut.json"
    offline.write_text(json.dumps(cut))
    keys = tmp_path / "keys.json"
    keys.write_text(httpx.get(sealed_server.url + "/v1/keys").text)
    res = run(str(offline), "--key", str(keys), "--no-state")
    assert res.exit_code == 0, res.output  # sound by itself: only the log shows the cut
    res = verify_file(tmp_path, "cut.json", cut, sealed_server)
    assert res.exit_code == 1, res.output
    reveal = rows(res)["reveal"]
    assert reveal["ok"] is False, reveal
    assert "signs the match's chain head" in reveal["detail"]
    assert "does not run to the match's real end" in reveal["detail"]
    out = run(str(offline), "--server", sealed_server.url, "--no-state")
    assert out.exit_code == 1 and "FAILED" in out.stdout, out.output


def test_a_reveal_the_log_does_not_give_is_not_checked_yet(
    sealed_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = played(sealed_server, "hokm", {"players": 4, "target": 1}, seed=3)
    real = HttpFetch.raw

    def no_reveal(self: HttpFetch, path: str) -> tuple[int, bytes]:
        if path.endswith("/reveal-proof"):
            return 404, b'{"error": {"code": "not_found", "message": "no reveal record"}}'
        return real(self, path)

    monkeypatch.setattr(HttpFetch, "raw", no_reveal)
    monkeypatch.setattr(log_check, "PENDING_WAIT", 0.0)
    res = verify_file(tmp_path, "m.json", doc, sealed_server)
    assert res.exit_code == 1, res.output
    (rep,) = json.loads(res.stdout)["results"]
    assert rep["status"] == "unchecked"
    reveal = rows(res)["reveal"]
    assert reveal["ok"] is None and reveal["detail"].startswith("not checked yet")
    path = tmp_path / "m.json"
    out = run(str(path), "--server", sealed_server.url, "--no-state")
    assert out.exit_code == 1, out.output
    assert "NOT FULLY VERIFIED" in out.stdout and "VERIFIED " not in out.stdout.replace(
        "NOT FULLY VERIFIED", ""
    )
    assert "reveal record not checked yet" in out.stdout


def test_an_rng_session_verifies_online_with_its_reveal(
    sealed_server: LiveServer, tmp_path: Path
) -> None:
    with Client(sealed_server.url) as qc:
        sess = qc.rng()
        sess.send_seed("a seed")
        sess.dice(2, 6)
        sess.close()
        doc = sess.transcript()
    sealed_server.app.state.log_c2sp.checkpoint_now()
    res = verify_file(tmp_path, "rng.json", doc, sealed_server)
    assert res.exit_code == 0, res.output
    got = rows(res)
    assert got["log"]["ok"] is True and got["reveal"]["ok"] is True, got


def test_pinned_keys_pin_the_log_and_refuse_a_v1_downgrade(
    sealed_server: LiveServer, tmp_path: Path
) -> None:
    svc: MatchService = sealed_server.app.state.service
    doc = played(sealed_server, "tawla", {"match_length": 1}, seed=8)
    saved = httpx.get(sealed_server.url + "/v1/keys").json()
    kf = tmp_path / "keys.json"
    kf.write_text(json.dumps(saved))
    pinned = ("--key", str(kf))
    res = verify_file(tmp_path, "genuine.json", doc, sealed_server, *pinned)
    assert res.exit_code == 0, res.output
    got = rows(res)
    assert got["log"]["ok"] is True and f"from the pinned keys, {kf}" in got["log"]["detail"]
    assert got["downgrade"]["ok"] is True and got["reveal"]["ok"] is True
    # the operator's made-up qahwa-fair/1 transcript for this v2 match's id
    res = verify_file(tmp_path, "v1.json", made_up_v1(svc, doc["match_id"]), sealed_server, *pinned)
    assert res.exit_code == 1, res.output
    down = rows(res)["downgrade"]
    assert down["ok"] is False
    assert "is a qahwa-fair/2 lock, but the transcript is qahwa-fair/1" in down["detail"]
    out = run(str(tmp_path / "v1.json"), "--server", sealed_server.url, "--no-state", *pinned)
    assert out.exit_code == 1 and "FAILED" in out.stdout and "no log" not in out.stdout
    # a log key the server does not sign with: the pinned one decides
    origin = saved["log"]["vkey"].split("+")[0]
    other = tlog.NoteSigner.from_seed(origin, bytes(32)).vkey  # the same origin, another key
    kf2 = tmp_path / "other-log.json"
    kf2.write_text(json.dumps({**saved, "log": {**saved["log"], "vkey": other}}))
    res = verify_file(tmp_path, "genuine.json", doc, sealed_server, "--key", str(kf2))
    assert res.exit_code == 1, res.output
    log = rows(res)["log"]
    assert log["ok"] is False and "signed" in log["detail"], log
    # a saved document whose log key is no note key is unusable input
    kf2.write_text(json.dumps({**saved, "log": {**saved["log"], "vkey": "other.test/log+0+AQ"}}))
    res = run(str(tmp_path / "genuine.json"), "--key", str(kf2), "--no-state")
    assert res.exit_code == 2 and "log key" in res.output, res.output


def test_the_log_line_names_why_it_cannot_check(sealed_server: LiveServer, tmp_path: Path) -> None:
    svc: MatchService = sealed_server.app.state.service
    doc = played(sealed_server, "tawla", {"match_length": 1}, seed=9)
    saved = httpx.get(sealed_server.url + "/v1/keys").json()
    kf = tmp_path / "bare.key"
    kf.write_text(saved["keys"][0]["public_key"])
    forged = made_up_v1(svc, doc["match_id"])
    res = verify_file(tmp_path, "v1.json", forged, sealed_server, "--key", str(kf))
    log = rows(res)["log"]
    assert log["ok"] is None and "no log_index" not in log["detail"], log
    assert "hold no log key" in log["detail"]
    # no server at all: the line says so
    res = run(str(tmp_path / "v1.json"), "--key", str(kf), "--no-state", "--json")
    log = rows(res)["log"]
    assert log["ok"] is None and "without a server" in log["detail"], log


PG_URL = os.environ.get("QAHWA_TEST_PG_URL")


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set")
def test_a_genuine_sealed_match_verifies_online_on_postgres(tmp_path: Path) -> None:
    with LiveServer(database_url=PG_URL) as srv:
        doc = played(srv, "hokm", SEALED_HOKM, seed=7)
        res = verify_file(tmp_path, "sealed.json", doc, srv)
    assert res.exit_code == 0, res.output
    got = rows(res)
    assert got["log"]["ok"] is True and got["reveal"]["ok"] is True, got
    assert "qahwa-fair/2 lock of a sealed deal" in got["downgrade"]["detail"]
