"""Tawla: legal turns (hand-derived known answers), turn flow, cube, scoring, match play."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import fairness
from games.base import Chance
from games.errors import (
    ActionError,
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    RulesetError,
)
from games.registry import engine_class, find_engine
from games.replay import replay
from games.tawla import (
    ENGINE,
    TawlaEngine,
    absolute_board,
    initial_points,
    legal_turns,
    pip_counts,
    play_steps,
    relative_board,
)
from tests.support import ScriptedChance, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
TawlaEngineV1 = find_engine("tawla", protocol=fairness.V1)

VECTORS = vector("tawla_positions.json")["positions"]
KEY = bytes(range(32))


# -- helpers ---------------------------------------------------------------------------------


def make(ruleset: Mapping[str, Any] | None = None, **script: Sequence[int]) -> TawlaEngine:
    """An engine with scripted dice; keyword ``g0_opening_0=[6, 1]`` is label g0/opening/0."""
    labels = {k.replace("_", "/"): v for k, v in script.items()}
    return TawlaEngineV1(
        TawlaEngine.parse_ruleset(dict(ruleset or {}), protocol=fairness.PROTOCOL),
        ScriptedChance(labels),
    )


def script(eng: TawlaEngine, **more: Sequence[int]) -> None:
    chance = eng.chance
    assert isinstance(chance, ScriptedChance)
    chance.script.update({k.replace("_", "/"): list(v) for k, v in more.items()})


def position(seat0: Mapping[int, int], seat1: Mapping[int, int]) -> tuple[list[int], ...]:
    """(points, bar, off) from each seat's {own point: count} (25 bar, 0 off)."""
    points = [0] * 24
    bar, off = [0, 0], [0, 0]
    for seat, spec in ((0, seat0), (1, seat1)):
        assert sum(spec.values()) == 15
        for p, n in spec.items():
            if p == 25:
                bar[seat] += n
            elif p == 0:
                off[seat] += n
            elif seat == 0:
                points[p - 1] += n
            else:
                points[24 - p] -= n
    return points, bar, off


def load(
    eng: TawlaEngine, seat0: Mapping[int, int], seat1: Mapping[int, int], on_roll: int
) -> None:
    """Put ``on_roll`` to act before rolling in the given position (the public setter)."""
    eng.set_position(*position(seat0, seat1), on_roll=on_roll)


def snapshot(eng: TawlaEngine) -> str:
    chance = eng.chance
    return json.dumps(
        [
            eng.view(0),
            eng.view(1),
            eng.view(None),
            sorted(chance.labels),
            chance._pending,
            eng.outcome.to_json() if eng.outcome else None,
        ],
        sort_keys=True,
    )


def board_of(spec: Mapping[str, Mapping[str, int]]) -> list[int]:
    b = [0] * 26
    for k, v in spec["mine"].items():
        b[int(k)] += v
    for k, v in spec["theirs"].items():
        b[int(k)] -= v
    return b


def as_set(turns: Any) -> set[tuple[tuple[int, int], ...]]:
    return {tuple((int(f), int(t)) for f, t in steps) for steps in turns}


def moves(eng: TawlaEngine, seat: int) -> set[tuple[tuple[int, int], ...]]:
    return as_set(a["steps"] for a in eng.legal_actions(seat) if a["type"] == "move")


def first_move(eng: TawlaEngine) -> None:
    seat = eng.turn
    assert seat is not None
    acts = [a for a in eng.legal_actions(seat) if a["type"] == "move"]
    assert acts, eng.legal_actions(seat)
    eng.apply(seat, acts[0])


def checkers(view: Mapping[str, Any]) -> tuple[int, int]:
    pts = view["points"]
    return (
        sum(n for n in pts if n > 0) + view["bar"][0] + view["off"][0],
        -sum(n for n in pts if n < 0) + view["bar"][1] + view["off"][1],
    )


