"""A witness that fails alone (issue 49): the server's only configured witness is stopped for
real in the middle of play, and Python seats play on — the match under way and new ones —
every transcript verifying; the match's tlog-proof is served at once, with the cosignatures
there are and the missing witness named; ``qahwa_witness_lag_entries`` has a sample for the
witness, growing while it is down. (The TS client: tests/client/test_clients_ts.py; /play in
Chromium: tests/page/test_play_page.py.)"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import tlog
from qahwa_client import Client, Match, NotOurMatch
from tests.support.live_server import LiveServer
from tests.support.witness_http import WitnessHTTP, new_log, witnessed_settings
from verify_cli.main import app as verify_app

TAWLA = {"match_length": 1}


def policy_text(log_vkey: str, witness: WitnessHTTP) -> str:
    """A player's tlog policy: the log key and the one witness, its quorum."""
    return f"log {log_vkey}\nwitness w1 {witness.vkey}\nquorum w1\n"


def lag(url: str) -> float | None:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith('qahwa_witness_lag_entries{witness="w1"}'):
            return float(line.split()[-1])
    return None


def wait_for(what: str, ok: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def play(match: Match, moves: int | None = None) -> str:
    """Play ``match`` (every seat, first legal action) for ``moves`` moves or to the end."""
    view = match.seats[0].state()
    done = 0
    while view.status == "playing" and (moves is None or done < moves):
        seat = match.seats[view.turn or 0]
        if view.seat != seat.seat:
            view = seat.state()
            continue
        view = seat.act(view.legal_actions[0], retry_stale=True).state
        done += 1
    return view.status


def verified(url: str, doc: dict[str, Any], tmp: Any, name: str) -> str:
    path = tmp / f"{name}.json"
    path.write_bytes(httpx.get(f"{url}/v1/matches/{doc['match_id']}/transcript").content)
    res = CliRunner().invoke(verify_app, [str(path), "--server", url], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.slow
def test_python_seats_play_on_when_the_witness_stops_mid_play(tmp_path: Any) -> None:
    log = new_log()
    with (
        WitnessHTTP(log.vkey) as witness,
        LiveServer(**witnessed_settings(witness, log)) as srv,
        Client(srv.url) as qc,
        Client(srv.url, log_policy=policy_text(log.vkey, witness)) as pinned,
        Client(srv.url, log_policy=policy_text(log.vkey, witness), proof_wait=2) as impatient,
    ):
        wait_for("the witness cosigned nothing", lambda: witness.cosigned)
        wait_for("no lag sample for w1", lambda: lag(srv.url) is not None)
        before = qc.create_match("tawla", TAWLA)
        before.start()
        lock_index = before.seats[0].log_index
        assert lock_index is not None
        wait_for("the lock was not cosigned", lambda: max(witness.cosigned) > lock_index)
        # a seat whose player pinned the witness (its log policy) plays while it is up
        watched = pinned.create_match("tawla", TAWLA)
        watched.start()
        assert play(before, moves=4) == "playing"
        witness.stop()  # mid-play
        assert play(before) == "finished"
        after = qc.create_match("tawla", TAWLA)
        after.start()  # its lock is logged after the witness went down
        assert play(after) == "finished"
        assert play(watched) == "finished"
        for m in (before, after, watched):
            m.check_transcript()
        # ...and with it down its policy refuses to reveal, no secret sent
        refused = impatient.create_match("tawla", TAWLA)
        for seat in refused.seats:
            seat.commit()
        with pytest.raises(NotOurMatch, match="cosigned by none: not the quorum 'w1'"):
            refused.seats[0].reveal(wait=30)
        assert refused.seats[0].lock is None
        assert not any(r["path"].endswith("/reveal") for r in refused.seats[0].requests)
        verified(srv.url, before.transcript(), tmp_path, "before")
        verified(srv.url, after.transcript(), tmp_path, "after")
        # verify with a player's policy that needs w1: the match locked while it was up is
        # verified; the one locked after it went down is not checked yet, never failed
        policy = tmp_path / "w1.policy"
        policy.write_text(policy_text(log.vkey, witness))
        for m, said in ((before, "✔ log"), (after, "– log: not checked yet")):
            path = tmp_path / f"{m.match_id}.json"
            path.write_bytes(httpx.get(f"{srv.url}/v1/matches/{m.match_id}/transcript").content)
            res = CliRunner().invoke(
                verify_app,
                [str(path), "--server", srv.url, "--policy", str(policy)],
                catch_exceptions=False,
            )
            assert said in res.output, res.output
            if m is after:  # never "verified" while the log is not checked
                assert "NOT FULLY VERIFIED" in res.output, res.output
        # the proof of the new match's lock: served at once, the witness named as missing
        r = httpx.get(f"{srv.url}/v1/matches/{after.match_id}/log-proof")
        assert r.status_code == 200 and r.headers["qahwa-witnesses-missing"] == "w1"
        proof = tlog.parse_proof(r.text)
        log_key = tlog.parse_vkey(log.vkey)
        cp, note = tlog.open_checkpoint(proof.checkpoint, log_key, [witness.signer.verifier])
        assert cp.size > max(witness.cosigned)
        assert {v.name for v, _ in note.verified} == {log_key.name}
        # the lag: a sample for w1, the entries logged since it last cosigned
        wait_for("w1's lag did not grow", lambda: (lag(srv.url) or 0) >= 1)
        # the proof of the match locked while it was up still carries its cosignature
        r = httpx.get(f"{srv.url}/v1/matches/{before.match_id}/log-proof")
        assert r.headers["qahwa-witnesses-missing"] == ""


class Lying(httpx.BaseTransport):
    """The real server, but its log-proof answers rewritten by ``lie``."""

    def __init__(self, lie: Any) -> None:
        self.inner = httpx.HTTPTransport()
        self.lie = lie

    def close(self) -> None:
        self.inner.close()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        r = self.inner.handle_request(request)
        if not request.url.path.endswith("/log-proof") or r.status_code != 200:
            return r
        r.read()
        return httpx.Response(200, text=self.lie(r.text), headers={"content-type": "text/plain"})


def test_a_seat_with_a_log_policy_refuses_a_lying_log_proof_at_once() -> None:
    """A forged cosignature of the pinned witness, or another entry in the proof: refused
    at once (no waiting out proof_wait), nothing revealed."""
    log = new_log()
    with (
        WitnessHTTP(log.vkey) as witness,
        LiveServer(**witnessed_settings(witness, log)) as srv,
    ):
        v = witness.signer.verifier
        forged = tlog.Signature(v.name, v.key_id, bytes(72)).line

        def other_entry(text: str) -> str:
            proof = tlog.parse_proof(text)
            fake = tlog.TlogProof(proof.index, proof.hashes, proof.checkpoint, b'{"a": 1}')
            return fake.text

        lies = {
            "does not verify": lambda text: text + forged,
            "is not this lock": other_entry,
        }
        for said, lie in lies.items():
            with (
                httpx.Client(transport=Lying(lie), timeout=30) as http,
                Client(
                    srv.url, http=http, log_policy=policy_text(log.vkey, witness), proof_wait=60
                ) as qc,
            ):
                m = qc.create_match("tawla", TAWLA, operator_key=srv.operator_key)
                for seat in m.seats:
                    seat.commit()
                t0 = time.monotonic()
                with pytest.raises(NotOurMatch, match=said):
                    m.seats[0].reveal(wait=30)
                assert time.monotonic() - t0 < 30
                assert not any(r["path"].endswith("/reveal") for r in m.seats[0].requests)
