"""verify on qahwa-fair/2 transcripts (fairness-v2.md §9): every game and form passes, keyed
and unkeyed, and each way an operator could bend a match is caught with a line naming it."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fairness import (
    PROTOCOL_V2,
    V2,
    Signer,
    Stream,
    chain_head,
    format_time_ms,
    parse_time_us,
    public_key_b64,
    seed_commitment,
)
from games.ends import no_reveal_result
from games.registry import engine_class
from games.replay import replay
from tests.verify.test_verify_cli_helpers import (
    KEYS,
    SIGNER,
    derive_args,
    receipts_of,
    rechain,
    run,
    v2_match,
    write,
)
from verify_cli.core import FAILED, UNCHECKED, VERIFIED, OwnSeed, verify_document

# every game and form, with short targets so random bots finish quickly
NO_FRESH = {"fresh_rolls": False}
FORMS: list[tuple[str, dict[str, Any]]] = [
    *((g, {"match_length": 1, **fr}) for g in ("tawla", "mahbusa") for fr in ({}, NO_FRESH)),
    ("hokm", {"target": 1}),
    ("hokm", {"target": 1, "cut": False}),
    ("hokm", {"players": 2, "target": 1}),
    ("hokm", {"players": 3, "target": 1}),
    ("qahve", {"target": 30}),
    ("shelem", {"target": 200}),
    ("shelem", {"players": 2, "target": 200}),
    *(("iraqi_domino", {"players": p, "target": 30}) for p in (2, 3, 4)),
    *(("mexican_train", {"players": p, "rounds": 1}) for p in (2, 8)),
    ("rng", {}),
]
V2_CHECKS = ["lock", "seats", "commitment", "reveals", "chain", "match key"]


def failures(doc: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    rep = verify_document(doc, KEYS, **kw)
    assert rep["status"] == FAILED, rep["checks"]
    return list(rep["failures"])


def first(doc: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return failures(doc, **kw)[0]


# -- genuine v2 transcripts ------------------------------------------------------------------


@pytest.mark.parametrize("keyed", [False, True], ids=["unkeyed", "keyed"])
@pytest.mark.parametrize(
    ("game", "ruleset"), FORMS, ids=[f"{g}-{json.dumps(r, sort_keys=True)}" for g, r in FORMS]
)
def test_every_game_and_form_verifies(game: str, ruleset: dict[str, Any], keyed: bool) -> None:
    doc = v2_match(game, ruleset, keyed=keyed)
    assert doc["protocol"] == PROTOCOL_V2
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    names = [c["name"] for c in rep["checks"]]
    assert names[:6] == V2_CHECKS
    for name in ("replay", "result", "seat signatures", "lock signature", "signature"):
        assert name in names
    assert all(c["ok"] for c in rep["checks"]), rep["checks"]
    fresh = game in ("tawla", "mahbusa") and ruleset.get("fresh_rolls", True)
    assert ("fresh rolls" in names) == (game in ("tawla", "mahbusa") and fresh)
    assert ("cut" in names) == (game == "hokm" and ruleset.get("cut", True))
    sigs = next(c for c in rep["checks"] if c["name"] == "seat signatures")
    assert ("signed by their keys" in sigs["detail"]) == keyed


def test_a_fresh_roll_match_really_rolls_fresh() -> None:
    doc = v2_match("tawla", {"match_length": 1})
    dice = [e for e in doc["events"] if e["type"] == "chance" and e["kind"] == "dice"]
    assert dice and all("|" in e["label"] for e in dice)
    values = [
        e
        for e in doc["events"]
        if e["type"] == "action" and e["action"]["type"] in ("roll", "roll_value")
    ]
    assert len(values) == 2 * len(dice)


@pytest.mark.parametrize("game", ["tawla", "mahbusa", "hokm", "iraqi_domino"])
def test_a_resignation_verifies_and_a_keyed_one_is_signed(game: str) -> None:
    doc = v2_match(game, keyed=True, resign_at=6)
    assert doc["events"][-1]["type"] == "end" and doc["events"][-1]["reason"] == "resigned"
    assert "sig" in doc["events"][-1]
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert rep["result"]["reason"] == "resigned"


def _ended(doc: dict[str, Any], n_events: int, reason: str) -> dict[str, Any]:
    """The match cut after ``n_events`` events and ended the way the server ends it (a
    timeout of the seat that owes the next step, or expiry), chained and signed."""
    cls = engine_class(doc["game"])
    pairs = [(s["client_seed"], s["nonce"]) for s in doc["seats"]]
    key = V2.match_key(doc["server_seed"], doc["match_id"], doc["game"], doc["ruleset"], pairs)
    from games.base import MatchContext

    ctx = MatchContext(doc["match_id"], tuple(s["roll_chain"] for s in doc["lock"]["seats"]))
    while doc["events"][n_events]["type"] != "action":  # cut where the next step is a seat's
        n_events -= 1
    events = doc["events"][:n_events]
    engine = replay(cls, doc["ruleset"], key, events, protocol=PROTOCOL_V2, ctx=ctx)
    seats = [engine.turn] if reason == "timeout" else []
    assert all(s is not None for s in seats)
    ends = [dict(e) for e in engine.end_match(reason, seats)]
    if "at" in events[-1]:  # the server's time: a timeout exactly at its deadline (§7)
        turn = json.loads(doc["ruleset"])["turn_seconds"]
        last = parse_time_us(events[-1]["at"])
        ends[0]["at"] = format_time_ms(last + (turn if reason == "timeout" else 1) * 1_000_000)
    doc["events"] = events + ends
    assert engine.outcome is not None
    doc["result"] = json.loads(json.dumps(engine.outcome.to_json()))
    return rechain(doc)


@pytest.mark.parametrize("reason", ["timeout", "expired"])
@pytest.mark.parametrize("game", ["tawla", "hokm", "shelem", "mexican_train"])
def test_timeout_and_expired_ends_verify(game: str, reason: str) -> None:
    doc = v2_match(game, keyed=True)
    done = _ended(doc, len(doc["events"]) // 2, reason)
    rep = verify_document(done, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert rep["result"]["reason"] == reason
    assert rep["result"]["status"] == "finished"
    if reason == "expired":
        assert rep["result"]["winners"] == [] and rep["result"]["forfeited"] == []
    else:
        assert rep["result"]["forfeited"] and rep["result"]["winners"]


def _no_reveal(game: str, missing: list[int]) -> dict[str, Any]:
    doc = v2_match(game)
    for s in missing:
        doc["seats"][s]["client_seed"] = None
        doc["seats"][s]["nonce"] = None
    doc["events"] = [{"seq": 0, "type": "end", "reason": "no_reveal", "seats": missing}]
    cls = engine_class(game)
    parsed = cls.parse_ruleset(json.loads(doc["ruleset"]), protocol=PROTOCOL_V2)
    doc["result"] = json.loads(json.dumps(no_reveal_result(cls, parsed, missing)))
    return rechain(doc)


@pytest.mark.parametrize("game", ["tawla", "hokm", "iraqi_domino"])
def test_a_no_reveal_forfeit_verifies(game: str) -> None:
    doc = _no_reveal(game, [1])
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert "no_reveal" in next(c["detail"] for c in rep["checks"] if c["name"] == "replay")


def test_a_no_reveal_that_drew_a_chance_event_fails() -> None:
    doc = _no_reveal("hokm", [1])
    doc["events"].insert(0, v2_match("hokm")["events"][0])
    f = first(rechain(doc))
    assert f["check"] == "replay" and "no_reveal" in f["message"]


def test_a_no_reveal_naming_a_seat_that_revealed_fails() -> None:
    doc = _no_reveal("tawla", [1])
    doc["events"][0]["seats"] = [0, 1]
    f = first(rechain(doc))
    assert f["check"] == "replay" and "never revealed" in f["message"]


# -- the lock and the seats ------------------------------------------------------------------


def test_seats_that_differ_from_the_lock_fail_even_re_signed() -> None:
    doc = v2_match("tawla", {"match_length": 1}, keyed=True)
    # the operator swaps in a key it holds, for seat 1, in the transcript's seats only
    doc["seats"][1]["key"] = public_key_b64(Signer.generate().public_key)
    f = first(rechain(doc))
    assert f["check"] == "seats"
    assert "seat 1's key differs from its lock" in f["message"]


def test_a_renamed_seat_fails() -> None:
    doc = v2_match("hokm", {"target": 1})
    doc["seats"][2]["name"] = "someone else"
    f = first(rechain(doc))
    assert f["check"] == "seats" and "seat 2's name" in f["message"]


def test_a_lock_of_another_match_fails() -> None:
    doc = v2_match("rng")
    lock = {k: v for k, v in doc["lock"].items() if k != "signature"}
    lock["match_id"] = "another"
    doc["lock"] = SIGNER.signed(lock)
    f = first(rechain(doc))
    assert f["check"] == "lock" and "match_id" in f["message"]


def test_a_lock_not_signed_by_a_listed_key_fails() -> None:
    doc = v2_match("rng")
    doc["lock"] = Signer.generate().signed(doc["lock"])
    fs = failures(rechain(doc))
    assert [f["check"] for f in fs] == ["lock signature"]


def test_a_lock_of_the_wrong_type_or_protocol_fails() -> None:
    for field, value in (("type", "commit"), ("protocol", "qahwa-fair/1")):
        doc = v2_match("rng")
        doc["lock"] = SIGNER.signed({**doc["lock"], field: value})
        f = first(rechain(doc))
        assert f["check"] == "lock" and field in f["message"]


def test_a_wrong_reveal_fails() -> None:
    doc = v2_match("hokm", {"target": 1})
    doc["seats"][3]["client_seed"] = "a seed chosen later"
    f = first(rechain(doc))
    assert f["check"] == "reveals"
    assert "seat 3's client_seed and nonce do not match its seed_commitment" in f["message"]
    doc = v2_match("hokm", {"target": 1})
    doc["seats"][0]["nonce"] = "00" * 32
    assert first(rechain(doc))["check"] == "reveals"


def test_a_forged_lock_commitment_for_a_chosen_seed_fails_the_lock_signature() -> None:
    # the operator picks seat 1's seed after the fact and rewrites the lock to match
    doc = v2_match("hokm", {"target": 1})
    nonce = "11" * 32
    lock = {k: v for k, v in doc["lock"].items() if k != "signature"}
    lock["seats"] = [dict(s) for s in lock["seats"]]
    lock["seats"][1]["seed_commitment"] = seed_commitment(doc["match_id"], 1, nonce, "mine")
    doc["lock"] = Signer.generate().signed(lock)  # it cannot sign with the listed key...
    doc["seats"][1].update(client_seed="mine", nonce=nonce)
    checks = {f["check"] for f in failures(rechain(doc))}
    assert "lock signature" in checks


# -- fresh rolls -----------------------------------------------------------------------------


def _value_events(doc: dict[str, Any], seat: int) -> list[int]:
    return [
        i
        for i, e in enumerate(doc["events"])
        if e["type"] == "action"
        and e["seat"] == seat
        and e["action"]["type"] in ("roll", "roll_value")
    ]


def test_an_off_chain_roll_value_fails() -> None:
    doc = v2_match("tawla", {"match_length": 1})
    i = _value_events(doc, 1)[2]
    doc["events"][i]["action"]["value"] = "ab" * 32
    f = first(rechain(doc))
    assert f["check"] == "fresh rolls" and f["seq"] == i
    assert f"event {i}: seat 1's roll value" in f["message"]
    assert "does not hash back to its roll-chain tip" in f["message"]


def test_roll_values_out_of_order_fail() -> None:
    doc = v2_match("mahbusa", {"match_length": 1})
    a, b = _value_events(doc, 0)[1:3]
    va, vb = (doc["events"][i]["action"]["value"] for i in (a, b))
    doc["events"][a]["action"]["value"], doc["events"][b]["action"]["value"] = vb, va
    f = first(rechain(doc))
    assert f["check"] == "fresh rolls" and f["seq"] == a
    assert "out of order" in f["message"]


def test_a_roll_drawn_without_fresh_values_fails() -> None:
    # the operator replaces a fresh roll by a plain v1-style one it can compute in advance
    doc = v2_match("tawla", {"match_length": 1})
    i = next(
        i for i, e in enumerate(doc["events"]) if e["type"] == "chance" and "/roll/" in e["label"]
    )
    ev = doc["events"][i]
    del doc["events"][i - 2 : i]  # the two values
    ev["label"] = ev["label"].split("|")[0]
    pairs = [(s["client_seed"], s["nonce"]) for s in doc["seats"]]
    key = V2.match_key(doc["server_seed"], doc["match_id"], "tawla", doc["ruleset"], pairs)
    ev["result"] = Stream(key, ev["label"]).dice(2, 6)
    f = first(rechain(doc))
    assert f["check"] == "fresh rolls" and "must be fresh" in f["message"]


def test_values_from_the_wrong_seat_fail() -> None:
    doc = v2_match("tawla", {"match_length": 1})
    i = _value_events(doc, 1)[1]
    doc["events"][i]["seat"] = 0
    f = first(rechain(doc))
    assert f["check"] == "fresh rolls" and f["seq"] == i


# -- the hokm cut ----------------------------------------------------------------------------


def test_a_chosen_cut_fails() -> None:
    doc = v2_match("hokm", {"target": 1})
    i = next(
        i
        for i, e in enumerate(doc["events"])
        if e["type"] == "action" and e["action"]["type"] == "cut"
    )
    assert doc["events"][i + 1]["label"].endswith("/cut")
    doc["events"][i]["action"]["k"] = 17
    del doc["events"][i + 1]
    f = first(rechain(doc))
    assert f["check"] == "cut" and f["seq"] == i
    assert "a cut with a chosen k" in f["message"]


# -- the chain and the seats' signatures -----------------------------------------------------


def test_a_wrong_chain_fails() -> None:
    doc = v2_match("rng")
    doc["chain"] = "00" * 32
    fs = failures(SIGNER.signed(doc))
    assert [f["check"] for f in fs] == ["chain"]


def _rng_with_dice(keyed: bool) -> dict[str, Any]:
    """A plain session (keyed or not) with a dice draw in it."""
    for seed in range(1, 50):
        doc = v2_match("rng", seed=seed, keyed=keyed)
        if any(e["type"] == "action" and e["action"].get("kind") == "dice" for e in doc["events"]):
            return doc
    raise AssertionError("no plain session with a dice draw in 49 seeds")


def _other_rng_draw(doc: dict[str, Any]) -> int:
    """Edit a plain session's last draw into another legal one, its chance event recomputed
    from the revealed seeds (what an operator who knows K can do), and return its seq."""
    i = max(
        i
        for i, e in enumerate(doc["events"])
        if e["type"] == "action" and e["action"]["type"] == "draw" and e["action"]["kind"] == "dice"
    )
    act = doc["events"][i]["action"]
    act["sides"] = 7 if act.get("sides", 6) != 7 else 8
    ev = doc["events"][i + 1]
    pairs = [(s["client_seed"], s["nonce"]) for s in doc["seats"]]
    key = V2.match_key(doc["server_seed"], doc["match_id"], "rng", doc["ruleset"], pairs)
    ev["args"] = {"count": act.get("count", 1), "sides": act["sides"]}
    ev["result"] = Stream(key, ev["label"]).dice(act.get("count", 1), act["sides"])
    return i


def test_an_operators_edit_of_a_keyed_seats_move_fails_the_seat_signature() -> None:
    doc = _rng_with_dice(keyed=True)
    i = _other_rng_draw(doc)
    fs = failures(rechain(doc))
    # every other check passes: only the seat's signature tells
    assert [f["check"] for f in fs] == ["seat signatures"]
    assert fs[0]["seq"] == i and f"event {i}" in fs[0]["message"]


def test_the_same_edit_of_an_unkeyed_seat_verifies() -> None:
    # (the reason conforming clients are keyed: without a key, only receipts tell)
    genuine = _rng_with_dice(keyed=False)
    doc = copy.deepcopy(genuine)
    _other_rng_draw(doc)
    rep = verify_document(rechain(doc), KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    rep = verify_document(rechain(doc), KEYS, receipts=receipts_of(genuine))
    assert rep["status"] == FAILED and rep["failures"][0]["check"] == "receipts"


def test_a_keyed_seats_move_without_signature_fails() -> None:
    doc = v2_match("hokm", {"target": 1}, keyed=True)
    i = next(i for i, e in enumerate(doc["events"]) if e["type"] == "action")
    del doc["events"][i]["sig"]
    f = next(f for f in failures(rechain(doc)) if f["check"] == "seat signatures")
    assert f["seq"] == i and "carries no signature" in f["message"]


def test_a_signature_by_another_seats_key_fails() -> None:
    doc = v2_match("tawla", {"match_length": 1}, keyed=True)
    a = next(i for i, e in enumerate(doc["events"]) if e["type"] == "action" and e["seat"] == 0)
    b = next(i for i, e in enumerate(doc["events"]) if e["type"] == "action" and e["seat"] == 1)
    doc["events"][a]["sig"] = doc["events"][b]["sig"]
    f = next(f for f in failures(rechain(doc)) if f["check"] == "seat signatures")
    assert f["seq"] == a


def test_a_sig_on_a_chance_event_fails() -> None:
    doc = v2_match("rng", keyed=True)
    doc["events"][1]["sig"] = doc["events"][0]["sig"]
    checks = [f["check"] for f in failures(rechain(doc))]
    assert "seat signatures" in checks or "replay" in checks


# -- receipts --------------------------------------------------------------------------------


def _cut_short(doc: dict[str, Any]) -> dict[str, Any]:
    """A genuine tawla match cut before the end, ending in a timeout of the seat on turn,
    replayed to the new result, chained and re-signed with the server's genuine key."""
    return _ended(doc, len(doc["events"]) - 6, "timeout")


