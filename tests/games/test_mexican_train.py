"""Mexican Train: known-answer deals, scripted turns for every rule, errors, views."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from fairness import V1, parse_items, tiles
from games import errors
from games.mexican_train import MexicanTrainEngine, engine_number, hand_size
from games.registry import find_engine
from games.tiles import check_tile_code
from tests.support import all_views, assert_defaults, fresh_engine, refuses_unlisted, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
MexicanTrainEngineV1 = find_engine("mexican_train", protocol=V1)

VECTORS = vector("mexican_train_deal_v1.json")
K = bytes.fromhex(VECTORS["key"])
DRAW = {"type": "draw"}
PASS = {"type": "pass"}


def new(players: int = 4, key: bytes = K, **rules: Any) -> MexicanTrainEngine:
    return fresh_engine(MexicanTrainEngineV1, key, players=players, **rules)


def setup(
    eng: MexicanTrainEngine,
    hands: Sequence[Sequence[str]],
    trains: Mapping[int | str, Sequence[tuple[int, int]]] | None = None,
    boneyard: Sequence[str] = (),
    markers: Sequence[int] = (),
    current: int = 0,
    open_doubles: Sequence[int | str] = (),
) -> MexicanTrainEngine:
    """Put the engine mid-round in a chosen position (the round's deal is replaced)."""
    n = eng.n_seats
    for t in [t for h in hands for t in h] + list(boneyard):
        check_tile_code(t, 12)
    eng.hands = [list(h) for h in hands]
    eng.boneyard = list(boneyard)
    eng.trains = [[] for _ in range(n + 1)]
    for k, v in (trains or {}).items():
        eng.trains[n if k == "mexican" else int(k)] = list(v)
    eng.markers = set(markers)
    eng.open_doubles = [n if k == "mexican" else int(k) for k in open_doubles]
    eng.followup = False
    eng.drawn = None
    eng.passes_in_row = 0
    eng.current = current
    eng.chance.take_events()
    return eng


def play(tile: str, train: int | str) -> dict[str, Any]:
    return {"type": "play", "tile": tile, "train": train}


# -- registry, ruleset -----------------------------------------------------------------------


def test_registry_and_ruleset_defaults() -> None:
    assert_defaults(
        "mexican_train", MexicanTrainEngine, {"players": 4, "rounds": 13, "blank_double": 0}
    )


@pytest.mark.parametrize(
    "raw",
    [
        {"players": 1},
        {"players": 9},
        {"rounds": 0},
        {"rounds": 14},
        {"blank_double": -1},
        {"blank_double": 5.0},
        {"engine": 12},
    ],
)
def test_bad_rulesets(raw: dict[str, Any]) -> None:
    with pytest.raises(errors.RulesetError):
        MexicanTrainEngine.parse_ruleset(raw)


def test_engines_and_hand_sizes() -> None:
    assert [engine_number(r) for r in range(15)] == list(range(12, -1, -1)) + [12, 11]
    assert [hand_size(n) for n in range(2, 9)] == [15, 15, 15, 12, 12, 10, 10]


# -- known-answer deals ----------------------------------------------------------------------


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['ruleset']['players']}p")
def test_vector_deal(case: dict[str, Any]) -> None:
    eng = fresh_engine(MexicanTrainEngineV1, K, **case["ruleset"])
    events = eng.chance.take_events()
    assert [e["label"] for e in events] == [VECTORS["label"]]
    result = events[0]["result"]
    assert result[:15] == VECTORS["shuffle_first"]
    assert sorted(result) == sorted(parse_items(VECTORS["items"]))
    n, h = case["ruleset"]["players"], case["hand_size"]
    assert eng.hands[case["seat"]] == case["hand"]
    view = eng.view(case["seat"])
    assert sorted(view["hand"]) == sorted(case["hand"])
    assert view["hand_counts"] == [h] * n
    assert view["pile"] == case["pile"]
    assert eng.boneyard == result[h * n :]
    assert view["engine"] == VECTORS["engine"] == "12-12"
    assert eng.turn == 0 and view["starter"] == 0


# -- trains ----------------------------------------------------------------------------------