# -- known-answer positions ------------------------------------------------------------------


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_known_answer_turns(vec: dict[str, Any]) -> None:
    board = board_of(vec)
    assert sum(n for n in board if n > 0) == 15
    got = legal_turns(board, vec["dice"])
    assert as_set(got.values()) == as_set(vec["turns"])
    # reversed dice order is the same roll
    assert as_set(legal_turns(board, vec["dice"][::-1]).values()) == as_set(vec["turns"])
    # each listed turn, played step by step, reaches the end position it is listed under
    for end, steps in got.items():
        assert play_steps(board, vec["dice"], steps) == end


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_known_answer_through_the_engine(vec: dict[str, Any], seat: int) -> None:
    """The same positions loaded into a match for either seat: legal actions and results."""
    b = board_of(vec)
    mine = {p: b[p] for p in range(26) if b[p] > 0}
    theirs: dict[int, int] = {}
    for p in range(1, 25):
        if b[p] < 0:
            theirs[25 - p] = -b[p]  # the opponent's own numbering
    theirs[0] = 15 - sum(theirs.values())
    eng = make(g0_opening_0=[6, 1], g0_roll_1=vec["dice"], g1_opening_0=[2, 1])
    if seat == 0:
        load(eng, mine, theirs, 0)
    else:
        load(eng, theirs, mine, 1)
    eng.apply(seat, {"type": "roll"})
    if not vec["turns"]:
        assert eng.turn == 1 - seat and eng.phase == "roll"
        assert eng.last_turn == {"seat": seat, "dice": vec["dice"], "steps": [], "passed": True}
        return
    assert eng.turn == seat and eng.view(seat)["dice"] == vec["dice"]
    assert moves(eng, seat) == as_set(vec["turns"])
    for action in eng.legal_actions(seat):
        trial = copy.deepcopy(eng)
        trial.apply(seat, action)
        view = trial.view(None)
        assert checkers(view) == (15, 15)
        # the end position agrees with stepping through the turn by hand
        end = play_steps(
            relative_board(eng.points, eng.bar, eng.off, seat),
            vec["dice"],
            [tuple(s) for s in action["steps"]],
        )
        if trial.game_number == eng.game_number:
            points, bar, off = absolute_board(end, seat, eng.off[1 - seat])
            assert (view["points"], view["bar"], view["off"]) == (points, bar, off)
        else:  # the turn finished the game
            assert end[0] == 15 and trial.games[-1]["winner"] == seat


def test_board_conversions_round_trip() -> None:
    pts = initial_points()
    assert pts == [-2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2]
    assert pip_counts(pts, [0, 0]) == [167, 167]
    for seat in (0, 1):
        b = relative_board(pts, [0, 0], [0, 0], seat)
        assert b[24] == 2 and b[13] == 5 and b[8] == 3 and b[6] == 5
        assert b[1] == -2 and b[12] == -5 and b[17] == -3 and b[19] == -5
        assert absolute_board(b, seat, 0) == (pts, [0, 0], [0, 0])
    pts2, bar, off = position({25: 1, 6: 10, 0: 4}, {3: 2, 25: 2, 0: 11})
    assert pip_counts(pts2, bar) == [25 + 60, 6 + 50]
    b1 = relative_board(pts2, bar, off, 1)
    assert b1[0] == 11 and b1[25] == 2 and b1[3] == 2 and b1[19] == -10
    assert absolute_board(b1, 1, off[0]) == (pts2, bar, off)


def test_play_steps_explains_refusals() -> None:
    b = board_of({"mine": {"25": 1, "8": 2, "3": 12}, "theirs": {"20": 2, "5": 2}})
    cases = [
        ([(8, 3)], "from the bar first"),
        ([(25, 20)], "closed"),
        ([(25, 22), (3, 0)], "all 15 checkers"),
        ([(25, 22), (22, 22)], "toward your 1-point"),
        ([(25, 22), (9, 4)], "no checker"),
        ([(25, 23)], "no unused die of 2"),
        ([(0, 0)], "from off"),
    ]
    for steps, words in cases:
        with pytest.raises(IllegalActionError, match=words):
            play_steps(b, [5, 3], steps)
    home = board_of({"mine": {"6": 1, "2": 1, "0": 13}, "theirs": {}})
    with pytest.raises(IllegalActionError, match="highest occupied point"):
        play_steps(home, [5, 4], [(2, 0)])


# -- ruleset ---------------------------------------------------------------------------------


def test_ruleset_defaults_and_validation() -> None:
    assert engine_class("tawla") is ENGINE is TawlaEngine
    rs = TawlaEngine.parse_ruleset({}, protocol=fairness.PROTOCOL)
    assert rs == {
        "match_length": 5,
        "cube": True,
        "cube_cap": 64,
        "crawford": True,
        "jacoby": False,
        "live_entropy": False,
    }
    # qahwa-fair/2 lists every rule: the timing rules and fresh rolls, no live entropy
    assert TawlaEngine.parse_ruleset({}) == {
        "match_length": 5,
        "cube": True,
        "cube_cap": 64,
        "crawford": True,
        "jacoby": False,
        "fresh_rolls": True,
        "turn_seconds": 300,
        "reveal_seconds": 120,
        "max_seconds": 86400,
    }
    with pytest.raises(RulesetError, match="qahwa-fair/1 only"):
        TawlaEngine.parse_ruleset({"live_entropy": False})
    with pytest.raises(RulesetError, match="fresh_rolls"):
        TawlaEngine.parse_ruleset({"fresh_rolls": True}, protocol=fairness.PROTOCOL)
    assert TawlaEngine.seat_count(rs) == 2
    assert TawlaEngine.parse_ruleset({"match_length": 0, "jacoby": True})["jacoby"] is True
    assert TawlaEngine.parse_ruleset({"match_length": 25, "cube_cap": 1024})["cube_cap"] == 1024
    bad: list[dict[str, Any]] = [
        {"match_length": 26},
        {"match_length": -1},
        {"match_length": True},
        {"match_length": "5"},
        {"cube": 1},
        {"cube_cap": 48},
        {"cube_cap": 1},
        {"cube_cap": 2048},
        {"jacoby": True},
        {"jacoby": True, "match_length": 7},
        {"live_entropy": "yes"},
        {"beaver": True},
    ]
    for raw in bad:
        with pytest.raises(RulesetError):
            TawlaEngine.parse_ruleset(raw)


