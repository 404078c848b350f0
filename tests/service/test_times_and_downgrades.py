"""The 2026-12-03 revision of qahwa-fair/2 against a real server: signed event times, the
deadline, the timeout rule every verifier checks from the transcript alone (§7, times), and
the downgrade rule (§9) of ``verify --server``.

The forgeries are an operator's: a real match cut on a seat's turn, a timeout appended, the
result replayed and the whole re-signed with the operator's own key.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from fairness import (
    PROTOCOL_V2,
    V2,
    chain_head,
    format_time_ms,
    parse_time_us,
)
from games.base import MatchContext
from games.registry import engine_class
from games.replay import replay
from games.transcript import simulate_match
from service.matches import MatchService
from tests.support import made_up_v1
from tests.support.fake_clock import FakeClock
from tests.support.http_play import V2Seat, create_match, ok, seed_all
from verify_cli.core import FAILED, VERIFIED, verify_document
from verify_cli.keys import KeySet, parse_keys
from verify_cli.main import app
from verify_cli.replay_core import browser_report

CLOCK = FakeClock(1_800_000_000.0)
pytestmark = pytest.mark.live_server(sweep_interval_seconds=1000.0, clock=CLOCK)
TURN = 60


@pytest.fixture()
def svc(server: Any) -> MatchService:
    service: MatchService = server.app.state.service
    service.sweep()  # a heartbeat on the test's clock
    return service


def keys_of(client: httpx.Client) -> KeySet:
    return parse_keys(json.dumps(client.get("/v1/keys").json()), source="file", origin="test")


def play(seats: list[V2Seat], n: int, rnd: random.Random) -> None:
    """``n`` random legal actions, the clock moving 1.5 s before each."""
    for _ in range(n):
        view = seats[0].state()
        if view["status"] != "playing":
            return
        seat = view["turn"]
        view = seats[seat].state()
        CLOCK.advance(1.5)
        seats[seat].act(view, rnd.choice(view.get("suggested_actions") or view["legal_actions"]))


def timed_out_match(client: httpx.Client, svc: MatchService) -> tuple[dict[str, Any], list[V2Seat]]:
    """A real tawla match: 20 actions, then the seat on turn lets its deadline pass."""
    created = create_match(client, "tawla", {"match_length": 3, "turn_seconds": TURN})
    seats = seed_all(client, created)
    play(seats, 20, random.Random(7))
    view = seats[0].state()
    assert view["status"] == "playing"
    due = view["deadline"]["due"]
    CLOCK.set(parse_time_us(due) / 1e6 + 0.5)
    svc.sweep()
    doc = ok(client.get(f"/v1/matches/{created['match_id']}/transcript"))
    assert doc["result"]["reason"] == "timeout"
    return doc, seats


def test_events_receipts_and_views_carry_the_servers_times(
    client: httpx.Client, svc: MatchService
) -> None:
    created = create_match(client, "tawla", {"match_length": 1, "turn_seconds": TURN})
    mid = created["match_id"]
    seats = seed_all(client, created)
    lock = seats[0].state()["lock"]
    locked = parse_time_us(lock["locked_at"])
    # the first step is owed from locked_at, not from the last reveal (§7)
    view = seats[0].state()
    assert view["deadline"] == {
        "seat": view["turn"],
        "seq": ok(client.get(f"/v1/matches/{mid}/events"))["next_seq"],
        "due": format_time_ms(locked + TURN * 1_000_000),
    }
    play(seats, 6, random.Random(3))
    events = ok(client.get(f"/v1/matches/{mid}/events"))["events"]
    times = [parse_time_us(e["at"], event=True) for e in events]
    assert times == sorted(times) and times[0] >= locked and times[-1] > times[0]
    # a seat's view: owed from the at of the event that put it on turn
    view = seats[0].state()
    assert view["deadline"]["seq"] == len(events)
    assert view["deadline"]["due"] == format_time_ms(times[-1] + TURN * 1_000_000)
    # every receipt carries the at of its head (seq -1: the lock's locked_at)
    by_seq = {e["seq"]: e["at"] for e in events}
    receipts = [r for st in seats for r in st.receipts]
    assert receipts and all("at" in r for r in receipts)
    for r in receipts:
        assert r["at"] == (lock["locked_at"] if r["seq"] == -1 else by_seq[r["seq"]])


def test_a_timeout_is_declared_at_its_deadline_and_verifies(
    client: httpx.Client, svc: MatchService
) -> None:
    created = create_match(client, "tawla", {"match_length": 3, "turn_seconds": TURN})
    seats = seed_all(client, created)
    play(seats, 4, random.Random(2))
    due = seats[0].state()["deadline"]["due"]
    CLOCK.set(parse_time_us(due) / 1e6 - 0.5)  # half a second early: not yet
    svc.sweep()
    assert seats[0].state()["status"] == "playing"
    CLOCK.advance(1.0)
    svc.sweep()
    doc = ok(client.get(f"/v1/matches/{created['match_id']}/transcript"))
    end = doc["events"][-1]
    assert end["reason"] == "timeout" and parse_time_us(end["at"]) >= parse_time_us(due)
    rep = verify_document(doc, keys_of(client))
    assert rep["status"] == VERIFIED, rep["failures"]
    (times,) = [c for c in rep["checks"] if c["name"] == "times"]
    assert times["ok"] is True and "at or after it" in times["detail"]


def forge_timeout(doc: dict[str, Any], svc: MatchService, *, early_us: int) -> dict[str, Any]:
    """The operator's forgery: the match cut where a seat is on turn (the next event was its
    action), a timeout of that seat appended ``early_us`` before its deadline (0: exactly at
    it), the result replayed, chained and re-signed with the operator's key."""
    cls = engine_class(doc["game"])
    pairs = [(s["client_seed"], s["nonce"]) for s in doc["seats"]]
    key = V2.match_key(doc["server_seed"], doc["match_id"], doc["game"], doc["ruleset"], pairs)
    ctx = MatchContext(doc["match_id"], tuple(s["roll_chain"] for s in doc["lock"]["seats"]))
    n = len(doc["events"]) // 2
    while doc["events"][n]["type"] != "action":
        n -= 1
    events = [dict(e) for e in doc["events"][:n]]
    engine = replay(cls, doc["ruleset"], key, events, protocol=PROTOCOL_V2, ctx=ctx)
    turn = json.loads(doc["ruleset"])["turn_seconds"]
    due = parse_time_us(events[-1]["at"]) + turn * 1_000_000
    owing = engine.turn
    assert owing is not None
    (end,) = engine.end_match("timeout", [owing])
    forged = {k: v for k, v in doc.items() if k != "signature"}
    forged["events"] = [*events, {"seq": n, **end, "at": format_time_ms(due - early_us)}]
    assert engine.outcome is not None
    forged["result"] = json.loads(json.dumps(engine.outcome.to_json()))
    forged["chain"] = chain_head(forged["lock"], forged["events"]).hex()
    return svc.signer.signed(forged)


