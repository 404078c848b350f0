"""Clients ride through a key rotation (fairness-v2.md, revision "key announcements").

``qahwa keys rotate`` stages the next key; every key in force signs an announcement of it,
listed in ``/v1/keys`` and pushed on the event stream. A conforming client that meets a
record signed by a key it does not trust yet takes the key only through an announcement
signed by a key it trusts, and plays on; a forged announcement is refused and kept.

The server runs on a clock the test moves ahead (tests/support/fake_clock.py's RunningClock: the
machine's time plus the test's steps, so that clients on the real clock stay within its
skew however long the match takes): the rotation is staged and the new key takes over when
the test moves the clock, at chosen points of the match (or earlier, as time passes).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairness import Signer
from fairness.announce import (
    announcement_body,
    announcements_in,
    check_announcement,
    extend_trusted,
)
from fairness.records import RecordError
from qahwa_client import AsyncClient, Client
from service import keys as service_keys
from tests.support.fake_clock import RunningClock
from tests.support.live_server import LiveServer
from verify_cli.main import app as verify_app

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.S | re.M)


def bot_code(url: str) -> str:
    """docs/bot.md's bot, pointed at ``url``."""
    text = (ROOT / "docs" / "bot.md").read_text(encoding="utf-8")
    code = FENCE.search(text)
    assert code is not None
    return re.sub(r"^URL = .*$", f"URL = {url!r}", code.group(1), count=1, flags=re.M)


#: the server's settings: its key ring re-reads the keys every 0.2 s; no request-rate limits
#: (the fake clock stands still between the test's steps, so a rate bucket would never refill)
SERVER: dict[str, Any] = {
    "key_poll_seconds": 0.2,
    "rate_per_second_per_ip": 0,
    "rate_per_second_per_token": 0,
}


def rotate(srv: LiveServer, delay: float) -> str:
    """``qahwa keys rotate --in delay`` on the server's database, at its clock's now."""
    ring = srv.app.state.signer
    assert srv.clock is not None
    with ring.db.write() as s:
        new, _, _ = service_keys.rotate(srv.settings, s, ring.box, srv.clock.now(), delay)
    ring.refresh()  # as its poller does, every key_poll_seconds
    return new.key_id


#: the ends a monitor counts against the operator or a player (``verify log``): a match
#: that a client abandoned ends by one of these
FORFEITS = {"timeout", "no_reveal", "expired", "abandoned", "not_locked", "resigned"}


def ended_by_play(transcript: Path) -> bool:
    """The match ended by its rules, not by a forfeit."""
    result = json.loads(transcript.read_text())["result"]
    return bool(result) and result.get("reason") not in FORFEITS


def verify_cli(*args: str) -> Any:
    res = CliRunner().invoke(verify_app, [*args, "--json"])
    return res.exit_code, res.output


class Rotations:
    """At chosen signed requests of a client (counted by ``Client.send``): stage a key
    (``rotate``), or move the fake clock past its activation (``switch``)."""

    def __init__(self, srv: LiveServer, plan: dict[int, str]) -> None:
        self.srv, self.plan, self.sent = srv, plan, 0
        self.staged: list[str] = []

    def hook(self, send: Callable[..., Any]) -> Callable[..., Any]:
        def counted(client: Any, *args: Any, **kw: Any) -> Any:
            self.sent += 1
            step = self.plan.get(self.sent)
            if step == "rotate":
                self.staged.append(rotate(self.srv, 4))
            elif step == "switch":
                assert self.srv.clock is not None
                self.srv.clock.advance(5)  # past the key's activation
            return send(client, *args, **kw)

        return counted


