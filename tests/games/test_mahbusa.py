"""Mahbusa: hand-worked turns, imprisonment through the engine, the mother checker, and
random matches (conservation of checkers, replay reproduces every view)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import PROTOCOL, PROTOCOL_V2
from games.errors import IllegalActionError, MalformedActionError, RulesetError
from games.mahbusa import PR, MahbusaEngine, legal_turns
from games.registry import GAME_IDS, engine_class, find_engine
from games.transcript import replay_transcript, simulate_match
from tests.support import ScriptedChance, examples, vector

VEC = vector("mahbusa_turns.json")


def board(case: dict[str, Any]) -> list[int]:
    b = [0] * 50
    for k, v in case["mine"].items():
        b[int(k)] += v
    for k, v in case["theirs"].items():
        b[int(k)] -= v
    for k, v in case["prisoners"].items():
        b[PR + int(k)] = v
    return b


def make(**script: list[int]) -> MahbusaEngine:
    labels = {k.replace("_", "/"): v for k, v in script.items()}
    cls = find_engine("mahbusa", protocol=PROTOCOL)  # ScriptedChance's key is qahwa-fair/1's
    return cls(cls.parse_ruleset({"match_length": 3}), ScriptedChance(labels))


def snapshot(e: MahbusaEngine) -> str:
    return json.dumps([e.view(0), e.view(1), e.view(None), sorted(e.chance.labels)], sort_keys=True)


def test_registered_with_tawlas_ruleset() -> None:
    assert "mahbusa" in GAME_IDS and engine_class("mahbusa") is MahbusaEngine
    assert MahbusaEngine.parse_ruleset({})["match_length"] == 5
    with pytest.raises(RulesetError):
        MahbusaEngine.parse_ruleset({"bar": True})


@pytest.mark.parametrize("case", VEC["cases"], ids=lambda c: c["name"][:40])
def test_known_answer_turns(case: dict[str, Any]) -> None:
    for dice in (case["dice"], case["dice"][::-1]):
        got = legal_turns(board(case), dice)
        assert sorted([list(s) for s in t] for t in got.values()) == sorted(case["turns"])


def test_start_position_and_opening() -> None:
    e = make(g0_opening_0=[6, 5])
    v = e.view(None)
    assert v["points"][23] == 15 and v["points"][0] == -15 and sum(map(abs, v["points"])) == 30
    assert v["prisoners"] == [0] * 24 and v["bar"] == [0, 0] and v["pips"] == [360, 360]
    assert e.turn == 0 and e.phase == "move"
    assert sorted(a["steps"] for a in e.legal_actions(0)) == [
        [[24, 19], [19, 13]],
        [[24, 19], [24, 18]],
    ]


def test_imprisonment_closing_and_release_through_the_engine() -> None:
    e = make(g0_opening_0=[3, 1], g0_roll_1=[3, 1])
    pts = [0] * 24
    pts[7] = 1  # seat 0: one checker on its point 8
    pts[4] = -1  # seat 1: a lone checker on seat 0's point 5
    pts[5] = -14  # seat 1's other 14 on seat 0's point 6
    e.set_position(pts, [0, 0], [14, 0], on_roll=0)
    e.apply(0, {"type": "roll"})
    # 8-5 imprisons the lone checker and 5-4 frees it again: the same end as 8-7-4
    assert [a["steps"] for a in e.legal_actions(0)] == [[[8, 7], [7, 4]]]
    held = snapshot(e)
    with pytest.raises(IllegalActionError, match="closed"):
        e.apply(0, {"type": "move", "steps": [[8, 6]]})
    with pytest.raises(MalformedActionError):
        e.apply(0, {"type": "move", "steps": [[8, 5, 1]]})
    assert snapshot(e) == held  # a refused move changes nothing
    e.apply(0, {"type": "move", "steps": [[8, 7], [7, 4]]})
    v = e.view(None)
    assert v["points"][3] == 1 and v["points"][4] == -1 and v["prisoners"] == [0] * 24


def test_a_checker_landing_on_a_lone_one_imprisons_it() -> None:
    e = make(g0_opening_0=[3, 1], g0_roll_1=[3, 1])
    pts = [0] * 24
    pts[7] = 2  # seat 0: two on its point 8
    pts[4] = -1  # seat 1: a lone checker on seat 0's point 5
    pts[5] = -14
    e.set_position(pts, [0, 0], [13, 0], on_roll=0)
    e.apply(0, {"type": "roll"})
    e.apply(0, {"type": "move", "steps": [[8, 7], [8, 5]]})
    v = e.view(None)
    assert v["points"][4] == 1 and v["prisoners"][4] == -1  # seat 1's checker is held
    assert v["points"][6] == 1 and v["pips"][1] == 14 * 19 + 20


def test_a_prisoner_cannot_move_and_the_point_is_closed_to_its_owner() -> None:
    e = make(g0_opening_0=[4, 3])
    pts = [0] * 24
    pts[9] = 1  # seat 0 on its point 10
    pts[6] = -1  # seat 1 on top of seat 0's prisoner at seat 0's point 7
    pts[0] = -14
    prisoners = [0] * 24
    prisoners[6] = 1
    e.set_position(pts, [0, 0], [13, 0], on_roll=0, prisoners=prisoners)
    e.chance.script["g0/roll/1"] = [3, 4]
    e.apply(0, {"type": "roll"})
    assert [a["steps"] for a in e.legal_actions(0)] == [[[10, 6], [6, 3]]]
    held = snapshot(e)
    with pytest.raises(IllegalActionError, match="imprisoned"):
        e.apply(0, {"type": "move", "steps": [[7, 4], [10, 7]]})
    assert snapshot(e) == held


def test_imprisoning_the_mother_checker_wins_a_mars() -> None:
    e = make(g0_opening_0=[5, 2])
    pts = [0] * 24
    pts[23] = 1  # seat 0's last checker still on its own 24-point
    pts[0] = 14
    pts[21] = -15  # seat 1: all 15 on its point 3 (seat 0's point 22)
    e.set_position(pts, [0, 0], [0, 0], on_roll=1)
    assert e.view(None)["pips"] == [24 + 14, 45]
    e.chance.script.update({"g0/roll/1": [2, 1], "g1/opening/0": [4, 1]})
    e.apply(1, {"type": "roll"})
    mother = [[3, 2], [3, 1]]  # 3-1 lands on seat 0's 24-point: its mother checker
    assert mother in [a["steps"] for a in e.legal_actions(1)]
    e.apply(1, {"type": "move", "steps": mother})
    assert e.games[-1]["how"] == "mother" and e.games[-1]["winner"] == 1
    assert e.games[-1]["points"] == 2 and e.score == [0, 2]
    assert e.game_number == 1 and e.view(None)["points"][23] == 15  # the next game begins


def test_resignation_levels() -> None:
    e = make(g0_opening_0=[6, 5])
    assert e.set_position is not None
    e.set_position(e.points, [0, 0], e.off, on_roll=1)
    assert {a["points"] for a in e.legal_actions(1) if a["type"] == "resign"} == {1, 2}
    with pytest.raises(MalformedActionError):
        e.apply(1, {"type": "resign", "points": 3})


def checkers(view: dict[str, Any], seat: int) -> int:
    sign = 1 if seat == 0 else -1
    on = sum(n * sign for n in view["points"] if n * sign > 0)
    return on + sum(1 for x in view["prisoners"] if x == sign) + view["off"][seat]


@settings(max_examples=examples(15), deadline=None)
@given(
    seed=st.integers(0, 10**9),
    length=st.integers(1, 3),
    cube=st.booleans(),
    protocol=st.sampled_from([PROTOCOL, PROTOCOL_V2]),
)
def test_random_matches_conserve_checkers_and_replay(
    seed: int, length: int, cube: bool, protocol: str
) -> None:
    doc, engine = simulate_match(
        "mahbusa", {"match_length": length, "cube": cube}, seed=seed, protocol=protocol
    )
    assert engine.outcome is not None and max(engine.score) >= length
    labels = [e["label"] for e in doc["events"] if e["type"] == "chance"]
    assert all(lb.startswith("g") and ("/roll/" in lb or "/opening/" in lb) for lb in labels)

    def check(ev: dict[str, Any], e: Any) -> None:
        v = e.view(None)
        assert checkers(v, 0) == checkers(v, 1) == 15 and v["bar"] == [0, 0]
        for i, x in enumerate(v["prisoners"]):
            assert x == 0 or v["points"][i] * x < 0  # a prisoner lies under the other seat

    again = replay_transcript(doc, on_event=check)
    assert again.outcome == engine.outcome
    for s in (None, 0, 1):
        assert again.view(s) == engine.view(s)


def test_the_mother_rule_waits_while_the_pinner_is_still_home() -> None:
    e = make(g0_opening_0=[5, 2], g0_roll_1=[2, 1])
    pts = [0] * 24
    pts[0] = -1  # seat 1's mother: its last checker on its own 24-point
    pts[15] = -14
    pts[2] = 1  # seat 0 on its point 3, two away from seat 1's 24-point
    pts[23] = 2  # seat 0 has not left its own 24-point
    pts[10] = 12
    e.set_position(pts, [0, 0], [0, 0], on_roll=0)
    e.apply(0, {"type": "roll"})
    pin = next(a for a in e.legal_actions(0) if [3, 1] in a["steps"])
    e.apply(0, pin)
    v = e.view(None)
    assert v["prisoners"][0] == -1 and e.games == [] and e.outcome is None  # play goes on


def test_both_mothers_imprisoned_is_a_drawn_game() -> None:
    e = make(g0_opening_0=[5, 2], g0_roll_1=[2, 1], g1_opening_0=[3, 1])
    pts = [0] * 24
    prisoners = [0] * 24
    pts[0], prisoners[0] = 1, -1  # seat 0 holds seat 1's mother, and is still home:
    pts[23] = 1  # its own mother is alone on its 24-point
    pts[5] = 13
    pts[21] = -14  # seat 1 on its point 3
    e.set_position(pts, [0, 0], [0, 0], on_roll=1, prisoners=prisoners)
    e.apply(1, {"type": "roll"})
    e.apply(1, {"type": "move", "steps": [[3, 2], [3, 1]]})
    assert e.games[-1]["winner"] is None and e.games[-1]["result"] == "draw"
    assert e.score == [0, 0] and e.outcome is None and e.game_number == 1


def test_no_bearing_off_while_a_checker_of_yours_is_imprisoned() -> None:
    e = make(g0_opening_0=[5, 2], g0_roll_1=[6, 5])
    pts = [0] * 24
    prisoners = [0] * 24
    pts[5] = 14  # seat 0: fourteen on its point 6 …
    pts[3], prisoners[3] = -1, 1  # … and one imprisoned on its point 4
    pts[20] = -14
    e.set_position(pts, [0, 0], [0, 0], on_roll=0, prisoners=prisoners)
    e.apply(0, {"type": "roll"})
    assert [a["steps"] for a in e.legal_actions(0)] == [[[6, 1]]]
    held = snapshot(e)
    with pytest.raises(IllegalActionError):
        e.apply(0, {"type": "move", "steps": [[6, 0], [6, 1]]})
    assert snapshot(e) == held