def test_a_match_cut_short_is_caught_by_the_players_receipts(tmp_path: Path, key_file: str) -> None:
    genuine = v2_match("tawla", {"match_length": 1}, keyed=True)
    receipts = receipts_of(genuine)
    rfile = write(tmp_path / "receipts.json", receipts)
    ok = write(tmp_path / "genuine.json", genuine)
    res = run(ok, "--key", key_file, "--receipt", rfile)
    assert res.exit_code == 0, res.output
    assert "receipts" in res.stdout and "agree with the chain" in res.stdout

    forged = _cut_short(v2_match("tawla", {"match_length": 1}, keyed=True))
    assert verify_document(forged, KEYS)["status"] == VERIFIED  # nothing else tells
    bad = write(tmp_path / "forged.json", forged)
    res = run(bad, "--key", key_file, "--receipt", rfile)
    assert res.exit_code == 1, res.output
    cut = len(forged["events"]) - 1  # the forged end stands where a genuine event was
    line = next(ln for ln in res.stdout.splitlines() if "receipts:" in ln)
    assert f"receipt for seq {cut}" in line and "rewrote" in line


def test_one_receipt_file_of_a_single_receipt(tmp_path: Path, key_file: str) -> None:
    genuine = v2_match("tawla", {"match_length": 1})
    forged = _cut_short(v2_match("tawla", {"match_length": 1}))
    last = receipts_of(genuine)[-1]
    r = write(tmp_path / "last.json", last)
    res = run(write(tmp_path / "f.json", forged), "--key", key_file, "--receipt", r)
    assert res.exit_code == 1
    assert f"receipt for seq {last['seq']}" in res.stdout and "cut the match short" in res.stdout


