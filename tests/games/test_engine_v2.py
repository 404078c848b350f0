"""The games' side of qahwa-fair/2 (fairness-v2.md §4-§7, §9): the drawn hokm cut, fresh
rolls, ends other than play, no_reveal, the replay module's error kinds, type-strict chance
comparison, simulated v2 transcripts, and v1 transcripts byte-identical to before v2."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

import fairness
from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    Signer,
    canonical_json,
    chain_head,
    fresh_label,
    roll_chain,
    seat_sig_message,
    seed_commitment,
    verify_bytes,
)
from games import errors
from games.base import Chance, Engine, MatchContext
from games.ends import NoRevealMatch, no_reveal_event, no_reveal_result
from games.hokm import HokmEngine
from games.mahbusa import MahbusaEngine
from games.qahve import QahveEngine
from games.registry import GAME_IDS, engine_class, find_engine
from games.replay import replay
from games.tawla import TawlaEngine
from games.transcript import (
    replay_transcript,
    simulate_match,
    transcript_context,
    transcript_key,
)

K2 = hashlib.sha512(b"engine-v2").digest()  # a 64-byte match key: qahwa-fair/2
K1 = hashlib.sha256(b"engine-v1").digest()
MID = "m-v2"


def snapshot(e: Engine) -> Any:
    from tests.games.test_engine_contract import snapshot as snap

    return snap(e)


# -- rulesets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", [g for g in GAME_IDS if g != "rng"])
def test_v2_rulesets_list_every_rule(game: str) -> None:
    cls = engine_class(game)
    v1 = cls.parse_ruleset({}, protocol=PROTOCOL)
    v2 = cls.parse_ruleset({})
    assert v2 == cls.parse_ruleset({}, protocol=PROTOCOL_V2)
    assert {k: v2[k] for k in ("turn_seconds", "reveal_seconds", "max_seconds")} == {
        "turn_seconds": 300,
        "reveal_seconds": 120,
        "max_seconds": 86400,
    }
    assert "live_entropy" not in v2 and "turn_seconds" not in v1
    if game in ("tawla", "mahbusa"):
        assert v2["fresh_rolls"] is True and v1["live_entropy"] is False
    assert set(v2) - set(v1) <= {"turn_seconds", "reveal_seconds", "max_seconds", "fresh_rolls"}
    assert cls.parse_ruleset({"turn_seconds": 5, "max_seconds": 60})["turn_seconds"] == 5
    for bad in ({"turn_seconds": 0}, {"reveal_seconds": True}, {"max_seconds": -1}):
        with pytest.raises(errors.RulesetError):
            cls.parse_ruleset(bad)


def test_plain_sessions_keep_an_empty_ruleset() -> None:
    rng = engine_class("rng")
    assert rng.parse_ruleset({}) == {} == rng.parse_ruleset({}, protocol=PROTOCOL)
    with pytest.raises(errors.RulesetError):
        rng.parse_ruleset({"turn_seconds": 300})


@pytest.mark.parametrize("game", ["tawla", "mahbusa"])
def test_v2_refuses_live_entropy(game: str) -> None:
    cls = engine_class(game)
    for value in (True, False):
        with pytest.raises(errors.RulesetError, match="live_entropy"):
            cls.parse_ruleset({"live_entropy": value})
    assert cls.parse_ruleset({"live_entropy": True}, protocol=PROTOCOL)["live_entropy"] is True
    with pytest.raises(errors.RulesetError, match="protocol"):
        cls.parse_ruleset({}, protocol="qahwa-fair/9")


def test_engine_protocol_is_its_class() -> None:
    tawla1 = find_engine("tawla", protocol=PROTOCOL)
    assert tawla1(tawla1.parse_ruleset({}, protocol=PROTOCOL), Chance(K1)).protocol == PROTOCOL
    assert issubclass(tawla1, TawlaEngine) and find_engine("tawla", protocol=PROTOCOL) is tawla1
    e = HokmEngine(HokmEngine.parse_ruleset({}), Chance(K2))
    assert e.protocol == PROTOCOL_V2 and e.ctx is None
    # a key of another protocol's length is refused, never read as that protocol
    with pytest.raises(errors.RulesetError, match="qahwa-fair/2 match key is 64 bytes, got 32"):
        HokmEngine(HokmEngine.parse_ruleset({}), Chance(K1))
    with pytest.raises(errors.RulesetError, match="qahwa-fair/1 match key is 32 bytes, got 64"):
        tawla1(tawla1.parse_ruleset({}, protocol=PROTOCOL), Chance(K2))


# -- hokm: the drawn cut (§5) ------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_drawn_cut_for_every_table(players: int) -> None:
    e = HokmEngine(HokmEngine.parse_ruleset({"players": players}), Chance(K2))
    start = e.chance.take_events()
    assert [ev["label"] for ev in start] == ["hakem", "h0/shuffle"]
    deck = list(e.deck)
    cutter = e.cutter
    assert e.phase == "cut" and e.turn == cutter
    assert e.legal_actions(cutter) == [{"type": "cut"}] == e.bot_actions(cutter)
    before = snapshot(e)
    refused: list[tuple[Any, type[errors.GameError]]] = [
        ({"type": "cut", "k": 8}, errors.MalformedActionError),  # no chosen k
        ({"type": "cut", "k": None}, errors.MalformedActionError),
        ({"type": "tap"}, errors.IllegalActionError),  # no tap
        ({"type": "cut", "x": 1}, errors.MalformedActionError),
    ]
    for action, err in refused:
        with pytest.raises(err):
            e.apply(cutter, action)
        assert snapshot(e) == before, action
    with pytest.raises(errors.NotYourTurnError):
        e.apply((cutter + 1) % players, {"type": "cut"})
    produced = e.apply(cutter, {"type": "cut"})
    n = len(deck) - 1
    u = fairness.uniform(K2, "h0/cut", n)
    assert produced == [
        {"type": "action", "seat": cutter, "action": {"type": "cut"}},
        {"type": "chance", "label": "h0/cut", "kind": "uniform", "args": {"n": n}, "result": u},
    ]
    k = 1 + u
    assert e.cut_k == k and not e.tapped and e.deck == deck[k:] + deck[:k]
    assert e.phase == "trump" and e.view(None)["cut"] == k


def test_v1_cut_is_unchanged() -> None:
    hokm1 = find_engine("hokm", protocol=PROTOCOL)
    e = hokm1(hokm1.parse_ruleset({}, protocol=PROTOCOL), Chance(K1))
    assert e.legal_actions(e.cutter)[:2] == [{"type": "tap"}, {"type": "cut", "k": 1}]
    assert e.bot_actions(e.cutter) == [{"type": "tap"}]
    with pytest.raises(errors.MalformedActionError):
        e.apply(e.cutter, {"type": "cut"})  # v1: a cut names its k
    assert e.apply(e.cutter, {"type": "cut", "k": 17})[1:] == []  # v1's cut draws nothing
    assert e.cut_k == 17


def test_drawn_cut_without_cut_rule_deals_at_once() -> None:
    e = HokmEngine(HokmEngine.parse_ruleset({"cut": False}), Chance(K2))
    assert e.phase == "trump" and e.cutter not in (None,) and e.view(None)["cutter"] is None
    with pytest.raises(errors.IllegalActionError, match="no cut"):
        e.apply(e.turn, {"type": "cut"})  # type: ignore[arg-type]


# -- tawla and mahbusa: fresh rolls (§6) --------------------------------------------------------


def chains(n: int = 65536, match_id: str = MID) -> list[list[bytes]]:
    return [roll_chain(match_id, s, bytes([0x40 + s]) * 32, n) for s in (0, 1)]


def fresh_engine(
    cls: type[TawlaEngine] = TawlaEngine, ruleset: dict[str, Any] | None = None, n: int = 64
) -> tuple[TawlaEngine, list[list[bytes]]]:
    cs = chains(n)
    e = cls(
        cls.parse_ruleset(ruleset or {}),
        Chance(K2),
        MatchContext(MID, tuple(c[0].hex() for c in cs)),
    )
    return e, cs


def value(cs: list[list[bytes]], e: TawlaEngine, seat: int) -> str:
    return cs[seat][e.values_used[seat] + 1].hex()


def open_game(e: TawlaEngine, cs: list[list[bytes]]) -> list[dict[str, Any]]:
    """Send the opening values until the opening roll is not a tie; return the events."""
    out: list[dict[str, Any]] = []
    while e.phase == "opening":
        for seat in (0, 1):
            out += e.apply(seat, {"type": "roll_value", "value": value(cs, e, seat)})
    return out


@pytest.mark.parametrize("cls", [TawlaEngine, MahbusaEngine])
def test_fresh_opening_takes_seat_0_then_seat_1(cls: type[TawlaEngine]) -> None:
    e, cs = fresh_engine(cls)
    assert e.fresh and e.chance.take_events() == []  # nothing drawn before the values
    v = e.view(None)
    assert e.turn == 0 and v["phase"] == "opening" and v["dice"] is None
    assert v["fresh_roll"] == {"label": "g0/opening/0", "owes": [0, 1]}
    assert v["values_used"] == [0, 0]
    assert e.legal_actions(0) == [{"type": "roll_value"}] and e.legal_actions(1) == []
    before = snapshot(e)
    with pytest.raises(errors.NotYourTurnError):  # seat 1's value before seat 0's
        e.apply(1, {"type": "roll_value", "value": cs[1][1].hex()})
    with pytest.raises(errors.IllegalActionError, match="roll chain") as info:
        e.apply(0, {"type": "roll_value", "value": cs[0][2].hex()})  # skips a value
    assert info.value.kind == "roll_chain"
    for bad in (
        {"type": "roll_value"},
        {"type": "roll_value", "value": "AB" * 32},
        {"type": "roll_value", "value": cs[0][1].hex()[:-2]},
        {"type": "roll_value", "value": 7},
        {"type": "roll_value", "value": cs[0][1].hex(), "x": 1},
        {"type": "roll", "value": cs[0][1].hex()},
    ):
        with pytest.raises((errors.MalformedActionError, errors.IllegalActionError)):
            e.apply(0, bad)
    assert snapshot(e) == before, "a refused value changed the match"
    v0, v1 = cs[0][1], cs[1][1]
    assert e.apply(0, {"type": "roll_value", "value": v0.hex()}) == [
        {"type": "action", "seat": 0, "action": {"type": "roll_value", "value": v0.hex()}}
    ]
    assert e.turn == 1 and e.view(1)["fresh_roll"] == {"label": "g0/opening/0", "owes": [1]}
    produced = e.apply(1, {"type": "roll_value", "value": v1.hex()})
    label = fresh_label("g0/opening/0", v0, v1)
    dice = fairness.dice(K2, label, 2)
    assert produced[1] == {
        "type": "chance",
        "label": label,
        "kind": "dice",
        "args": {"count": 2, "sides": 6},
        "result": dice,
    }
    assert e.values_used == [1, 1]
    if dice[0] == dice[1]:
        assert e.view(None)["fresh_roll"] == {"label": "g0/opening/1", "owes": [0, 1]}
    else:
        assert e.phase == "move" and e.turn == (0 if dice[0] > dice[1] else 1)
        assert e.view(None)["opening"] == {"dice": dice, "attempts": 1}


def test_fresh_roll_order_roller_then_opponent() -> None:
    e, cs = fresh_engine(ruleset={"match_length": 0})
    open_game(e, cs)
    mover = e.turn
    assert mover is not None
    e.apply(mover, e.legal_actions(mover)[0])  # the opening move
    roller, other = 1 - mover, mover
    assert e.turn == roller and e.phase == "roll"
    assert {"type": "roll"} in e.legal_actions(roller)  # listed without its value
    assert e.view(None)["fresh_roll"] is None
    before = snapshot(e)
    with pytest.raises(errors.NotYourTurnError):  # the opponent's value before the roll: 409
        e.apply(other, {"type": "roll_value", "value": value(cs, e, other)})
    with pytest.raises(errors.IllegalActionError):  # the roller sends roll, not roll_value
        e.apply(roller, {"type": "roll_value", "value": value(cs, e, roller)})
    with pytest.raises(errors.MalformedActionError):
        e.apply(roller, {"type": "roll"})  # a fresh roll carries the roller's value
    with pytest.raises(errors.IllegalActionError) as info:
        e.apply(roller, {"type": "roll", "value": value(cs, e, other)})  # another's chain
    assert info.value.kind == "roll_chain"
    assert snapshot(e) == before
    # the cube decision comes before the roll
    e.apply(roller, {"type": "double"})
    e.apply(other, {"type": "take"})
    assert e.turn == roller and e.phase == "roll"
    t = e.rolls + 1
    v_r = value(cs, e, roller)
    assert e.apply(roller, {"type": "roll", "value": v_r})[1:] == []  # nothing drawn yet
    assert e.turn == other and e.phase == "roll_value" and e.dice is None
    assert e.view(roller)["fresh_roll"] == {"label": f"g0/roll/{t}", "owes": [other]}
    assert e.legal_actions(other) == [{"type": "roll_value"}]
    assert e.legal_actions(roller) == []
    with pytest.raises(errors.IllegalActionError):  # no double once the roll is under way
        e.apply(other, {"type": "double"})
    v_o = value(cs, e, other)
    produced = e.apply(other, {"type": "roll_value", "value": v_o})
    label = fresh_label(f"g0/roll/{t}", bytes.fromhex(v_r), bytes.fromhex(v_o))
    assert produced[1]["label"] == label
    assert produced[1]["result"] == fairness.dice(K2, label, 2)
    assert e.view(None)["fresh_roll"] is None and e.rolls == t


def test_fresh_rolls_need_the_context() -> None:
    rs = TawlaEngine.parse_ruleset({})
    with pytest.raises(ValueError, match="context"):
        TawlaEngine(rs, Chance(K2))
    with pytest.raises(ValueError, match="tip"):
        TawlaEngine(rs, Chance(K2), MatchContext(MID, ("00" * 32, None)))
    # without fresh rolls a v2 match rolls as v1 did, plain rolls
    e = TawlaEngine(TawlaEngine.parse_ruleset({"fresh_rolls": False}), Chance(K2))
    assert not e.fresh and e.phase == "move"
    assert e.view(None)["fresh_roll"] is None and e.view(None)["values_used"] == [0, 0]
    with pytest.raises(errors.IllegalActionError, match="no fresh rolls"):
        e.apply(e.turn, {"type": "roll_value", "value": "00" * 32})  # type: ignore[arg-type]


def test_exhausted_roll_chains_end_without_a_winner() -> None:
    class Short(TawlaEngine):
        ROLL_CHAIN_VALUES = 3

    e, cs = fresh_engine(Short, {"match_length": 0}, n=3)
    for _ in range(50):
        if e.outcome is not None:
            break
        seat = e.turn
        assert seat is not None
        action = e.bot_actions(seat)[0]
        if action["type"] in ("roll", "roll_value"):
            action = {**action, "value": value(cs, e, seat)}
        e.apply(seat, action)
    assert e.outcome is not None and e.values_used == [3, 3]
    assert e.outcome.to_json()["reason"] == "chain_exhausted"
    assert e.outcome.winners == () and e.outcome.to_json()["forfeited"] == []
    assert e.turn is None and e.view(None)["fresh_roll"] is None


def test_fresh_rolls_spec_vector() -> None:
    """fairness-v2.md §10: the roll g0/roll/1 with both seats' value 0."""
    r0 = bytes(0xC0 + i % 16 for i in range(32))
    r1 = bytes(0xD0 + i % 16 for i in range(32))
    c0, c1 = roll_chain("m-0002", 0, r0), roll_chain("m-0002", 1, r1)
    assert c0[0].hex() == "b7e641e487a7845194cb36ba29946eb6ad08888763bcb3e29fa500e52c34227f"
    label = fresh_label("g0/roll/1", c0[1], c1[1])
    assert label == ("g0/roll/1|4406efb7f3fffc0db04b39d6542d1b187a75c7536d4d19896ef8c7348e7f8537")
    key = bytes.fromhex(
        "3999c615a24c97f0baf7c1091cfa88d7ca8d6ba6c838b6b63e3fd8f27824f934"
        "8e74dc7223feb2453861e2c13a214a262550553e27c281730e7c3af33639d260"
    )
    assert Chance(key).dice(label, 2) == [1, 5]


