"""Hokm engine: known-answer deals, cut, trump and nars, follow suit, kot, hakem passing."""

from __future__ import annotations

import json
from typing import Any

import pytest

import fairness
from fairness import Stream, deck52
from games import errors
from games.base import Chance
from games.deals import deal_packets, hokm_deal
from games.hokm import HokmEngine
from games.registry import engine_class, find_engine
from tests.support import rejects, vector

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
HokmEngineV1 = find_engine("hokm", protocol=fairness.V1)

VEC = vector("hokm_deals.json")
K = bytes.fromhex(VEC["key"])


def make(ruleset: dict[str, Any] | None = None, key: bytes = K) -> HokmEngine:
    """The vectors' deals are uncut: their ruleset is ``"cut": false`` unless a test says
    otherwise (the default ``"cut": true`` with a tap deals the very same cards)."""
    return HokmEngineV1(HokmEngine.parse_ruleset({"cut": False, **(ruleset or {})}), Chance(key))


def setup_play(
    e: HokmEngine,
    hands: list[list[str]],
    *,
    trump: str = "S",
    leader: int = 0,
    nars: bool = False,
    tricks_by_seat: list[int] | None = None,
) -> HokmEngine:
    """A scripted situation in the play phase, through the engine's public constructor."""
    return HokmEngineV1.position(
        e.ruleset,
        Chance(e.chance.key),
        hands=hands,
        trump=trump,
        hakem=e.hakem,
        leader=leader,
        nars=nars,
        tricks_by_seat=tricks_by_seat,
    )


# -- ruleset and registry -----------------------------------------------------------------


def test_registry_and_ruleset() -> None:
    assert engine_class("hokm") is HokmEngine
    assert HokmEngine.parse_ruleset({}, protocol=fairness.PROTOCOL) == {
        "players": 4,
        "target": 7,
        "cut": True,
        "nars": False,
    }
    assert HokmEngine.parse_ruleset({}) == {  # qahwa-fair/2 lists the timing rules too
        "players": 4,
        "target": 7,
        "cut": True,
        "nars": False,
        "turn_seconds": 300,
        "reveal_seconds": 120,
        "max_seconds": 86400,
    }
    for bad_time in ({"turn_seconds": 0}, {"max_seconds": 400 * 86400}, {"reveal_seconds": "9"}):
        with pytest.raises(errors.RulesetError):
            HokmEngine.parse_ruleset(bad_time)
        with pytest.raises(errors.RulesetError, match="unknown"):
            HokmEngine.parse_ruleset(bad_time, protocol=fairness.PROTOCOL)
    assert HokmEngine.parse_ruleset({"target": 3, "cut": True})["cut"] is True
    for bad in (
        {"target": 0},
        {"target": 100},
        {"cut": 1},
        {"nars": "yes"},
        {"x": 1},
        {"target": True},
    ):
        with pytest.raises(errors.RulesetError):
            HokmEngine.parse_ruleset(bad)
    for n in (2, 3, 4):
        assert HokmEngine.seat_count(HokmEngine.parse_ruleset({"players": n})) == n
    for bad in ({"players": 1}, {"players": 5}, {"players": "4"}):
        with pytest.raises(errors.RulesetError):
            HokmEngine.parse_ruleset(bad)


# -- known-answer deals -------------------------------------------------------------------


def test_first_hakem_from_the_face_up_draw() -> None:
    e = make()
    events = e.chance.take_events()
    assert [ev["label"] for ev in events] == ["hakem", "h0/shuffle"]
    assert events[0]["result"] == VEC["hakem_shuffle"]
    assert e.hakem == VEC["first_hakem"]
    ace = VEC["first_ace_index"]
    assert e.first_hakem_deal == VEC["hakem_shuffle"][: ace + 1]
    assert all(c[0] != "A" for c in e.first_hakem_deal[:-1])
    assert e.first_hakem_deal[-1][0] == "A"
    assert events[1]["result"] == VEC["h0_shuffle"]
    assert events[1]["result"][:13] == VEC["h0_shuffle_first13_spec"]


