"""Iraqi café dominoes: known-answer deals, scripted rounds for every rule, errors, views."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import pytest

from fairness import V1, Stream, tiles
from games import errors
from games.iraqi_domino import IraqiDominoEngine, round_to_nearest
from games.registry import find_engine
from games.tiles import check_tile_code
from tests.support import all_views, assert_defaults, fresh_engine, refuses_unlisted, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
IraqiDominoEngineV1 = find_engine("iraqi_domino", protocol=V1)

VECTORS = vector("iraqi_domino_deal_v1.json")
K = bytes.fromhex(VECTORS["key"])


def new(players: int = 4, key: bytes = K, **rules: Any) -> IraqiDominoEngine:
    return fresh_engine(IraqiDominoEngineV1, key, players=players, **rules)


def setup(
    eng: IraqiDominoEngine,
    hands: Sequence[Sequence[str]],
    line: Sequence[tuple[int, int]] = (),
    pile: Sequence[str] = (),
    current: int = 0,
) -> IraqiDominoEngine:
    """Put the engine mid-round in a chosen position (the round's deal is replaced)."""
    for t in [t for h in hands for t in h] + list(pile):
        check_tile_code(t, 6)
    eng.hands = [list(h) for h in hands]
    eng.pile = list(pile)
    eng.line = [tuple(p) for p in line]  # type: ignore[misc]
    eng.left, eng.right = (line[0][0], line[-1][1]) if line else (-1, -1)
    eng.opening_tile = None
    eng.current = current
    eng.chance.take_events()
    return eng


def play(tile: str, end: str | None = None) -> dict[str, Any]:
    a: dict[str, Any] = {"type": "play", "tile": tile}
    if end is not None:
        a["end"] = end
    return a


def key_where(players: int, pred: Any) -> bytes:
    """The first key (sha256 of i) whose round-0 deal satisfies ``pred(dealt_tiles)``."""
    for i in range(20_000):
        key = hashlib.sha256(f"iraqi-{i}".encode()).digest()
        deck = Stream(key, "r0/shuffle").shuffle(tiles(6))
        if pred(deck[: 7 * players]):
            return key
    raise AssertionError("no key found")


# -- registry, ruleset -----------------------------------------------------------------------


def test_registry_and_ruleset_defaults() -> None:
    assert_defaults("iraqi_domino", IraqiDominoEngine, {"players": 4, "target": 151, "round_to": 5})
    assert IraqiDominoEngine.seat_count(IraqiDominoEngine.parse_ruleset({"players": 3})) == 3


@pytest.mark.parametrize(
    "raw",
    [
        {"players": 1},
        {"players": 5},
        {"players": "4"},
        {"target": 0},
        {"round_to": 0},
        {"round_to": True},
        {"colour": "red"},
    ],
)
def test_bad_rulesets(raw: dict[str, Any]) -> None:
    with pytest.raises(errors.RulesetError):
        IraqiDominoEngine.parse_ruleset(raw)


def test_teams_only_with_four() -> None:
    assert [new(4).side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert new(4).n_sides == 2
    assert [new(3).side_of(s) for s in range(3)] == [0, 1, 2]
    assert new(2).n_sides == 2


# -- known-answer deals ----------------------------------------------------------------------


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['ruleset']['players']}p")
def test_vector_deal(case: dict[str, Any]) -> None:
    eng = fresh_engine(IraqiDominoEngineV1, K, **case["ruleset"])
    events = eng.chance.take_events()
    assert [e["label"] for e in events] == [VECTORS["label"]]
    assert events[0]["kind"] == "shuffle"
    assert events[0]["result"][:7] == VECTORS["shuffle_first"]
    assert sorted(events[0]["result"]) == sorted(tiles(6))
    assert eng.hands[case["seat"]] == case["hand"]
    view = eng.view(case["seat"])
    assert sorted(view["hand"]) == sorted(case["hand"])
    assert view["pile"] == case["pile"]
    assert view["hand_counts"] == [7] * case["ruleset"]["players"]
    # the pile is the rest of the shuffle, in order, drawn from the front
    n = case["ruleset"]["players"]
    assert eng.pile == events[0]["result"][7 * n :]


def test_round0_opens_with_double_six() -> None:
    eng = new(4)
    holder = next(s for s in range(4) if "6-6" in eng.view(s)["hand"])
    assert eng.turn == holder
    assert eng.legal_actions(holder) == [play("6-6")]
    assert eng.view(None)["must_open_with"] == "6-6"
    other = next(t for t in eng.hands[holder] if t != "6-6")
    before = all_views(eng)
    with pytest.raises(errors.IllegalActionError, match="must open with 6-6"):
        eng.apply(holder, play(other))
    with pytest.raises(errors.MalformedActionError, match="no 'end'"):
        eng.apply(holder, play("6-6", "left"))
    assert all_views(eng) == before
    eng.apply(holder, play("6-6"))
    assert eng.view(None)["line"] == [[6, 6]]
    assert eng.view(None)["ends"] == {"left": 6, "right": 6}
    assert eng.turn == (holder + 1) % 4


def test_round0_without_double_six_highest_double_opens() -> None:
    key = key_where(2, lambda dealt: "6-6" not in dealt and any(t[0] == t[2] for t in dealt))
    eng = new(2, key)
    dealt = eng.hands[0] + eng.hands[1]
    best = max((t for t in dealt if t[0] == t[2]), key=lambda t: int(t[0]))
    assert best != "6-6"
    holder = 0 if best in eng.hands[0] else 1
    assert eng.turn == holder
    assert eng.legal_actions(holder) == [play(best)]


def test_round0_without_doubles_heaviest_tile_opens() -> None:
    key = key_where(2, lambda dealt: not any(t[0] == t[2] for t in dealt))
    eng = new(2, key)
    dealt = eng.hands[0] + eng.hands[1]
    weights = {t: (int(t[0]) + int(t[2]), int(t[2])) for t in dealt}
    best = max(dealt, key=lambda t: weights[t])
    holder = 0 if best in eng.hands[0] else 1
    assert eng.legal_actions(holder) == [play(best)]


def test_forced_opening_tile_rules() -> None:
    f = IraqiDominoEngine.forced_opening_tile
    assert f([["0-1", "6-6"], ["5-5"]]) == "6-6"
    assert f([["0-1", "2-2"], ["5-5", "5-6"]]) == "5-5"
    assert f([["0-0", "1-2"], ["4-6"]]) == "0-0"
    # no doubles: most pips; equal pips → the higher end (3-6 beats 4-5)
    assert f([["4-5", "0-1"], ["3-6", "2-5"]]) == "3-6"
    assert f([["1-2", "0-4"], ["2-3"]]) == "2-3"


# -- play ------------------------------------------------------------------------------------


def test_tiles_turn_to_fit_and_doubles_keep_the_end() -> None:
    eng = setup(
        new(4), [["3-5", "5-5", "1-2"], ["0-1"], ["0-2"], ["0-6"]], line=[(3, 6)], current=0
    )
    legal = eng.legal_actions(0)
    assert legal == [play("3-5", "left")]
    eng.apply(0, play("3-5", "left"))
    assert eng.view(None)["line"] == [[5, 3], [3, 6]]
    assert eng.view(None)["ends"] == {"left": 5, "right": 6}
    eng.current = 0
    eng.apply(0, play("5-5", "left"))
    assert eng.view(None)["line"] == [[5, 5], [5, 3], [3, 6]]
    assert eng.view(None)["ends"] == {"left": 5, "right": 6}


def test_tile_matching_both_ends_lists_both() -> None:
    eng = setup(new(4), [["3-6", "0-0"], ["3-4"], ["1-2"], ["1-4"]], line=[(3, 6)])
    assert eng.legal_actions(0) == [play("3-6", "left"), play("3-6", "right")]
    eng.apply(0, play("3-6", "right"))
    assert eng.view(None)["ends"] == {"left": 3, "right": 3}


def test_must_play_if_able() -> None:
    eng = setup(new(2), [["2-6", "0-1"], ["4-4"]], line=[(6, 6)], pile=["1-1"])
    before = all_views(eng)
    with pytest.raises(errors.IllegalActionError, match="may not draw"):
        eng.apply(0, {"type": "draw"})
    with pytest.raises(errors.IllegalActionError, match="may not pass"):
        eng.apply(0, {"type": "pass"})
    with pytest.raises(errors.IllegalActionError, match="0-1 does not match the left end"):
        eng.apply(0, play("0-1", "left"))
    with pytest.raises(errors.IllegalActionError, match="do not hold 3-3"):
        eng.apply(0, play("3-3", "left"))
    assert all_views(eng) == before


def test_draw_one_at_a_time_until_playable() -> None:
    eng = setup(new(2), [["0-1"], ["3-4", "4-4"]], line=[(6, 6)], pile=["0-2", "1-3", "2-6", "5-5"])
    assert eng.legal_actions(0) == [{"type": "draw"}]
    with pytest.raises(errors.IllegalActionError, match="draw from the pile first"):
        eng.apply(0, {"type": "pass"})
    eng.apply(0, {"type": "draw"})
    assert eng.view(0)["hand"] == ["0-1", "0-2"] and eng.turn == 0
    assert eng.view(None)["pile"] == 3
    eng.apply(0, {"type": "draw"})
    assert eng.turn == 0 and eng.legal_actions(0) == [{"type": "draw"}]
    eng.apply(0, {"type": "draw"})
    assert eng.legal_actions(0) == [play("2-6", "left"), play("2-6", "right")]
    assert eng.pile == ["5-5"]
    eng.apply(0, play("2-6", "right"))
    assert eng.turn == 1
    assert eng.view(None)["hand_counts"] == [3, 2]


def test_draw_with_extra_field_is_malformed() -> None:
    eng = setup(new(2), [["0-1"], ["3-4"]], line=[(6, 6)], pile=["5-5", "4-6"])
    with pytest.raises(errors.MalformedActionError, match="unexpected field"):
        eng.apply(0, {"type": "draw", "tile": "5-5"})
    assert eng.pile == ["5-5", "4-6"]


def test_pass_when_pile_empty() -> None:
    eng = setup(new(3), [["0-1", "0-2"], ["3-6"], ["4-4"]], line=[(6, 6)])
    assert eng.legal_actions(0) == [{"type": "pass"}]
    with pytest.raises(errors.IllegalActionError, match="pile is empty"):
        eng.apply(0, {"type": "draw"})
    eng.apply(0, {"type": "pass"})
    assert eng.turn == 1 and eng.view(0)["hand"] == ["0-1", "0-2"]
    assert eng.outcome is None


def test_four_seats_pass_without_pile() -> None:
    eng = setup(new(4), [["0-1"], ["3-6", "2-2"], ["4-4"], ["5-5"]], line=[(6, 6)])
    assert eng.legal_actions(0) == [{"type": "pass"}]
    eng.apply(0, {"type": "pass"})
    assert eng.legal_actions(1) == [play("3-6", "left"), play("3-6", "right")]


# -- round ends ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("opponents", "points"),
    [
        ([["6-6", "5-5"], ["0-0"]], 20),  # 22 → 20
        ([["6-6", "5-6"], ["0-0"]], 25),  # 23 → 25
        ([["6-6", "4-4"], ["0-0", "0-5"]], 25),  # 25 stays
    ],
)
def test_domino_scores_both_opponents_rounded(opponents: list[list[str]], points: int) -> None:
    eng = new(4)
    setup(eng, [opponents[0], ["2-3"], opponents[1], ["2-6", "3-4"]], line=[(3, 4)], current=1)
    events = eng.apply(1, play("2-3", "left"))[1:]
    last = eng.view(None)["last_round"]
    assert last["end"] == "domino" and last["domino_seat"] == 1
    assert last["winners"] == [1, 3]
    assert last["points"] == points
    assert eng.view(None)["scores"] == [0, points]  # the partner's pips never count
    # the next round is dealt at once; the winner opens with any tile
    assert [e["label"] for e in events] == ["r1/shuffle"]
    assert eng.view(None)["round"] == 1
    assert eng.turn == 1
    assert eng.view(None)["must_open_with"] is None
    assert eng.legal_actions(1) == [play(t) for t in eng.view(1)["hand"]]


