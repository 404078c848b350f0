"""The engine contract, checked the same way for every game id (OpenSpiel's random_sim_test).

For each id in ``games.GAME_IDS`` (a missing engine fails here, it does not vanish), random
bots play matches to the end while, at sampled steps:

- every refused action (malformed, another seat's, a legal action with a field changed or
  an extra field) raises one of the games' own errors and leaves the *whole* engine
  unchanged: every attribute, and its chance state (labels used, pending draws);
- an unlisted action that is accepted is one of the documented free parameters (same type
  and fields as a listed action, another value);
- the views of all seats agree with the public view except for each seat's own fields.

At the end: no chance label is used twice, the labels the engine holds are exactly the
transcript's, replaying the events rebuilds an engine equal to the live one, and the
transcript's result is the outcome.

Every case runs under qahwa-fair/1 and qahwa-fair/2 (a 64-byte key, the v2 ruleset, the
drawn hokm cut, tawla's and mahbusa's fresh rolls with real roll chains, whose values the
bots add to the listed ``roll`` / ``roll_value``); ``apply`` must return exactly the events
of the step (the action as sent, then the draws).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    V2,
    StreamKey,
    canonical_ruleset,
    match_key,
    roll_chain,
)
from games import GAME_IDS
from games.base import Chance, Engine, MatchContext
from games.errors import GameError, MatchOverError, NotYourTurnError
from games.registry import find_engine
from games.replay import replay
from games.transcript import with_roll_value
from tests.support import examples

# Rulesets that keep a match to a few hundred actions (shelem's default runs to 1200 points).
RULESETS: dict[str, list[dict[str, Any]]] = {
    "iraqi_domino": [{}, {"players": 2, "target": 1}],
    "mexican_train": [{"rounds": 2}, {"players": 2, "rounds": 1}],
    "qahve": [{}],
    "hokm": [{}, {"players": 3, "target": 2}, {"players": 2, "target": 2}],
    "shelem": [{"target": 200}, {"players": 2, "target": 200}],
    "tawla": [{}, {"match_length": 3}, {"match_length": 0, "jacoby": True}],
    "mahbusa": [{}, {"match_length": 1, "cube": False}],
    "rng": [{}],
}

# Rulesets only one protocol has (played under that protocol alone).
V1_ONLY: dict[str, list[dict[str, Any]]] = {"tawla": [{"live_entropy": True, "match_length": 1}]}
V2_ONLY: dict[str, list[dict[str, Any]]] = {
    "tawla": [{"fresh_rolls": False, "match_length": 1}],
    "mahbusa": [{"fresh_rolls": False, "match_length": 1}],
    "hokm": [{"cut": False, "target": 2}],
}

# Fields a seat's view may hold that the public view shows differently or not at all.
OWN_FIELDS = {"seat", "legal_actions", "suggested_actions", "hand", "drawn", "kitty", "discard"}

WRONG_VALUES: list[Any] = [None, -1, 10**9, "", "x", True, [], {}, 1.5]
MAX_ACTIONS = 20_000


def freeze(obj: Any) -> Any:
    """A comparable picture of an object graph: every attribute, recursively."""
    if obj is None or isinstance(obj, bool | int | float | str | bytes):
        return obj
    if isinstance(obj, enum.Enum):
        return ("enum", type(obj).__name__, obj.value)
    if isinstance(obj, StreamKey):  # its hash states are a function of the key alone
        return ("StreamKey", obj.key)
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(freeze(x) for x in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((freeze(k), freeze(v)) for k, v in obj.items()))
    if isinstance(obj, set | frozenset):
        return ("set", tuple(sorted((freeze(x) for x in obj), key=repr)))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (
            type(obj).__name__,
            # a field left out of the dataclass's equality (``compare=False``: a cache such as
            # the sealed deal's last view) is not state; tests/sealed/test_sealed_cost.py holds
            # each cached view to one made afresh
            freeze({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.compare}),
        )
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, freeze(vars(obj)))
    if hasattr(obj, "__slots__"):
        return (
            type(obj).__name__,
            freeze({s: getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s)}),
        )
    raise TypeError(f"cannot compare a {type(obj).__name__}")


def snapshot(e: Engine) -> Any:
    """All of the engine's state, its chance object (key, labels, pending draws) included."""
    return freeze(e)