def with_receipts(tmp_path: Path, key_file: str, doc: Any, receipts: Any) -> Any:
    """``verify`` on ``doc`` with the server's key and ``receipts``, each from a file."""
    t, r = write(tmp_path / "t.json", doc), write(tmp_path / "r.json", receipts)
    return run(t, "--key", key_file, "--receipt", r)


def test_a_receipt_not_signed_by_a_listed_key_fails(tmp_path: Path, key_file: str) -> None:
    genuine = v2_match("rng")
    r = Signer.generate().signed(receipts_of(genuine)[-1])
    res = with_receipts(tmp_path, key_file, genuine, r)
    assert res.exit_code == 1 and "receipt for seq" in res.stdout


def test_a_receipt_file_that_is_no_receipt_is_unusable(tmp_path: Path, key_file: str) -> None:
    genuine = v2_match("rng")
    t = write(tmp_path / "t.json", genuine)
    for bad in ({"type": "lock"}, [], [{"type": "receipt"}], "x"):
        res = run(t, "--key", key_file, "--receipt", write(tmp_path / "r.json", bad))
        assert res.exit_code == 2, (bad, res.output)
        assert len(res.stderr.strip().splitlines()) == 1


def test_a_receipt_for_another_match_is_unusable(tmp_path: Path, key_file: str) -> None:
    r = receipts_of(v2_match("rng", seed=5))
    res = with_receipts(tmp_path, key_file, v2_match("rng"), r)
    assert res.exit_code == 2 and "none of the transcripts" in res.stderr