def test_domino_three_seats_counts_every_other_seat_not_the_pile() -> None:
    eng = setup(new(3), [["0-4"], ["1-6"], ["2-3", "0-0"]], line=[(4, 5)], pile=["6-6"])
    eng.apply(0, play("0-4", "left"))
    last = eng.history[-1]
    assert last["raw"] == 12 and last["points"] == 10
    assert eng.scores == [10, 0, 0]


def test_blocked_lower_side_wins_and_fewest_pips_opens() -> None:
    eng = setup(
        new(4), [["0-1"], ["3-3", "6-6"], ["4-6", "0-3"], ["2-2", "0-6"]], line=[(5, 6)], current=2
    )
    eng.apply(2, play("4-6", "right"))  # ends 5 and 4: nobody holds either
    last = eng.history[-1]
    assert last["end"] == "blocked"
    assert last["side_pips"] == [4, 28]
    assert last["winner_side"] == 0 and last["points"] == 30  # 28 → 30
    assert eng.scores == [30, 0]
    # seat 0 (1 pip) opens round 1 with any tile, though seat 2 played last
    assert eng.round == 1 and eng.turn == 0
    assert eng.opening_tile is None
    assert eng.legal_actions(0) == [play(t) for t in eng.view(0)["hand"]]


def test_blocked_equal_pips_the_one_who_played_last_opens() -> None:
    eng = setup(
        new(4), [["1-2"], ["3-3", "6-6"], ["4-6", "0-3"], ["2-2", "0-6"]], line=[(5, 6)], current=2
    )
    eng.apply(2, play("4-6", "right"))
    assert eng.history[-1]["pips"] == [3, 18, 3, 10]
    assert eng.history[-1]["winner_side"] == 0
    assert eng.turn == 2  # seats 0 and 2 both hold 3 pips; seat 2 played last
    assert eng.legal_actions(2) == [play(t) for t in eng.view(2)["hand"]]


