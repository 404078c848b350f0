"""Mexican Train: random full matches (random legal bots), invariants and replay."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import V1, tile_code, tiles
from games.base import Chance
from games.errors import ActionError
from games.mexican_train import MexicanTrainEngine
from games.registry import find_engine
from games.replay import replay
from games.transcript import simulate_match, transcript_key
from tests.support import all_views, examples, play_randomly

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
MexicanTrainEngineV1 = find_engine("mexican_train", protocol=V1)

ALL = Counter(tiles(12))


def check_invariants(eng: MexicanTrainEngine) -> None:
    engine = tile_code(eng.engine_n, eng.engine_n)
    laid = [tile_code(*p) for train in eng.trains for p in train]
    held = [t for h in eng.hands for t in h]
    assert Counter(laid + held + eng.boneyard + [engine]) == ALL
    for train in eng.trains:
        if train:
            assert train[0][0] == eng.engine_n
        for (_, b), (c, _) in zip(train, train[1:], strict=False):
            assert b == c
    for i in eng.open_doubles:
        a, b = eng.trains[i][-1]
        assert a == b
    assert eng.markers <= set(range(eng.n_seats))
    totals = [0] * eng.n_seats
    for r in eng.history:
        assert r["penalties"] == [eng.penalty(h) for h in r["hands"]]
        if r["out"] is not None:
            assert r["penalties"][r["out"]] == 0 and r["hands"][r["out"]] == []
        for s, p in enumerate(r["penalties"]):
            totals[s] += p
    assert totals == eng.totals


def play_out(players: int, rounds: int, blank: int, seed: int) -> MexicanTrainEngine:
    ruleset = MexicanTrainEngine.parse_ruleset(
        {"players": players, "rounds": rounds, "blank_double": blank}
    )
    eng = MexicanTrainEngineV1(ruleset, Chance(seed.to_bytes(32, "big")))

    def before(seat: int, legal: list[Any], step: int) -> None:
        if step % 11 == 0:
            seen = all_views(eng)
            for bad in (
                {"type": "play", "tile": "12-12", "train": "mexican"},
                {"type": "pass"} if legal != [{"type": "pass"}] else {"type": "draw"},
            ):
                if bad in legal:
                    continue
                with pytest.raises(ActionError):
                    eng.apply(seat, bad)
            assert all_views(eng) == seen

    play_randomly(eng, seed, 50_000, before, lambda: check_invariants(eng))
    assert eng.outcome is not None
    assert len(eng.history) == rounds
    low = min(eng.totals)
    assert eng.outcome.winners == tuple(s for s in range(players) if eng.totals[s] == low)
    assert eng.outcome.scores == tuple(eng.totals)
    return eng


@settings(max_examples=examples(20), deadline=None)
@given(
    players=st.integers(2, 8),
    rounds=st.integers(1, 3),
    blank=st.sampled_from([0, 50]),
    seed=st.integers(0, 2**32),
)
def test_random_matches_keep_invariants(players: int, rounds: int, blank: int, seed: int) -> None:
    play_out(players, rounds, blank, seed)


def test_full_thirteen_round_match() -> None:
    eng = play_out(4, 13, 50, 7)
    assert [h["engine"] for h in eng.history] == [f"{n}-{n}" for n in range(12, -1, -1)]


@settings(max_examples=examples(6), deadline=None)
@given(players=st.integers(2, 8), seed=st.integers(0, 10_000))
def test_simulated_transcript_replays(players: int, seed: int) -> None:
    doc, eng = simulate_match("mexican_train", {"players": players, "rounds": 3}, seed=seed)
    assert doc["result"] == eng.outcome.to_json()  # type: ignore[union-attr]
    labels = [e["label"] for e in doc["events"] if e["type"] == "chance"]
    assert labels == ["r0/shuffle", "r1/shuffle", "r2/shuffle"]
    key = transcript_key(doc)
    again = replay(
        find_engine("mexican_train", protocol=doc["protocol"]), doc["ruleset"], key, doc["events"]
    )
    assert again.outcome == eng.outcome
    assert all_views(again) == all_views(eng)  # type: ignore[arg-type]
    # the public log hides the deals
    public = [MexicanTrainEngine.redact(e) for e in doc["events"]]
    assert all("result" not in e for e in public if e["type"] == "chance")


def test_replay_rejects_a_changed_train() -> None:
    doc, _ = simulate_match("mexican_train", {"players": 3, "rounds": 1}, seed=5)
    key = transcript_key(doc)
    events = [dict(e) for e in doc["events"]]
    i = -1
    for j, e in enumerate(events):  # a play on its own train before anyone has passed
        if e["type"] != "action":
            continue
        if e["action"]["type"] == "pass":
            break
        if e["action"]["type"] == "play" and e["action"]["train"] == e["seat"]:
            i = j
            break
    assert i >= 0
    bad = (events[i]["seat"] + 1) % 3  # another seat's train, unmarked at the start
    events[i] = {**events[i], "action": {**events[i]["action"], "train": bad}}
    with pytest.raises(ValueError, match=f"event {i}"):
        replay(find_engine("mexican_train", protocol=doc["protocol"]), doc["ruleset"], key, events)
