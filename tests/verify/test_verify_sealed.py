"""``verify`` on qahwa-fair/3 transcripts (fairness-v3 §9a, §10): sealed matches verify whole
(every key, shuffle proof, share, opening and revealed key, the deal and the rules over hidden
hands, the result); a changed proof byte, share or key fails with a line naming the step; a
revoke found at the hand's end verifies as the rules' forfeit."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from fairness import DECK52, PROTOCOL_V2, tiles
from games.transcript import simulate_match
from tests.verify.test_verify_cli_helpers import KEYS, SIGNER
from verify_cli.core import FAILED, UNUSABLE, VERIFIED, verify_document


def check(rep: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in rep["checks"] if c["name"] == name)


def sealed_doc(game: str, ruleset: dict[str, Any], seed: int, **kw: Any) -> dict[str, Any]:
    doc, _ = simulate_match(
        game,
        {**ruleset, "deal": "sealed"},
        seed=seed,
        keyed=True,
        timed=True,
        signer=SIGNER,
        **kw,
    )
    assert doc["protocol"] == "qahwa-fair/3"
    return doc


@pytest.mark.parametrize(
    ("game", "ruleset", "house"),
    [
        ("hokm", {"target": 1}, (1,)),
        ("hokm", {"players": 2, "target": 1}, ()),
        ("iraqi_domino", {"players": 2, "target": 20}, ()),
        ("iraqi_domino", {"players": 4, "target": 20}, (0, 2)),
    ],
)
def test_a_sealed_match_verifies(
    game: str, ruleset: dict[str, Any], house: tuple[int, ...]
) -> None:
    doc = sealed_doc(game, ruleset, seed=5, house=house)
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED, [c for c in rep["checks"] if c["ok"] is False]
    sealed = check(rep, "sealed")
    assert sealed["ok"] is True and "shuffle proofs" in sealed["detail"]
    assert check(rep, "seat signatures")["ok"] is True


def _tamper(doc: dict[str, Any], step: str) -> int:
    for ev in doc["events"]:
        act = ev.get("action") or {}
        if act.get("type") != "sealed" or act.get("step") != step:
            continue
        if step == "shuffle":
            raw = bytearray(base64.b64decode(act["proof"]))
            raw[-40] ^= 1  # a scalar of the proof: still canonical, no longer a proof
            act["proof"] = base64.b64encode(bytes(raw)).decode("ascii")
        elif step == "share":
            proof = bytearray(bytes.fromhex(act["shares"][0]["proof"]))
            proof[70] ^= 1
            act["shares"][0]["proof"] = proof.hex()
        elif step == "key":
            proof = bytearray(bytes.fromhex(act["proof"]))
            proof[40] ^= 1
            act["proof"] = proof.hex()
        else:
            secret = bytearray(bytes.fromhex(act["secret"]))
            secret[0] ^= 1
            act["secret"] = secret.hex()
        seq: int = ev["seq"]
        return seq
    raise AssertionError(f"no {step} step")


@pytest.mark.parametrize("step", ["key", "shuffle", "share", "reveal_key"])
def test_one_changed_byte_of_a_step_fails_naming_it(step: str) -> None:
    doc = sealed_doc("hokm", {"target": 1}, seed=7)
    bad = copy.deepcopy(doc)
    seq = _tamper(bad, step)
    rep = verify_document(SIGNER.signed(bad), KEYS, draws_limit=None)
    assert rep["status"] == FAILED
    sealed = check(rep, "sealed")
    assert sealed["ok"] is False
    assert sealed["detail"].startswith(f"event {seq}: seat ")
    assert f"its sealed {step!r} step is refused" in sealed["detail"]
    assert check(rep, "replay")["ok"] is False


def test_a_changed_opening_fails_naming_it() -> None:
    doc = sealed_doc("hokm", {"target": 1}, seed=8)
    bad = copy.deepcopy(doc)
    ev = next(e for e in bad["events"] if (e.get("action") or {}).get("type") == "play")
    others = [c for c in ("AS", "KH", "2C", "7D") if c != ev["action"]["card"]]
    ev["action"]["card"] = others[0]
    rep = verify_document(SIGNER.signed(bad), KEYS, draws_limit=None)
    sealed = check(rep, "sealed")
    assert sealed["ok"] is False and "the opening its 'play' carries is refused" in sealed["detail"]
    assert "do not open item" in sealed["detail"]


def test_a_revoke_verifies_as_the_rules_forfeit() -> None:
    doc = sealed_doc("hokm", {"target": 1}, seed=9, cheats={3: "revoke"})
    assert doc["events"][-1] == {
        **{k: doc["events"][-1][k] for k in ("seq", "at")},
        "type": "end",
        "reason": "rule",
        "seat": 3,
    }
    assert doc["result"]["reason"] == "rule" and doc["result"]["forfeited"] == [3]
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED, [c for c in rep["checks"] if c["ok"] is False]
    # a transcript that leaves the rule's end out (a server hiding the revoke) fails
    bad = copy.deepcopy(doc)
    bad["events"] = bad["events"][:-1]
    rep = verify_document(SIGNER.signed(bad), KEYS, draws_limit=None)
    assert rep["status"] == FAILED
    assert "the end event (reason 'rule', seat 3)" in check(rep, "replay")["detail"]


def test_the_protocol_and_the_deal_go_together() -> None:
    doc = sealed_doc("hokm", {"target": 1}, seed=10)
    as_v2 = {**doc, "protocol": PROTOCOL_V2}
    rep = verify_document(SIGNER.signed(as_v2), KEYS)
    assert rep["status"] == UNUSABLE and "is qahwa-fair/3" in rep["reason"]
    seeded, _ = simulate_match("hokm", {"target": 1}, seed=10, keyed=True, signer=SIGNER)
    as_v3 = {**seeded, "protocol": "qahwa-fair/3"}
    rep = verify_document(SIGNER.signed(as_v3), KEYS)
    assert rep["status"] == UNUSABLE and "must say 'deal': 'sealed'" in rep["reason"]
    mahbusa = {**seeded, "game": "mahbusa", "ruleset": '{"deal":"sealed"}'}
    rep = verify_document(SIGNER.signed({**mahbusa, "protocol": "qahwa-fair/3"}), KEYS)
    assert rep["status"] == UNUSABLE and "mahbusa has no sealed deal" in rep["reason"]


# -- the report shows the sealed deal (issue 46) ------------------------------------------------


def sealed_lines(rep: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in rep["draws"] if d["kind"] == "sealed"]


def plays(doc: dict[str, Any]) -> list[tuple[int, int, int, str]]:
    """(seq, seat, item, code) of every opening the events carry, in order."""
    out = []
    for ev in doc["events"]:
        act = ev.get("action") or {}
        if "share" in act and "item" in act:
            out.append((ev["seq"], ev["seat"], act["item"], act.get("card") or act.get("tile")))
    return out


def test_the_report_shows_who_was_dealt_what_and_when_each_item_opened() -> None:
    doc = sealed_doc("hokm", {"target": 1}, seed=5, house=(1,))
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED
    lines = sealed_lines(rep)
    hands = sum(1 for e in doc["events"] if (e.get("action") or {}).get("step") == "key") // 4
    assert [d["sealed"]["hand"] for d in lines] == list(range(hands)) and hands >= 1
    assert rep["draws_total"] == len(rep["draws"])
    first = lines[0]["sealed"]
    assert first["whole"] and first["revealed"] == [0, 1, 2, 3] and first["undealt"] == []
    dealt = first["dealt"]
    assert sorted(c for s in dealt.values() for c in s) == sorted(doc_cards())
    assert all(len(cards) == 13 for cards in dealt.values())
    # the line sits at the hand's last reveal_key
    last_reveal = [
        e["seq"] for e in doc["events"] if (e.get("action") or {}).get("step") == "reveal_key"
    ][3]
    assert lines[0]["seq"] == last_reveal
    # every play of hand 0, with its event, seat and card, as the events carry it
    shown = [(o["seq"], o["seat"], o["item"], o["code"]) for o in first["opened"]]
    assert shown == [p for p in plays(doc) if p[0] < last_reveal] and len(shown) >= 28
    assert all(o["by"] == "play" for o in first["opened"])
    for _, seat, _, card in shown:
        assert card in dealt[str(seat)]
    text = lines[0]["text"]
    assert text.startswith("hand 0, sealed deal, opened whole")
    assert "seat 1 (bot1): " in text and f"at #{shown[0][0]} (play)" in text


def doc_cards() -> list[str]:
    return list(DECK52)


def test_a_hand_cut_short_shows_only_what_was_opened() -> None:
    doc, _ = simulate_match(
        "hokm",
        {"target": 1, "deal": "sealed"},
        seed=5,
        keyed=True,
        timed=True,
        signer=SIGNER,
        resign_at=40,
    )
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED
    (line,) = sealed_lines(rep)
    deal = line["sealed"]
    assert not deal["whole"] and deal["revealed"] == []
    opened = plays(doc)
    assert [(o["seq"], o["seat"], o["code"]) for o in deal["opened"]] == [
        (seq, seat, code) for seq, seat, _, code in opened
    ]
    known = [c for cards in deal["dealt"].values() for c in cards if c is not None]
    assert sorted(known) == sorted(code for *_, code in opened)
    assert sum(len(cards) for cards in deal["dealt"].values()) == 52
    assert "cut short before every key was revealed" in line["text"]
    assert "never opened" in line["text"]


def test_a_domino_round_shows_the_tiles_dealt_to_nobody() -> None:
    doc = sealed_doc("iraqi_domino", {"players": 4, "target": 20}, seed=5, house=(0, 2))
    rep = verify_document(SIGNER.signed(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED
    lines = sealed_lines(rep)
    assert lines and all(d["sealed"]["whole"] for d in lines)
    for d in lines:  # four players: 28 tiles, 7 each, none left
        assert [len(t) for t in d["sealed"]["dealt"].values()] == [7, 7, 7, 7]
        assert d["sealed"]["undealt"] == []
    # two players: a boneyard, 10 of whose tiles nobody drew this round (seed 1)
    two = sealed_doc("iraqi_domino", {"players": 2, "target": 20}, seed=1)
    rep2 = verify_document(SIGNER.signed(two), KEYS, draws_limit=None)
    (line,) = sealed_lines(rep2)
    deal = line["sealed"]
    dealt = sum(len(t) for t in deal["dealt"].values())
    assert (dealt, len(deal["undealt"])) == (18, 10)
    assert None not in deal["undealt"]  # opened whole at the round's end: every tile known
    every = [c for t in deal["dealt"].values() for c in t] + deal["undealt"]
    assert sorted(every) == sorted(tiles(6))
    assert "dealt to nobody: " in line["text"]