@pytest.mark.slow
def test_the_bot_plays_through_two_rotations_and_every_file_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = {6: "rotate", 12: "switch", 30: "rotate", 40: "switch"}
    clock = RunningClock()
    with LiveServer(clock=clock, **SERVER) as srv:
        with Client(srv.url) as qc0:
            pinned = qc0.keys()
        [first] = pinned.keys
        (tmp_path / "keys.json").write_text(json.dumps(pinned.model_dump(mode="json")))
        rotations = Rotations(srv, plan)
        monkeypatch.setattr(Client, "send", rotations.hook(Client.send))
        monkeypatch.setattr(sys, "argv", ["bot.py", "tawla"])
        monkeypatch.setenv("OPERATOR_KEY", srv.operator_key)
        monkeypatch.chdir(tmp_path)
        ns: dict[str, Any] = {"__name__": "bot"}
        exec(compile(bot_code(srv.url), "bot.py", "exec"), ns)
        match = ns["match"]
        assert rotations.sent > max(plan), rotations.sent  # both rotations within the match
        assert len(rotations.staged) == 2
        # every action was receipted, by all three keys in turn; nothing was disputed
        signers: dict[str, int] = {}
        for seat in match.seats:
            assert not seat.unreceipted and not seat.disputes  # each answered (or refused)
            for r in seat.receipts:
                kid = r["signature"]["key_id"]
                signers[kid] = signers.get(kid, 0) + 1
            seat.save(tmp_path / f"seat{seat.seat}.json")
        assert set(signers) == {first.key_id, *rotations.staged}, signers
        assert ns["view"].status == "finished" and ended_by_play(tmp_path / "transcript.json")
        # the client's trusted set grew by the two announced keys, and it saves them
        qc = match.client
        assert set(qc.announced) == set(rotations.staged)
        saved = qc.save_keys(tmp_path / "extended.json")
        doc = json.loads(saved.read_text())
        assert [k["key_id"] for k in doc["keys"]][-2:] == rotations.staged
        # each announcing key is retired when its successor signs
        retired = {k["key_id"]: k.get("retired_at") for k in doc["keys"]}
        assert retired[first.key_id] == doc["keys"][-2]["activates_at"]
        assert retired[rotations.staged[0]] == doc["keys"][-1]["activates_at"]
        # every transcript and seat file verifies: against the server, and against the
        # keys pinned before the match extended by the announcements (no server)
        for n in range(len(match.seats)):
            seat_file = str(tmp_path / f"seat{n}.json")
            code, out = verify_cli("transcript.json", "--server", srv.url, "--seat", seat_file)
            assert code == 0, out
            code, out = verify_cli("transcript.json", "--key", str(saved), "--seat", seat_file)
            assert code == 0, out
        # the keys pinned before the match alone do not verify it
        code, out = verify_cli("transcript.json", "--key", str(tmp_path / "keys.json"))
        assert code != 0


def test_the_next_key_is_announced_in_v1_keys_and_on_the_stream() -> None:
    clock = RunningClock()
    with LiveServer(clock=clock, **SERVER) as srv, Client(srv.url) as qc:
        [old] = qc.keys().keys
        assert old.announcements == []
        match = qc.create_match("tawla", {"match_length": 1})
        match.start()
        new = rotate(srv, 60)
        doc = qc.request("GET", "/v1/keys")
        listed = {k["key_id"]: k for k in doc["keys"]}
        [ann] = listed[new]["announcements"]
        assert ann["signature"]["key_id"] == old.key_id
        assert ann["not_before"] == listed[new]["activates_at"]
        assert check_announcement(ann, {old.key_id: old.public_key}) == (
            new,
            listed[new]["public_key"],
        )
        # the stream pushes it (the ring re-reads the keys every 0.2 s)
        pushed = []
        with qc.http.stream(
            "GET", f"{srv.url}/v1/matches/{match.match_id}/events/stream", params={"timeout": 3}
        ) as resp:
            kind = None
            for line in resp.iter_lines():
                if line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: ") and kind == "key_announcement":
                    pushed.append(json.loads(line.removeprefix("data: ")))
                    break
        assert pushed == [ann]
        # the client's stream reader takes it and passes the match's events on
        match.seats[0].resign()
        with Client(srv.url, keys={old.key_id: old.public_key}) as qc2:
            events = list(qc2.stream(match.match_id, timeout=5))
            assert events and all("seq" in ev for ev in events)
            assert qc2.announced == {new: listed[new]["public_key"]}

        # the async client (the source of the sync one) does the same
        async def streamed() -> dict[str, str]:
            async with AsyncClient(srv.url, keys={old.key_id: old.public_key}) as aqc:
                got = [ev async for ev in aqc.stream(match.match_id, timeout=5)]
                assert got == events
                return aqc.announced

        assert asyncio.run(streamed()) == {new: listed[new]["public_key"]}