# -- ends (§7) ---------------------------------------------------------------------------------


def test_timeout_in_tawla_match_play_loses_the_match() -> None:
    e, cs = fresh_engine(ruleset={"match_length": 7})
    open_game(e, cs)
    seat = e.turn
    assert seat is not None
    before = snapshot(e)
    for reason, seats, err in [
        ("abandoned", None, errors.IllegalActionError),
        ("timeout", None, errors.IllegalActionError),
        ("expired", 0, errors.IllegalActionError),
        ("timeout", [0, 1], errors.IllegalActionError),
        ("timeout", 2, errors.NotYourTurnError),
        ("timeout", True, errors.NotYourTurnError),
        ("no_reveal", [0], errors.IllegalActionError),
    ]:
        with pytest.raises(err):
            e.end_match(reason, seats)
        assert snapshot(e) == before, reason
    assert e.end_match("timeout", seat) == [{"type": "end", "reason": "timeout", "seat": seat}]
    result = e.view(None)["result"]
    assert result["status"] == "finished" and result["reason"] == "timeout"
    assert result["forfeited"] == [seat] and result["winners"] == [1 - seat]
    assert result["scores"][1 - seat] == 7 and result["scores"][seat] == 0
    assert e.turn is None and e.legal_actions(1 - seat) == []
    with pytest.raises(errors.MatchOverError):
        e.end_match("resigned", 1 - seat)


