"""Tawla: random full matches (invariants after every action), transcripts and replay."""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import PROTOCOL, PROTOCOL_V2, V1, canonical_ruleset
from games.base import Chance
from games.errors import ReplayError
from games.registry import find_engine
from games.replay import replay
from games.tawla import TawlaEngine, legal_turns, relative_board
from games.transcript import replay_transcript, simulate_match
from tests.support import examples

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
TawlaEngineV1 = find_engine("tawla", protocol=V1)

RULESETS: list[dict[str, Any]] = [
    {},
    {"match_length": 1},
    {"match_length": 3, "cube_cap": 8},
    {"match_length": 0},
    {"match_length": 0, "jacoby": True},
    {"cube": False, "crawford": False},
    {"live_entropy": True, "match_length": 2},
]

# how often a biased bot picks each action type (resigning rarely, so games get played out)
WEIGHTS = {
    "move": 30.0,
    "roll": 30.0,
    "double": 1.0,
    "take": 3.0,
    "drop": 1.0,
    "resign": 0.05,
    "accept": 1.0,
    "reject": 1.0,
}


def pips_by_hand(view: dict[str, Any]) -> list[int]:
    pts, bar = view["points"], view["bar"]
    p0 = 25 * bar[0]
    p1 = 25 * bar[1]
    for i, n in enumerate(pts):
        if n > 0:
            p0 += n * (i + 1)  # seat 0's point i + 1
        elif n < 0:
            p1 += -n * (24 - i)  # seat 1's point 24 - i
    return [p0, p1]


def check_invariants(eng: TawlaEngine) -> None:
    v = eng.view(None)
    pts = v["points"]
    assert len(pts) == 24
    on0 = sum(n for n in pts if n > 0)
    on1 = -sum(n for n in pts if n < 0)
    assert on0 + v["bar"][0] + v["off"][0] == 15
    assert on1 + v["bar"][1] + v["off"][1] == 15
    assert v["pips"] == pips_by_hand(v)
    assert min(v["bar"] + v["off"]) >= 0
    # score arithmetic: the score is the sum of the game results so far
    totals = [0, 0]
    for g in v["games"]:
        totals[g["winner"]] += g["points"]
        assert g["score"] == totals
        factor = {"single": 1, "gammon": 2, "backgammon": 3}[g["result"]]
        if g["how"] == "drop":
            assert g["points"] == g["cube"]
        elif eng.ruleset["jacoby"] and g["cube"] == 1:
            assert g["points"] == 1
        else:
            assert g["points"] == factor * g["cube"]
    assert v["score"] == totals
    assert v["cube"]["value"] <= eng.ruleset["cube_cap"]
    if not eng.ruleset["cube"]:
        assert v["cube"] == {"value": 1, "owner": None}
    if eng.outcome is None:
        ml = eng.ruleset["match_length"]
        assert ml == 0 and not v["games"] or max(v["score"]) < max(ml, 1)
        turn = v["turn"]
        assert turn in (0, 1)
        assert eng.legal_actions(turn), "the seat to act always has something to do"
        assert eng.legal_actions(1 - turn) == []
        if v["phase"] == "move":
            mover = v["on_roll"]
            board = relative_board(pts, v["bar"], v["off"], mover)
            turns = legal_turns(board, v["dice"])
            listed = [a["steps"] for a in eng.legal_actions(mover)]
            assert sorted(listed) == sorted([list(s) for s in t] for t in turns.values())
            assert len({tuple(map(tuple, s)) for s in listed}) == len(listed)
    else:
        w = eng.outcome.winners
        assert len(w) == 1 and v["status"] == "finished" and v["turn"] is None
        if eng.outcome.reason == "finished":
            ml = eng.ruleset["match_length"]
            assert v["score"][w[0]] >= max(ml, 1) or ml == 0
            assert list(eng.outcome.scores) == v["score"]


def play_biased(
    ruleset: dict[str, Any], seed: int, check_listed: bool = False
) -> tuple[TawlaEngine, bytes, list[dict[str, Any]]]:
    """A random match with invariants checked after every action; returns the event log."""
    rng = random.Random(seed)
    parsed = TawlaEngine.parse_ruleset(ruleset, protocol=PROTOCOL)
    key = hashlib.sha256(f"tawla-{seed}".encode()).digest()
    chance = Chance(key)
    eng = TawlaEngineV1(parsed, chance)
    events: list[dict[str, Any]] = list(chance.take_events())
    check_invariants(eng)
    for _ in range(20_000):
        if eng.outcome is not None:
            break
        seat = eng.turn
        assert seat is not None
        legal = eng.legal_actions(seat)
        if check_listed and rng.random() < 0.05:
            for action in legal:  # every listed action is accepted
                copy.deepcopy(eng).apply(seat, action)
        types = sorted({a["type"] for a in legal})
        kind = rng.choices(types, [WEIGHTS[t] for t in types])[0]
        action = dict(rng.choice([a for a in legal if a["type"] == kind]))
        if kind == "roll" and parsed["live_entropy"] and rng.random() < 0.5:
            action["entropy"] = f"e{rng.randrange(10**6)}"
        events.extend(eng.apply(seat, action))
        check_invariants(eng)
    assert eng.outcome is not None
    return eng, key, [{"seq": i, **e} for i, e in enumerate(events)]


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 10**9), rs=st.sampled_from(RULESETS))
def test_biased_random_matches_keep_invariants_and_replay(seed: int, rs: dict[str, Any]) -> None:
    eng, key, events = play_biased(rs, seed, check_listed=True)
    parsed = TawlaEngine.parse_ruleset(rs, protocol=PROTOCOL)
    again = replay(TawlaEngineV1, canonical_ruleset(parsed), key, events)
    assert again.view(None) == eng.view(None)
    assert again.outcome == eng.outcome