# -- own seed --------------------------------------------------------------------------------


def test_own_seed(tmp_path: Path, key_file: str) -> None:
    doc = v2_match("hokm", {"target": 1})
    t = write(tmp_path / "t.json", doc)
    s = doc["seats"][2]
    res = run(
        t,
        "--key",
        key_file,
        "--seat",
        "2",
        "--client-seed",
        s["client_seed"],
        "--nonce",
        s["nonce"],
    )
    assert res.exit_code == 0, res.output
    assert "own seed: seat 2 holds exactly your client seed and nonce" in res.stdout
    for args in (
        ["--client-seed", s["client_seed"] + "x", "--nonce", s["nonce"]],
        ["--client-seed", s["client_seed"], "--nonce", "0" * 64],
        ["--client-seed", doc["seats"][1]["client_seed"], "--nonce", doc["seats"][1]["nonce"]],
    ):
        res = run(t, "--key", key_file, "--seat", "2", *args)
        assert res.exit_code == 1, (args, res.output)
        assert "✘ own seed" in res.stdout
    res = run(t, "--key", key_file, "--seat", "9", "--client-seed", "x", "--nonce", "0" * 64)
    assert res.exit_code == 1 and "no seat 9" in res.stdout


def test_own_seed_needs_seat_and_seed(tmp_path: Path) -> None:
    t = write(tmp_path / "t.json", v2_match("rng"))
    assert run(t, "--seat", "0").exit_code == 2
    assert run(t, "--client-seed", "x").exit_code == 2