def test_resignation_in_money_play_costs_three_cubes() -> None:
    e, cs = fresh_engine(ruleset={"match_length": 0})
    open_game(e, cs)
    mover = e.turn
    assert mover is not None
    e.apply(mover, e.legal_actions(mover)[0])
    e.apply(1 - mover, {"type": "double"})
    e.apply(mover, {"type": "take"})
    assert e.cube_value == 2
    e.end_match("resigned", [mover])
    assert e.outcome is not None and e.outcome.reason == "resigned"
    assert e.outcome.winners == (1 - mover,) and e.outcome.forfeited == (mover,)
    assert e.outcome.scores[1 - mover] == 6 and e.outcome.scores[mover] == 0


def test_mahbusa_money_forfeit_is_a_mars_times_the_cube() -> None:
    e, cs = fresh_engine(MahbusaEngine, {"match_length": 0})
    open_game(e, cs)
    seat = e.turn
    assert seat is not None
    e.end_match("timeout", seat)
    assert e.outcome is not None and e.outcome.scores[1 - seat] == 2
    assert e.outcome.detail == {"match_length": 0, "games": []}


def test_team_forfeits_and_expiry() -> None:
    e = HokmEngine(HokmEngine.parse_ruleset({}), Chance(K2))
    assert e.end_match("resigned", 3) == [{"type": "end", "reason": "resigned", "seat": 3}]
    assert e.view(None)["result"] == {
        "status": "finished",
        "reason": "resigned",
        "forfeited": [3],
        "winners": [0, 2],
        "scores": [0, 0],
    }
    three = HokmEngine(HokmEngine.parse_ruleset({"players": 3}), Chance(K2))
    three.end_match("timeout", 1)
    assert three.outcome is not None and three.outcome.winners == (0, 2)  # the others share
    q = QahveEngine(QahveEngine.parse_ruleset({}), Chance(K2))
    assert q.end_match("expired") == [{"type": "end", "reason": "expired"}]
    assert q.view(None)["result"] == {
        "status": "finished",
        "reason": "expired",
        "forfeited": [],
        "winners": [],
        "scores": [0, 0],
    }