# -- opening and turn flow -------------------------------------------------------------------


def test_opening_rerolls_ties_and_higher_die_moves_first() -> None:
    eng = make(g0_opening_0=[4, 4], g0_opening_1=[2, 5], g0_roll_1=[6, 6])
    chance = eng.chance
    assert isinstance(chance, ScriptedChance)
    assert chance.drawn == ["g0/opening/0", "g0/opening/1"]
    v = eng.view(1)
    assert v["turn"] == 1 and v["phase"] == "move" and v["dice"] == [2, 5]
    assert v["opening"] == {"dice": [2, 5], "attempts": 2}
    assert v["cube"] == {"value": 1, "owner": None} and v["score"] == [0, 0]
    # no roll, no cube, no resignation before the opening move: only moves
    assert {a["type"] for a in eng.legal_actions(1)} == {"move"}
    assert eng.legal_actions(0) == []
    with pytest.raises(IllegalActionError):
        eng.apply(1, {"type": "double"})
    with pytest.raises(IllegalActionError):
        eng.apply(1, {"type": "roll"})
    with pytest.raises(NotYourTurnError):
        eng.apply(0, {"type": "roll"})
    # seat 1 plays 13/8 13/11 (its own numbering): listed with the 5 first
    assert ((13, 8), (13, 11)) in moves(eng, 1)
    with pytest.raises(IllegalActionError, match="exactly as listed"):
        eng.apply(1, {"type": "move", "steps": [[13, 11], [13, 8]]})
    eng.apply(1, {"type": "move", "steps": [[13, 8], [13, 11]]})
    v = eng.view(None)
    # seat 1's 13 is index 11, its 11 index 13, its 8 index 16
    assert v["points"][11] == -3 and v["points"][13] == -1 and v["points"][16] == -4
    assert v["pips"] == [167, 160]
    assert v["turn"] == 0 and v["phase"] == "roll" and v["dice"] is None
    assert v["last_turn"] == {
        "seat": 1,
        "dice": [2, 5],
        "steps": [[13, 8], [13, 11]],
        "passed": False,
    }
    assert {a["type"] for a in eng.legal_actions(0)} == {"roll", "double", "resign"}
    eng.apply(0, {"type": "roll"})
    assert chance.drawn[-1] == "g0/roll/1" and eng.view(0)["dice"] == [6, 6]


def test_spec_transcript_example_move_is_the_listed_form() -> None:
    """fairness-v1.md's example: opening [1, 3], seat 1 plays [[13, 10], [24, 23]]."""
    eng = make(g0_opening_0=[1, 3])
    assert eng.turn == 1
    eng.apply(1, {"type": "move", "steps": [[13, 10], [24, 23]]})
    assert eng.turn == 0


def test_roll_labels_count_passes_and_a_blocked_roll_passes() -> None:
    eng = make(g0_opening_0=[6, 1])
    first_move(eng)
    # seat 1 on the bar against seat 0's closed board (seat 0's points 1-6)
    load(eng, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}, {25: 1, 13: 14}, 1)
    script(eng, g0_roll_1=[6, 5], g0_roll_2=[3, 1])
    eng.apply(1, {"type": "roll"})
    v = eng.view(None)
    assert v["turn"] == 0 and v["phase"] == "roll" and v["dice"] is None
    assert v["last_turn"] == {"seat": 1, "dice": [6, 5], "steps": [], "passed": True}
    assert v["rolls"] == 1
    eng.apply(0, {"type": "roll"})
    assert eng.chance.labels >= {"g0/roll/1", "g0/roll/2"}
    assert eng.turn == 0 and eng.phase == "move"


def test_hit_sends_the_blot_to_the_bar_and_bar_must_enter() -> None:
    eng = make(g0_opening_0=[6, 1], g0_roll_1=[2, 1], g0_roll_2=[4, 2])
    first_move(eng)
    # seat 0 to roll with one checker on its 10; seat 1 has a blot on its 17 (seat 0's 8)
    load(eng, {10: 1, 6: 14}, {17: 1, 13: 14}, 0)
    eng.apply(0, {"type": "roll"})
    assert ((10, 8), (8, 7)) in moves(eng, 0)
    eng.apply(0, {"type": "move", "steps": [[10, 8], [8, 7]]})
    v = eng.view(None)
    assert v["bar"] == [0, 1] and v["points"][6] == 1 and v["points"][7] == 0
    assert checkers(v) == (15, 15)
    eng.apply(1, {"type": "roll"})
    # seat 1 must enter first: every listed turn starts from the bar (25)
    assert all(steps[0][0] == 25 for steps in moves(eng, 1))
    with pytest.raises(IllegalActionError, match="bar first"):
        eng.apply(1, {"type": "move", "steps": [[13, 9], [13, 11]]})