def wrong_actions(
    e: Engine,
    seat: int,
    legal: list[dict[str, Any]],
    seen_values: dict[str, list[Any]],
    rnd: random.Random,
) -> Iterator[Any]:
    """Actions a client might send that are not in the seat's legal list."""
    yield None
    yield "pass"
    yield []
    yield {}
    yield {"type": "no_such_action"}
    yield {"type": 7}
    for action in rnd.sample(legal, min(len(legal), 4)):
        yield {**action, "unexpected": 1}
        for field in action:
            if field == "type":
                continue
            for value in WRONG_VALUES + seen_values.get(field, []):
                changed = {**action, field: value}
                if changed not in legal:
                    yield changed
            yield {k: v for k, v in action.items() if k != field}


def check_refusals(e: Engine, rnd: random.Random, seen_values: dict[str, list[Any]]) -> None:
    seat = e.turn
    assert seat is not None
    legal = e.legal_actions(seat)
    assert legal, "the seat on turn has no legal action"
    listed_shapes = {(a["type"], frozenset(a)) for a in legal}
    before = snapshot(e)
    # Another seat, or no seat at all, may not act.
    for other in [s for s in range(e.n_seats) if s != seat] + [-1, e.n_seats]:
        trial = copy.deepcopy(e)
        with pytest.raises(NotYourTurnError):
            trial.apply(other, legal[0])
        assert snapshot(trial) == before, f"seat {other} acting out of turn changed the engine"
    candidates = list(wrong_actions(e, seat, legal, seen_values, rnd))
    for action in rnd.sample(candidates, min(len(candidates), 25)):
        trial = copy.deepcopy(e)
        try:
            trial.apply(seat, action)
        except GameError:
            assert snapshot(trial) == before, f"refused {action!r} changed the engine"
            continue
        # Accepted although not listed: only a free parameter (entropy, a cut position) or a
        # documented optional field left out (rng's count).
        assert isinstance(action, dict)
        assert any(t == action["type"] and set(action) <= shape for t, shape in listed_shapes), (
            f"{action!r} was accepted but is not a legal action"
        )
        assert snapshot(e) == before  # the trial was a copy


def check_views(e: Engine) -> None:
    public = e.view(None)
    assert "legal_actions" not in public or public["legal_actions"] == []
    for seat in range(e.n_seats):
        view = e.view(seat)
        assert set(public) <= set(view), f"seat {seat}'s view lacks public fields"
        own = {k for k in view if public.get(k, object()) != view[k]}
        assert own <= OWN_FIELDS, f"seat {seat}'s view differs from the public one in {own}"