def test_played_out_v2_results_have_the_v2_shape_and_v1_keeps_its_own() -> None:
    doc, e = simulate_match("rng", seed=1)
    assert doc["result"]["status"] == "finished" and doc["result"]["forfeited"] == []
    doc1, e1 = simulate_match("rng", seed=1, protocol=PROTOCOL)
    assert "status" not in doc1["result"] and "forfeited" not in doc1["result"]
    hokm1 = find_engine("hokm", protocol=PROTOCOL)
    v1 = hokm1(hokm1.parse_ruleset({}, protocol=PROTOCOL), Chance(K1))
    with pytest.raises(errors.IllegalActionError):
        v1.end_match("timeout", 0)  # v2's ends are not v1's
    v1.end_match("resigned", 1)
    assert v1.view(None)["result"] == {
        "resigned": 1,
        "reason": "resigned",
        "winners": [0, 2],
        "scores": [0, 0],
    }


def test_no_reveal_result() -> None:
    hokm = engine_class("hokm")
    rs = hokm.parse_ruleset({})
    assert no_reveal_result(hokm, rs, [1]) == {
        "status": "finished",
        "reason": "no_reveal",
        "forfeited": [1],
        "winners": [0, 2],
        "scores": [0, 0],
    }
    assert no_reveal_result(hokm, rs, [0, 1])["winners"] == []  # both sides forfeit
    three = hokm.parse_ruleset({"players": 3})
    assert no_reveal_result(hokm, three, [2])["winners"] == [0, 1]
    tawla = engine_class("tawla")
    assert no_reveal_result(tawla, tawla.parse_ruleset({}), [0])["scores"] == [0, 5]
    assert no_reveal_result(tawla, tawla.parse_ruleset({"match_length": 0}), [1])["scores"] == [
        3,
        0,
    ]
    mahbusa = engine_class("mahbusa")  # its worst game is a mars: 2 points
    assert no_reveal_result(mahbusa, mahbusa.parse_ruleset({"match_length": 0}), [1])["scores"] == [
        2,
        0,
    ]
    for bad, err in [
        ([], errors.IllegalActionError),
        ([1, 0], errors.IllegalActionError),
        ([1, 1], errors.IllegalActionError),
        ([4], errors.NotYourTurnError),
        ([True], errors.NotYourTurnError),
        (None, errors.IllegalActionError),
    ]:
        with pytest.raises(err):
            no_reveal_result(hokm, rs, bad)  # type: ignore[arg-type]
    assert no_reveal_event([1, 3]) == {
        "seq": 0,
        "type": "end",
        "reason": "no_reveal",
        "seats": [1, 3],
    }