# -- the cube --------------------------------------------------------------------------------


def test_double_take_redouble_drop_and_next_game() -> None:
    eng = make(g0_opening_0=[6, 1], g0_roll_1=[3, 1], g1_opening_0=[2, 5])
    first_move(eng)
    assert {"type": "double"} in eng.legal_actions(1)
    eng.apply(1, {"type": "double"})
    v = eng.view(0)
    assert v["turn"] == 0 and v["phase"] == "double"
    assert v["pending"] == {"type": "double", "by": 1, "value": 2}
    assert eng.legal_actions(0) == [{"type": "take"}, {"type": "drop"}]
    with pytest.raises(NotYourTurnError):
        eng.apply(1, {"type": "roll"})
    eng.apply(0, {"type": "take"})
    v = eng.view(1)
    assert v["cube"] == {"value": 2, "owner": 0} and v["turn"] == 1 and v["phase"] == "roll"
    assert {"type": "double"} not in v["legal_actions"] and not v["may_double"]
    before = snapshot(eng)
    with pytest.raises(IllegalActionError, match="owns the cube"):
        eng.apply(1, {"type": "double"})
    assert snapshot(eng) == before
    eng.apply(1, {"type": "roll"})
    first_move(eng)
    # the owner redoubles; seat 1 drops: seat 0 wins the cube before the double (2)
    assert eng.view(0)["may_double"]
    eng.apply(0, {"type": "double"})
    assert eng.view(None)["pending"] == {"type": "double", "by": 0, "value": 4}
    eng.apply(1, {"type": "drop"})
    v = eng.view(None)
    assert v["score"] == [2, 0] and v["game_number"] == 1
    assert v["games"] == [
        {
            "game": 0,
            "winner": 0,
            "how": "drop",
            "result": "single",
            "cube": 2,
            "points": 2,
            "score": [2, 0],
            "crawford": False,
        }
    ]
    # the next game started at once with its own opening roll and a fresh cube
    assert v["cube"] == {"value": 1, "owner": None} and v["opening"]["dice"] == [2, 5]
    assert v["turn"] == 1 and v["phase"] == "move" and v["points"] == initial_points()
    assert eng.outcome is None


def test_cube_cap_and_cube_off() -> None:
    eng = make({"cube_cap": 2}, g0_opening_0=[6, 1], g0_roll_1=[3, 1])
    first_move(eng)
    eng.apply(1, {"type": "double"})
    eng.apply(0, {"type": "take"})
    eng.apply(1, {"type": "roll"})
    first_move(eng)
    assert eng.view(0)["cube"] == {"value": 2, "owner": 0}
    with pytest.raises(IllegalActionError, match="cap"):
        eng.apply(0, {"type": "double"})
    eng2 = make({"cube": False}, g0_opening_0=[6, 1])
    first_move(eng2)
    assert {"type": "double"} not in eng2.legal_actions(1)
    with pytest.raises(IllegalActionError, match="without the doubling cube"):
        eng2.apply(1, {"type": "double"})


# -- game results ----------------------------------------------------------------------------

RESULTS = [
    ("single", {0: 1, 13: 14}, 1),
    ("gammon", {13: 15}, 2),
    ("gammon-just-outside-home", {18: 1, 13: 14}, 2),  # seat 1's 18 is seat 0's 7
    ("backgammon-bar", {25: 1, 13: 14}, 3),
    ("backgammon-home", {19: 1, 13: 14}, 3),  # seat 1's 19 is seat 0's 6
]


@pytest.mark.parametrize("cube", [1, 2])
@pytest.mark.parametrize("name,loser,level", RESULTS, ids=[r[0] for r in RESULTS])
def test_bear_off_scores(name: str, loser: dict[int, int], level: int, cube: int) -> None:
    eng = make({"match_length": 7}, g0_opening_0=[6, 1], g0_roll_1=[3, 1], g1_opening_0=[1, 2])
    first_move(eng)
    load(eng, {1: 1, 0: 14}, loser, 0)
    if cube == 2:
        eng.apply(0, {"type": "double"})
        eng.apply(1, {"type": "take"})
    eng.apply(0, {"type": "roll"})
    assert eng.legal_actions(0) == [{"type": "move", "steps": [[1, 0]]}]
    eng.apply(0, {"type": "move", "steps": [[1, 0]]})
    game = eng.games[-1]
    assert game["how"] == "bear-off" and game["winner"] == 0
    assert game["result"] == ["single", "gammon", "backgammon"][level - 1]
    assert game["points"] == level * cube and eng.score == [level * cube, 0]
    assert eng.game_number == 1 and eng.outcome is None


