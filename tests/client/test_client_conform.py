"""qahwa_client as a conforming client of qahwa-fair/2 (fairness-v2.md §3a), against a small
v2 server behind httpx.MockTransport (tests/support/fake_server.py) that can lie as an operator would:
the lock checks that refuse to reveal, signing over the chain head, fresh-roll values only when
owed, identical resends, receipts kept and written, and the transcript held to the lock and the
receipts. The formulas the seat computes (``fairness``'s) are checked against the spec's vectors."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import fairness
from fairness.protocol import canonical_json
from fairness.seat import chain_heads
from qahwa_client import (
    AsyncClient,
    Client,
    ClientError,
    NotOurMatch,
    TranscriptMismatch,
    Unanswered,
)
from qahwa_client.client import Match, Seat
from tests.support.fake_server import FakeServer, audit_path, leaf_hash, root
from tlog import root_from_inclusion

ASKED = {"match_length": 1}


def started(fake: FakeServer, **kw: Any) -> tuple[Client, Match]:
    qc = Client("http://fake", **fake.client_args(), **kw)
    match = qc.create_match("tawla", ASKED, names=fake.names)
    return qc, match


def committed(fake: FakeServer) -> tuple[Client, Match]:
    qc, match = started(fake)
    for seat in match.seats:
        seat.commit()
    return qc, match


# -- the seat's formulas, against the spec's vectors -------------------------------------------

VEC_NONCE0 = bytes(0xA0 + i % 16 for i in range(32))


def test_seed_commitment_matches_the_spec_vector() -> None:
    assert fairness.seed_commitment("m-0002", 0, VEC_NONCE0, "alice-seed") == (
        "ed862e4e2373b5ad61bb038f4799631b9d122b49a9ccf6b842a4df3ae698eec4"
    )


def test_roll_chain_matches_the_spec_vector() -> None:
    chain = fairness.roll_chain("m-0002", 0, bytes(0xC0 + i % 16 for i in range(32)))
    assert chain[0].hex() == "b7e641e487a7845194cb36ba29946eb6ad08888763bcb3e29fa500e52c34227f"
    assert chain[1].hex() == "45bba2e9c7bd9d91eff3ed896a901f8a9dd5ca8f01e005da2c26c24a73d8c267"
    assert len(chain) == 65537  # the tip, then values 0 .. 65535


def test_event_chain_and_seat_signature_match_the_spec_vectors() -> None:
    lock = {"match_id": "m-0002", "type": "lock"}
    start = fairness.chain_start(lock)
    assert start.hex() == "47a90014f0a305e5322606bc8d90723a5bdd3d194af6bb49be4a61c9c52b1030"
    ev0 = {"kind": "dice", "label": "g0/opening/0", "result": [1, 2], "seq": 0, "type": "chance"}
    ev1 = {
        "action": {"steps": [[13, 10], [24, 23]], "type": "move"},
        "seat": 1,
        "seq": 1,
        "type": "action",
    }
    heads = chain_heads(lock, [ev0, ev1])
    assert [h.hex() for h in heads[1:]] == [
        "ee898cbcc5ea2fb4c30524677adc3be75759367c55c495d26b5393bd52999350",
        "73beb466eb11a39fbfa834f85ca5fb87648ae79ddecc666036be4597c9f5abbf",
    ]
    key = fairness.Signer.from_seed_b64(base64.b64encode(bytes([0x42]) * 32).decode())
    assert fairness.public_key_b64(key.public_key) == "IVL40Zt5HSRFMkLhXy6rbLfP+ntqXtMAl5YOBpiB2xI="
    msg = fairness.seat_sig_message("m-0002", heads[1].hex(), ev1)
    assert key.sign_bytes(msg) == (
        "k5OmszCOBzVOgTxvGsLBDecDFGCn2X6+4hCZw8h8Cqm3VxR+JDaFVJmIKy93jzCkN6xPbkJyvlY3VIwC8z8TCw=="
    )


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_inclusion_proofs_of_the_servers_log_lead_to_its_root(n: int) -> None:
    leaves = [canonical_json({"i": i}) for i in range(n)]
    hashes = [leaf_hash(x) for x in leaves]
    for i in range(n):
        got = root_from_inclusion(i, n, hashes[i], audit_path(i, hashes))
        assert got == root(hashes)
        if n > 1:  # the neighbour's leaf does not lead there
            j = (i + 1) % n
            assert root_from_inclusion(i, n, hashes[j], audit_path(i, hashes)) != got


# -- the commit record ------------------------------------------------------------------------


def test_a_seat_commits_its_own_fresh_secrets_and_keeps_them() -> None:
    fake = FakeServer()
    _, match = committed(fake)
    bodies = [s.json() for s in fake.posts("/commit")]
    assert len(bodies) == 2
    for seat, body in zip(match.seats, bodies, strict=True):
        assert seat.nonce is not None and len(bytes.fromhex(seat.nonce)) == 32
        assert seat.client_seed is not None
        assert body == {
            "seed_commitment": fairness.seed_commitment(
                fake.match_id, seat.seat, seat.nonce, seat.client_seed
            ),
            "key": seat.key,
            "roll_chain": body["roll_chain"],
        }
        assert body["roll_chain"] is not None and seat.key is not None
    # nothing is shared between seats
    assert len({s.nonce for s in match.seats}) == 2 and len({s.key for s in match.seats}) == 2
    assert bodies[0]["roll_chain"] != bodies[1]["roll_chain"]


def test_a_record_with_other_rules_than_asked_is_not_committed_to() -> None:
    fake = FakeServer(tamper={"record_ruleset"})
    _, match = started(fake)
    with pytest.raises(NotOurMatch, match=r"match_length=7, not the 1 asked for") as exc:
        match.seats[0].commit()
    assert "not this seat's own" in str(exc.value) and fake.posts("/commit") == []


def test_a_record_for_other_seats_than_asked_is_not_committed_to() -> None:
    fake = FakeServer()
    qc = Client("http://fake", **fake.client_args())
    match = qc.create_match("tawla", ASKED, names=["Layla", "Someone else"])
    with pytest.raises(NotOurMatch, match="seats are"):
        match.seats[0].commit()
    assert fake.posts("/commit") == []


def test_pinned_keys_that_did_not_sign_the_record_refuse_it() -> None:
    fake = FakeServer()
    other = FakeServer()
    qc = Client("http://fake", **fake.client_args(), keys=other.keys())
    match = qc.create_match("tawla", ASKED, names=fake.names)
    with pytest.raises(NotOurMatch, match="not one of the server keys this client trusts"):
        match.seats[0].commit()
    assert fake.posts("/commit") == []
    # the server's /v1/keys was read for an announcement of the unknown key (there is none):
    # the pinned keys are still all the client trusts
    assert qc.trusted() == {other.signer.key_id: other.keys()["keys"][0]["public_key"]}
    assert qc.announced == {}


def test_a_player_given_seed_is_used_once() -> None:
    seed = f"my own seed {id(object())}"
    _, match = committed_with(FakeServer(), [seed, None])
    assert match.seats[0].client_seed == seed
    fake2 = FakeServer()
    _, match2 = started(fake2)
    with pytest.raises(ClientError, match="already used"):
        match2.seats[0].commit(seed)
    assert fake2.posts("/commit") == []


def committed_with(fake: FakeServer, seeds: list[str | None]) -> tuple[Client, Match]:
    qc, match = started(fake)
    for seat, seed in zip(match.seats, seeds, strict=True):
        seat.commit(seed)
    return qc, match


# -- the lock: each failed check refuses to reveal --------------------------------------------


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        ("lock_signer", "lock's signature does not match"),
        ("lock_unknown_key", "not one of the server keys this client trusts"),
        ("lock_ruleset", "the lock's ruleset"),
        ("lock_commitment", "seed_commitment at seat 0 is"),
        ("lock_not_logged", "log entry 5 is not this lock"),
        ("no_proof", "HTTP 404"),
    ],
)
def test_a_lock_that_fails_a_check_is_not_revealed_against(tamper: str, why: str) -> None:
    fake = FakeServer(tamper={tamper})
    _, match = committed(fake)
    with pytest.raises((NotOurMatch, Exception), match=why) as exc:
        match.seats[0].reveal()
    if tamper != "no_proof":
        assert isinstance(exc.value, NotOurMatch)
        assert f"match {fake.match_id} is not this seat's own (seat 0)" in str(exc.value)
        assert "did not reveal" in str(exc.value)
    assert fake.posts("/reveal") == [] and match.seats[0].lock is None
    # and a second try does not reveal either
    with pytest.raises(Exception, match=why):
        match.seats[0].reveal()
    assert fake.posts("/reveal") == []


def test_a_refused_first_commit_never_reveals() -> None:
    fake = FakeServer(tamper={"refuse_commit"})
    _, match = started(fake)
    with pytest.raises(Exception, match="duplicate_commitment"):
        match.seats[0].commit()
    fake.tamper.clear()
    match.seats[1].commit()
    with pytest.raises(NotOurMatch, match="its own commit was refused"):
        match.seats[0].reveal()
    assert fake.posts("/reveal") == []


def test_a_good_lock_is_checked_kept_and_revealed_against() -> None:
    fake = FakeServer()
    _, match = committed(fake)
    match.seats[0].reveal()
    seat = match.seats[0]
    assert seat.lock == fake.lock and seat.log_index == 5
    assert fake.posts("/reveal")[0].json() == {"client_seed": seat.client_seed, "nonce": seat.nonce}
    # the receipts of seq -1 (the lock's answer, the reveal's; seat 0's commit came before
    # the lock, so it had none) are the lock's chain[-1]
    start = fairness.chain_start(fake.lock or {}).hex()
    assert [r["seq"] for r in seat.receipts] == [-1, -1]
    assert [r["seq"] for r in match.seats[1].receipts] == [-1]  # its commit locked it
    assert {r["chain"] for r in seat.receipts} == {start}


def test_reveal_waits_for_the_lock_when_asked() -> None:
    fake = FakeServer()
    _, match = started(fake)
    match.seats[0].commit()
    with pytest.raises(Exception, match="not_locked"):
        match.seats[0].reveal()
    assert fake.posts("/reveal") == []


# -- playing: signatures, values when owed, resends -------------------------------------------


def playing(fake: FakeServer, **kw: Any) -> tuple[Client, Match]:
    qc, match = started(fake, **kw)
    match.start()
    return qc, match


def drive(match: Match, steps: int = 100) -> int:
    n = 0
    for _ in range(steps):
        view = match.seats[0].state()
        if view.status != "playing":
            break
        assert view.turn is not None
        seat = match.seats[view.turn]
        mine = seat.state()
        seat.act(mine.legal_actions[0])
        n += 1
    return n


def test_a_whole_scripted_match_is_signed_valued_and_receipted(tmp_path: Path) -> None:
    fake = FakeServer()
    qc, match = playing(fake)
    path = tmp_path / "receipts" / "seat1.json"
    match.seats[1].proto.receipts_path = path
    assert drive(match) == 9  # 6 roll-chain values, 3 moves
    assert match.seats[0].state().status == "finished"
    # every action went with the seat's signature over the head it was chosen at
    for sent in fake.posts("/actions"):
        body = sent.json()
        assert set(body) == {"action", "version", "prev", "sig"}
    # the fresh-roll values are each seat's chain values 0, 1, 2 in order
    for seat in match.seats:
        values = [
            s.json()["action"]["value"]
            for s in fake.posts("/actions")
            if s.json()["action"]["type"] in ("roll", "roll_value")
            and _seat_of(fake, s) == seat.seat
        ]
        assert values == [seat.proto.roll_value(k) for k in range(3)]  # type: ignore[union-attr]
    doc = match.check_transcript()
    assert doc["chain"] == fake.chain.hex()  # type: ignore[union-attr]
    # the receipts file holds every receipt of seat 1, for verify --receipt
    assert json.loads(path.read_text()) == match.seats[1].receipts
    # its commit (which locked the match), the lock, its reveal, then its 4 actions: the
    # opening value (seq 1, the dice at 2), a move (4), two roll values (dice at 7 and 10)
    assert [r["seq"] for r in match.seats[1].receipts] == [-1, -1, -1, 2, 4, 7, 10]
    saved = tmp_path / "seat0.json"
    match.seats[0].save(saved)
    kept = json.loads(saved.read_text())
    assert kept["client_seed"] == match.seats[0].client_seed
    assert kept["nonce"] == match.seats[0].nonce and kept["lock"] == fake.lock
    assert len(kept["requests"]) == len(match.seats[0].requests) > 3
    assert "secret" not in saved.read_text()


def _seat_of(fake: FakeServer, sent: Any) -> int:
    body = sent.json()
    for seat, key in enumerate(s["key"] for s in (fake.lock or {})["seats"]):
        try:
            fairness.verify_bytes(
                key,
                body["sig"],
                fairness.seat_sig_message(
                    fake.match_id,
                    body["prev"],
                    {"type": "action", "seat": seat, "action": body["action"]},
                ),
            )
            return seat
        except fairness.SignatureError:
            continue
    raise AssertionError("no seat signed it")


def test_a_value_is_sent_only_when_the_view_shows_it_owed() -> None:
    fake = FakeServer()
    _, match = playing(fake)
    # the opening: seat 0 then seat 1 owe a value; seat 1 may not send before seat 0
    view1 = match.seats[1].state()
    assert view1.fresh_roll == {"label": "g0/opening/0", "owes": [0, 1]}  # type: ignore[union-attr]
    before = len(fake.posts("/actions"))
    with pytest.raises(ClientError, match="owes no roll-chain value now"):
        match.seats[1].act({"type": "roll_value"})  # owed, but seat 0's comes first
    with pytest.raises(ClientError, match="owes no roll-chain value now"):
        match.seats[1].act({"type": "roll"})  # nobody may roll during the opening
    fake_view = view1.model_copy(update={"fresh_roll": None})
    match.seats[1].view = fake_view
    with pytest.raises(ClientError, match="owes no roll-chain value now"):
        match.seats[1].act({"type": "roll_value"})
    match.seats[1].view = view1.model_copy(update={"fresh_roll": {"label": "x", "owes": [0]}})
    with pytest.raises(ClientError, match="owes no roll-chain value now"):
        match.seats[1].act({"type": "roll_value"})
    # a value the player gives that is not the seat's next one is never sent
    match.seats[0].state()
    with pytest.raises(ClientError, match="never sends another value"):
        match.seats[0].act({"type": "roll_value", "value": "ab" * 32})
    assert len(fake.posts("/actions")) == before
    match.seats[0].act({"type": "roll_value"})
    assert fake.posts("/actions")[-1].json()["action"]["value"] == (
        match.seats[0].proto.roll_value(0)
    )  # type: ignore[union-attr]


def test_a_view_claiming_values_the_seat_never_sent_gets_none() -> None:
    fake = FakeServer()
    _, match = playing(fake)
    fake.tamper.add("values_used_ahead")
    match.seats[0].state()
    with pytest.raises(ClientError, match="it does not skip ahead on its chain"):
        match.seats[0].act({"type": "roll_value"})
    assert fake.posts("/actions") == []


@pytest.mark.parametrize("fault", ["drop", "503", "lose"])
def test_a_failed_action_is_resent_as_identical_bytes(fault: str) -> None:
    fake = FakeServer()
    _, match = playing(fake)
    fake.faults["/actions"] = [fault]
    out = match.seats[0].act(match.seats[0].state().legal_actions[0])
    sent = fake.posts("/actions")
    assert len(sent) == 2 and sent[0].content == sent[1].content
    assert sent[0].json()["action"]["value"] == match.seats[0].proto.roll_value(0)  # type: ignore[union-attr]
    assert fake.values_used[0] == 1 and len(fake.events) == 1
    assert match.seats[0].requests[-1]["attempts"] == 2
    if fault == "lose":  # the first copy landed; its answer was lost: found in the log
        assert out.receipt is None and out.first_seq == 0
    else:
        assert out.receipt is not None and match.seats[0].requests[-1]["receipt"] is not None


def test_a_commit_and_a_reveal_are_resent_identically() -> None:
    fake = FakeServer()
    fake.faults["/commit"] = ["lose"]
    fake.faults["/reveal"] = ["drop", "503"]
    _, match = playing(fake)
    commits = fake.posts("/seats/0/commit")
    assert len(commits) == 2 and commits[0].content == commits[1].content
    reveals = fake.posts("/seats/0/reveal")
    assert len(reveals) == 3 and len({r.content for r in reveals}) == 1
    assert match.seats[0].state().status == "playing"


def test_an_unanswered_request_is_kept_without_a_receipt() -> None:
    fake = FakeServer()
    _, match = playing(fake, retries=2)
    fake.faults["/actions"] = ["drop", "drop", "drop"]
    with pytest.raises(Unanswered, match="no answer after 3 identical attempts"):
        match.seats[0].act(match.seats[0].state().legal_actions[0])
    sent = fake.posts("/actions")
    assert len(sent) == 3 and len({s.content for s in sent}) == 1
    kept = match.seats[0].requests[-1]
    assert kept["receipt"] is None and kept["attempts"] == 3
    assert canonical_json(kept["body"]) == sent[0].content


# -- receipts and the transcript ----------------------------------------------------------------


def test_a_receipt_that_disagrees_with_the_answer_is_refused() -> None:
    fake = FakeServer()
    _, match = playing(fake)
    fake.tamper.add("receipt_lies")
    with pytest.raises(ClientError, match="not the head"):
        match.seats[0].act(match.seats[0].state().legal_actions[0])


def test_a_transcript_cut_short_or_with_another_lock_is_caught() -> None:
    fake = FakeServer()
    _, match = playing(fake)
    drive(match)
    doc = fake.transcript()
    match.check_transcript(doc)
    cut = dict(doc, events=doc["events"][:-2])
    cut["chain"] = fairness.chain_head(doc["lock"], cut["events"]).hex()
    with pytest.raises(
        TranscriptMismatch,
        match=r"receipt for seq 1[01] is beyond .* cut the "
        "match short",
    ):
        match.seats[0].check_transcript(cut)
    edited = json.loads(json.dumps(doc))
    edited["events"][3]["action"] = {"type": "double"}
    edited["chain"] = fairness.chain_head(doc["lock"], edited["events"]).hex()
    with pytest.raises(TranscriptMismatch, match="disagrees with the transcript's chain"):
        match.seats[0].check_transcript(edited)
    relocked = dict(doc, lock={**doc["lock"], "end_by": "2030-01-01T00:00:00Z"})
    with pytest.raises(TranscriptMismatch, match="not the lock seat 0 revealed against"):
        match.seats[0].check_transcript(relocked)
    other_seed = json.loads(json.dumps(doc))
    other_seed["seats"][1]["client_seed"] = "not mine"
    with pytest.raises(TranscriptMismatch, match="seat 1's client seed and nonce"):
        match.seats[1].check_transcript(other_seed)


def test_receipts_are_written_where_the_player_says(tmp_path: Path) -> None:
    fake = FakeServer()
    qc, match = started(fake)
    path = tmp_path / "r.json"
    seat = Seat(qc, fake.match_id, 0, fake.tokens[0], record=fake.record, receipts_file=path)
    seat.commit()
    match.seats[1].commit()
    seat.reveal()
    match.seats[1].reveal()
    seat.act(seat.state().legal_actions[0])
    kept = json.loads(path.read_text())
    assert kept == seat.receipts and [r["seq"] for r in kept] == [-1, -1, 0]
    out = seat.save_receipts(tmp_path / "again.json")
    assert json.loads(out.read_text()) == kept
    for r in kept:
        fairness.verify_record(r, fake.signer.public_key)


def test_a_handle_without_the_seat_key_does_not_act_for_a_keyed_seat() -> None:
    fake = FakeServer()
    qc, _ = playing(fake)
    stranger = Seat(qc, fake.match_id, 0, fake.tokens[0])
    with pytest.raises(ClientError, match="does not hold its key"):
        stranger.act({"type": "move", "steps": [[24, 21]]})


# -- the async client does the same -------------------------------------------------------------


def test_the_async_client_is_conforming_too(tmp_path: Path) -> None:
    async def main() -> None:
        fake = FakeServer()
        fake.faults["/actions"] = ["drop"]
        async with AsyncClient(
            "http://fake", http=httpx.AsyncClient(transport=fake.transport()), retry_delay=0
        ) as ac:
            match = await ac.create_match("tawla", ASKED, names=fake.names)
            await match.start()
            turns = 0
            while (view := await match.seats[0].state()).status == "playing":
                assert view.turn is not None
                seat = match.seats[view.turn]
                await seat.act((await seat.state()).legal_actions[0])
                turns += 1
            assert turns == 9
            sent = fake.posts("/actions")
            assert sent[0].content == sent[1].content and len(sent) == 10
            await match.check_transcript()
            match.seats[0].save_receipts(tmp_path / "a.json")
            assert json.loads((tmp_path / "a.json").read_text()) == match.seats[0].receipts

        bad = FakeServer(tamper={"lock_ruleset"})
        async with AsyncClient(
            "http://fake", http=httpx.AsyncClient(transport=bad.transport()), retry_delay=0
        ) as ac:
            match = await ac.create_match("tawla", ASKED, names=bad.names)
            for seat in match.seats:
                await seat.commit()
            with pytest.raises(NotOurMatch, match="the lock's ruleset"):
                await match.seats[1].reveal()
            assert bad.posts("/reveal") == []

    asyncio.run(main())


def test_record_keys_accept_keys_answer_or_mapping() -> None:
    for form in ("answer", "mapping"):
        fake = FakeServer()
        pub = base64.b64encode(fake.signer.public_key.public_bytes_raw()).decode()
        keys = fake.keys() if form == "answer" else {fake.signer.key_id: pub}
        qc = Client("http://fake", **fake.client_args(), keys=keys)
        match = qc.create_match("tawla", ASKED, names=fake.names)
        match.start()
        assert match.seats[1].lock == fake.lock
        assert not any(s.path == "/v1/keys" for s in fake.sent)
    with pytest.raises(ClientError, match="trusted keys are"):
        Client("http://fake", keys=[1, 2])


# -- plain sessions --------------------------------------------------------------------------


def test_a_session_seed_goes_only_after_the_record_and_the_lock_is_checked() -> None:
    fake = FakeServer()
    qc = Client("http://fake", **fake.client_args())
    sess = qc.rng()
    assert fake.posts("/v1/rng")[0].json() == {}  # no seed in the creating request
    sess.send_seed()
    body = fake.posts("/seed")[0].json()
    assert body == {"client_seed": sess.client_seed, "nonce": sess.nonce}
    assert sess.lock == fake.lock and sess.lock["seats"][0]["key"] is None  # type: ignore[index]
    sess.dice(2, 6)
    sess.dice(2, 6)
    assert [r["seq"] for r in sess.receipts] == [-1, 0, 1]
    sess.check_transcript(fake.transcript())


def test_a_session_lock_without_its_commitment_is_reported() -> None:
    fake = FakeServer(tamper={"lock_commitment"})
    sess = Client("http://fake", **fake.client_args()).rng()
    with pytest.raises(NotOurMatch, match="seed_commitment at seat 0"):
        sess.send_seed()
    fake2 = FakeServer(tamper={"receipt_lies"})
    sess2 = Client("http://fake", **fake2.client_args()).rng()
    sess2.send_seed()
    sess2.dice(2, 6)  # a receipt the draw's answer cannot contradict: kept, then caught
    with pytest.raises(TranscriptMismatch, match="receipt for seq 0 disagrees"):
        sess2.check_transcript(fake2.transcript())