def test_blocked_by_drawing_the_last_tile() -> None:
    eng = setup(new(2), [["1-2"], ["3-4"]], line=[(6, 6)], pile=["0-0"])
    eng.apply(0, {"type": "draw"})
    last = eng.history[-1]
    assert last["end"] == "blocked" and last["pips"] == [3, 7]
    assert eng.scores == [5, 0]  # 7 → 5
    assert eng.round == 1 and eng.turn == 0


def test_tied_block_scores_nothing_and_reopens_as_round_zero() -> None:
    eng = setup(new(4), [["1-2"], ["3-3"], ["4-6", "0-3"], ["0-0"]], line=[(5, 6)], current=2)
    eng.apply(2, play("4-6", "right"))
    last = eng.history[-1]
    assert last["end"] == "blocked" and last["side_pips"] == [6, 6]
    assert last["winner_side"] is None and last["points"] == 0
    assert eng.scores == [0, 0]
    holder = next(s for s in range(4) if "6-6" in eng.hands[s])
    assert eng.round == 1 and eng.turn == holder
    assert eng.legal_actions(holder) == [play("6-6")]


def test_three_seats_tied_lowest_block_is_a_tie() -> None:
    eng = setup(new(3), [["0-3", "4-6"], ["0-1", "1-1"], ["1-2", "5-5"]], line=[(4, 4)])
    eng.apply(0, play("4-6", "right"))  # ends 4 and 6: no seat holds either
    last = eng.history[-1]
    assert last["end"] == "blocked"
    assert last["pips"] == [3, 3, 13] and last["winner_side"] is None
    assert eng.scores == [0, 0, 0]