def test_seat1_wins_with_backgammon_in_its_home() -> None:
    eng = make({"match_length": 3}, g0_opening_0=[6, 1], g0_roll_1=[6, 6])
    first_move(eng)
    # seat 0 still has a checker on its 24 = seat 1's home board
    load(eng, {24: 1, 8: 14}, {6: 2, 5: 1, 0: 12}, 1)
    eng.apply(1, {"type": "roll"})
    assert moves(eng, 1) == {((6, 0), (6, 0), (5, 0))}
    eng.apply(1, {"type": "move", "steps": [[6, 0], [6, 0], [5, 0]]})
    assert eng.outcome is not None
    assert eng.outcome.winners == (1,) and eng.outcome.scores == (0, 3)
    assert eng.outcome.reason == "finished"
    out = eng.outcome.to_json()
    assert out["games"][0]["result"] == "backgammon" and out["match_length"] == 3
    assert eng.turn is None and eng.legal_actions(0) == [] and eng.legal_actions(1) == []
    with pytest.raises(MatchOverError):
        eng.apply(0, {"type": "roll"})


# -- resignation -----------------------------------------------------------------------------


def test_resign_offer_reject_then_accept() -> None:
    eng = make(g0_opening_0=[6, 1], g0_roll_1=[3, 1], g0_roll_2=[4, 2], g1_opening_0=[5, 6])
    first_move(eng)
    eng.apply(1, {"type": "double"})
    eng.apply(0, {"type": "take"})
    eng.apply(1, {"type": "resign", "points": 2})
    v = eng.view(0)
    assert v["turn"] == 0 and v["phase"] == "resign"
    assert v["pending"] == {"type": "resign", "by": 1, "points": 2, "value": 4}
    assert eng.legal_actions(0) == [{"type": "accept"}, {"type": "reject"}]
    eng.apply(0, {"type": "reject"})
    assert eng.turn == 1 and eng.phase == "roll" and eng.pending is None
    # no second offer before rolling
    assert [a["type"] for a in eng.legal_actions(1)] == ["roll"]
    before = snapshot(eng)
    with pytest.raises(IllegalActionError, match="rejected"):
        eng.apply(1, {"type": "resign", "points": 3})
    assert snapshot(eng) == before
    eng.apply(1, {"type": "roll"})
    first_move(eng)
    eng.apply(0, {"type": "roll"})
    first_move(eng)
    # a new turn: seat 1 may offer again; seat 0 accepts 1 point x cube 2
    eng.apply(1, {"type": "resign", "points": 1})
    eng.apply(0, {"type": "accept"})
    assert eng.score == [2, 0]
    assert eng.games[-1] == {
        "game": 0,
        "winner": 0,
        "how": "resign",
        "result": "single",
        "cube": 2,
        "points": 2,
        "score": [2, 0],
        "crawford": False,
    }
    assert eng.game_number == 1


def test_resign_of_three_ends_a_short_match() -> None:
    eng = make({"match_length": 3}, g0_opening_0=[6, 1])
    first_move(eng)
    eng.apply(1, {"type": "resign", "points": 3})
    eng.apply(0, {"type": "accept"})
    assert eng.outcome is not None and eng.outcome.scores == (3, 0)
    assert eng.outcome.winners == (0,)


# -- match play: Crawford --------------------------------------------------------------------


def test_crawford_game_once_then_post_crawford() -> None:
    eng = make(
        {"match_length": 3},
        g0_opening_0=[6, 1],
        g1_opening_0=[1, 6],
        g2_opening_0=[1, 6],
        g3_opening_0=[6, 1],
        g3_roll_1=[2, 1],
    )
    first_move(eng)
    eng.apply(1, {"type": "resign", "points": 2})
    eng.apply(0, {"type": "accept"})
    # seat 0 is at 2 = match_length - 1: game 1 is the Crawford game
    assert eng.score == [2, 0] and eng.crawford_game and eng.view(None)["crawford"]
    first_move(eng)  # seat 1 opens
    assert {"type": "double"} not in eng.legal_actions(0)
    with pytest.raises(IllegalActionError, match="Crawford"):
        eng.apply(0, {"type": "double"})
    eng.apply(0, {"type": "resign", "points": 1})
    eng.apply(1, {"type": "accept"})
    # game 2: post-Crawford, doubling allowed again
    assert eng.score == [2, 1] and not eng.crawford_game and eng.games[-1]["crawford"]
    first_move(eng)
    assert {"type": "double"} in eng.legal_actions(0)
    eng.apply(0, {"type": "resign", "points": 1})
    eng.apply(1, {"type": "accept"})
    # both at 2 now, but the Crawford game has been played: game 3 may double
    assert eng.score == [2, 2] and not eng.crawford_game
    first_move(eng)
    eng.apply(1, {"type": "double"})
    eng.apply(0, {"type": "drop"})
    assert eng.outcome is not None and eng.outcome.winners == (1,)
    assert eng.outcome.scores == (2, 3)
    assert [g["crawford"] for g in eng.outcome.to_json()["games"]] == [False, True, False, False]