def test_own_seed_report_in_verify_document() -> None:
    doc = v2_match("rng")
    s = doc["seats"][0]
    rep = verify_document(doc, KEYS, own=OwnSeed(0, s["client_seed"], s["nonce"]))
    assert rep["status"] == VERIFIED
    rep = verify_document(doc, KEYS, own=OwnSeed(0, "not mine", s["nonce"]))
    assert [f["check"] for f in rep["failures"]] == ["own seed"]


# -- the log, the key, the output ------------------------------------------------------------


def test_without_a_log_source_the_log_is_not_checked_and_the_verdict_stands(
    tmp_path: Path, key_file: str
) -> None:
    res = run(write(tmp_path / "t.json", v2_match("rng")), "--key", key_file, "--no-state")
    assert res.exit_code == 0, res.output
    assert "– log: not checked" in res.stdout


def test_without_a_key_nothing_signed_is_a_pass(tmp_path: Path) -> None:
    doc = v2_match("rng")
    rep = verify_document(doc, None)
    assert rep["status"] == UNCHECKED
    skipped = {c["name"] for c in rep["checks"] if c["ok"] is None}
    assert {"lock signature", "signature"} <= skipped
    assert run(write(tmp_path / "t.json", doc)).exit_code == 1


def verify_tawla(tmp_path: Path, key_file: str, *options: str) -> Any:
    """``verify`` with the server's key and ``options`` on a one-point tawla match."""
    doc = v2_match("tawla", {"match_length": 1})
    return run(write(tmp_path / "t.json", doc), "--key", key_file, *options)


