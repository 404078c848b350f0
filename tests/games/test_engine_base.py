"""The engine machinery every game shares (games/base.py, games/transcript.py), exercised with
the plain-session engine (games/rng.py) and a tiny two-seat toy engine defined here."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

import fairness
from games import (
    Chance,
    Engine,
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    Outcome,
    ReplayError,
    RulesetError,
    engine_class,
)
from games.base import MatchContext, check_keys, int_in, one_of, only_keys, variant
from games.replay import replay as replay_v2
from games.rng import RngEngine
from games.transcript import build_transcript, transcript_key
from games.transcript import simulate_match as simulate_any


def replay(*args: Any, **kw: Any) -> Engine:
    """The one replay loop (games.replay) for the qahwa-fair/1 machinery tested here."""
    return replay_v2(*args, protocol=fairness.PROTOCOL, **kw)


def simulate_match(*args: Any, **kw: Any) -> tuple[dict[str, Any], Engine]:
    return simulate_any(*args, protocol=fairness.PROTOCOL, **kw)


SEED = hashlib.sha256(b"engine-base").digest()
KEY = fairness.match_key(SEED, "s-1", "rng", "{}", ["me"])

# -- Chance ----------------------------------------------------------------------------------


def test_chance_records_events_in_order() -> None:
    c = Chance(KEY)
    d = c.dice("a", 3, 8)
    u = c.uniform("b", 2**32)
    s = c.shuffle("c", ["x", "y", "z"])
    assert d == fairness.dice(KEY, "a", 3, 8)
    assert u == fairness.uniform(KEY, "b", 2**32)
    assert s == fairness.shuffle(KEY, "c", ["x", "y", "z"])
    assert c.take_events() == [
        {
            "type": "chance",
            "label": "a",
            "kind": "dice",
            "args": {"count": 3, "sides": 8},
            "result": d,
        },
        {"type": "chance", "label": "b", "kind": "uniform", "args": {"n": 2**32}, "result": u},
        {"type": "chance", "label": "c", "kind": "shuffle", "result": s},
    ]
    assert c.take_events() == []
    assert c.labels == {"a", "b", "c"}


def test_chance_events_are_copies() -> None:
    c = Chance(KEY)
    d = c.dice("a", 2)
    d.append(99)
    assert c.take_events()[0]["result"] == d[:2]


@pytest.mark.parametrize("second", ["dice", "uniform", "shuffle"])
def test_chance_forbids_label_reuse(second: str) -> None:
    c = Chance(KEY)
    c.dice("r0/shuffle", 1)
    with pytest.raises(ReplayError, match="used twice"):
        getattr(c, second)(
            "r0/shuffle", *{"dice": (1,), "uniform": (3,), "shuffle": ([1, 2],)}[second]
        )
    assert len(c.take_events()) == 1  # the refused draw recorded nothing


def test_chance_bad_arguments_use_up_nothing() -> None:
    c = Chance(KEY)
    with pytest.raises(fairness.RangeError):
        c.dice("d0", 0)
    with pytest.raises(fairness.RangeError):
        c.uniform("d0", 0)
    with pytest.raises(fairness.LabelError):
        c.uniform("", 3)
    assert c.labels == set() and c.take_events() == []
    assert c.uniform("d0", 6) == fairness.uniform(KEY, "d0", 6)  # the label is still free


# -- ruleset helpers -------------------------------------------------------------------------

DEFAULTS = {"cube": True, "match_length": 5, "variant": "classic", "names": ["a"]}


def test_check_keys_fills_defaults() -> None:
    assert check_keys(None, DEFAULTS) == DEFAULTS
    assert check_keys({}, DEFAULTS) == DEFAULTS
    out = check_keys({"cube": False, "match_length": 7}, DEFAULTS)
    assert out == {**DEFAULTS, "cube": False, "match_length": 7}
    assert out is not DEFAULTS


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"cubes": True}, "unknown ruleset key.*cubes"),
        ({"a": 1, "b": 2}, "unknown ruleset key.*a, b"),
        ({"cube": 1}, "'cube' must be bool"),
        ({"match_length": True}, "'match_length' must be int"),
        ({"match_length": 5.0}, "'match_length' must be int"),
        ({"match_length": "5"}, "'match_length' must be int"),
        ({"variant": None}, "'variant' must be str"),
        ({"names": "a"}, "'names' must be list"),
        ([("cube", True)], "JSON object"),
        ("{}", "JSON object"),
    ],
)
def test_check_keys_rejects(raw: Any, match: str) -> None:
    with pytest.raises(RulesetError, match=match):
        check_keys(raw, DEFAULTS)


def test_int_in_and_one_of() -> None:
    r = {"n": 5, "v": "x"}
    int_in(r, "n", 1, 5)
    with pytest.raises(RulesetError, match="'n' must be 1 to 4, got 5"):
        int_in(r, "n", 1, 4)
    one_of(r, "v", ["x", "y"])
    with pytest.raises(RulesetError, match="one of"):
        one_of(r, "v", ["y"])


def test_only_keys() -> None:
    only_keys({"type": "draw", "n": 1}, "n")
    with pytest.raises(MalformedActionError, match="unexpected field.*extra"):
        only_keys({"type": "draw", "n": 1, "extra": 2}, "n")


# -- Outcome ---------------------------------------------------------------------------------


def test_outcome_to_json() -> None:
    o = Outcome("finished", (0, 2), (7, 3), {"rounds": 4, "reason": "ignored"})
    assert o.to_json() == {"rounds": 4, "reason": "finished", "winners": [0, 2], "scores": [7, 3]}
    assert json.loads(json.dumps(o.to_json())) == o.to_json()
    assert Outcome("abandoned", (), (0,)).to_json() == {
        "reason": "abandoned",
        "winners": [],
        "scores": [0],
    }


# -- the rng engine --------------------------------------------------------------------------


def new_session() -> RngEngine:
    cls = variant(RngEngine, fairness.V1)  # KEY is a qahwa-fair/1 key
    return cls(cls.parse_ruleset({}), Chance(KEY))


def test_rng_session_draws() -> None:
    e = new_session()
    assert e.turn == 0 and e.status == "playing" and e.outcome is None
    sent = [
        {"type": "draw", "kind": "dice", "count": 2, "sides": 6},
        {"type": "draw", "kind": "dice"},  # defaults: one six-sided die
        {"type": "draw", "kind": "uniform", "n": 2**32},
        {"type": "draw", "kind": "shuffle", "n": 5},
    ]
    produced = [e.apply(0, a) for a in sent]
    assert e.draws == [
        fairness.dice(KEY, "d0", 2),
        fairness.dice(KEY, "d1", 1),
        fairness.uniform(KEY, "d2", 2**32),
        fairness.shuffle(KEY, "d3", range(5)),
    ]
    # apply returns the action event exactly as sent, then the chance events it drew
    assert [p[0] for p in produced] == [{"type": "action", "seat": 0, "action": a} for a in sent]
    assert all(len(p) == 2 for p in produced) and e.chance.take_events() == []
    events = [p[1] for p in produced]
    assert [ev["label"] for ev in events] == ["d0", "d1", "d2", "d3"]
    assert events[1]["args"] == {"count": 1, "sides": 6}
    v = e.view(0)
    assert v["game"] == "rng" and v["seat"] == 0 and v["turn"] == 0 and v["draws"] == e.draws
    assert {"type": "close"} in v["legal_actions"]
    e.apply(0, {"type": "close"})
    assert e.outcome == Outcome("finished", (0,), (4,), {"draws": 4})
    assert e.turn is None and e.status == "finished"
    assert e.view(None)["result"] == {
        "draws": 4,
        "reason": "finished",
        "winners": [0],
        "scores": [4],
    }
    assert e.legal_actions(0) == []


def test_suggested_actions_in_views() -> None:
    e = new_session()
    assert e.bot_actions(0) == e.legal_actions(0)
    assert e.view(0)["suggested_actions"] == e.legal_actions(0)
    assert "suggested_actions" not in e.view(None)
    e.apply(0, {"type": "close"})
    assert "suggested_actions" not in e.view(0)
    rs, key, events, duel = play_duel(rolls=1)
    waiting = 1 - duel.to_act
    assert duel.view(waiting)["suggested_actions"] == []
    assert duel.view(duel.to_act)["suggested_actions"] == [{"type": "roll"}]


def test_rng_legal_actions_are_accepted() -> None:
    e = new_session()
    for action in e.legal_actions(0):
        e2 = new_session()
        e2.apply(0, copy.deepcopy(action))
    assert e.view(None)["legal_actions"] == []


BAD_ACTIONS: list[tuple[Any, type[Exception], str]] = [
    ({"type": "draw", "kind": "dice", "count": 0}, MalformedActionError, "'count' must be 1 to"),
    ({"type": "draw", "kind": "dice", "count": 101}, MalformedActionError, "'count'"),
    ({"type": "draw", "kind": "dice", "sides": 1}, MalformedActionError, "'sides'"),
    ({"type": "draw", "kind": "dice", "sides": 1001}, MalformedActionError, "'sides'"),
    ({"type": "draw", "kind": "dice", "count": True}, MalformedActionError, "integer"),
    ({"type": "draw", "kind": "dice", "count": 2.0}, MalformedActionError, "integer"),
    ({"type": "draw", "kind": "dice", "count": "2"}, MalformedActionError, "integer"),
    ({"type": "draw", "kind": "dice", "n": 2}, MalformedActionError, "unexpected field"),
    ({"type": "draw", "kind": "uniform"}, MalformedActionError, "'n' must be an integer"),
    ({"type": "draw", "kind": "uniform", "n": 0}, MalformedActionError, "'n'"),
    ({"type": "draw", "kind": "uniform", "n": 2**32 + 1}, MalformedActionError, "'n'"),
    ({"type": "draw", "kind": "shuffle", "n": 1001}, MalformedActionError, "'n'"),
    ({"type": "draw", "kind": "shuffle", "n": 0}, MalformedActionError, "'n'"),
    (
        {"type": "draw", "kind": "shuffle", "n": 3, "items": "deck52"},
        MalformedActionError,
        "unexpected",
    ),
    ({"type": "draw", "kind": "coin"}, MalformedActionError, "kind"),
    ({"type": "draw"}, MalformedActionError, "kind"),
    ({"type": "close", "now": True}, MalformedActionError, "unexpected"),
    ({"type": "roll"}, MalformedActionError, "unknown action type"),
    ({"kind": "dice"}, MalformedActionError, "string 'type'"),
    ({"type": 1}, MalformedActionError, "string 'type'"),
    ([{"type": "close"}], MalformedActionError, "JSON object"),
    ("close", MalformedActionError, "JSON object"),
    (None, MalformedActionError, "JSON object"),
]


@pytest.mark.parametrize(("action", "err", "match"), BAD_ACTIONS)
def test_rng_bad_input_leaves_state_unchanged(
    action: Any, err: type[Exception], match: str
) -> None:
    e = new_session()
    e.apply(0, {"type": "draw", "kind": "uniform", "n": 10})
    before = (copy.deepcopy(e.draws), set(e.chance.labels), e.view(0))
    with pytest.raises(err, match=match):
        e.apply(0, action)
    assert (e.draws, e.chance.labels, e.view(0)) == before
    assert e.chance.take_events() == []
    # the next draw is still d1
    assert e.apply(0, {"type": "draw", "kind": "uniform", "n": 10})[1]["label"] == "d1"


@pytest.mark.parametrize("seat", [1, -1, True, "0", None, 0.0])
def test_rng_wrong_seat(seat: Any) -> None:
    e = new_session()
    with pytest.raises(NotYourTurnError):
        e.apply(seat, {"type": "draw", "kind": "dice"})
    assert e.draws == [] and e.chance.labels == set()


def test_rng_after_close() -> None:
    e = new_session()
    e.apply(0, {"type": "close"})
    with pytest.raises(MatchOverError):
        e.apply(0, {"type": "draw", "kind": "dice"})
    with pytest.raises(MatchOverError):
        e.end_match("abandoned")
    assert e.outcome is not None and e.outcome.reason == "finished"


def test_rng_parse_ruleset() -> None:
    assert RngEngine.parse_ruleset({}) == {} == RngEngine.parse_ruleset(None)
    with pytest.raises(RulesetError):
        RngEngine.parse_ruleset({"sides": 6})
    assert engine_class("rng") is RngEngine
    assert RngEngine.seat_count({}) == 1


# -- end_match ------------------------------------------------------------------------------


def test_end_match_resigned_and_abandoned() -> None:
    e = new_session()
    e.apply(0, {"type": "draw", "kind": "dice"})
    e.end_match("resigned", 0)
    assert e.outcome == Outcome("resigned", (), (1,), {"resigned": 0})
    assert e.turn is None
    e2 = new_session()
    e2.end_match("abandoned")
    assert e2.outcome == Outcome("abandoned", (), (0,))
    assert e2.view(0)["status"] == "finished"


@pytest.mark.parametrize(
    ("reason", "seat", "err"),
    [
        ("resigned", None, NotYourTurnError),
        ("resigned", 1, NotYourTurnError),
        ("resigned", -1, NotYourTurnError),
        ("resigned", "0", NotYourTurnError),
        ("resigned", True, NotYourTurnError),
        ("timeout", 0, IllegalActionError),
        ("finished", None, IllegalActionError),
    ],
)
def test_end_match_bad_input_changes_nothing(reason: str, seat: Any, err: type[Exception]) -> None:
    e = new_session()
    with pytest.raises(err):
        e.end_match(reason, seat)
    assert e.outcome is None
    e.apply(0, {"type": "draw", "kind": "dice"})


# -- a two-seat toy engine: chance at the start, sides, label reuse ---------------------------


class Duel(Engine):
    """Seat ``first`` (drawn) starts; each seat rolls one die per turn; after ``rolls`` rolls
    the higher total wins. ``sloppy`` reuses a label (an engine bug Chance must catch)."""

    game: ClassVar[str] = "duel"
    PROTOCOL = fairness.V1  # the machinery tested here is qahwa-fair/1's
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {"rolls": 4, "sloppy": False, "teams": False}
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("roll",)

    def __init__(
        self, ruleset: Mapping[str, Any], chance: Chance, ctx: MatchContext | None = None
    ) -> None:
        super().__init__(ruleset, chance, ctx)
        self.to_act = chance.uniform("first", self.n_seats)
        self.totals = [0] * self.n_seats
        self.k = 0

    @classmethod
    def parse_ruleset(
        cls, raw: Mapping[str, Any] | None, *, protocol: str = fairness.PROTOCOL
    ) -> dict[str, Any]:
        r = super().parse_ruleset(raw, protocol=protocol)
        int_in(r, "rolls", 1, 10)
        return r

    @classmethod
    def seat_count(cls, ruleset: Mapping[str, Any]) -> int:
        return 4 if ruleset["teams"] else 2

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.ruleset["teams"] else seat

    @property
    def turn(self) -> int | None:
        return None if self.outcome else self.to_act

    def legal_actions(self, seat: int) -> list[dict[str, Any]]:
        return [{"type": "roll"}] if seat == self.turn else []

    def _apply(self, seat: int, action: dict[str, Any]) -> None:
        only_keys(action)
        label = "roll" if self.ruleset["sloppy"] else f"roll/{self.k}"
        (face,) = self.chance.dice(label, 1)
        self.totals[seat] += face
        self.k += 1
        self.to_act = (seat + 1) % self.n_seats
        if self.k == self.ruleset["rolls"]:
            scores = self.side_scores()
            best = max(scores)
            winners = tuple(s for s in range(self.n_seats) if scores[self.side_of(s)] == best)
            self.outcome = Outcome("finished", winners, scores)

    def _view(self, seat: int | None) -> dict[str, Any]:
        return {"totals": list(self.totals)}

    def side_scores(self) -> tuple[int, ...]:
        out = [0] * self.n_sides
        for s, t in enumerate(self.totals):
            out[self.side_of(s)] += t
        return tuple(out)


def play_duel(
    ruleset: dict[str, Any] | None = None, *, rolls: int | None = None, resign: int | None = None
) -> tuple[str, bytes, list[dict[str, Any]], Duel]:
    parsed = Duel.parse_ruleset(ruleset or {})
    rs = fairness.canonical_ruleset(parsed)
    key = fairness.match_key(SEED, "duel-1", "duel", rs, ["a", "b"])
    chance = Chance(key)
    e = Duel(parsed, chance)
    events = chance.take_events()
    n = parsed["rolls"] if rolls is None else rolls
    for _ in range(n):
        seat = e.turn
        assert seat is not None
        events.extend(e.apply(seat, {"type": "roll"}))
    if resign is not None:
        assert e.end_match("resigned", resign) == [
            {"type": "end", "reason": "resigned", "seat": resign}
        ]
        events.append({"type": "end", "reason": "resigned", "seat": resign})
    return rs, key, [{"seq": i, **ev} for i, ev in enumerate(events)], e


def test_duel_plays_and_replays() -> None:
    rs, key, events, e = play_duel()
    assert events[0]["label"] == "first" and events[0]["kind"] == "uniform"
    assert len(events) == 1 + 2 * 4
    seen: list[int] = []
    r = replay(Duel, rs, key, events, on_event=lambda ev, eng: seen.append(ev["seq"]))
    assert seen == list(range(len(events)))
    assert isinstance(r, Duel) and r.outcome == e.outcome and r.totals == e.totals
    assert replay(Duel, json.loads(rs), key, events).outcome == e.outcome  # a dict works too


def test_on_event_gets_the_engine_as_each_event_left_it() -> None:
    rs, key, events, e = play_duel()
    states: list[tuple[int, int | None]] = []
    replay(Duel, rs, key, events, on_event=lambda ev, eng: states.append((ev["seq"], eng.turn)))
    live = Duel(Duel.parse_ruleset(json.loads(rs)), Chance(key))
    want = [(0, live.turn)]
    for ev in events[1:]:
        if ev["type"] == "action":
            live.apply(ev["seat"], ev["action"])
        want.append((ev["seq"], live.turn))
    assert states == want


def test_replay_lets_an_engine_bug_surface() -> None:
    """A refused action is a ReplayError; anything else an engine raises is a bug and
    propagates as itself (never reported as "action rejected")."""
    rs, key, events, _ = play_duel()

    class Buggy(Duel):
        def _apply(self, seat: int, action: dict[str, Any]) -> None:
            raise TypeError("engine bug")

    with pytest.raises(TypeError, match="engine bug"):
        replay(Buggy, rs, key, events)


def test_teams_resignation() -> None:
    rs, key, events, e = play_duel({"teams": True}, rolls=2, resign=1)
    assert e.n_sides == 2
    assert e.outcome is not None
    assert e.outcome.reason == "resigned" and e.outcome.winners == (0, 2)
    assert e.outcome.detail == {"resigned": 1}
    assert replay(Duel, rs, key, events).outcome == e.outcome


def test_sloppy_engine_is_caught() -> None:
    parsed = Duel.parse_ruleset({"sloppy": True})
    e = Duel(parsed, Chance(KEY))
    e.apply(e.to_act, {"type": "roll"})
    with pytest.raises(ReplayError, match="'roll' used twice"):
        e.apply(e.to_act, {"type": "roll"})


# -- replay catches every kind of tampering -------------------------------------------------


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**ev, "seq": i} for i, ev in enumerate(events)]


def rng_transcript() -> dict[str, Any]:
    doc, _ = simulate_match("rng", seed=3, match_id="s-replay", client_seeds=["me"])
    return doc


def rng_key(doc: dict[str, Any]) -> bytes:
    return fairness.match_key(
        doc["server_seed"],
        doc["match_id"],
        "rng",
        doc["ruleset"],
        [s["client_seed"] for s in doc["seats"]],
    )


def test_simulated_rng_transcript_replays() -> None:
    doc = rng_transcript()
    assert doc["protocol"] == "qahwa-fair/1" and doc["ruleset"] == "{}"
    assert doc["commitment"] == fairness.commitment(doc["server_seed"])
    assert [ev["seq"] for ev in doc["events"]] == list(range(len(doc["events"])))
    e = replay(RngEngine, doc["ruleset"], rng_key(doc), doc["events"])
    assert e.outcome is not None and e.outcome.to_json() == doc["result"]
    assert sum(ev["type"] == "chance" for ev in doc["events"]) >= 2
    again, _ = simulate_match("rng", seed=3, match_id="s-replay", client_seeds=["me"])
    assert again == doc  # simulate_match is deterministic


def first(events: list[dict[str, Any]], etype: str, nth: int = 0) -> int:
    return [i for i, ev in enumerate(events) if ev["type"] == etype][nth]


def _change_result(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = first(ev, "chance")
    r = ev[i]["result"]
    ev[i]["result"] = (r + 1) if isinstance(r, int) else list(reversed(r))
    return ev


def _change_label(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "chance")]["label"] = "d9"
    return ev


def _change_args(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = first(ev, "chance")
    ev[i]["args"] = {"n": 999}
    return ev


def _remove_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    del ev[first(ev, "chance")]
    return renumber(ev)


def _remove_last_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = max(i for i, e in enumerate(ev) if e["type"] == "chance")
    return ev[:i]


def _duplicate_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = first(ev, "chance")
    return renumber(ev[: i + 1] + [copy.deepcopy(ev[i])] + ev[i + 1 :])


def _extra_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = first(ev, "chance")
    extra = {
        "type": "chance",
        "label": "x",
        "kind": "uniform",
        "args": {"n": 2},
        "result": fairness.uniform(KEY, "x", 2),
    }
    return renumber(ev[: i + 1] + [extra] + ev[i + 1 :])


def _swap_chances(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i, j = first(ev, "chance", 0), first(ev, "chance", 1)
    ev[i], ev[j] = ev[j], ev[i]
    return renumber(ev)


def _swap_action_pairs(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # the first two draws (action + its chance) in the other order, results kept
    i, j = first(ev, "action", 0), first(ev, "action", 1)
    return renumber(ev[j : j + 2] + ev[i : i + 2] + ev[j + 2 :])


def _chance_before_action(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    i = first(ev, "action")
    ev[i], ev[i + 1] = ev[i + 1], ev[i]
    return renumber(ev)


def _bad_seq(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "action", 1)]["seq"] = 99
    return ev


def _bad_seq_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "chance", 1)]["seq"] += 1
    return ev


def _seq_gap(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "seq": e["seq"] + (1 if i >= 3 else 0)} for i, e in enumerate(ev)]


def _illegal_action(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "action")]["action"] = {"type": "draw", "kind": "uniform", "n": 0}
    return ev


def _wrong_seat(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "action")]["seat"] = 1
    return ev


def _changed_action(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # a legal action, but not the one whose chance follows
    i = first(ev, "action")
    a = ev[i]["action"]
    ev[i]["action"] = (
        {"type": "draw", "kind": "uniform", "n": 3}
        if a.get("kind") != "uniform" or a.get("n") != 3
        else {"type": "draw", "kind": "dice"}
    )
    return ev


def _action_after_close(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return renumber(ev + [{"type": "action", "seat": 0, "action": {"type": "close"}}])


def _end_after_close(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return renumber(ev + [{"type": "end", "reason": "abandoned"}])


def _unknown_event(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "action")]["type"] = "note"
    return ev


def _not_an_object(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "action")] = ["action"]  # type: ignore[call-overload]
    return ev


def _not_an_object_for_chance(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ev[first(ev, "chance")] = "chance"  # type: ignore[call-overload]
    return ev


TAMPERS = {
    f.__name__[1:]: f
    for f in [
        _change_result,
        _change_label,
        _change_args,
        _remove_chance,
        _remove_last_chance,
        _duplicate_chance,
        _extra_chance,
        _swap_chances,
        _swap_action_pairs,
        _chance_before_action,
        _bad_seq,
        _bad_seq_chance,
        _seq_gap,
        _illegal_action,
        _wrong_seat,
        _changed_action,
        _action_after_close,
        _end_after_close,
        _unknown_event,
        _not_an_object,
        _not_an_object_for_chance,
    ]
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_replay_catches(name: str) -> None:
    doc = rng_transcript()
    events = TAMPERS[name](copy.deepcopy(doc["events"]))
    assert events != doc["events"]
    with pytest.raises(ReplayError) as info:
        replay(RngEngine, doc["ruleset"], rng_key(doc), events)
    assert str(info.value).startswith(("event ", "transcript ends")), str(info.value)


def test_replay_error_names_the_event() -> None:
    doc = rng_transcript()
    events = _change_result(copy.deepcopy(doc["events"]))
    i = first(events, "chance")
    with pytest.raises(ReplayError, match=f"event {i}: chance result differs") as info:
        replay(RngEngine, doc["ruleset"], rng_key(doc), events)
    assert info.value.seq == i
    assert info.value.expected == {k: v for k, v in doc["events"][i].items() if k != "seq"}
    assert info.value.found == {k: v for k, v in events[i].items() if k != "seq"}

    short = _remove_last_chance(copy.deepcopy(doc["events"]))
    with pytest.raises(ReplayError, match="transcript ends") as info:
        replay(RngEngine, doc["ruleset"], rng_key(doc), short)
    assert info.value.seq is None and info.value.found is None


def test_replay_with_another_key_fails_at_the_first_chance() -> None:
    doc = rng_transcript()
    other = fairness.match_key(doc["server_seed"], doc["match_id"], "rng", "{}", ["someone"])
    with pytest.raises(ReplayError, match="chance result differs"):
        replay(RngEngine, doc["ruleset"], other, doc["events"])


@pytest.mark.parametrize(
    ("ruleset", "match"),
    [
        ("not json", "not JSON"),
        ('{"x":1}', "ruleset rejected"),
        ("[]", "ruleset rejected"),
        ('{"rolls":99}', "ruleset rejected"),
    ],
)
def test_replay_bad_ruleset(ruleset: str, match: str) -> None:
    cls = Duel if "rolls" in ruleset else RngEngine
    with pytest.raises(ReplayError, match=match):
        replay(cls, ruleset, KEY, [])


def test_replay_start_chance_is_checked() -> None:
    rs, key, events, _ = play_duel()
    with pytest.raises(ReplayError, match="transcript ends"):
        replay(Duel, rs, key, [])
    bad = copy.deepcopy(events)
    bad[0]["result"] = 1 - bad[0]["result"]
    with pytest.raises(ReplayError, match="event 0: chance result differs"):
        replay(Duel, rs, key, bad)
    with pytest.raises(ReplayError, match="event 0"):
        replay(Duel, rs, key, renumber(events[1:]))


def test_replay_end_events() -> None:
    doc, eng = simulate_match("rng", seed=5, client_seeds=["me"], resign_at=2)
    assert doc["events"][-1] == {
        "seq": len(doc["events"]) - 1,
        "type": "end",
        "reason": "resigned",
        "seat": 0,
    }
    e = replay(RngEngine, "{}", rng_key(doc), doc["events"])
    assert e.outcome == eng.outcome and e.outcome is not None
    assert e.outcome.reason == "resigned"
    for bad_end in (
        {"reason": "resigned", "seat": 3},
        {"reason": "resigned"},
        {"reason": "gave up", "seat": 0},
        {"reason": "resigned", "seat": True},
    ):
        events = copy.deepcopy(doc["events"])
        events[-1] = {"seq": events[-1]["seq"], "type": "end", **bad_end}
        with pytest.raises(ReplayError, match="end rejected"):
            replay(RngEngine, "{}", rng_key(doc), events)
    events = copy.deepcopy(doc["events"])
    events[-1] = {"seq": events[-1]["seq"], "type": "end", "reason": "abandoned"}
    assert replay(RngEngine, "{}", rng_key(doc), events).outcome == Outcome(
        "abandoned", (), (len(eng.draws),)
    )


# -- transcripts -----------------------------------------------------------------------------


def test_build_transcript() -> None:
    doc = build_transcript(
        match_id="m",
        game="rng",
        ruleset="{}",
        server_seed=SEED,
        seats=[{"seat": 0, "name": "x", "client_seed": "me", "seed_source": "player"}],
        events=[],
        result=None,
        extra={"created_at": "t", "game": "nope"},
    )
    assert doc["commitment"] == hashlib.sha256(SEED).hexdigest()
    assert doc["server_seed"] == SEED.hex() and doc["result"] is None
    assert doc["created_at"] == "t" and doc["game"] == "rng"  # extra never overrides
    signer = fairness.Signer.generate()
    fairness.verify_record(signer.signed(doc), signer.public_key)


def test_redact_hides_shuffles_only() -> None:
    ev = {"seq": 3, "type": "chance", "label": "h0/shuffle", "kind": "shuffle", "result": ["AS"]}
    assert Engine.redact(ev) == {
        "seq": 3,
        "type": "chance",
        "label": "h0/shuffle",
        "kind": "shuffle",
        "hidden": True,
    }
    assert "result" in ev  # the event itself is not changed
    dice = {"seq": 0, "type": "chance", "label": "g0/roll/1", "kind": "dice", "result": [1, 2]}
    assert Engine.redact(dice) == dice
    assert RngEngine.redact(ev) == ev  # a session's draws are its owner's


def test_replay_refuses_extra_fields_on_action_and_end_events() -> None:
    doc, _ = simulate_match("rng", seed=5, resign_at=2)
    key = transcript_key(doc)
    cls = engine_class("rng")
    replay(cls, doc["ruleset"], key, doc["events"])  # genuine: fine
    for etype in ("action", "end"):
        events = [dict(e) for e in doc["events"]]
        idx = next(i for i, e in enumerate(events) if e["type"] == etype)
        events[idx]["note"] = "smuggled"
        with pytest.raises(ReplayError, match="unexpected field") as info:
            replay(cls, doc["ruleset"], key, events)
        assert info.value.seq == idx


@pytest.mark.parametrize(
    ("scores", "target", "want"),
    [
        ([0, 0], 10, None),  # nobody there yet
        ([10, 3], 10, 0),  # exactly the target counts
        ([3, 12], 10, 1),
        ([15, 12], 10, 0),  # both reach: the higher wins
        ([12, 12], 10, None),  # both reach level: play on
        ([-5, 9], 10, None),
        ([4, 11, 11], 10, None),  # three sides, the top two level
        ([4, 11, 13], 10, 2),
    ],
)
def test_target_winner(scores: list[int], target: int, want: int | None) -> None:
    from games.base import target_winner

    assert target_winner(scores, target) == want