def test_crawford_off_allows_doubling() -> None:
    eng = make({"match_length": 3, "crawford": False}, g0_opening_0=[6, 1], g1_opening_0=[1, 6])
    first_move(eng)
    eng.apply(1, {"type": "resign", "points": 2})
    eng.apply(0, {"type": "accept"})
    assert not eng.crawford_game
    first_move(eng)
    assert {"type": "double"} in eng.legal_actions(0)


def test_single_game_match_and_drop() -> None:
    eng = make({"match_length": 1}, g0_opening_0=[6, 1])
    assert not eng.crawford_game
    first_move(eng)
    eng.apply(1, {"type": "double"})
    eng.apply(0, {"type": "drop"})
    assert eng.outcome is not None and eng.outcome.scores == (0, 1)
    assert eng.outcome.winners == (1,)


# -- money play and Jacoby -------------------------------------------------------------------


@pytest.mark.parametrize(
    "jacoby,cube,expected", [(False, 1, 2), (True, 1, 1), (True, 2, 4), (False, 2, 4)]
)
def test_money_play_gammon_with_and_without_jacoby(jacoby: bool, cube: int, expected: int) -> None:
    eng = make({"match_length": 0, "jacoby": jacoby}, g0_opening_0=[6, 1], g0_roll_1=[3, 1])
    first_move(eng)
    load(eng, {1: 1, 0: 14}, {13: 15}, 0)
    if cube == 2:
        eng.apply(0, {"type": "double"})
        eng.apply(1, {"type": "take"})
    eng.apply(0, {"type": "roll"})
    eng.apply(0, {"type": "move", "steps": [[1, 0]]})
    # money play: one game is the whole match
    assert eng.outcome is not None and eng.outcome.reason == "finished"
    assert eng.outcome.scores == (expected, 0) and eng.outcome.winners == (0,)


def test_money_play_jacoby_applies_to_resignations() -> None:
    eng = make({"match_length": 0, "jacoby": True}, g0_opening_0=[6, 1])
    first_move(eng)
    eng.apply(1, {"type": "resign", "points": 3})
    assert eng.view(None)["pending"]["value"] == 1
    eng.apply(0, {"type": "accept"})
    assert eng.outcome is not None and eng.outcome.scores == (1, 0)


# -- live entropy ----------------------------------------------------------------------------


def test_live_entropy_roll_label_and_validation() -> None:
    parsed = TawlaEngine.parse_ruleset({"live_entropy": True}, protocol=fairness.PROTOCOL)
    chance = Chance(KEY)
    eng = TawlaEngineV1(parsed, chance)
    log = chance.take_events()
    opener = eng.turn
    assert opener is not None
    opening_move = eng.legal_actions(opener)[0]
    eng.apply(opener, opening_move)
    log.append({"type": "action", "seat": opener, "action": opening_move})
    seat = 1 - opener
    assert {"type": "roll"} in eng.legal_actions(seat)
    before = snapshot(eng)
    for bad in ["", "a|b", "x" * 65, 7, None, "tab\there", "é"]:
        with pytest.raises(MalformedActionError, match="entropy"):
            eng.apply(seat, {"type": "roll", "entropy": bad})
        assert snapshot(eng) == before
    roll = {"type": "roll", "entropy": "my lucky words"}
    drawn = eng.apply(seat, roll)[1:]
    label = "g0/roll/1|my lucky words"
    assert [e["label"] for e in drawn] == [label]
    assert drawn[0]["result"] == fairness.dice(KEY, label, 2) == eng.view(None)["dice"]
    # a transcript carrying the entropy replays to the same match
    log += [{"type": "action", "seat": seat, "action": roll}, *drawn]
    numbered = [{"seq": i, **e} for i, e in enumerate(log)]
    again = replay(TawlaEngineV1, fairness.canonical_ruleset(parsed), KEY, numbered)
    assert again.view(None) == eng.view(None)
    # a plain roll is accepted too (the entropy is optional): label without '|'
    first_move(eng)
    assert [e["label"] for e in eng.apply(opener, {"type": "roll"})[1:]] == ["g0/roll/2"]


def test_entropy_refused_without_live_entropy() -> None:
    eng = make(g0_opening_0=[6, 1])
    first_move(eng)
    before = snapshot(eng)
    with pytest.raises(MalformedActionError, match="no live entropy"):
        eng.apply(1, {"type": "roll", "entropy": "abc"})
    assert snapshot(eng) == before


# -- illegal actions leave everything unchanged ----------------------------------------------


def _in_roll_phase() -> TawlaEngine:
    eng = make(g0_opening_0=[6, 1], g0_roll_1=[3, 1], g1_opening_0=[6, 1])
    first_move(eng)
    return eng


def _in_move_phase() -> TawlaEngine:
    eng = _in_roll_phase()
    eng.apply(1, {"type": "roll"})
    return eng