def test_own_mexican_and_marked_trains_only() -> None:
    eng = setup(new(4), [["3-12", "0-1"], ["1-1"], ["2-2"], ["4-4"]], markers=[2])
    assert eng.legal_actions(0) == [play("3-12", 0), play("3-12", 2), play("3-12", "mexican")]
    before = all_views(eng)
    with pytest.raises(errors.IllegalActionError, match="train 1 carries no marker"):
        eng.apply(0, play("3-12", 1))
    with pytest.raises(errors.IllegalActionError, match="0-1 does not match train 0's open end"):
        eng.apply(0, play("0-1", 0))
    with pytest.raises(errors.IllegalActionError, match="do not hold 5-12"):
        eng.apply(0, play("5-12", 0))
    assert all_views(eng) == before
    eng.apply(0, play("3-12", "mexican"))
    mex = eng.view(None)["trains"][4]
    assert mex == {
        "train": "mexican",
        "tiles": [[12, 3]],
        "end": 3,
        "marker": False,
        "open_double": False,
    }
    assert eng.turn == 1


def test_tiles_turn_to_fit() -> None:
    eng = setup(new(2), [["3-12", "3-9", "0-0"], ["1-1"]])
    eng.apply(0, play("3-12", 0))
    eng.current = 0
    eng.apply(0, play("3-9", 0))
    assert eng.view(None)["trains"][0]["tiles"] == [[12, 3], [3, 9]]
    assert eng.view(None)["trains"][0]["end"] == 9


def test_one_tile_a_turn() -> None:
    eng = setup(new(2), [["3-12", "4-12"], ["1-1"]])
    eng.apply(0, play("3-12", 0))
    assert eng.turn == 1
    with pytest.raises(errors.NotYourTurnError):
        eng.apply(0, play("4-12", "mexican"))


# -- drawing, passing, markers ---------------------------------------------------------------


def test_drawn_tile_that_fits_must_be_played_at_once() -> None:
    eng = setup(
        new(4),
        [["1-2", "0-5"], ["1-1"], ["2-2"], ["4-4"]],
        boneyard=["3-12", "4-5"],
        markers=[3],
        trains={1: [(12, 5)]},
    )
    assert eng.legal_actions(0) == [DRAW]
    with pytest.raises(errors.IllegalActionError, match="draw from the boneyard first"):
        eng.apply(0, PASS)
    eng.apply(0, DRAW)
    assert eng.turn == 0 and eng.view(0)["drawn"] == "3-12"
    assert eng.view(1)["drawn"] is None and eng.view(None)["has_drawn"] is True
    assert eng.legal_actions(0) == [play("3-12", 0), play("3-12", 3), play("3-12", "mexican")]
    with pytest.raises(errors.IllegalActionError, match="may not pass"):
        eng.apply(0, PASS)
    with pytest.raises(errors.IllegalActionError, match="may not draw"):
        eng.apply(0, DRAW)
    eng.apply(0, play("3-12", 3))
    assert eng.turn == 1 and eng.markers == {3}  # another seat's tile leaves the marker


def test_drawn_tile_that_does_not_fit_pass_and_marker() -> None:
    eng = setup(new(3), [["1-2"], ["1-1"], ["2-2"]], boneyard=["4-5", "3-12"])
    eng.apply(0, DRAW)
    assert eng.legal_actions(0) == [PASS]
    with pytest.raises(errors.IllegalActionError, match="already drawn"):
        eng.apply(0, DRAW)
    eng.apply(0, PASS)
    assert eng.markers == {0} and eng.turn == 1
    assert eng.view(None)["trains"][0]["marker"] is True
    assert eng.view(None)["markers"] == [0]
    assert eng.boneyard == ["3-12"] and eng.passes_in_row == 0


def test_empty_boneyard_pass_at_once() -> None:
    eng = setup(new(3), [["1-2"], ["1-12"], ["2-2"]])
    assert eng.legal_actions(0) == [PASS]
    with pytest.raises(errors.IllegalActionError, match="boneyard is empty"):
        eng.apply(0, DRAW)
    eng.apply(0, PASS)
    assert eng.markers == {0} and eng.passes_in_row == 1