def test_an_early_timeout_fails_verify_and_the_page(
    client: httpx.Client, svc: MatchService, tmp_path: Path
) -> None:
    doc, _ = timed_out_match(client, svc)
    keys = keys_of(client)
    early = forge_timeout(doc, svc, early_us=1000)  # a millisecond before the deadline
    rep = verify_document(early, keys)
    assert rep["status"] == FAILED
    (f,) = rep["failures"]
    assert f["check"] == "times" and "before its deadline" in f["message"]
    assert "declared the timeout early" in f["message"]
    assert f["seq"] == len(early["events"]) - 1
    # every other check holds: only the times show the forgery
    assert all(c["ok"] is not False for c in rep["checks"] if c["name"] != "times")
    # the verify page runs the same rules code (Pyodide): the same failure
    page = json.loads(browser_report(json.dumps(early)))
    assert [x["check"] for x in page["failures"]] == ["times"]
    # on the command line, with the operator's real key: exit 1
    path = tmp_path / "early.json"
    path.write_text(json.dumps(early))
    kf = tmp_path / "keys.json"
    kf.write_text(json.dumps(client.get("/v1/keys").json()))
    res = CliRunner().invoke(app, [str(path), "--key", str(kf)], catch_exceptions=False)
    assert res.exit_code == 1, res.output
    assert "times" in res.stdout and "before its deadline" in res.stdout

    # a timeout exactly at the deadline is in time
    exact = forge_timeout(doc, svc, early_us=0)
    rep = verify_document(exact, keys)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert json.loads(browser_report(json.dumps(exact)))["failures"] == []


def test_a_timeout_of_a_seat_not_on_turn_fails(client: httpx.Client, svc: MatchService) -> None:
    doc, _ = timed_out_match(client, svc)
    forged = forge_timeout(doc, svc, early_us=0)
    end = forged["events"][-1]
    other = 1 - end["seat"]
    cls = engine_class(doc["game"])
    parsed = cls.parse_ruleset(json.loads(doc["ruleset"]))
    assert cls.seat_count(parsed) == 2
    body = {k: v for k, v in forged.items() if k != "signature"}
    body["events"] = [*forged["events"][:-1], {**end, "seat": other}]
    body["result"] = {**forged["result"], "forfeited": [other], "winners": [end["seat"]]}
    body["chain"] = chain_head(body["lock"], body["events"]).hex()
    rep = verify_document(svc.signer.signed(body), keys_of(client))
    assert rep["status"] == FAILED
    assert any(
        f["check"] == "times" and f"but seat {end['seat']} owed the next step" in f["message"]
        for f in rep["failures"]
    ), rep["failures"]


def test_transcripts_without_times_report_their_timeouts_not_checked() -> None:
    doc, _ = simulate_match(
        "tawla", {"match_length": 1}, seed=3, resign_at=12, end_reason="timeout"
    )
    rep = verify_document(doc, None)
    (times,) = [c for c in rep["checks"] if c["name"] == "times"]
    assert times["ok"] is None and "timeout is not checked" in times["detail"]
    assert not rep["failures"]