def test_match_ends_at_target() -> None:
    eng = new(4, target=151)
    setup(eng, [["6-6", "5-5"], ["2-3"], ["0-0"], ["2-6"]], line=[(3, 4)], current=1)
    eng.scores = [0, 140]
    assert len(eng.apply(1, play("2-3", "left"))) == 1  # the action, no further deal
    assert eng.outcome is not None
    assert eng.outcome.reason == "finished"
    assert eng.outcome.winners == (1, 3)
    assert eng.outcome.scores == (0, 160)
    assert eng.chance.take_events() == []  # no further deal
    assert eng.turn is None and eng.legal_actions(1) == []
    with pytest.raises(errors.MatchOverError):
        eng.apply(1, {"type": "pass"})
    assert eng.view(None)["result"]["winners"] == [1, 3]


def test_round_to_option() -> None:
    eng = new(3, round_to=1)
    setup(eng, [["0-4"], ["1-6"], ["2-3", "0-0"]], line=[(4, 5)])
    eng.apply(0, play("0-4", "left"))
    assert eng.scores == [12, 0, 0]


@pytest.mark.parametrize(
    ("raw", "step", "want"),
    [
        (22, 5, 20),
        (23, 5, 25),
        (21, 5, 20),
        (24, 5, 25),
        (25, 5, 25),
        (0, 5, 0),
        (2, 5, 0),
        (3, 5, 5),
        (7, 1, 7),
        (15, 10, 20),
        (14, 10, 10),
    ],
)
def test_round_to_nearest(raw: int, step: int, want: int) -> None:
    assert round_to_nearest(raw, step) == want