def test_no_reveal_transcript_replays_with_no_key() -> None:
    doc, eng = simulate_match("tawla", seed=4, no_reveal=[1])
    assert isinstance(eng, NoRevealMatch)
    assert doc["events"] == [{"seq": 0, "type": "end", "reason": "no_reveal", "seats": [1]}]
    assert doc["seats"][1]["client_seed"] is None and doc["seats"][1]["nonce"] is None
    assert doc["seats"][0]["client_seed"] is not None and transcript_key(doc) is None
    assert doc["result"] == no_reveal_result(TawlaEngine, TawlaEngine.parse_ruleset({}), [1])
    again = replay_transcript(doc)
    assert again.outcome is not None and again.outcome.to_json() == doc["result"]
    assert again.view(0)["game"] == "tawla" and again.turn is None
    with pytest.raises(errors.MatchOverError):
        again.apply(0, {"type": "roll"})
    cls, rs = TawlaEngine, doc["ruleset"]
    cases: list[tuple[list[Any], str]] = [
        ([{**doc["events"][0], "seats": []}], "end"),
        ([{**doc["events"][0], "seq": 1}], "seq"),
        ([{**doc["events"][0], "seat": 1}], "event"),
        ([doc["events"][0], {"seq": 1, "type": "end", "reason": "expired"}], "event"),
        ([{"seq": 0, "type": "end", "reason": "expired"}], "end"),
        ([], "end"),
    ]
    for events, kind in cases:
        with pytest.raises(errors.ReplayError) as info:
            replay(cls, rs, None, events, protocol=PROTOCOL_V2)
        assert info.value.kind == kind, events
    with pytest.raises(ValueError):
        replay(cls, rs, None, doc["events"], protocol=PROTOCOL)