def test_known_answer_deal_five_then_the_rest() -> None:
    e = make()
    h = e.hakem
    deal = next(d for d in VEC["deals"] if d["hakem"] == h and d["cut"] is None)
    assert e.phase == "trump" and e.turn == h
    for s in range(4):
        assert e.hands[s] == deal["hands"][str(s)][:5]
        assert sorted(e.view(s)["hand"]) == sorted(deal["hands"][str(s)][:5])
    # the spec's printed prefix: the hakem's first packet is the first 5 cards
    assert e.hands[h] == VEC["h0_shuffle_first13_spec"][:5]
    assert e.hands[(h + 1) % 4] == VEC["h0_shuffle_first13_spec"][5:10]
    e.apply(h, {"type": "trump", "suit": "H"})
    for s in range(4):
        assert e.hands[s] == deal["hands"][str(s)]
    assert e.phase == "play" and e.turn == h and e.trump == "H"


@pytest.mark.parametrize("hakem", [0, 1, 2, 3])
def test_known_answer_deal_for_every_hakem(hakem: int) -> None:
    # the engine deals with games.deals.hokm_deal: the same function, for every hakem
    deal = next(d for d in VEC["deals"] if d["hakem"] == hakem and d["cut"] is None)
    dealt = hokm_deal(VEC["h0_shuffle"], hakem, 4)
    assert {str(s): dealt.full(s) for s in range(4)} == deal["hands"]
    assert all(dealt.first[s] == deal["hands"][str(s)][:5] for s in range(4))


def test_default_cut_and_a_tap_deal_the_vectors_cards() -> None:
    """The default ruleset cuts, and a tap accepts the deck uncut: the deal is the uncut
    vector's, byte for byte, as under ``"cut": false``."""
    e = HokmEngineV1(HokmEngine.parse_ruleset({}), Chance(K))
    assert e.ruleset["cut"] is True and e.phase == "cut"
    h = e.hakem
    assert e.bot_actions(e.cutter) == [{"type": "tap"}]
    assert e.legal_actions(e.cutter)[0] == {"type": "tap"}
    e.apply(e.cutter, {"type": "tap"})
    assert e.phase == "trump" and e.tapped and e.cut_k is None
    e.apply(h, {"type": "trump", "suit": "C"})
    deal = next(d for d in VEC["deals"] if d["hakem"] == h and d["cut"] is None)
    assert {str(s): e.hands[s] for s in range(4)} == deal["hands"]
    plain = make()
    plain.apply(h, {"type": "trump", "suit": "C"})
    assert plain.hands == e.hands


def test_known_answer_deal_with_cut() -> None:
    e = make({"cut": True})
    h = e.hakem
    events = e.chance.take_events()
    # the shuffle is drawn before the cut, when the hand starts
    assert [ev["label"] for ev in events] == ["hakem", "h0/shuffle"]
    assert e.phase == "cut" and e.turn == (h + 2) % 4
    assert all(e.hands[s] == [] for s in range(4))
    legal = e.legal_actions((h + 2) % 4)
    assert legal == [{"type": "tap"}] + [{"type": "cut", "k": k} for k in range(1, 52)]
    assert e.legal_actions(h) == []
    assert e.apply((h + 2) % 4, {"type": "cut", "k": 17}) == [  # the cut draws nothing
        {"type": "action", "seat": (h + 2) % 4, "action": {"type": "cut", "k": 17}}
    ]
    assert e.phase == "trump" and e.turn == h and e.cut_k == 17
    e.apply(h, {"type": "trump", "suit": "D"})
    deal = next(d for d in VEC["deals"] if d["cut"] == 17)
    assert deal["hakem"] == h
    assert {str(s): e.hands[s] for s in range(4)} == deal["hands"]


# -- bad actions --------------------------------------------------------------------------