# -- errors and views ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        {"type": "play"},
        {"type": "play", "tile": 35, "end": "left"},
        {"type": "play", "tile": "5-3", "end": "left"},
        {"type": "play", "tile": "3-7", "end": "left"},
        {"type": "play", "tile": "3-5", "end": "middle"},
        {"type": "play", "tile": "3-5"},
        {"type": "play", "tile": "3-5", "end": "left", "x": 1},
        {"type": "knock"},
        ["play"],
    ],
)
def test_malformed_actions_change_nothing(action: Any) -> None:
    eng = setup(new(4), [["3-5", "0-0"], ["1-1"], ["2-2"], ["4-4"]], line=[(3, 6)])
    before = all_views(eng)
    with pytest.raises(errors.MalformedActionError):
        eng.apply(0, action)
    assert all_views(eng) == before
    assert eng.chance.take_events() == []


def test_not_your_turn() -> None:
    eng = new(4)
    other = (eng.turn + 1) % 4  # type: ignore[operator]
    with pytest.raises(errors.NotYourTurnError):
        eng.apply(other, {"type": "pass"})
    with pytest.raises(errors.NotYourTurnError):
        eng.apply(7, {"type": "pass"})
    assert eng.legal_actions(other) == []


def test_views_hide_other_hands() -> None:
    eng = new(4)
    public = eng.view(None)
    assert "hand" not in public and public["legal_actions"] == []
    for s in range(4):
        v = eng.view(s)
        assert v["hand"] == sorted(eng.hands[s], key=lambda t: (int(t[0]), int(t[2])))
        text = json.dumps(
            {k: v[k] for k in v if k not in ("hand", "legal_actions", "must_open_with")}
        )
        for other in range(4):
            if other != s:
                # another seat's tiles appear nowhere in this seat's view
                assert all(f'"{t}"' not in text for t in eng.hands[other])
    assert public["game"] == "iraqi_domino" and public["status"] == "playing"
    assert public["sides"] == [0, 1, 0, 1]


def test_resign_and_abandon() -> None:
    eng = new(4)
    eng.end_match("resigned", 1)
    assert eng.outcome is not None and eng.outcome.winners == (0, 2)
    eng2 = new(3)
    eng2.end_match("abandoned")
    assert eng2.outcome is not None and eng2.outcome.winners == ()


ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    3.5,
    "",
    "left",
    "right",
    "3-5",
    "5-3",
    "6-6",
    " 3-5",
    "3-5 ",
    "3-05",
    [],
    ["3-5"],
    {},
    {"a": 1},
]


@pytest.mark.parametrize(
    "players,line,pile",
    [
        (4, [], []),  # any tile may open
        (4, [(3, 6)], []),  # must play (3-5 fits the left end)
        (3, [(1, 1)], ["4-4"]),  # cannot play: must draw
        (2, [(1, 1)], []),  # cannot play, pile empty: must pass
    ],
)
def test_odd_field_values_are_refused_and_change_nothing(
    players: int, line: list[tuple[int, int]], pile: list[str]
) -> None:
    """Every action type with odd field values: an error (never a crash) unless listed,
    compared type-strictly, and nothing changes (no draw, no chance)."""
    hands = [["3-5", "0-0"], ["2-2"], ["4-5"], ["4-6"]][:players]
    eng = setup(new(players), hands, line=line, pile=pile)
    pairs = [(t, e) for t in ODD_VALUES + ["absent"] for e in ("left", "right", "absent")]
    pairs += [(t, e) for e in ODD_VALUES for t in ("3-5", "0-0", "2-2", "absent")]
    tried = refuses_unlisted(eng, "end", pairs, all_views)
    assert eng.chance.take_events() == [] and tried > 300