def test_marker_kept_when_others_play_cleared_by_owner_on_own_train() -> None:
    eng = setup(
        new(3),
        [["9-10", "6-12", "1-1"], ["4-5", "2-12", "2-3"], ["4-9", "0-12", "0-3"]],
        markers=[0],
        trains={0: [(12, 5)]},
        current=1,
    )
    eng.apply(1, play("4-5", 0))  # seat 1 plays on seat 0's marked train
    assert eng.markers == {0}
    eng.apply(2, play("4-9", 0))
    assert eng.markers == {0}
    assert eng.legal_actions(0) == [play("6-12", "mexican"), play("9-10", 0)]
    eng.apply(0, play("6-12", "mexican"))  # the owner plays elsewhere: still marked
    assert eng.markers == {0}
    eng.apply(1, play("2-12", 1))
    assert eng.legal_actions(2) == [play("0-12", 2)]  # train 0 is still open to others
    eng.apply(2, play("0-12", 2))
    eng.apply(0, play("9-10", 0))
    assert eng.markers == set()
    assert eng.view(None)["trains"][0]["marker"] is False
    assert eng.view(None)["trains"][0]["tiles"] == [[12, 5], [5, 4], [4, 9], [9, 10]]
    assert eng.legal_actions(1) == [play("2-3", 1)]


# -- doubles ---------------------------------------------------------------------------------


def test_double_follow_up_may_go_elsewhere_then_next_seat_must_cover() -> None:
    eng = setup(
        new(3), [["5-5", "3-12", "0-1"], ["5-9", "3-4"], ["0-0", "1-1"]], trains={0: [(12, 5)]}
    )
    eng.apply(0, play("5-5", 0))
    assert eng.turn == 0 and eng.view(None)["must_follow_double"] is True
    assert eng.view(None)["open_double"] is None  # the doubler's follow-up goes anywhere
    assert eng.legal_actions(0) == [play("3-12", "mexican")]
    eng.apply(0, play("3-12", "mexican"))
    assert eng.turn == 1
    assert eng.view(None)["open_double"] == {"train": 0, "tile": "5-5"}
    # 3-4 would fit the Mexican train, but the open double comes first
    assert eng.legal_actions(1) == [play("5-9", 0)]
    with pytest.raises(errors.IllegalActionError, match="open double 5-5 on train 0"):
        eng.apply(1, play("3-4", "mexican"))
    eng.apply(1, play("5-9", 0))
    assert eng.view(None)["open_double"] is None and eng.open_doubles == []
    assert eng.turn == 2 and eng.markers == set()


def test_double_covered_by_own_follow_up() -> None:
    eng = setup(new(2), [["5-5", "5-8", "1-2"], ["3-3"]], trains={0: [(12, 5)]})
    eng.apply(0, play("5-5", 0))
    assert eng.legal_actions(0) == [play("5-8", 0)]
    eng.apply(0, play("5-8", 0))
    assert eng.open_doubles == [] and eng.turn == 1
    assert eng.view(None)["trains"][0]["tiles"] == [[12, 5], [5, 5], [5, 8]]


def test_cannot_cover_draws_then_passes_and_duty_moves_on() -> None:
    eng = setup(
        new(3),
        [["0-1"], ["3-4"], ["7-8"]],
        trains={0: [(12, 5), (5, 5)]},
        boneyard=["1-2", "5-6", "2-9"],
        open_doubles=[0],
        current=1,
    )
    assert eng.legal_actions(1) == [DRAW]
    eng.apply(1, DRAW)  # 1-2 does not fit the double
    assert eng.legal_actions(1) == [PASS]
    eng.apply(1, PASS)
    assert eng.markers == {1} and eng.turn == 2
    assert eng.view(None)["open_double"] == {"train": 0, "tile": "5-5"}
    eng.apply(2, DRAW)  # 5-6 fits the double: it must go there at once
    assert eng.legal_actions(2) == [play("5-6", 0)]
    eng.apply(2, play("5-6", 0))
    assert eng.open_doubles == [] and eng.turn == 0
    assert eng.markers == {1}