def test_cut_rejections() -> None:
    e = make({"cut": True})
    c = (e.hakem + 2) % 4
    for bad in (
        {"type": "cut"},
        {"type": "cut", "k": 0},
        {"type": "cut", "k": 52},
        {"type": "cut", "k": "17"},
        {"type": "cut", "k": True},
        {"type": "cut", "k": 5, "x": 1},
    ):
        rejects(e, c, bad, errors.MalformedActionError)
    rejects(e, e.hakem, {"type": "cut", "k": 3}, errors.NotYourTurnError)
    rejects(e, c, {"type": "play", "card": "AS"}, errors.IllegalActionError, "cut")
    rejects(e, c, {"type": "trump", "suit": "S"}, errors.IllegalActionError, "cut")
    no_cut = make()
    rejects(no_cut, no_cut.hakem, {"type": "cut", "k": 3}, errors.IllegalActionError, "no cut")


def test_trump_rejections_and_legal_forms() -> None:
    e = make()
    h = e.hakem
    assert e.legal_actions(h) == [{"type": "trump", "suit": s} for s in "CDHS"]
    bads: list[Any] = [
        {"type": "trump"},
        {"type": "trump", "suit": "X"},
        {"type": "trump", "suit": 1},
        {"type": "trump", "suit": "SS"},
        {"type": "trump", "suit": "S", "nars": 1},
        {"type": "trump", "suit": "S", "extra": 0},
        {"type": "bid", "n": 1},
        [],
        "x",
    ]
    for bad in bads:
        rejects(e, h, bad, errors.MalformedActionError)
    rejects(e, h, {"type": "trump", "suit": "S", "nars": True}, errors.IllegalActionError, "nars")
    rejects(e, h, {"type": "play", "card": e.hands[h][0]}, errors.IllegalActionError, "trump")
    rejects(e, (h + 1) % 4, {"type": "trump", "suit": "S"}, errors.NotYourTurnError)
    e.apply(h, {"type": "trump", "suit": "S", "nars": False})
    assert e.nars is False
    rejects(e, h, {"type": "trump", "suit": "H"}, errors.IllegalActionError, "already")


def test_play_rejections() -> None:
    e = make()
    h = e.hakem
    e.apply(h, {"type": "trump", "suit": "S"})
    not_held = next(c for c in deck52() if c not in e.hands[h])
    rejects(e, h, {"type": "play", "card": not_held}, errors.IllegalActionError, "not in")
    for bad in (
        {"type": "play"},
        {"type": "play", "card": "ZZ"},
        {"type": "play", "card": "JB"},
        {"type": "play", "card": 3},
        {"type": "play", "card": "AS", "k": 1},
    ):
        rejects(e, h, bad, errors.MalformedActionError)


# -- trump, nars, follow suit ----------------------------------------------------------------


def test_follow_suit_is_enforced_and_listed() -> None:
    e = make()
    e = setup_play(
        e, [["5H", "2C"], ["AH", "KS", "2D"], ["AD", "2S"], ["3H", "4H", "AS"]], trump="S"
    )
    e.apply(0, {"type": "play", "card": "5H"})
    assert e.legal_actions(1) == [{"type": "play", "card": "AH"}]
    rejects(e, 1, {"type": "play", "card": "KS"}, errors.IllegalActionError, "follow suit")
    e.apply(1, {"type": "play", "card": "AH"})
    # no heart: anything goes, and a trump cuts
    assert {a["card"] for a in e.legal_actions(2)} == {"AD", "2S"}
    e.apply(2, {"type": "play", "card": "2S"})
    e.apply(3, {"type": "play", "card": "4H"})
    assert e.last_trick is not None and e.last_trick["winner"] == 2
    assert e.tally.tricks == [0, 0, 1, 0] and e.turn == 2 and len(e.trick) == 0