def _in_double_phase() -> TawlaEngine:
    eng = _in_roll_phase()
    eng.apply(1, {"type": "double"})
    return eng


def _in_resign_phase() -> TawlaEngine:
    eng = _in_roll_phase()
    eng.apply(1, {"type": "resign", "points": 1})
    return eng


def _crawford() -> TawlaEngine:
    eng = make({"match_length": 2}, g0_opening_0=[6, 1], g1_opening_0=[6, 1], g1_roll_1=[2, 1])
    first_move(eng)
    eng.apply(1, {"type": "resign", "points": 1})
    eng.apply(0, {"type": "accept"})
    first_move(eng)
    return eng


ILLEGAL = [
    # (setup, seat, action, error, words)
    (_in_roll_phase, 0, {"type": "roll"}, NotYourTurnError, "turn"),
    (_in_roll_phase, 2, {"type": "roll"}, NotYourTurnError, "no seat"),
    (_in_roll_phase, 1, {"type": "fly"}, MalformedActionError, "unknown action"),
    (_in_roll_phase, 1, "roll", MalformedActionError, "object"),
    (_in_roll_phase, 1, {"type": "roll", "dice": [6, 6]}, MalformedActionError, "unexpected"),
    (_in_roll_phase, 1, {"type": "move", "steps": [[13, 10]]}, IllegalActionError, "not rolled"),
    (_in_roll_phase, 1, {"type": "take"}, IllegalActionError, "take"),
    (_in_roll_phase, 1, {"type": "accept"}, IllegalActionError, "accept"),
    (_in_roll_phase, 1, {"type": "reject"}, IllegalActionError, "reject"),
    (_in_roll_phase, 1, {"type": "drop"}, IllegalActionError, "drop"),
    (_in_roll_phase, 1, {"type": "resign"}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "resign", "points": 4}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "resign", "points": True}, MalformedActionError, "points"),
    # review: a float or a non-hashable 'points' was accepted (1.0) or crashed (TypeError)
    (_in_roll_phase, 1, {"type": "resign", "points": 1.0}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "resign", "points": [1]}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "resign", "points": {"n": 1}}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "resign", "points": "1"}, MalformedActionError, "points"),
    (_in_roll_phase, 1, {"type": "double", "value": 2}, MalformedActionError, "unexpected"),
    (_in_move_phase, 1, {"type": "roll"}, IllegalActionError, "move is due"),
    (_in_move_phase, 1, {"type": "double"}, IllegalActionError, "before rolling|move is due"),
    (_in_move_phase, 1, {"type": "resign", "points": 1}, IllegalActionError, "move is due"),
    (_in_move_phase, 1, {"type": "move"}, MalformedActionError, "steps"),
    (_in_move_phase, 1, {"type": "move", "steps": "13/10"}, MalformedActionError, "list"),
    (_in_move_phase, 1, {"type": "move", "steps": []}, MalformedActionError, "1 to 4"),
    (_in_move_phase, 1, {"type": "move", "steps": [[13, 10, 9]]}, MalformedActionError, "pair"),
    (_in_move_phase, 1, {"type": "move", "steps": [[13, True]]}, MalformedActionError, "pair"),
    (_in_move_phase, 1, {"type": "move", "steps": [[13, 10.0]]}, MalformedActionError, "pair"),
    (_in_move_phase, 1, {"type": "move", "steps": [[26, 23]]}, MalformedActionError, "0 \\(off\\)"),
    (_in_move_phase, 1, {"type": "move", "steps": [[13, -1]]}, MalformedActionError, "0 \\(off\\)"),
    (_in_move_phase, 1, {"type": "move", "steps": [[13, 10]]}, IllegalActionError, "must play 2"),
    (
        _in_move_phase,
        1,
        {"type": "move", "steps": [[13, 9], [6, 5]]},
        IllegalActionError,
        "no unused die of 4",
    ),
    (
        _in_move_phase,
        1,
        {"type": "move", "steps": [[6, 5], [8, 5]]},
        IllegalActionError,
        "exactly as listed",
    ),
    (
        _in_move_phase,
        1,
        {"type": "move", "steps": [[12, 9], [6, 5]]},
        IllegalActionError,
        "no checker",
    ),
    (_in_move_phase, 1, {"type": "move", "steps": [[6, 3], [6, 7]]}, IllegalActionError, "toward"),
    (_in_move_phase, 1, {"type": "move", "steps": [[6, 3], [3, 0]]}, IllegalActionError, "all 15"),
    (
        _in_move_phase,
        1,
        {"type": "move", "steps": [[8, 5], [8, 5], [8, 7]]},
        IllegalActionError,
        "no unused die",
    ),
    (_in_double_phase, 1, {"type": "roll"}, NotYourTurnError, "turn"),
    (_in_double_phase, 0, {"type": "roll"}, IllegalActionError, "take or drop"),
    (_in_double_phase, 0, {"type": "double"}, IllegalActionError, "before rolling|take or drop"),
    (_in_double_phase, 0, {"type": "accept"}, IllegalActionError, "take or drop"),
    (_in_double_phase, 0, {"type": "take", "x": 1}, MalformedActionError, "unexpected"),
    (_in_resign_phase, 0, {"type": "take"}, IllegalActionError, "accept or reject"),
    (_in_resign_phase, 0, {"type": "roll"}, IllegalActionError, "accept or reject"),
    (_in_resign_phase, 1, {"type": "accept"}, NotYourTurnError, "turn"),
    (_crawford, 1, {"type": "double"}, IllegalActionError, "Crawford"),
]