# -- replay: kinds, type-strictness, sig ---------------------------------------------------------


def fresh_doc(**kw: Any) -> dict[str, Any]:
    doc, _ = simulate_match("tawla", {"match_length": 1}, seed=5, **kw)
    return doc


def kind_of(
    doc: dict[str, Any], events: list[Any] | None = None, ruleset: str | None = None
) -> str:
    with pytest.raises(errors.ReplayError) as info:
        replay(
            TawlaEngine,
            doc["ruleset"] if ruleset is None else ruleset,
            transcript_key(doc),
            doc["events"] if events is None else events,
            protocol=PROTOCOL_V2,
            ctx=transcript_context(doc),
        )
    return info.value.kind


def test_replay_error_kinds() -> None:
    doc = fresh_doc()
    ev = doc["events"]
    assert replay_transcript(doc).outcome is not None  # genuine: fine
    dice_at = next(i for i, e in enumerate(ev) if e["type"] == "chance")
    move_at = next(
        i for i, e in enumerate(ev) if e["type"] == "action" and e["action"]["type"] == "move"
    )
    value_at = 0  # seat 0's opening value

    def changed(i: int, **fields: Any) -> list[Any]:
        out = copy.deepcopy(ev)
        out[i] = {**out[i], **fields}
        return out

    assert kind_of(doc, ruleset="not json") == "ruleset"
    assert kind_of(doc, ruleset='{"match_length":1}') == "ruleset"  # not every rule listed
    assert kind_of(doc, ruleset=doc["ruleset"].replace(":", ": ")) == "ruleset"  # not canonical
    assert kind_of(doc, ruleset=doc["ruleset"][:-1] + ',"cube":true}') == "ruleset"  # dup key
    r = ev[dice_at]["result"]
    assert kind_of(doc, changed(dice_at, result=[r[0] % 6 + 1, r[1]])) == "chance"
    assert kind_of(doc, ev[:dice_at] + ev[dice_at + 1 :]) in ("chance", "seq")
    assert kind_of(doc, changed(move_at, action={"type": "move", "steps": [[1, 0]]})) == "action"
    assert kind_of(doc, changed(move_at, seq=move_at + 1)) == "seq"
    assert kind_of(doc, changed(move_at, type="pass")) == "event"
    assert kind_of(doc, changed(move_at, extra=1)) == "event"
    assert kind_of(doc, changed(move_at, sig=7)) == "event"
    assert kind_of(doc, ev[:dice_at]) == "truncated"

    def replay_in(ctx: MatchContext) -> None:
        replay(TawlaEngine, doc["ruleset"], transcript_key(doc), ev, protocol=PROTOCOL_V2, ctx=ctx)

    for tips in [(), (None, None), (ev[0]["action"]["value"], "zz" * 32)]:
        with pytest.raises(errors.ReplayError) as info:
            replay_in(MatchContext(doc["match_id"], tips))
        assert info.value.kind == "roll_chain"
    with pytest.raises(errors.ReplayError) as info:  # another match's id: every value is off-chain
        replay_in(MatchContext("another", transcript_context(doc).roll_tips))  # type: ignore[union-attr]
    assert (info.value.kind, info.value.seq) == ("roll_chain", 0)
    bad_value = {"type": "roll_value", "value": "00" * 32}
    assert kind_of(doc, changed(value_at, action=bad_value)) == "roll_chain"
    end = {"seq": len(ev), "type": "end", "reason": "abandoned"}
    assert kind_of(doc, [*ev[:move_at], {**end, "seq": move_at}]) == "end"
    resign = {"seq": move_at, "type": "end", "reason": "resigned", "seat": 0, "extra": 1}
    assert kind_of(doc, [*ev[:move_at], resign]) == "event"


def test_chance_results_compare_type_strictly() -> None:
    """A die written 3.0, or true for a 1, equals the draw as a Python value but not as JSON:
    the replay refuses it (canonical JSON bytes are compared)."""
    doc = fresh_doc()
    ev = doc["events"]
    i = next(k for k, e in enumerate(ev) if e["type"] == "chance")
    d = ev[i]["result"]
    fakes: list[tuple[str, Any]] = [
        ("result", [float(d[0]), d[1]]),
        ("result", [d[0], float(d[1])]),
        ("args", {"count": 2.0, "sides": 6}),
        ("args", {"count": 2, "sides": 6.0}),
    ]
    if 1 in d:
        fakes.append(("result", [True if x == 1 else x for x in d]))
    for field, fake in fakes:
        out = copy.deepcopy(ev)
        out[i][field] = fake
        assert out[i] == ev[i]  # equal as Python values …
        assert kind_of(doc, out) == "chance", fake  # … but not the draw the rules made
    h, _ = simulate_match("hokm", {"target": 1}, seed=2)
    j = next(k for k, e in enumerate(h["events"]) if e.get("kind") == "uniform")
    out = copy.deepcopy(h["events"])
    out[j]["result"] = float(out[j]["result"])
    with pytest.raises(errors.ReplayError) as info:
        replay(HokmEngine, h["ruleset"], transcript_key(h), out, protocol=PROTOCOL_V2)
    assert info.value.kind == "chance" and info.value.seq == j