def play(game: str, ruleset: dict[str, Any], seed: int, protocol: str = PROTOCOL) -> None:
    cls = find_engine(game, protocol=protocol)
    parsed = cls.parse_ruleset(ruleset, protocol=protocol)
    n = cls.seat_count(parsed)
    match_id = f"contract-{seed}"
    ctx: MatchContext | None = None
    chains: list[list[bytes]] | None = None
    if protocol == PROTOCOL:
        key = match_key(
            random.Random(seed).randbytes(32),
            match_id,
            game,
            canonical_ruleset(parsed),
            [f"c{s}-{seed}" for s in range(n)],
        )
    else:
        key = V2.match_key(
            random.Random(seed).randbytes(64),
            match_id,
            game,
            canonical_ruleset(parsed),
            [(f"c{s}-{seed}", bytes([s]) * 32) for s in range(n)],
        )
        if parsed.get("fresh_rolls"):
            chains = [
                roll_chain(match_id, s, random.Random(f"{seed}-{s}").randbytes(32))
                for s in range(n)
            ]
        ctx = MatchContext(match_id, tuple(c[0].hex() for c in chains) if chains else ())
    chance = Chance(key)
    e = cls(parsed, chance, ctx)
    assert e.protocol == protocol
    events: list[dict[str, Any]] = [*chance.take_events()]
    rnd = random.Random(seed)
    seen_values: dict[str, list[Any]] = {}
    steps = 0
    while e.outcome is None:
        assert steps < MAX_ACTIONS, f"{game}: no end after {MAX_ACTIONS} random actions"
        seat = e.turn
        assert seat is not None, "a running match has a seat to act"
        if steps < 10 or rnd.random() < 0.04:
            check_refusals(e, rnd, seen_values)
            check_views(e)
        legal = e.legal_actions(seat)
        bots = e.bot_actions(seat)
        assert bots and all(a in legal for a in bots), "bot_actions is a subset of legal_actions"
        action = rnd.choice(bots)
        for k, v in action.items():
            if k != "type" and v not in seen_values.setdefault(k, []):
                seen_values[k].append(v)
        sent = with_roll_value(e, seat, action, chains[seat] if chains else None)
        produced = e.apply(seat, sent)
        # the step's events: the action exactly as sent, then the chance events drawn
        assert produced[0] == {"type": "action", "seat": seat, "action": sent}
        assert all(ev["type"] == "chance" for ev in produced[1:])
        assert chance.take_events() == [], "apply leaves no draw behind"
        events.extend(produced)
        steps += 1
    assert e.turn is None
    with pytest.raises(MatchOverError):
        e.apply(0, {"type": "pass"})
    check_views(e)
    labels = [ev["label"] for ev in events if ev["type"] == "chance"]
    assert len(labels) == len(set(labels)), "a chance label was used twice"
    assert set(labels) == chance.labels
    if protocol == PROTOCOL_V2:
        result = e.view(None)["result"]
        assert result["status"] == "finished" and result["forfeited"] == []
        if chains is not None:  # every roll was fresh: each label carries its values' hash
            assert all("|" in lab for lab in labels)
            used = e.view(None)["values_used"]
            assert sum(
                ev["type"] == "action" and ev["action"]["type"] in ("roll", "roll_value")
                for ev in events
            ) == sum(used)
    numbered = [{"seq": i, **ev} for i, ev in enumerate(events)]
    replayed = replay(cls, canonical_ruleset(parsed), key, numbered, protocol=protocol, ctx=ctx)
    assert replayed.outcome == e.outcome
    assert snapshot(replayed) == snapshot(e), "replay does not rebuild the live engine"


CASES = [
    (g, p, i)
    for p in (PROTOCOL, PROTOCOL_V2)
    for g in GAME_IDS
    for i in range(len(RULESETS[g]) + len((V1_ONLY if p == PROTOCOL else V2_ONLY).get(g, [])))
]


def ruleset_of(game: str, protocol: str, variant: int) -> dict[str, Any]:
    extra = (V1_ONLY if protocol == PROTOCOL else V2_ONLY).get(game, [])
    return (RULESETS[game] + extra)[variant]


def test_every_game_has_contract_rulesets() -> None:
    assert set(RULESETS) == set(GAME_IDS)
    assert set(V1_ONLY) | set(V2_ONLY) <= set(GAME_IDS)


