"""Iraqi dominoes: random full matches (random legal bots), invariants and replay."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import V1, canonical_ruleset, tiles
from games.base import Chance
from games.errors import ActionError
from games.iraqi_domino import IraqiDominoEngine, round_to_nearest
from games.registry import find_engine
from games.replay import replay
from games.transcript import simulate_match, transcript_key
from tests.support import all_views, examples, play_randomly

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
IraqiDominoEngineV1 = find_engine("iraqi_domino", protocol=V1)

ALL = Counter(tiles(6))


def check_invariants(eng: IraqiDominoEngine) -> None:
    laid = [f"{min(p)}-{max(p)}" for p in eng.line]
    held = [t for h in eng.hands for t in h]
    assert Counter(laid + held + eng.pile) == ALL  # every tile exactly once
    if eng.line:
        assert eng.left == eng.line[0][0] and eng.right == eng.line[-1][1]
        for (_, b), (c, _) in zip(eng.line, eng.line[1:], strict=False):
            assert b == c  # neighbours touch with equal numbers
    # scores add up: each round's points to its winning side, rounded
    totals = [0] * eng.n_sides
    for r in eng.history:
        if r["winner_side"] is not None:
            assert r["points"] == round_to_nearest(r["raw"], eng.round_to)
            totals[r["winner_side"]] += r["points"]
        else:
            assert r["end"] == "blocked" and r["points"] == 0
    assert totals == eng.scores
    assert eng.round == len(eng.history) - (1 if eng.outcome is not None else 0)


def play_out(players: int, seed: int, target: int) -> IraqiDominoEngine:
    eng = IraqiDominoEngineV1(
        IraqiDominoEngine.parse_ruleset({"players": players, "target": target}),
        Chance(seed.to_bytes(32, "big")),
    )

    def before(seat: int, legal: list[Any], step: int) -> None:
        for other in range(players):
            if other != seat:
                assert eng.legal_actions(other) == []
        if step % 7 == 0:  # something not listed is refused and changes nothing
            seen = all_views(eng)
            try:
                eng.apply(seat, {"type": "play", "tile": "0-0", "end": "up"})
            except ActionError:
                pass
            else:
                raise AssertionError("an unlisted action was accepted")
            assert all_views(eng) == seen

    play_randomly(eng, seed, 20_000, before, lambda: check_invariants(eng))
    assert eng.outcome is not None
    assert eng.outcome.reason == "finished"
    win_side = eng.side_of(eng.outcome.winners[0])
    assert eng.scores[win_side] >= target
    assert all(s < target for side, s in enumerate(eng.scores) if side != win_side)
    return eng


@settings(max_examples=examples(25), deadline=None)
@given(
    players=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 2**32),
    target=st.sampled_from([1, 60, 151]),
)
def test_random_matches_keep_invariants(players: int, seed: int, target: int) -> None:
    play_out(players, seed, target)


@settings(max_examples=examples(10), deadline=None)
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 10_000))
def test_simulated_transcript_replays(players: int, seed: int) -> None:
    doc, eng = simulate_match("iraqi_domino", {"players": players}, seed=seed)
    assert doc["result"] == eng.outcome.to_json()  # type: ignore[union-attr]
    labels = [e["label"] for e in doc["events"] if e["type"] == "chance"]
    assert labels == [f"r{r}/shuffle" for r in range(len(labels))]
    assert len(labels) == eng.round + 1  # type: ignore[attr-defined]
    key = transcript_key(doc)
    again = replay(
        find_engine("iraqi_domino", protocol=doc["protocol"]), doc["ruleset"], key, doc["events"]
    )
    assert again.outcome == eng.outcome
    assert all_views(again) == all_views(eng)  # type: ignore[arg-type]
    assert doc["ruleset"] == canonical_ruleset(
        IraqiDominoEngine.parse_ruleset({"players": players})
    )


def test_replay_rejects_a_changed_action() -> None:
    doc, _ = simulate_match("iraqi_domino", {"players": 2}, seed=3)
    key = transcript_key(doc)
    events = [dict(e) for e in doc["events"]]
    i = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "action" and e["action"].get("end") == "left"
    )
    events[i] = {**events[i], "action": {**events[i]["action"], "end": "middle"}}
    try:
        replay(find_engine("iraqi_domino", protocol=doc["protocol"]), doc["ruleset"], key, events)
    except ValueError as exc:
        assert f"event {i}" in str(exc)
    else:
        raise AssertionError("a tampered transcript replayed")