@pytest.mark.parametrize(
    "setup,seat,action,error,words",
    ILLEGAL,
    ids=[f"{s.__name__}-{i}" for i, (s, *_rest) in enumerate(ILLEGAL)],
)
def test_illegal_actions_change_nothing(
    setup: Any, seat: int, action: Any, error: type, words: str
) -> None:
    eng = setup()
    before = snapshot(eng)
    with pytest.raises(error, match=words):
        eng.apply(seat, action)
    assert snapshot(eng) == before
    # and the match goes on normally afterwards
    turn = eng.turn
    assert turn is not None
    eng.apply(turn, eng.legal_actions(turn)[0])


ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    1.0,
    2.0,
    -1,
    99,
    "",
    "1",
    [],
    [1],
    [[13, 10.0]],
    {},
    {"n": 1},
]


@pytest.mark.parametrize(
    "setup", [_in_roll_phase, _in_move_phase, _in_double_phase, _in_resign_phase]
)
def test_odd_field_values_are_refused_and_change_nothing(setup: Any) -> None:
    """Every action type with an odd-typed field: an ActionError (never a crash, never an
    acceptance of something unlisted, compared type-strictly: 1.0 is not 1)."""
    eng = setup()
    seat = eng.turn
    assert seat is not None
    listed = {json.dumps(a, sort_keys=True) for a in eng.legal_actions(seat)}
    before = snapshot(eng)
    tried = 0
    for kind in TawlaEngine.ACTION_TYPES:
        for field in ("points", "steps", "entropy"):
            for value in ODD_VALUES:
                action = {"type": kind, field: value}
                if json.dumps(action, sort_keys=True) in listed:
                    continue
                with pytest.raises(ActionError):
                    eng.apply(seat, action)
                assert snapshot(eng) == before, action
                tried += 1
    assert tried > 300


def test_after_match_end_nothing_applies() -> None:
    eng = make({"match_length": 1}, g0_opening_0=[6, 1])
    first_move(eng)
    eng.end_match("resigned", 1)
    assert eng.outcome is not None and eng.outcome.reason == "resigned"
    assert eng.outcome.winners == (0,) and eng.outcome.scores == (0, 0)
    before = snapshot(eng)
    with pytest.raises(MatchOverError):
        eng.apply(1, {"type": "roll"})
    assert snapshot(eng) == before


def test_views_are_public_and_complete() -> None:
    eng = _in_move_phase()
    pub, s0, s1 = eng.view(None), eng.view(0), eng.view(1)
    for v in (pub, s0, s1):
        for key in (
            "points",
            "bar",
            "off",
            "dice",
            "cube",
            "score",
            "game",
            "status",
            "turn",
            "seat",
            "legal_actions",
            "pips",
            "game_number",
            "crawford",
            "phase",
            "pending",
            "match_length",
            "opening",
            "last_turn",
            "games",
        ):
            assert key in v
    strip = ("seat", "legal_actions", "suggested_actions")
    assert {k: v for k, v in pub.items() if k not in strip} == {
        k: v for k, v in s0.items() if k not in strip
    }
    assert pub["legal_actions"] == [] and s0["legal_actions"] == []
    assert s1["legal_actions"] == eng.legal_actions(1) and s1["dice"] == [3, 1]
    assert s1["suggested_actions"] == s1["legal_actions"] and s0["suggested_actions"] == []
    assert pub["game"] == "tawla" and pub["status"] == "playing" and pub["turn"] == 1
    json.dumps(pub)


def test_bot_actions_roll_instead_of_cube_or_resign() -> None:
    eng = _in_roll_phase()
    assert eng.bot_actions(1) == [{"type": "roll"}]
    assert eng.view(1)["suggested_actions"] == [{"type": "roll"}]
    legal = eng.legal_actions(1)
    assert {"type": "double"} in legal and {"type": "resign", "points": 1} in legal
    eng.apply(1, {"type": "double"})
    assert eng.bot_actions(0) == eng.legal_actions(0) == [{"type": "take"}, {"type": "drop"}]
    eng.apply(0, {"type": "take"})
    eng.apply(1, {"type": "roll"})
    assert eng.bot_actions(1) == eng.legal_actions(1) and len(eng.legal_actions(1)) > 1