def test_sig_is_accepted_on_v2_action_and_end_events_only() -> None:
    doc = fresh_doc(keyed=True, resign_at=4)
    assert all("sig" in e for e in doc["events"] if e["type"] == "action")
    assert doc["events"][-1]["type"] == "end" and "sig" in doc["events"][-1]
    assert replay_transcript(doc).outcome is not None
    v1, _ = simulate_match("tawla", {"match_length": 1}, seed=5, protocol=PROTOCOL)
    out = copy.deepcopy(v1["events"])
    i = next(k for k, e in enumerate(out) if e["type"] == "action")
    out[i]["sig"] = "AAAA"
    with pytest.raises(errors.ReplayError) as info:
        replay(TawlaEngine, v1["ruleset"], transcript_key(v1), out, protocol=PROTOCOL)
    assert info.value.kind == "event"


def test_catch_up_matches_a_full_replay() -> None:
    """The service's catch-up (games.replay.Replayer on a cached engine) reaches the state
    of a full replay, event by event."""
    from games.replay import Replayer

    doc = fresh_doc()
    ev = doc["events"]
    half = next(i for i in range(len(ev) // 2, len(ev)) if ev[i]["type"] == "action")
    cls, key, ctx = TawlaEngine, transcript_key(doc), transcript_context(doc)
    engine = replay(cls, doc["ruleset"], key, ev[:half], protocol=PROTOCOL_V2, ctx=ctx)
    Replayer(engine, next_seq=half).feed(ev[half:]).finish()
    assert snapshot(engine) == snapshot(replay_transcript(doc))


# -- simulated v2 transcripts (§3, §7, §9) -------------------------------------------------------


def test_simulated_v2_transcript_is_complete_and_signed() -> None:
    signer = Signer.generate()
    args: dict[str, Any] = {"seed": 8, "keyed": True, "signer": signer, "house": [1]}
    args |= {"resign_at": 30, "end_reason": "timeout", "timed": True}
    doc, engine = simulate_match("tawla", {"match_length": 1}, **args)
    assert list(doc) == [
        "protocol",
        "match_id",
        "game",
        "ruleset",
        "commitment",
        "server_seed",
        "lock",
        "lock_index",
        "seats",
        "events",
        "chain",
        "result",
        "created_at",
        "ended_at",
        "signature",
    ]
    assert doc["protocol"] == PROTOCOL_V2 and len(doc["server_seed"]) == 128
    assert doc["commitment"] == hashlib.sha256(bytes.fromhex(doc["server_seed"])).hexdigest()
    fairness.verify_record(doc, signer.public_key)
    lock = doc["lock"]
    fairness.verify_record(lock, signer.public_key)
    assert lock["type"] == "lock" and lock["protocol"] == PROTOCOL_V2
    for k in ("match_id", "game", "ruleset", "commitment"):
        assert lock[k] == doc[k]
    assert (lock["locked_at"], lock["reveal_by"], lock["end_by"]) == (
        "2026-01-01T00:00:01Z",
        "2026-01-01T00:02:01Z",
        "2026-01-02T00:00:01Z",
    )
    for seat, row in zip(lock["seats"], doc["seats"], strict=True):
        assert seat["seed_commitment"] == seed_commitment(
            doc["match_id"], row["seat"], row["nonce"], row["client_seed"]
        )
        assert (seat["key"], seat["roll_chain"], seat["house"]) == (
            row["key"],
            row["roll_chain"],
            row["seat"] == 1,
        )
    # the event chain and every seat signature
    assert chain_head(lock, doc["events"]).hex() == doc["chain"]
    prev = fairness.chain_start(lock)
    for ev in doc["events"]:
        if ev["type"] == "action" or (ev["type"] == "end" and ev["reason"] == "resigned"):
            key = lock["seats"][ev["seat"]]["key"]
            verify_bytes(key, ev["sig"], seat_sig_message(doc["match_id"], prev, ev))
        else:
            assert "sig" not in ev  # chance events and a timeout are the server's
        prev = fairness.chain_next(prev, ev)
    # the timeout is the seat's on turn, exactly at its deadline (a second after the last
    # request, plus turn_seconds)
    owing = replay_transcript({**doc, "events": doc["events"][:-1]}).turn
    assert owing is not None
    assert doc["events"][-1] == {
        "seq": len(doc["events"]) - 1,
        "type": "end",
        "reason": "timeout",
        "seat": owing,
        "at": "2026-01-01T00:05:33.000Z",
    }
    assert doc["events"][-2]["at"] == "2026-01-01T00:00:33.000Z"
    assert doc["result"]["forfeited"] == [owing] and doc["result"]["winners"] == [1 - owing]
    # fresh-roll values are real roll-chain values of each seat
    tips = [bytes.fromhex(s["roll_chain"]) for s in lock["seats"]]
    for ev in doc["events"]:
        if ev["type"] == "action" and ev["action"]["type"] in ("roll", "roll_value"):
            s = ev["seat"]
            tips[s] = fairness.check_roll_value(doc["match_id"], s, tips[s], ev["action"]["value"])
    again = replay_transcript(doc)
    assert again.outcome == engine.outcome
    # deterministic: the same arguments give the same transcript
    doc2, _ = simulate_match("tawla", {"match_length": 1}, **args)
    assert canonical_json(doc2) == canonical_json(doc)


def test_unsigned_placeholder_lock() -> None:
    doc, _ = simulate_match("hokm", {"target": 1}, seed=2)
    assert "signature" not in doc and "signature" not in doc["lock"]
    assert all(s["key"] is None and s["roll_chain"] is None for s in doc["lock"]["seats"])
    assert not any("sig" in e for e in doc["events"])
    assert chain_head(doc["lock"], doc["events"]).hex() == doc["chain"]


def test_simulate_refuses_v2_options_for_v1() -> None:
    with pytest.raises(ValueError):
        simulate_match("hokm", seed=1, protocol=PROTOCOL, keyed=True)
    with pytest.raises(ValueError):
        simulate_match("hokm", seed=1, protocol="qahwa-fair/9")


# -- v1 transcripts: byte for byte as before qahwa-fair/2 -------------------------------------------

#: sha256 of the canonical JSON of ``simulate_match(game, ruleset, seed=…, resign_at=…)``
#: computed with the code before qahwa-fair/2 (main at 7abff9e), where v1 was the only protocol
V1_TRANSCRIPTS = [
    (
        "iraqi_domino",
        {"players": 2, "target": 1},
        1,
        None,
        "5294bcf0f0a7699ef01bfe4d8957fdc86c5f3bf3151444f7b1a0bd4826b77f2a",
    ),
    (
        "mexican_train",
        {"players": 2, "rounds": 1},
        2,
        None,
        "847a6f0465add9c464c228b795c5a08a20c2386195e10777c18c4af5b1cbee74",
    ),
    (
        "qahve",
        {"target": 60},
        3,
        None,
        "386dfe481d6aa0c2d2a7ee14e57c1e79dc96a1482f7f0634c9f0ea5841e65e0f",
    ),
    (
        "hokm",
        {"target": 2},
        4,
        None,
        "59c6f4c520b7a3465cf2fb3d137bcfd5408fa4c0c6b3a007a92fc9467a720a48",
    ),
    (
        "hokm",
        {"players": 3, "target": 1},
        5,
        30,
        "dcfba292780ee86a1925fd7d7e3a992b051a387a3040d46a89c929241dce8b82",
    ),
    (
        "shelem",
        {"players": 2, "target": 200},
        6,
        None,
        "5c960f436b0ce74a8d5860c7c5f52ee0a83e3853be5fc7d6f9bb01efe5262826",
    ),
    (
        "tawla",
        {"match_length": 1},
        7,
        None,
        "37d474df80a884a15ab42c69bb4d055abdc9846489c6a1de2565a31474e52e65",
    ),
    (
        "tawla",
        {"live_entropy": True, "match_length": 1},
        8,
        9,
        "12131888410d2c92e1ffad754e2ccf3ac8deef3141c63a0a535fa7188f5b5bba",
    ),
    (
        "mahbusa",
        {"match_length": 1},
        9,
        None,
        "a777031d5e98bd15bb5383420dce50b6933b6518f4b83134fa2cd27d4625ef90",
    ),
    ("rng", {}, 10, None, "fa0ff2e524ea837e7dadc4d162979a929e1562f878d00c5f3160dcf9a4d8281c"),
]


@pytest.mark.parametrize(("game", "ruleset", "seed", "resign_at", "sha"), V1_TRANSCRIPTS)
def test_v1_transcripts_are_unchanged(
    game: str, ruleset: dict[str, Any], seed: int, resign_at: int | None, sha: str
) -> None:
    doc, engine = simulate_match(game, ruleset, seed=seed, resign_at=resign_at, protocol=PROTOCOL)
    assert hashlib.sha256(canonical_json(doc)).hexdigest() == sha
    assert replay_transcript(doc).outcome == engine.outcome
    assert json.loads(json.dumps(doc)) == doc