def test_highest_led_suit_wins_without_trump() -> None:
    e = make()
    e = setup_play(e, [["5H"], ["9H"], ["AD"], ["KH"]], trump="S")
    for s, c in enumerate(["5H", "9H", "AD", "KH"]):
        e.apply(s, {"type": "play", "card": c})
    assert e.last_trick is not None and e.last_trick["winner"] == 3


def test_nars_reverses_every_suit() -> None:
    e = make({"nars": True})
    h = e.hakem
    assert len(e.legal_actions(h)) == 8
    assert {"type": "trump", "suit": "H", "nars": True} in e.legal_actions(h)
    e.apply(h, {"type": "trump", "suit": "H", "nars": True})
    assert e.nars is True and e.view(None)["nars"] is True
    e = setup_play(e, [["AC"], ["2C"], ["KC"], ["5D"]], trump="H", nars=True, leader=0)
    for s, c in enumerate(["AC", "2C", "KC", "5D"]):
        e.apply(s, {"type": "play", "card": c})
    assert e.last_trick is not None and e.last_trick["winner"] == 1
    e = setup_play(e, [["AC"], ["2C"], ["AH"], ["3H"]], trump="H", nars=True, leader=0)
    for s, c in enumerate(["AC", "2C", "AH", "3H"]):
        e.apply(s, {"type": "play", "card": c})
    assert e.last_trick is not None and e.last_trick["winner"] == 3  # the 3 beats the ace


# -- end of a hand: scoring and the next hakem -----------------------------------------------


def finish_hand(
    e: HokmEngine,
    tricks_by_seat: list[int],
    winner_seat: int,
    *,
    hakem: int,
    scores: list[int] | None = None,
) -> tuple[HokmEngine, list[dict[str, Any]]]:
    """Play one last trick that ``winner_seat`` wins with the trump ace; returns the engine
    and the chance events the trick's plays drew (the next hand's shuffle, if any)."""
    hands = [["2C"], ["3C"], ["4C"], ["5C"]]
    hands[winner_seat] = ["AS"]
    e = HokmEngineV1.position(
        e.ruleset,
        Chance(e.chance.key),
        hands=hands,
        trump="S",
        hakem=hakem,
        tricks_by_seat=tricks_by_seat,
        scores=scores,
    )
    drawn: list[dict[str, Any]] = []
    for i in range(4):
        s = (e.hakem + i) % 4
        drawn += e.apply(s, {"type": "play", "card": e.hands[s][0]})[1:]
    return e, drawn


def test_plain_win_keeps_the_hakem() -> None:
    e = make()
    e, drawn = finish_hand(
        e, [3, 2, 3, 3], winner_seat=2, hakem=0
    )  # side 0 reaches 7, side 1 has 5
    assert e.scores == [1, 0]
    assert e.history[-1]["points"] == 1 and e.history[-1]["kot"] is False
    assert e.hakem == 0 and e.hand_number == 1
    # the trick that ended hand 0 stays visible as the last trick
    last = e.view(None)["last_trick"]
    assert last["hand"] == 0 and last["winner"] == 2 and last["leader"] == 0
    assert [p["card"] for p in last["plays"]] == ["2C", "3C", "AS", "5C"]
    assert e.view(None)["history"][-1]["tricks"] == [7, 5]
    events = drawn
    assert [ev["label"] for ev in events] == ["h1/shuffle"]
    assert e.phase == "trump" and e.turn == 0
    assert e.hands == [h[:5] for h in deal_packets(events[0]["result"], 0)]


def test_kot_scores_two() -> None:
    e = make()
    e, drawn = finish_hand(e, [3, 0, 3, 0], winner_seat=0, hakem=0)
    assert e.scores == [2, 0]
    assert e.history[-1]["kot"] is True and e.history[-1]["hakem_kot"] is False
    assert e.hakem == 0