def _forged(victim: str, signer: Signer, new: Signer, at: str) -> dict[str, Any]:
    from fairness import public_key_b64

    body = announcement_body(new.key_id, public_key_b64(new.public_key), at, at)
    out = signer.signed(body)
    assert out["signature"]["key_id"] != victim
    return out


def test_announcements_chain_and_forgeries_are_refused() -> None:
    from fairness import public_key_b64

    k0, k1, k2, evil = (Signer.generate() for _ in range(4))
    t = "2026-12-06T05:00:00Z"

    def ann(by: Signer, new: Signer) -> dict[str, Any]:
        return by.signed(announcement_body(new.key_id, public_key_b64(new.public_key), t, t))

    trusted = {k0.key_id: public_key_b64(k0.public_key)}
    a01, a12 = ann(k0, k1), ann(k1, k2)
    # a chain, in any order
    ext = extend_trusted(trusted, [a12, a01])
    assert set(ext.added) == {k1.key_id, k2.key_id} and not ext.refused
    # a forgery: signed by a key nobody trusted announced
    forged = ann(evil, k2)
    ext = extend_trusted(trusted, [forged])
    assert ext.added == {} and [r["announcement"] for r in ext.refused] == [forged]
    # a key announcing itself, a bad key id, a changed field, after it signs
    with pytest.raises(RecordError, match="signed by the key it announces"):
        check_announcement(ann(k0, k0), trusted)
    bad = k0.signed({**ann(k0, k1), "key": {**ann(k0, k1)["key"], "key_id": "0" * 16}})
    with pytest.raises(RecordError, match="not its public key's"):
        check_announcement(bad, trusted)
    with pytest.raises(RecordError, match="does not match"):
        check_announcement({**a01, "not_before": "2027-01-01T00:00:00Z"}, trusted)
    late = k0.signed({**a01, "created_at": "2026-12-06T05:00:01Z"})
    with pytest.raises(RecordError, match="after it signs"):
        check_announcement(late, trusted)
    assert announcements_in({"keys": [{"announcements": [a01]}, {}]}) == [a01]


def test_a_forged_announcement_is_refused_and_kept_as_a_dispute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = RunningClock()
    with LiveServer(clock=clock, **SERVER) as srv, Client(srv.url) as qc:
        match = qc.create_match("tawla", {"match_length": 1})
        match.start()
        [old] = qc.keys().keys
        new = rotate(srv, 4)
        ring = srv.app.state.signer
        evil = Signer.generate()
        real = ring.announcements

        def forged(rows: Any = None) -> dict[str, list[dict[str, Any]]]:
            out = real(rows)
            # the server lists the new key's announcement signed by a key nobody trusts
            return {
                kid: [evil.signed({k: v for k, v in a.items() if k != "signature"}) for a in anns]
                for kid, anns in out.items()
            }

        monkeypatch.setattr(ring, "announcements", forged)
        clock.advance(5)  # the new key signs from now on: the view's signed head first
        seat = match.seats[0]
        with pytest.raises(Exception, match="not one of the server keys this client trusts"):
            seat.act(seat.state().legal_actions[0])
        assert new not in qc.trusted() and old.key_id in qc.trusted()
        [refused] = qc.refused_announcements
        assert refused["announcement"]["key"]["key_id"] == new
        assert "not one of the server keys" in refused["reason"]
        [dispute] = seat.disputes
        assert dispute.kind == "unannounced_key" and new in dispute.message
        assert dispute.evidence["refused_announcements"] == [refused]
        record = dispute.evidence["records"][0]  # the view's signed head
        assert record["type"] == "head" and record["signature"]["key_id"] == new  # kept


