"""What a sealed hand costs the server beyond its crypto (issue 50): the public ``sealed``
block of a view is made once per state of the deal, and every view made from it says what a
view made afresh says, through a whole match, refused steps and all."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import httpx
import pytest

import fairness
import service.matches.match
import service.store
from games.base import Encodings, Shared, Table
from games.sealed_hand import LOG_HELD, Deal
from qahwa_client import Client
from service.kinds import EventType
from service.matches.match import Match, view_json
from service.store import dumps
from tests.sealed.test_sealed_service import SEALED_HOKM, owes_play, play
from tests.support.live_server import LiveServer
from tests.support.sealed_play import play_match


@pytest.mark.parametrize(
    ("game", "ruleset", "cheat"),
    [
        ("hokm", {"players": 4, "target": 1}, "bad_share"),
        ("iraqi_domino", {"players": 2, "target": 1}, "bad_shuffle"),
    ],
)
def test_a_deals_view_is_made_once_per_state_and_always_current(
    monkeypatch: pytest.MonkeyPatch, game: str, ruleset: dict[str, Any], cheat: str
) -> None:
    made = {"views": 0, "made": 0}
    shown, make = Deal.shown, Deal._make_view

    def counted_make(self: Deal, running: bool) -> Any:
        made["made"] += 1
        return make(self, running)

    def checked_view(self: Deal, running: bool = True) -> Any:
        made["views"] += 1
        got = shown(self, running)
        assert got == make(self, running)  # what a view made now says
        return got

    monkeypatch.setattr(Deal, "_make_view", counted_make)
    monkeypatch.setattr(Deal, "shown", checked_view)
    r = play_match(game, ruleset, seed="cost", cheats={1: cheat})
    assert r.engine.outcome is not None and r.refused
    # a view for the seat on turn at each step, each refused one and each one after it
    assert made["views"] > 40
    assert made["made"] < made["views"]


def test_a_shared_deal_is_written_as_the_whole_view_would_be() -> None:
    """The deal's public state every seat's view shares is encoded once and spliced into
    each answer in its place: the bytes are those of the view encoded whole (at the top, in
    an action's answer's ``state``, and when another field holds the splice's own mark)."""
    r = play_match("hokm", {"players": 4, "target": 1}, seed="shared")
    engine = r.engine
    views = [engine.view(s) for s in range(4)]
    assert all(type(v["sealed"]) is Shared for v in views)
    assert views[0]["sealed"] is views[3]["sealed"]  # one object for every seat
    for v in views:
        v.update(version=7, match_id="m")
        assert view_json(v) == dumps(v)
        answer = {"match_id": "m", "state": v, "events": [{"seq": 1}]}
        # an answer's nested view comes last in its text (view_json), as before
        assert json.loads(view_json(answer)) == answer
        assert view_json(answer).endswith(f',"state":{dumps(v)}}}')
        marked = {**v, "name": "\x00qahwa shared 0"}  # the mark an earlier splice used
        assert view_json(marked) == dumps(marked)


def _events_in(obj: Any) -> int:
    """How many logged events (objects with a ``seq`` and an event's ``type``) ``obj``
    holds."""
    if isinstance(obj, dict):
        if "seq" in obj and obj.get("type") in set(EventType):
            return 1
        return sum(_events_in(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_events_in(v) for v in obj)
    return 0


def test_a_stored_event_is_encoded_once_and_sent_as_stored(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: an event's JSON is made once, when it is logged; every view, action answer
    and page of the log that shows it again writes the text it was stored as (before, each
    one encoded it again: a sealed step is 4–16 KiB), and takes its value from the events
    read or logged lately, not parsed again. The answers' bytes are what encoding them
    whole makes."""
    encoded = {"events": 0, "parsed": 0}
    answers: list[bytes] = []
    loads = json.loads

    def counted(obj: Any) -> str:
        if threading.current_thread() is not threading.main_thread():  # the server's
            encoded["events"] += _events_in(obj)
        return dumps(obj)

    def parsed(text: Any, **kw: Any) -> Any:
        if threading.current_thread() is not threading.main_thread() and str(text).startswith(
            '{"seq":'
        ):
            encoded["parsed"] += 1
        return loads(text, **kw)

    def keep(r: httpx.Response) -> None:
        if r.request.url.path.endswith(("/state", "/actions", "/events")):
            answers.append(r.read())

    monkeypatch.setattr(service.store, "dumps", counted)
    monkeypatch.setattr(service.matches.match, "dumps", counted)
    monkeypatch.setattr(json, "loads", parsed)
    http = httpx.Client(timeout=60, event_hooks={"response": [keep]})
    with Client(server.url, http=http) as qc:
        m = qc.create_match("hokm", SEALED_HOKM)
        m.start()
        halfway = play(m, random.Random(50), until=lambda seat, view: owes_play(seat, view))
        assert halfway.status == "playing"
        page = http.get(f"{server.url}/v1/matches/{m.match_id}/events").json()
        assert play(m, random.Random(51)).status == "finished"
        http.get(f"{server.url}/v1/matches/{m.match_id}/events")
        monkeypatch.undo()
        doc = m.check_transcript()
        assert not [d for s in m.seats for d in s.disputes]
    http.close()
    logged = len(doc["events"])
    assert len(page["events"]) > 10 and len(answers) > 100
    assert encoded["events"] == logged, (encoded, logged)  # each once, as it was logged
    assert encoded["parsed"] == 0, encoded  # each logged by this process: its value kept
    for raw in answers:
        assert dumps(json.loads(raw)).encode() == raw


def _rows_in(obj: Any) -> int:
    """How many rows of a table of shares (seat → D, hex) ``obj`` holds."""
    if isinstance(obj, dict):
        if obj and all(k.isdigit() and isinstance(v, str) and len(v) == 64 for k, v in obj.items()):
            return 1
        return sum(_rows_in(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_rows_in(v) for v in obj)
    return 0


def test_a_deals_state_is_encoded_from_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50: each state of a deal is encoded as a whole encoding would write it, but what
    an earlier state held too (its deck, its items, its table of shares and each row of it,
    the same objects) is written as the text made for it then: a row of shares is encoded
    once per share added to it, not again in every later state (four seats' share steps,
    then an opening at every play)."""
    seen = {"states": 0, "rows": 0}
    added: dict[int, int] = {}
    shared = Deal.shared

    def counted(obj: Any) -> str:  # the service's dumps, counting the rows it encodes
        seen["rows"] += _rows_in(obj)
        return dumps(obj)

    def encoded(self: Deal, running: bool, limits: Any) -> Shared:
        got = shared(self, running, limits)
        assert got.encoded(counted) == dumps(dict(got))
        seen["states"] += 1
        added[id(self)] = len(self.record["shares"])
        return got

    monkeypatch.setattr(Deal, "shared", encoded)
    r = play_match("hokm", {"players": 4, "target": 1}, seed="parts")
    assert r.engine.outcome is not None
    assert seen["states"] > 60
    assert 0 < seen["rows"] <= sum(added.values()), (seen, added)


def test_a_brief_state_is_the_state_less_the_deck_and_shares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 50: a brief view's sealed block (``sealed=brief``) is its state less the deck and
    the shares: one object per state, encoded as a whole encoding would write it, whichever
    form was encoded before (the two forms keep their texts apart)."""
    seen = {"states": 0}
    shared = Deal.shared

    def encoded(self: Deal, running: bool, limits: Any) -> Shared:
        got = shared(self, running, limits)
        brief = got.without(LOG_HELD)
        assert brief is got.without(LOG_HELD)  # one object per state
        assert dict(brief) == {k: v for k, v in got.items() if k not in LOG_HELD}
        assert LOG_HELD <= set(got)
        # the forms in turns, in either order, each as dumps writes it
        forms = [brief, got] if seen["states"] % 2 else [got, brief]
        for form in forms:
            assert form.encoded(dumps) == dumps(dict(form))
        seen["states"] += 1
        return got

    monkeypatch.setattr(Deal, "shared", encoded)
    r = play_match("hokm", {"players": 4, "target": 1}, seed="brief")
    assert r.engine.outcome is not None
    assert seen["states"] > 60
    plain = Shared({"limits": []})
    assert plain.without(LOG_HELD) is plain  # nothing to leave out: itself


def test_parts_write_what_dumps_writes_in_any_order() -> None:
    """A state's text is ``dumps``'s whatever was encoded before it: a table made from one
    never encoded, states encoded out of order, a ``dumps`` of another form (used whole)."""
    items = [f"c{i}" for i in range(10)]
    t0 = Table({"1": {"0": "aa"}, "3": {"0": "bb"}})
    t1 = Table(t0, t0, ["3"])
    t1["3"] = {"0": "bb", "1": "cc"}
    t2 = Table({"1": t1["1"], "2": {"0": "dd"}, "3": t1["3"]}, t1, ["2"])
    deck = "x" * 200

    def state(t: Table, n: int) -> dict[str, Any]:
        return {"hand": n, "items": items, "deck": deck, "shares": t, "owed": {"seat": n}}

    states = [state(t, n) for n, t in enumerate((t0, t1, t2))]
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0, 0]):
        for form in (dumps, json.dumps, lambda o: json.dumps(o, sort_keys=True)):
            parts = Encodings()
            assert [parts.encode(states[i], form) for i in order] == [
                form(states[i]) for i in order
            ]
    assert t1.base is None and t2.base is None  # each table's base read once, then let go


def test_a_match_ends_with_its_transcript_encoded_once(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: at a match's end its transcript is encoded in canonical JSON once, for its
    signature and for the reveal record's hash of it (before: twice, a sealed hand's 140
    KiB), and GET .../transcript answers with the transcript made then (before, it read
    every event back and encoded it all again), the same bytes as one made afresh."""
    svc = server.app.state.service
    seen = {"finishing": False, "canonical": 0, "docs": 0}
    finish, doc, canon = Match._finish, Match.transcript_doc, fairness.canonical_json

    def finishing(self: Match, *args: Any, **kw: Any) -> Any:
        seen["finishing"] = True
        try:
            return finish(self, *args, **kw)
        finally:
            seen["finishing"] = False

    def counted_doc(self: Match, *args: Any) -> Any:
        seen["docs"] += 1
        return doc(self, *args)

    def counted(obj: Any) -> bytes:
        out = canon(obj)
        if seen["finishing"]:
            seen["canonical"] += len(out)
        return out

    monkeypatch.setattr(Match, "_finish", finishing)
    monkeypatch.setattr(Match, "transcript_doc", counted_doc)
    monkeypatch.setattr("fairness.records.canonical_json", counted)
    with Client(server.url) as qc:
        m = qc.create_match("hokm", SEALED_HOKM)
        m.start()
        assert play(m, random.Random(53)).status == "finished"
        url = f"{server.url}/v1/matches/{m.match_id}/transcript"
        made = httpx.get(url).content
        assert seen["docs"] == 1  # the end's own, served since
        svc.transcripts.pop(m.match_id)
        afresh = httpx.get(url).content
        assert seen["docs"] == 2
        monkeypatch.undo()
        m.check_transcript()
        assert not [d for s in m.seats for d in s.disputes]
    assert made == afresh
    size = len(fairness.canonical_json(json.loads(made)))
    assert size > 100_000  # a sealed hand's
    # the signed transcript's canonical JSON once; the reveal record's is small
    assert size <= seen["canonical"] < 1.2 * size, (seen, size)