def test_hakem_kot_scores_three_and_passes_the_hakem() -> None:
    e = make()
    e, drawn = finish_hand(e, [0, 3, 0, 3], winner_seat=1, hakem=2)
    assert e.scores == [0, 3]
    assert e.history[-1]["hakem_kot"] is True and e.history[-1]["points"] == 3
    assert e.hakem == 3 and e.dealer == 2
    events = drawn
    assert e.turn == 3 and e.hands == [h[:5] for h in deal_packets(events[0]["result"], 3)]


def test_losing_hakem_passes_to_the_next_seat_and_wraps() -> None:
    e = make()
    e, drawn = finish_hand(e, [3, 4, 3, 2], winner_seat=0, hakem=3)  # hakem's side (1) loses 6-7
    assert e.scores == [1, 0] and e.hakem == 0


def test_hand_ends_at_seven_tricks_with_cards_left() -> None:
    e = make()
    hands = [["2C", "3D"], ["AS", "4D"], ["4C", "5D"], ["5C", "6D"]]
    e = HokmEngineV1.position(
        e.ruleset, Chance(K), hakem=1, hands=hands, trump="S", leader=1, tricks_by_seat=[4, 6, 1, 0]
    )
    for s, c in [(1, "AS"), (2, "4C"), (3, "5C"), (0, "2C")]:
        e.apply(s, {"type": "play", "card": c})
    assert e.history[-1]["tricks"] == [5, 7] and e.scores == [0, 1]
    assert e.hand_number == 1 and all(len(h) == 5 for h in e.hands)


def test_match_ends_at_target_and_kot_can_overshoot() -> None:
    e = make({"target": 3})
    e, drawn = finish_hand(
        e, [0, 3, 0, 3], winner_seat=3, hakem=0, scores=[2, 1]
    )  # hakem-kot: +3 to side 1
    assert e.outcome is not None
    assert e.outcome.reason == "finished" and e.outcome.winners == (1, 3)
    assert e.outcome.scores == (2, 4)
    assert e.turn is None and e.legal_actions(1) == []
    assert drawn == []  # no next hand is dealt
    assert e.view(None)["result"]["winners"] == [1, 3]
    with pytest.raises(errors.MatchOverError):
        e.apply(0, {"type": "play", "card": "2C"})


def test_resign_and_abandon() -> None:
    e = make()
    e.end_match("resigned", 1)
    assert e.outcome is not None and e.outcome.winners == (0, 2)
    f = make()
    f.end_match("abandoned")
    assert f.outcome is not None and f.outcome.winners == ()


@pytest.mark.parametrize("cut", [False, True])
def test_an_ended_match_shows_phase_over(cut: bool) -> None:
    # docs/games/hokm.md: phase is `over` once the match has ended, however it ended
    e = make({"cut": cut})
    assert e.view(None)["phase"] == ("cut" if cut else "trump")
    e.end_match("resigned", 0)
    for s in (None, 0, 1, 2, 3):
        v = e.view(s)
        assert v["phase"] == "over" and v["status"] == "finished" and v["turn"] is None
        assert v["legal_actions"] == []
    f = make()
    f.apply(f.hakem, {"type": "trump", "suit": "H"})
    f.end_match("abandoned")
    assert f.view(None)["phase"] == "over" and f.view(2)["phase"] == "over"


# -- views and the public log ----------------------------------------------------------------


def test_views_hide_other_hands() -> None:
    e = make({"cut": True})
    h = e.hakem
    v = e.view(None)
    assert "hand" not in v and v["phase"] == "cut" and v["cutter"] == (h + 2) % 4
    e.apply((h + 2) % 4, {"type": "cut", "k": 30})
    e.apply(h, {"type": "trump", "suit": "S"})
    card = e.legal_actions(h)[0]["card"]
    e.apply(h, {"type": "play", "card": card})
    pub = e.view(None)
    assert "hand" not in pub and pub["legal_actions"] == []
    assert pub["trick"] == [{"seat": h, "card": card}]
    assert pub["trump"] == "S" and pub["hakem"] == h and pub["dealer"] == (h - 1) % 4
    assert pub["hand_sizes"] == [13 if s != h else 12 for s in range(4)]
    assert pub["tricks"] == [0, 0] and pub["scores"] == [0, 0] and pub["hand_number"] == 0
    for s in range(4):
        v = e.view(s)
        assert sorted(v["hand"]) == sorted(e.hands[s]) and v["seat"] == s
        others = [c for t in range(4) if t != s for c in e.hands[t]]
        assert not set(v["hand"]) & set(others)
        dumped = json.dumps(v)
        assert all(f'"{c}"' not in dumped for c in others if c not in v["first_hakem_deal"])