def test_json_output_names_the_v2_checks(tmp_path: Path, key_file: str) -> None:
    res = verify_tawla(tmp_path, key_file, "--json")
    out = json.loads(res.stdout)
    assert out["ok"] is True
    names = [c["name"] for c in out["results"][0]["checks"]]
    assert "fresh rolls" in names and "chain" in names


def test_fresh_rolls_are_shown_as_fresh(tmp_path: Path, key_file: str) -> None:
    res = verify_tawla(tmp_path, key_file, "--all-draws")
    assert "opening roll 0" in res.stdout and "fresh (from both seats' roll values)" in res.stdout
    assert "live entropy" not in res.stdout


def test_a_drawn_cut_is_shown() -> None:
    doc = v2_match("hokm", {"target": 1})
    rep = verify_document(doc, KEYS, draws_limit=None)
    cut = next(e for e in doc["events"] if e["type"] == "chance" and e["label"] == "h0/cut")
    texts = [d["text"] for d in rep["draws"]]
    assert f"hand 0 cut drawn: k = {cut['result'] + 1}" in texts
    assert any(f"cut at {cut['result'] + 1}:" in t for t in texts)


def test_chain_is_over_the_signed_lock() -> None:
    doc = v2_match("rng")
    assert chain_head(doc["lock"], doc["events"]).hex() == doc["chain"]
    assert base64.b64decode(doc["lock"]["signature"]["value"])