def test_doubler_cannot_follow_up_draws_passes_with_marker() -> None:
    eng = setup(
        new(2), [["5-5", "0-1"], ["5-7", "2-3"]], trains={0: [(12, 5)]}, boneyard=["2-2", "9-9"]
    )
    eng.apply(0, play("5-5", 0))
    assert eng.legal_actions(0) == [DRAW]
    eng.apply(0, DRAW)
    assert eng.legal_actions(0) == [PASS]
    eng.apply(0, PASS)
    assert eng.markers == {0} and eng.turn == 1
    assert eng.view(None)["must_follow_double"] is False
    assert eng.legal_actions(1) == [play("5-7", 0)]


def test_two_doubles_in_one_turn_are_covered_in_order() -> None:
    eng = setup(
        new(2),
        [["5-5", "3-3", "3-12", "0-1"], ["5-6", "3-7"]],
        trains={0: [(12, 5)], "mexican": [(12, 3)]},
    )
    eng.apply(0, play("5-5", 0))
    eng.apply(0, play("3-3", "mexican"))  # a double as the follow-up: one more tile
    assert eng.turn == 0 and eng.view(None)["open_doubles"] == [0, "mexican"]
    assert eng.legal_actions(0) == [play("3-12", "mexican")]
    eng.apply(0, play("3-12", "mexican"))
    assert eng.view(None)["open_doubles"] == [0] and eng.turn == 1
    assert eng.legal_actions(1) == [play("5-6", 0)]


def test_going_out_on_a_double() -> None:
    eng = setup(
        new(3), [["5-5"], ["3-4", "6-6"], ["0-0", "1-2"]], trains={0: [(12, 5)]}, boneyard=["2-2"]
    )
    events = eng.apply(0, play("5-5", 0))[1:]
    last = eng.history[-1]
    assert last["end"] == "out" and last["out"] == 0
    assert last["penalties"] == [0, 19, 3]
    assert eng.totals == [0, 19, 3]
    # round 1: engine 11-11, seat 1 starts, the engine is not dealt
    assert [e["label"] for e in events] == ["r1/shuffle"]
    assert sorted(events[0]["result"]) == sorted(t for t in tiles(12) if t != "11-11")
    assert eng.view(None)["engine"] == "11-11" and eng.turn == 1
    assert eng.view(None)["hand_counts"] == [15, 15, 15]
    assert eng.markers == set() and eng.open_doubles == []
    assert all(t["tiles"] == [] and t["end"] == 11 for t in eng.view(None)["trains"])


# -- round and match end ---------------------------------------------------------------------


def test_all_pass_with_empty_boneyard_ends_round_blank_double_counts() -> None:
    eng = new(3, blank_double=50)
    setup(eng, [["1-2"], ["0-0", "3-4"], ["1-12", "6-6"]], current=1)
    eng.apply(1, PASS)
    eng.apply(2, play("1-12", 2))  # a play breaks the succession
    assert eng.passes_in_row == 0
    eng.apply(0, PASS)
    eng.apply(1, PASS)
    assert eng.outcome is None and eng.round == 0
    eng.apply(2, PASS)
    last = eng.history[-1]
    assert last["end"] == "blocked" and last["out"] is None
    assert last["penalties"] == [3, 57, 12]
    assert eng.totals == [3, 57, 12] and eng.round == 1


def test_last_round_lowest_total_wins() -> None:
    eng = new(2, rounds=1)
    setup(eng, [["5-12"], ["1-2"]])
    assert len(eng.apply(0, play("5-12", 0))) == 1  # the action, no further deal
    assert eng.outcome is not None
    assert eng.outcome.winners == (0,) and eng.outcome.scores == (0, 3)
    assert eng.chance.take_events() == []
    assert eng.turn is None and eng.legal_actions(0) == []
    with pytest.raises(errors.MatchOverError):
        eng.apply(1, PASS)


def test_shared_first_place() -> None:
    eng = new(4, rounds=2)
    setup(eng, [["5-12"], ["1-2"], ["0-3"], ["3-3", "0-0"]])
    eng.apply(0, play("5-12", 0))  # round 0 continues to round 1
    assert eng.outcome is None and eng.round == 1 and eng.turn == 1
    setup(eng, [["1-2"], ["4-11"], ["0-3"], ["1-1", "0-0"]], current=1)
    eng.totals = [0, 6, 3, 10]
    eng.apply(1, play("4-11", 1))
    assert eng.outcome is not None
    assert eng.totals == [3, 6, 6, 12]
    assert eng.outcome.winners == (0,)
    eng2 = new(3, rounds=1)
    setup(eng2, [["5-12"], ["1-2"], ["0-3"]])
    eng2.totals = [3, 0, 0]
    eng2.apply(0, play("5-12", 0))
    assert eng2.outcome is not None
    assert eng2.outcome.winners == (0, 1, 2)
    assert eng2.view(None)["result"]["winners"] == [0, 1, 2]