def test_redact_keeps_the_hakem_draw_public() -> None:
    e = make()
    hakem_ev, shuffle_ev = e.chance.take_events()
    assert HokmEngine.redact(hakem_ev) == hakem_ev
    red = HokmEngine.redact(shuffle_ev)
    assert "result" not in red and red["hidden"] is True and red["label"] == "h0/shuffle"
    act = {"type": "action", "seat": 0, "action": {"type": "trump", "suit": "S"}}
    assert HokmEngine.redact(act) == act


def test_same_key_same_match_different_key_different_draws() -> None:
    assert make().chance.take_events() == make().chance.take_events()
    other = make(key=bytes(32)).chance.take_events()
    assert other[0]["result"] == Stream(bytes(32), "hakem").shuffle(deck52())
    assert other != make().chance.take_events()


# -- three and two players: known answers ------------------------------------------------------

SMALL = vector("hokm_small_tables.json")


@pytest.mark.parametrize("players", [3, 2])
def test_small_table_known_answers(players: int) -> None:
    vec = SMALL["tables"][str(players)]
    key = bytes.fromhex(SMALL["key"])
    deck = [c for c in deck52() if players != 3 or c != "2C"]
    assert len(deck) == vec["deck_size"]
    # the draws, straight from the fairness stream
    assert Stream(key, "hakem").shuffle(deck) == vec["hakem_shuffle"]
    assert Stream(key, "h0/shuffle").shuffle(deck) == vec["h0_shuffle"]
    h0 = vec["h0_shuffle"]
    for deal in vec["deals"]:
        h = deal["hakem"]
        # the packets, written out by position
        if players == 3:
            want = {
                (h + i) % 3: h0[5 * i : 5 * i + 5]
                + [c for r in range(3) for c in h0[15 + 12 * r + 4 * i : 19 + 12 * r + 4 * i]]
                for i in range(3)
            }
            assert deal["stock"] == []
        else:
            want = {h: h0[0:5], 1 - h: h0[5:10]}
            assert deal["stock"] == h0[10:]
        assert {str(s): c for s, c in want.items()} == deal["hands"]
    # the engine: first hakem, then a tap deals the vector's hands for that hakem
    e = HokmEngineV1(HokmEngine.parse_ruleset({"players": players}), Chance(key))
    assert e.hakem == vec["first_hakem"] == vec["first_ace_index"] % players
    assert e.first_hakem_deal == vec["hakem_shuffle"][: vec["first_ace_index"] + 1]
    e.apply(e.cutter, {"type": "tap"})
    deal = next(d for d in vec["deals"] if d["hakem"] == e.hakem)
    assert {str(s): e.hands[s] for s in range(players)} == {
        s: cards[:5] for s, cards in deal["hands"].items()
    }
    assert e.stock == deal["stock"]
    e.apply(e.hakem, {"type": "trump", "suit": "H"})
    if players == 3:
        assert {str(s): e.hands[s] for s in range(3)} == deal["hands"]
        assert e.phase == "play" and all(len(h) == 17 for h in e.hands)
    else:
        assert e.phase == "draw" and e.turn == e.hakem and e.view(e.hakem)["drawn"] == h0[10]