# -- derive ----------------------------------------------------------------------------------

SEED_V2 = bytes(range(64)).hex()
NONCE_A = bytes(0xA0 + i % 16 for i in range(32)).hex()
NONCE_B = bytes(0xB0 + i % 16 for i in range(32)).hex()
V0_A = "45bba2e9c7bd9d91eff3ed896a901f8a9dd5ca8f01e005da2c26c24a73d8c267"
V0_B = "bcaa14f3bf49355c0cc34e802c86851e87e753cd62f28efbcf777f8cfed78fb2"
DERIVE_V2 = derive_args(
    SEED_V2,
    "m-0002",
    '{"cube":true,"match_length":5}',
    ["alice-seed", "bob-seed"],
    [NONCE_A, NONCE_B],
    protocol=PROTOCOL_V2,
)


def test_derive_v2_gives_the_specs_vectors() -> None:
    """fairness-v2.md §10."""
    res = run(*DERIVE_V2, "--label", "g0/opening/0", "--dice", "2")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["protocol"] == PROTOCOL_V2
    assert out["commitment"] == "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"
    assert out["seed_commitments"] == [
        "ed862e4e2373b5ad61bb038f4799631b9d122b49a9ccf6b842a4df3ae698eec4",
        "14c3bf3c07c4d92c9404b4f4f19f98aba7ec9798895411f7064279c66f2ca597",
    ]
    assert out["match_key"] == (
        "3999c615a24c97f0baf7c1091cfa88d7ca8d6ba6c838b6b63e3fd8f27824f934"
        "8e74dc7223feb2453861e2c13a214a262550553e27c281730e7c3af33639d260"
    )
    assert out["result"] == [1, 2]
    for label, kind, want in (
        ("g0/roll/1", ["--dice", "2"], [4, 5]),
        ("dealer", ["--uniform", "4"], 1),
        ("h0/cut", ["--uniform", "51"], 7),
    ):
        assert json.loads(run(*DERIVE_V2, "--label", label, *kind).stdout)["result"] == want
    deck = json.loads(run(*DERIVE_V2, "--label", "h0/shuffle", "--shuffle", "deck52").stdout)
    assert deck["result"][:13] == "7C AC 3S 8S 5H 2D 9H 8D QH AS JC AH 6H".split()


