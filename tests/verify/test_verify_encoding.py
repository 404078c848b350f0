"""The verifier's cheaper encodings give exactly the bytes and answers of the plain ones.

- a chance event is compared without encoding it when both sides are plain JSON values
  (``games.replay.same_json``): held to the canonical-JSON comparison on random values;
- an action is copied by ``games.base.json_copy``, not ``copy.deepcopy``;
- the v2 chain keeps each event's canonical JSON, and the transcript's signature is checked
  over ``verify_cli.core.transcript_body_json``, made from those: held to
  ``fairness.chain_next`` and ``fairness.canonical_json`` on genuine and random documents;
- seat keys are loaded once per transcript: a bad key is reported as before.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    Signer,
    canonical_json,
    chain_next,
    chain_start,
    public_key_b64,
)
from games.base import json_copy
from games.errors import GameError
from games.registry import available_games
from games.replay import _same_event, same_json
from games.transcript import simulate_match
from tests.support import transcript_engine
from verify_cli.core import VERIFIED, transcript_body_json, verify_document
from verify_cli.keys import parse_keys
from verify_cli.replay_core import Report
from verify_cli.rules import V2State, check_chain

SIGNER = Signer.generate()
KEYS = parse_keys(public_key_b64(SIGNER.public_key), source="file", origin="test")

texts = st.text(max_size=6) | st.sampled_from(["", "a", "é", "\u2660", "\ud800", "3", "true"])
scalars = (
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True) | texts
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(texts | st.integers(0, 3), inner, max_size=4)
    ),
    max_leaves=12,
)


def canonical_same(a: Any, b: Any) -> bool:
    """What ``same_json`` said before its fast path: equal canonical JSON, else False."""
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return False


def near(v: Any) -> st.SearchStrategy[Any]:
    """Values close to ``v``: itself, a copy, and a copy with one leaf retyped."""

    def retype(x: Any) -> Any:
        if isinstance(x, bool):
            return int(x)
        if isinstance(x, int):
            return float(x) if abs(x) < 2**53 else str(x)
        if isinstance(x, list):
            return tuple(retype(y) for y in x) if x else x
        if isinstance(x, dict):
            return {k: retype(y) for k, y in x.items()}
        return x

    return st.sampled_from([v, copy.deepcopy(v), retype(copy.deepcopy(v))])


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_same_json_is_the_canonical_comparison(data: st.DataObject) -> None:
    a = data.draw(values)
    b = data.draw(near(a) | values)
    assert same_json(a, b) == canonical_same(a, b)
    assert same_json(b, a) == canonical_same(b, a)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_an_event_is_compared_as_its_canonical_json(data: st.DataObject) -> None:
    """The replay's chance-event comparison (its members inline) is the canonical
    comparison of the event without ``seq``, on random events and near-equal ones."""
    members = st.dictionaries(texts | st.integers(0, 3), values, max_size=5)
    produced = data.draw(members)
    found = data.draw(near(produced) | members)
    if data.draw(st.booleans()):
        found = {**found, "seq": data.draw(scalars)}
    stripped = {k: v for k, v in found.items() if k != "seq"}
    assert _same_event(found, produced) == canonical_same(stripped, produced)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"result": [3, 5]}, {"result": [3, 5]}, True),
        ({"result": [3, 5]}, {"result": [3.0, 5]}, False),
        ({"result": [1]}, {"result": [True]}, False),
        ({"r": "\ud800"}, {"r": "\ud800"}, False),  # no canonical JSON: never the same
        ({"r": "é"}, {"r": "é"}, True),
        ({1: "x"}, {"1": "x"}, True),  # equal once encoded, as before
        ({"a": [1, 2]}, {"a": (1, 2)}, True),
        ({"x": float("nan")}, {"x": float("nan")}, False),
    ],
)
def test_same_json_examples(a: Any, b: Any, same: bool) -> None:
    assert same_json(a, b) is same is canonical_same(a, b)


@settings(max_examples=200, deadline=None)
@given(values)
def test_json_copy_is_a_deep_copy(v: Any) -> None:
    c = json_copy(v)
    assert repr(c) == repr(copy.deepcopy(v))
    if isinstance(v, (dict, list)) and v:
        assert c is not v


def test_json_copy_shares_nothing_and_copes_with_a_cycle() -> None:
    action = {"type": "move", "steps": [[1, 2], [3, 4]]}
    sent = json_copy(action)
    action["steps"][0][0] = 9  # type: ignore[index]
    assert sent == {"type": "move", "steps": [[1, 2], [3, 4]]}
    loop: list[Any] = []
    loop.append(loop)
    c = json_copy(loop)
    assert c is not loop and c[0] is c  # deepcopy's answer


def v2_docs() -> list[dict[str, Any]]:
    out = []
    for i, game in enumerate([*available_games(), "rng"]):
        doc, _ = simulate_match(
            game,
            seed=i,
            protocol=PROTOCOL_V2,
            signer=SIGNER,
            keyed=i % 2 == 0,
            resign_at=150,
            max_actions=20_000,
        )
        out.append(SIGNER.signed(doc))
    return out


DOCS = v2_docs()


@pytest.mark.parametrize("doc", DOCS, ids=[d["game"] for d in DOCS])
def test_chain_and_body_json_are_the_plain_ones(doc: dict[str, Any]) -> None:
    state = V2State()
    check_chain(Report("t", doc), doc, state)
    assert state.chain_ok
    h = chain_start(doc["lock"])
    assert state.chain[0] == h
    for n, ev in enumerate(doc["events"]):
        h = chain_next(h, ev)
        assert state.chain[n + 1] == h
        assert state.event_json[n] == canonical_json(ev)
    body = {k: v for k, v in doc.items() if k != "signature"}
    assert transcript_body_json(doc, state.event_json) == canonical_json(body)
    assert verify_document(doc, KEYS)["status"] == VERIFIED


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(texts, values, max_size=5),
    st.lists(st.dictionaries(texts, values, max_size=4), max_size=5),
    st.booleans(),
)
def test_body_json_of_any_document(
    extra: dict[str, Any], events: list[dict[str, Any]], signed: bool
) -> None:
    doc = {**extra, "events": events}
    if signed:
        doc["signature"] = {"alg": "ed25519", "value": "x"}
    body = {k: v for k, v in doc.items() if k != "signature"}
    try:
        want = canonical_json(body)
        enc = [canonical_json(e) for e in events]
    except (TypeError, ValueError):
        return  # no canonical JSON: the chain fails first, and the signature falls back
    assert transcript_body_json(doc, enc) == want


def test_a_changed_event_fails_the_signature_as_before() -> None:
    doc = copy.deepcopy(DOCS[0])
    ev = next(e for e in doc["events"] if e.get("type") == "chance")
    ev["label"] = ev["label"] + "x"
    rep = verify_document(doc, KEYS)
    names = {f["check"] for f in rep["failures"]}
    assert {"chain", "signature"} <= names


def test_a_bad_seat_key_is_reported_at_its_first_signed_event() -> None:
    doc = next(d for d in DOCS if any(s.get("key") for s in d["lock"]["seats"]))
    doc = copy.deepcopy(doc)
    first = next(e for e in doc["events"] if "sig" in e)
    n = first["seat"]
    doc["lock"]["seats"][n]["key"] = doc["seats"][n]["key"] = "not base64!"
    rep = verify_document(SIGNER.signed(doc), KEYS)
    msgs = [f["message"] for f in rep["failures"] if f["check"] == "seat signatures"]
    assert msgs == [
        f"event {first['seq']} (action by seat {n}): its signature is not seat "
        f"{n}'s over this event after chain[{first['seq'] - 1}] (not a base64 "
        "Ed25519 public key: Only base64 data is allowed)"
    ]


def _outcome(f: Any, *args: Any) -> tuple[str, str, Any]:
    try:
        return ("ok", "", f(*args))
    except GameError as exc:
        return (type(exc).__name__, str(exc), None)


@pytest.mark.parametrize("protocol", [PROTOCOL, PROTOCOL_V2])
@pytest.mark.parametrize("game", [*available_games(), "rng"])
def test_replay_action_is_apply_without_the_copy(game: str, protocol: str) -> None:
    """Two engines in lockstep over a genuine match: ``replay_action`` on one, ``apply`` on
    the other; every action (and wrong ones before it) gives the same errors, the same
    draws and the same state."""
    doc, _ = simulate_match(game, seed=5, protocol=protocol, resign_at=120, max_actions=20_000)
    a, b = transcript_engine(doc), transcript_engine(doc)
    a.chance.take_events()
    b.chance.take_events()
    rnd = random.Random(game)
    for ev in doc["events"]:
        if ev["type"] == "end":
            break
        if ev["type"] != "action":
            continue
        seat, action = ev["seat"], ev["action"]
        wrong = [
            (seat, None),
            (seat, {"type": "nope"}),
            (True, action),
            (-1, action),
            (a.n_seats, action),
            (seat, {**action, "extra": 1}),
        ]
        if a.n_seats > 1:
            wrong.append(((seat + 1) % a.n_seats, action))
        for ws, wa in rnd.sample(wrong, 3):
            got_a = _outcome(a.replay_action, ws, copy.deepcopy(wa))
            got_b = _outcome(b.apply, ws, copy.deepcopy(wa))
            assert got_a[0] != "ok" and got_a == got_b
        drawn = a.replay_action(seat, action)
        produced = b.apply(seat, action)
        assert produced[0] == {"type": "action", "seat": seat, "action": action}
        assert drawn == produced[1:]
        assert a.view(None) == b.view(None)
    assert a.outcome == b.outcome or doc["events"][-1]["type"] == "end"


def test_counts_of_odd_events_are_the_plain_sums() -> None:
    doc = copy.deepcopy(DOCS[0])
    doc["events"] += [
        {"type": ["action"]},
        {"type": "action"},
        "junk",
        {"type": {"a": 1}},
        {"type": "chance"},
        {},
    ]
    rep = verify_document(doc, KEYS)
    events = doc["events"]
    assert rep["counts"]["events"] == len(events)
    assert rep["counts"]["actions"] == sum(
        1 for e in events if isinstance(e, dict) and e.get("type") == "action"
    )
    assert rep["counts"]["chance"] == sum(
        1 for e in events if isinstance(e, dict) and e.get("type") == "chance"
    )


#: values a member may be replaced by: equal in Python but not in JSON (True == 1 == 1.0),
#: other types, text that is not ASCII or cannot be encoded
_ODD = [True, False, 1.0, 2.0, 6.0, 0, 1, 6, 7, "1", "6", None, [], {}, (1, 6), [1], "\ud800", "é"]


def _near_misses(v: Any) -> list[Any]:
    """``v`` with each member, at every depth, replaced by each odd value in turn, each key
    dropped, a key added, and each list as a tuple, shortened and lengthened."""
    out: list[Any] = []
    if isinstance(v, dict):
        for k in v:
            out += [{**v, k: new} for new in [*_ODD, *_near_misses(v[k])]]
            out.append({x: y for x, y in v.items() if x != k})
        out += [{**v, "extra": 1}, {**v, 1: 1}, {**v, "\ud800": 1}]
    elif isinstance(v, list):
        out += [tuple(v), v[:-1], [*v, v[0]]]
        for i, x in enumerate(v):
            out += [[*v[:i], new, *v[i + 1 :]] for new in [*_ODD, *_near_misses(x)]]
    return out


@pytest.mark.parametrize("result", [[1, 6], [6, 1], [3], [1, 1, 6]])
def test_a_dice_draw_is_compared_as_its_canonical_json(result: list[int]) -> None:
    """The dice draw's own quick comparison (the backgammon games' usual chance event) is
    the canonical comparison, for the draw as written and for every near miss of it."""
    produced = {
        "type": "chance",
        "label": "g0/roll/1",
        "kind": "dice",
        "args": {"count": len(result), "sides": 6},
        "result": result,
    }
    cases = [copy.deepcopy(produced), *_near_misses(copy.deepcopy(produced))]
    assert len(cases) > 100
    for found in cases:
        for with_seq in ({}, {"seq": 4}):
            event = {**with_seq, **found}
            assert _same_event(event, produced) == canonical_same(found, produced), found
    # a draw written otherwise by the rules (a key of its own instead of "type") is not
    # taken for the dice draw it resembles
    odd = {("typo" if k == "type" else k): v for k, v in produced.items()}
    assert not _same_event({"seq": 4, **produced}, odd)
    # a label that is not ASCII: the same on both sides, equal only if it can be encoded
    for label, same in (("é", True), ("\ud800", False)):
        draw = {**produced, "label": label}
        assert _same_event({"seq": 4, **draw}, copy.deepcopy(draw)) is same
    # and the other way round: the draw as written against rules' draws that differ
    for other in _near_misses(copy.deepcopy(produced)):
        if isinstance(other, dict):
            assert _same_event({"seq": 4, **produced}, other) == canonical_same(produced, other)


@pytest.mark.parametrize(
    "items",
    [
        list(range(1, 11)),
        [f"{r}{s}" for s in "SHDC" for r in "A23456789TJQK"],
        ["AS", "é", "KD", "QH", "2C"],
        ["AS", "\ud800", "KD", "QH", "2C"],
        [1, 2, 3, 4, True],
        [1, 2, 3, 4, "5"],
    ],
)
def test_long_lists_are_compared_as_their_canonical_json(items: list[Any]) -> None:
    """Lists longer than four (a shuffle's result) are compared in one go when every member
    is an int, or every one an ASCII string: the answer is the canonical comparison's, for
    the list itself and for every near miss, alone and as a shuffle's result."""
    shuffle = {"type": "chance", "label": "h1/shuffle", "kind": "shuffle", "result": items}
    for b in [copy.deepcopy(items), *_near_misses(copy.deepcopy(items))]:
        assert same_json(items, b) == canonical_same(items, b), b
        assert same_json(b, items) == canonical_same(b, items), b
        found = {"seq": 3, **shuffle, "result": b}
        assert _same_event(found, shuffle) == canonical_same({**shuffle, "result": b}, shuffle)