@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 10**9), rs=st.sampled_from(RULESETS))
def test_simulated_matches_replay_to_the_same_view(seed: int, rs: dict[str, Any]) -> None:
    # live entropy is qahwa-fair/1's; every other ruleset plays v2 with fresh rolls
    protocol = PROTOCOL if "live_entropy" in rs else PROTOCOL_V2
    doc, eng = simulate_match("tawla", rs, seed=seed, protocol=protocol)
    check_invariants(eng)  # type: ignore[arg-type]
    assert doc["result"] == eng.outcome.to_json()  # type: ignore[union-attr]
    seen: list[dict[str, Any]] = []
    again = replay_transcript(doc, on_event=lambda ev, eng: seen.append(ev))
    assert len(seen) == len(doc["events"])
    assert again.view(None) == eng.view(None)
    assert again.outcome == eng.outcome
    # the bots' choice set (bot_actions) only rolls in the roll phase: every game is played out
    assert all(g["how"] == "bear-off" and g["cube"] == 1 for g in eng.games)  # type: ignore[attr-defined]
    labels = [e["label"] for e in doc["events"] if e["type"] == "chance"]
    assert labels[0].split("|")[0] == "g0/opening/0"
    if protocol == PROTOCOL_V2:  # every roll is fresh: its label carries the values' hash
        assert all(len(lab.split("|")[1]) == 64 for lab in labels)
    assert all(lab.startswith("g") and ("/opening/" in lab or "/roll/" in lab) for lab in labels)


def test_games_get_played_out_with_gammons() -> None:
    """The biased bots finish games by bearing off, and gammons do happen."""
    hows: dict[str, int] = {}
    results: dict[str, int] = {}
    for seed in range(6):
        eng, _, _ = play_biased({"match_length": 7}, seed)
        for g in eng.games:
            hows[g["how"]] = hows.get(g["how"], 0) + 1
            if g["how"] == "bear-off":
                results[g["result"]] = results.get(g["result"], 0) + 1
    assert hows.get("bear-off", 0) >= 5
    assert (
        results.get("single", 0) > 0 and results.get("gammon", 0) + results.get("backgammon", 0) > 0
    )


def test_replay_rejects_a_tampered_move_and_roll() -> None:
    eng, key, events = play_biased({"match_length": 1}, 4)
    rs = canonical_ruleset(TawlaEngine.parse_ruleset({"match_length": 1}, protocol=PROTOCOL))
    i = next(
        k
        for k, e in enumerate(events)
        if e["type"] == "action"
        and e["action"]["type"] == "move"
        and len(e["action"]["steps"]) == 2
        and e["action"]["steps"][0] != e["action"]["steps"][1]
    )
    bad = [dict(e) for e in events]
    steps = bad[i]["action"]["steps"]
    bad[i] = {**bad[i], "action": {"type": "move", "steps": steps[::-1]}}
    with pytest.raises(ReplayError) as info:
        replay(TawlaEngineV1, rs, key, bad)
    assert info.value.seq == i
    assert replay(TawlaEngineV1, rs, key, events).view(None) == eng.view(None)
    j = next(k for k, e in enumerate(events) if e["type"] == "chance" and "/roll/" in e["label"])
    bad = [dict(e) for e in events]
    d = bad[j]["result"]
    bad[j] = {**bad[j], "result": [d[0] % 6 + 1, d[1]]}
    with pytest.raises(ReplayError, match="chance result differs"):
        replay(TawlaEngineV1, rs, key, bad)


def test_simulate_match_with_resignation_end_event() -> None:
    doc, eng = simulate_match("tawla", {}, seed=3, resign_at=5)
    assert eng.outcome is not None and eng.outcome.reason == "resigned"
    assert doc["events"][-1] == {
        "seq": len(doc["events"]) - 1,
        "type": "end",
        "reason": "resigned",
        "seat": 0,
    }
    assert doc["result"]["forfeited"] == [0] and doc["result"]["winners"] == [1]
    assert replay_transcript(doc).outcome == eng.outcome