# -- the TS Node client -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def ts_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """clients/ts and its tests compiled by tsc into a directory of this module's own."""
    import subprocess

    from tests.client.test_clients_ts import NODE, TS, node_modules

    if NODE is None:
        pytest.fail("node is not installed")
    modules = node_modules()
    build = tmp_path_factory.mktemp("ts") / "build"
    proc = subprocess.run(
        [NODE, str(modules / "typescript" / "bin" / "tsc"), "-p", "tsconfig.test.json",
         "--outDir", str(build)],
        cwd=TS, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (build / "node_modules").symlink_to(modules)  # its imports resolve
    (build / "package.json").write_text('{"type": "module"}')
    return build


def test_the_ts_client_takes_keys_only_through_trusted_announcements(ts_build: Path) -> None:
    """clients/ts/test/announce.test.ts: chains taken, forgeries refused and kept, the
    extended keys document saved."""
    from tests.client.test_clients_ts import node_test

    out = node_test(ts_build, "test/announce.test.js")
    assert "a pinned client takes a key only through a trusted announcement" in out


def test_the_ts_node_client_plays_through_two_rotations(ts_build: Path, tmp_path: Path) -> None:
    """clients/ts/harness/rotate.ts (built by tsc) plays a tawla match with the keys pinned
    before it; this test stages a key and moves the clock past its activation where the
    script pauses. Every receipt checks, the transcript and each seat file verify, with
    the server and with the extended keys document the client saved."""
    import os
    import subprocess

    from tests.client.test_clients_ts import NODE

    assert NODE is not None
    build = ts_build
    clock = RunningClock()
    out = tmp_path / "out"
    with LiveServer(clock=clock, **SERVER) as srv:
        with Client(srv.url) as qc0:
            pinned = qc0.request("GET", "/v1/keys")
        (tmp_path / "keys.json").write_text(json.dumps(pinned))
        env = {
            "QAHWA_TEST_URL": srv.url,
            "QAHWA_TEST_OPERATOR_KEY": srv.operator_key,
            "QAHWA_TEST_OUT": str(out),
            "QAHWA_TEST_KEYS": str(tmp_path / "keys.json"),
        }
        script = subprocess.Popen(
            [NODE, str(build / "harness" / "rotate.js")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, **env},
        )  # fmt: skip
        assert script.stdin is not None and script.stdout is not None
        staged, steps = [], []
        try:
            for line in script.stdout:
                if not line.startswith("PAUSE "):
                    break
                step = line.split()[1]
                steps.append(step)
                if step == "rotate":
                    staged.append(rotate(srv, 4))
                else:
                    clock.advance(5)
                script.stdin.write("go\n")
                script.stdin.flush()
            rest = script.communicate(timeout=300)
        finally:
            if script.poll() is None:
                script.kill()
        assert script.returncode == 0, line + rest[0] + rest[1]
        seen = json.loads(line)
        assert steps == ["rotate", "switch", "rotate", "switch"], seen
        assert seen["status"] == "finished" and seen["refused"] == 0 and seen["disputes"] == 0
        assert seen["announced"] == staged
        assert set(seen["signers"]) == {pinned["keys"][0]["key_id"], *staged}
        assert ended_by_play(out / "transcript.json")
        seats = sorted(out.glob("seat-*.json"))
        assert len(seats) == 2
        for seat_file in seats:
            for source in (["--server", srv.url], ["--key", str(out / "keys.json")]):
                code, report = verify_cli(
                    str(out / "transcript.json"), *source, "--seat", str(seat_file)
                )
                assert code == 0, report


# -- issue 49's target --------------------------------------------------------------------------
@pytest.mark.slow
def test_eight_clients_play_through_two_rotations_without_an_error() -> None:
    """``python -m bench rotation``'s measurement: 8 clients play on one server while its key
    rotates twice (at fixed counts of actions): no client error, no transcript that fails
    ``verify`` against the keys a client trusts at the end, no match ended by a forfeit."""
    from bench.bench_rotation import measure

    f = measure(clients=8)
    assert f.rotations == 2 and f.switches == 2
    assert f.errors == [] and f.failed_verify == 0 and f.forfeits == 0
    assert f.matches >= 8 and len(f.receipts_by_key) == 3, f.receipts_by_key
    assert len(f.announced) == 2