def test_two_player_draw_and_discard() -> None:
    key = bytes.fromhex(SMALL["key"])
    e = HokmEngineV1(HokmEngine.parse_ruleset({"players": 2, "cut": False}), Chance(key))
    h, o = e.hakem, 1 - e.hakem
    e.apply(h, {"type": "trump", "suit": "S"})
    top, nxt = e.stock[0], e.stock[1]
    assert e.view(o).get("drawn") is None and e.view(None).get("drawn") is None
    rejects(e, h, {"type": "draw"}, errors.MalformedActionError)
    rejects(e, h, {"type": "draw", "keep": 1}, errors.MalformedActionError)
    rejects(e, o, {"type": "draw", "keep": True}, errors.NotYourTurnError)
    rejects(e, h, {"type": "play", "card": e.hands[h][0]}, errors.IllegalActionError, "draw")
    e.apply(h, {"type": "draw", "keep": True})
    assert top in e.hands[h] and e.thrown[h] == [nxt] and e.turn == o
    top, nxt = e.stock[0], e.stock[1]
    e.apply(o, {"type": "draw", "keep": False})
    assert nxt in e.hands[o] and e.thrown[o] == [top] and e.turn == h
    while e.phase == "draw":
        e.apply(e.turn, {"type": "draw", "keep": True})  # type: ignore[arg-type]
    assert (len(e.hands[h]), len(e.hands[o])) == (16, 15) and e.turn == h
    assert len(e.legal_actions(h)) == 560  # every 3 of 16
    rejects(
        e, h, {"type": "discard", "cards": e.hands[h][:2]}, errors.IllegalActionError, "exactly 3"
    )
    rejects(e, h, {"type": "discard", "cards": [e.hands[h][0]] * 3}, errors.MalformedActionError)
    not_held = next(c for c in deck52() if c not in e.hands[h])
    rejects(
        e,
        h,
        {"type": "discard", "cards": e.hands[h][:2] + [not_held]},
        errors.IllegalActionError,
        "not in your hand",
    )
    e.apply(h, {"type": "discard", "cards": e.hands[h][:3]})
    assert e.turn == o and len(e.legal_actions(o)) == 105  # every 2 of 15
    e.apply(o, {"type": "discard", "cards": e.hands[o][-2:]})
    assert e.phase == "play" and e.turn == h and [len(x) for x in e.hands] == [13, 13]
    red = HokmEngine.redact(
        {"type": "action", "seat": o, "action": {"type": "discard", "cards": ["AS", "KS"]}}
    )
    assert red["action"] == {"type": "discard", "count": 2} and red["hidden"] is True
    every = [c for x in e.hands for c in x] + [c for t in e.thrown for c in t]
    assert sorted(every) == sorted(deck52())


def test_three_players_a_6_6_5_hand_is_void_and_kot_counts_every_loser() -> None:
    key = bytes.fromhex(SMALL["key"])
    rs = {"players": 3, "cut": False}

    def last_trick(tricks_by_seat: list[int]) -> HokmEngine:
        """Seat 0 (the hakem) leads 2C, 1 takes the trick with AS, 2 plays 3C."""
        hands = [["2C"], ["AS"], ["3C"]]
        e = HokmEngineV1.position(
            rs, Chance(key), hands=hands, trump="S", hakem=0, tricks_by_seat=tricks_by_seat
        )
        for s, c in ((0, "2C"), (1, "AS"), (2, "3C")):
            e.apply(s, {"type": "play", "card": c})
        return e

    e = last_trick([6, 5, 5])
    last = e.history[-1]
    assert last["tricks"] == [6, 6, 5] and last["winner_side"] is None and last["points"] == 0
    assert e.scores == [0, 0, 0] and e.hakem == 1 and e.hand_number == 1  # the hakem passes
    # kot: the winner took 7 and both others none; the hakem among them: +3
    e = last_trick([0, 6, 0])
    assert e.history[-1]["hakem_kot"] is True and e.scores == [0, 3, 0] and e.hakem == 1
    assert e.n_sides == 3 and e.side_of(2) == 2