@pytest.mark.parametrize(("game", "protocol", "variant"), CASES)
@settings(max_examples=examples(4), deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_random_matches_keep_the_contract(
    game: str, protocol: str, variant: int, seed: int
) -> None:
    play(game, ruleset_of(game, protocol, variant), seed, protocol)


# -- sealed forms (fairness-v3 §9a) ------------------------------------------------------------
# A sealed engine's legal actions for a deal step or a play are plain forms (the values are
# the seat's secrets to make): the simulated sealed seats of games.sealed_sim play, and the
# contract is checked on what they send. Every sealed step and opening with one field
# changed (a flipped hex digit too) or dropped is refused and changes nothing.
SEALED_CASES: list[tuple[str, dict[str, Any]]] = [
    ("hokm", {"target": 1}),
    ("hokm", {"players": 3, "target": 1}),
    ("hokm", {"players": 2, "target": 1}),
    ("iraqi_domino", {"players": 2, "target": 20}),
    ("iraqi_domino", {"players": 4, "target": 20}),
    ("mexican_train", {"players": 3, "rounds": 1}),
    ("qahve", {"target": 30}),
    ("shelem", {"target": 100}),
]


def _altered(value: Any) -> Any:
    """The value with its last character changed (a hex digit flipped), or None."""
    if isinstance(value, str) and value:
        last = value[-1]
        return value[:-1] + ("1" if last == "0" else "0")
    return None


def sealed_wrongs(action: dict[str, Any], rnd: random.Random) -> Iterator[dict[str, Any]]:
    for field, value in action.items():
        if field == "type":
            continue
        for wrong in [*rnd.sample(WRONG_VALUES, 2), _altered(value)]:
            if wrong is not None and wrong != value:
                yield {**action, field: wrong}
        yield {k: v for k, v in action.items() if k != field}
    shares = action.get("shares")
    if isinstance(shares, list) and shares:
        first = dict(shares[0])
        first["proof"] = _altered(first["proof"])
        yield {**action, "shares": [first, *shares[1:]]}
        yield {**action, "shares": shares[1:]}


@pytest.mark.parametrize(("game", "ruleset"), SEALED_CASES)
def test_sealed_matches_keep_the_contract(game: str, ruleset: dict[str, Any]) -> None:
    from games.registry import find_engine
    from games.sealed_deal import DealMachine
    from games.sealed_sim import SimSeat

    raw = {**ruleset, "deal": "sealed"}
    cls = find_engine(game, raw)
    parsed = cls.parse_ruleset(raw)
    n = cls.seat_count(parsed)
    ctx = MatchContext(f"contract-sealed-{game}", house=(n - 1,))
    key = V2.match_key(
        bytes(64),
        ctx.match_id,
        game,
        canonical_ruleset(parsed),
        [(f"c{s}", bytes(32)) for s in range(n)],
    )
    chance = Chance(key)
    e = cls(parsed, chance, ctx)
    seats = [SimSeat(s, f"contract-{game}") for s in range(n)]
    events: list[dict[str, Any]] = [*chance.take_events()]
    # the deal machine a seat runs over the network: built from the match's public facts,
    # fed the log; at every step it says what the live engine does (owed, dealt, the phase)
    follower = DealMachine.follow(ctx.match_id, game, canonical_ruleset(parsed), ctx.house)
    follower.feed([{"seq": i, **ev} for i, ev in enumerate(events)])
    live = DealMachine.of_engine(e)
    rnd = random.Random(game)
    steps = 0
    while e.outcome is None:
        assert steps < MAX_ACTIONS
        seat = e.turn
        assert seat is not None
        legal = e.legal_actions(seat)
        action = seats[seat].act(e.view(seat), e)
        assert action is not None
        # what is sent has a listed shape: a listed action, or one completed with the
        # seat's own values (a sealed step's, an opening's)
        assert any(
            a["type"] == action["type"] and all(action.get(k) == v for k, v in a.items())
            for a in legal
        ) or any(a["type"] == action["type"] and set(a) <= set(action) for a in legal), action
        if steps < 12 or rnd.random() < 0.03:
            check_views(e)
            before = snapshot(e)
            for other in [s for s in range(n) if s != seat]:
                with pytest.raises(NotYourTurnError):
                    copy.deepcopy(e).apply(other, action)
            if action["type"] == "sealed" or "share" in action:
                for wrong in sealed_wrongs(action, rnd):
                    trial = copy.deepcopy(e)
                    with pytest.raises(GameError):
                        trial.apply(seat, wrong)
                    assert snapshot(trial) == before, f"refused {wrong!r} changed the engine"
        produced = e.apply(seat, action)
        assert produced[0] == {"type": "action", "seat": seat, "action": action}
        follower.feed([{"seq": len(events) + i, **ev} for i, ev in enumerate(produced)])
        events.extend(produced)
        assert (follower.owed, follower.phase, follower.hand) == (live.owed, live.phase, live.hand)
        assert [follower.dealt(s) for s in range(n)] == [live.dealt(s) for s in range(n)]
        nxt = e.turn
        if nxt is not None and (steps < 12 or rnd.random() < 0.05):
            assert follower.disagreement(e.view(nxt), nxt) is None
        steps += 1
    check_views(e)
    result = e.view(None)["result"]
    assert result["status"] == "finished" and result["forfeited"] == []
    numbered = [{"seq": i, **ev} for i, ev in enumerate(events)]
    replayed = replay(cls, canonical_ruleset(parsed), key, numbered, protocol=PROTOCOL_V2, ctx=ctx)
    assert snapshot(replayed) == snapshot(e), "replay does not rebuild the live engine"