# -- downgrades (§9) ---------------------------------------------------------------------------


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def rows(res: Any) -> dict[str, dict[str, Any]]:
    (rep,) = json.loads(res.stdout)["results"]
    return {c["name"]: c for c in rep["checks"]}


def test_verify_server_checks_v2_inclusion_and_refuses_a_v1_downgrade(
    client: httpx.Client, svc: MatchService, server: Any, tmp_path: Path
) -> None:
    doc, _ = timed_out_match(client, svc)
    server.app.state.log_c2sp.checkpoint_now()
    state = str(tmp_path / "heads.json")
    genuine = tmp_path / "genuine.json"
    genuine.write_text(json.dumps(doc))
    res = run(str(genuine), "--server", server.url, "--state", state, "--json")
    assert res.exit_code == 0, res.output
    got = rows(res)
    assert (
        got["log"]["ok"] is True
        and f"included at index {doc['lock_index']}" in (got["log"]["detail"])
    )
    assert got["downgrade"]["ok"] is True and "qahwa-fair/2 lock" in got["downgrade"]["detail"]

    # the operator's made-up qahwa-fair/1 transcript for the id of this real v2 match
    forged = tmp_path / "v1.json"
    forged.write_text(json.dumps(made_up_v1(svc, doc["match_id"])))
    res = run(str(forged), "--server", server.url, "--state", state)
    assert res.exit_code == 1, res.output
    assert "FAILED" in res.stdout and "downgrade:" in res.stdout
    assert "is a qahwa-fair/2 lock, but the transcript is qahwa-fair/1" in res.stdout
    # … and one for a match the log does not hold at all
    nowhere = tmp_path / "nowhere.json"
    nowhere.write_text(json.dumps(made_up_v1(svc, "m_" + "0" * 20)))
    res = run(str(nowhere), "--server", server.url, "--state", state, "--json")
    assert res.exit_code == 1, res.output
    got = rows(res)
    assert (
        got["downgrade"]["ok"] is False
        and "not in the server's log" in (got["downgrade"]["detail"])
    )

    # without a log the report says a downgrade was not excluded (the verdict stands)
    kf = tmp_path / "keys.json"
    kf.write_text(json.dumps(client.get("/v1/keys").json()))
    res = run(str(forged), "--key", str(kf))
    assert res.exit_code == 0, res.output
    assert "a downgrade not excluded" in res.stdout
    assert "downgrade: not excluded" in res.stdout


def test_offline_tlog_proof_refuses_a_downgrade(
    client: httpx.Client, svc: MatchService, server: Any, tmp_path: Path
) -> None:
    doc, _ = timed_out_match(client, svc)
    server.app.state.log_c2sp.checkpoint_now()
    proof = client.get(f"/v1/matches/{doc['match_id']}/log-proof")
    assert proof.status_code == 200, proof.text
    (tmp_path / "m.tlog-proof").write_text(proof.text)
    vkey = client.get("/v1/keys").json()["log"]["vkey"]
    (tmp_path / "p.policy").write_text(f"log {vkey}\nquorum none\n")
    kf = tmp_path / "keys.json"
    kf.write_text(json.dumps(client.get("/v1/keys").json()))
    common = ["--key", str(kf), "--log-proof", str(tmp_path / "m.tlog-proof")]
    common += ["--policy", str(tmp_path / "p.policy"), "--no-state", "--json"]
    (tmp_path / "v2.json").write_text(json.dumps(doc))
    res = run(str(tmp_path / "v2.json"), *common)
    assert res.exit_code == 0, res.output
    assert rows(res)["downgrade"]["ok"] is True
    (tmp_path / "v1.json").write_text(json.dumps(made_up_v1(svc, doc["match_id"])))
    res = run(str(tmp_path / "v1.json"), *common)
    assert res.exit_code == 1, res.output
    assert rows(res)["downgrade"]["ok"] is False


def test_help_describes_v2_records_and_a_policy_without_witnesses() -> None:
    res = run("--help")
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    assert "qahwa-fair/2 logs each match's lock and reveal records" in text
    assert "quorum none" in text and "downgrade" in text
    assert "fetches the match's tlog-proof from that server itself" in text
    # the v1 commitment record is named as qahwa-fair/1's only
    assert "match's commitment record is in the transparency log" not in text


def test_receipts_carry_the_times_of_their_heads(client: httpx.Client, svc: MatchService) -> None:
    doc, seats = timed_out_match(client, svc)
    receipts = [r for st in seats for r in st.receipts]
    keys = keys_of(client)
    rep = verify_document(doc, keys, receipts=receipts)
    assert rep["status"] == VERIFIED, rep["failures"]
    # a receipt whose time is not its head's: the server signed two times for one head
    r = next(r for r in receipts if r["seq"] >= 0)
    body = {k: v for k, v in r.items() if k != "signature"}
    odd = svc.signer.signed({**body, "at": format_time_ms(parse_time_us(r["at"]) + 1000)})
    rep = verify_document(doc, keys, receipts=[odd])
    assert rep["status"] == FAILED
    (f,) = rep["failures"]
    assert f["check"] == "receipts" and "two times for one head" in f["message"]