# -- errors and views ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        {"type": "play", "tile": "3-12"},
        {"type": "play", "tile": "3-12", "train": True},
        {"type": "play", "tile": "3-12", "train": 4},
        {"type": "play", "tile": "3-12", "train": "Mexican"},
        {"type": "play", "tile": "3-12", "train": "0"},
        {"type": "play", "tile": "12-3", "train": 0},
        {"type": "play", "tile": "3-13", "train": 0},
        {"type": "play", "tile": None, "train": 0},
        {"type": "play", "tile": "3-12", "train": 0, "end": "left"},
        {"type": "pass", "train": 0},
        {"type": "draw", "n": 1},
        {"type": "cover"},
    ],
)
def test_malformed_actions_change_nothing(action: Any) -> None:
    eng = setup(new(4), [["3-12"], ["1-1"], ["2-2"], ["4-4"]], boneyard=["5-5"])
    before = all_views(eng)
    with pytest.raises(errors.MalformedActionError):
        eng.apply(0, action)
    assert all_views(eng) == before


def test_views() -> None:
    eng = new(4)
    public = eng.view(None)
    assert "hand" not in public and "drawn" not in public and public["legal_actions"] == []
    assert public["pile"] == 30 and public["round"] == 0 and public["scores"] == [0] * 4
    assert [t["train"] for t in public["trains"]] == [0, 1, 2, 3, "mexican"]
    assert all(t["end"] == 12 for t in public["trains"])
    for s in range(4):
        v = eng.view(s)
        assert sorted(v["hand"]) == sorted(eng.hands[s])
        rest = json.dumps({k: v[k] for k in v if k not in ("hand", "legal_actions")})
        for other in range(4):
            if other != s:
                assert all(f'"{t}"' not in rest for t in eng.hands[other])
    assert eng.view(0)["legal_actions"] == eng.legal_actions(0)
    assert eng.view(1)["legal_actions"] == []


def test_resign() -> None:
    eng = new(3)
    eng.end_match("resigned", 2)
    assert eng.outcome is not None and eng.outcome.winners == (0, 1)


ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    -1,
    4,
    "",
    "mexican",
    "Mexican",
    "3-5",
    "5-3",
    "12-12",
    "0-13",
    "3-12",
    " 3-12",
    [],
    [0],
    {},
    {"a": 1},
]


@pytest.mark.parametrize("how", ["play", "draw", "pass", "drawn", "duty"])
def test_odd_field_values_are_refused_and_change_nothing(how: str) -> None:
    """Every action type with odd field values: an error (never a crash) unless listed,
    compared type-strictly, and nothing changes (no draw from the boneyard)."""
    hands = [["3-12", "0-1"], ["5-5"], ["2-2"], ["4-4"]]
    if how == "play":
        eng = setup(new(4), hands, boneyard=["6-6"])
    elif how == "draw":
        eng = setup(new(4), [["0-1"], *hands[1:]], boneyard=["6-6"])
    elif how == "pass":
        eng = setup(new(4), [["0-1"], *hands[1:]])
    elif how == "drawn":
        eng = setup(new(4), [["0-1"], *hands[1:]], boneyard=["3-12", "6-6"])
        eng.apply(0, DRAW)
    else:
        eng = setup(
            new(4), hands, trains={1: [(12, 7), (7, 7)]}, open_doubles=[1], boneyard=["6-6"]
        )
    pairs = [(t, r) for t in ODD_VALUES + ["absent"] for r in ("3-12", 0, 1, "mexican", "absent")]
    pairs += [(t, r) for r in ODD_VALUES for t in ("3-12", "0-1", "7-12", "absent")]
    assert refuses_unlisted(eng, "train", pairs, all_views) > 500