def test_derive_v2_fresh_roll_from_the_two_values() -> None:
    res = run(*DERIVE_V2, "--label", "g0/roll/1", "--dice", "2", "--roll-values", V0_A, V0_B)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["base_label"] == "g0/roll/1"
    assert out["label"] == (
        "g0/roll/1|4406efb7f3fffc0db04b39d6542d1b187a75c7536d4d19896ef8c7348e7f8537"
    )
    assert out["result"] == [1, 5]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--nonce", NONCE_A], "--protocol qahwa-fair/2"),  # v2 inputs without --protocol
        (["--protocol", PROTOCOL_V2, "--nonce", NONCE_A], "one --nonce per --client-seed"),
        (["--protocol", PROTOCOL_V2, "--nonce", NONCE_A, "--nonce", "A" * 64], "lowercase"),
        (
            [
                "--protocol",
                PROTOCOL_V2,
                "--nonce",
                NONCE_A,
                "--nonce",
                NONCE_B,
                "--roll-values",
                V0_A,
                "xyz",
            ],
            "roll value",
        ),
    ],
)
def test_derive_v2_bad_input_exits_2(args: list[str], why: str) -> None:
    seed = SEED_V2 if "--protocol" in args else bytes(range(32)).hex()
    res = run(
        *derive_args(seed, "m", "{}", ["a", "b"]), "--label", "g0/roll/1", "--dice", "2", *args
    )
    assert res.exit_code == 2, res.output
    assert why in res.stderr and not res.stdout
    assert len(res.stderr.strip().splitlines()) == 1


def test_derive_a_v2_seed_without_protocol_gets_a_hint() -> None:
    res = run(*derive_args(SEED_V2, "m", "{}", ["a"]), "--label", "x", "--dice", "1")
    assert res.exit_code == 2 and "add --protocol qahwa-fair/2" in res.stderr


@pytest.mark.parametrize(("game", "missing"), [("tawla", [0]), ("shelem", [1, 3]), ("rng", [0])])
def test_a_no_reveal_transcript_of_the_games_package_verifies(
    game: str, missing: list[int]
) -> None:
    doc = v2_match(game, no_reveal=missing)
    assert [s["seat"] for s in doc["seats"] if s["client_seed"] is None] == missing
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert rep["result"]["reason"] == "no_reveal" and rep["result"]["forfeited"] == missing


@pytest.mark.parametrize("reason", ["timeout", "expired"])
def test_simulated_timeout_and_expiry_verify(reason: str) -> None:
    doc = v2_match("hokm", {"target": 1}, keyed=True, resign_at=9, end_reason=reason)
    assert doc["events"][-1]["reason"] == reason and "sig" not in doc["events"][-1]
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]


def test_house_seats_verify_and_are_shown(tmp_path: Path, key_file: str) -> None:
    doc = v2_match("hokm", {"target": 1}, house=[1, 3])
    assert [s["house"] for s in doc["lock"]["seats"]] == [False, True, False, True]
    res = run(write(tmp_path / "t.json", doc), "--key", key_file)
    assert res.exit_code == 0, res.output
    assert "1 bot1 (house)" in res.stdout and "0 bot0," in res.stdout
    doc["seats"][1]["house"] = False  # the operator hides a house seat
    assert first(rechain(doc))["check"] == "seats"


def test_own_seed_and_receipts_on_a_v1_transcript(tmp_path: Path, key_file: str) -> None:
    from tests.verify.test_verify_cli_helpers import full_match

    doc = full_match("rng")
    t = write(tmp_path / "v1.json", doc)
    seed = doc["seats"][0]["client_seed"]
    assert run(t, "--key", key_file, "--seat", "0", "--client-seed", seed).exit_code == 0
    res = run(t, "--key", key_file, "--seat", "0", "--client-seed", seed, "--nonce", "00" * 32)
    assert res.exit_code == 1 and "has no nonce" in res.stdout
    r = SIGNER.signed(
        {
            "type": "receipt",
            "protocol": PROTOCOL_V2,
            "match_id": doc["match_id"],
            "seq": 0,
            "chain": "00" * 32,
        }
    )
    res = run(t, "--key", key_file, "--receipt", write(tmp_path / "r.json", r))
    assert res.exit_code == 1 and "qahwa-fair/1 transcript" in res.stdout


def test_a_lock_with_a_seat_missing_fails() -> None:
    doc = v2_match("iraqi_domino", {"players": 3, "target": 30})
    lock = {k: v for k, v in doc["lock"].items() if k != "signature"}
    lock["seats"] = lock["seats"][:2]
    doc["lock"] = SIGNER.signed(lock)
    doc["seats"] = doc["seats"][:2]
    # K hashes in every seat's seed, so the first deal no longer recomputes
    f = first(rechain(doc))
    assert f["check"] == "replay" and f["seq"] == 0
