"""The rules engines' quicker helpers compute what the plain ones they replace did.

Card ranks and points by table lookup are held to the plain definitions on every card;
shelem's play check without building the trick's led suit or scanning the hand for a
card that follows is held, with wrong plays interleaved, to a replay through the plain
``follow_reason`` (tests/games/test_turn_check.py holds the backgammon step check).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

import pytest

from fairness import DECK52, PROTOCOL, PROTOCOL_V2, canonical_json
from games import cards, shelem
from games.base import Chance, variant
from games.cards import follow_reason
from games.errors import IllegalActionError, MalformedActionError, ReplayError
from games.replay import Replayer
from games.transcript import simulate_match
from tests.support import transcript_engine

ALL_CODES = [*DECK52, "JB", "JR"]


def test_rank_is_the_index_in_the_rank_letters() -> None:
    for c in DECK52:
        assert cards.rank(c) == cards.RANKS.index(c[0])
    for bad in ("JB", "JR", "1S", "XS"):
        with pytest.raises(ValueError):
            cards.rank(bad)


def test_trick_winner_is_the_plain_one() -> None:
    """Random tricks of 2 to 6 cards, with and without jokers, trump and reversed ranks."""
    rng = random.Random(11)
    for _ in range(5000):
        n = rng.randint(2, 6)
        joker_order = rng.choice([(), ("JB", "JR"), ("JR", "JB")])
        deck = ALL_CODES if joker_order else list(DECK52)
        plays = list(zip(rng.sample(range(8), n), rng.sample(deck, n), strict=True))
        trump = rng.choice([None, *cards.SUITS])
        reverse = rng.random() < 0.3
        assert cards.trick_winner(
            plays, trump, reverse=reverse, joker_order=joker_order
        ) == cards.plain_trick_winner(plays, trump, reverse, joker_order)


def test_pile_points_is_the_sum_of_card_points() -> None:
    rng = random.Random(7)
    for c in DECK52:
        assert shelem.pile_points([c]) == shelem.card_points(c)
    for _ in range(500):
        pile = rng.sample(DECK52, rng.randint(0, 12))
        assert shelem.pile_points(pile) == sum(shelem.card_points(c) for c in pile)
        assert shelem.pile_points(iter(pile)) == shelem.pile_points(pile)


def test_card_field_accepts_and_refuses_as_before() -> None:
    for c in ALL_CODES + ["", "AS ", "as", 5, None, ["AS"], True]:
        plain_ok = isinstance(c, str) and cards.is_card(c) and c not in ("JB", "JR")
        if plain_ok:
            assert shelem._card_field({"card": c}) == c
        else:
            with pytest.raises(MalformedActionError):
                shelem._card_field({"card": c})


@pytest.mark.parametrize("players", [4, 2])
@pytest.mark.parametrize("seed", range(6))
def test_card_plays_are_judged_as_by_follow_reason(players: int, seed: int) -> None:
    """Every card a seat could name, tried before each play of random matches: accepted
    exactly when the plain rule (in hand or on a top, follows suit per follow_reason)
    allows it, and refused without a change otherwise."""
    rng = random.Random(seed)
    cls = variant(shelem.ShelemEngine, PROTOCOL)  # a qahwa-fair/1 key
    eng = cls(
        cls.parse_ruleset({"players": players, "target": 200}),
        Chance(hashlib.sha256(f"plays-{seed}-{players}".encode()).digest()),
    )
    plays = 0
    while eng.outcome is None and plays < 150:
        seat = eng.turn
        assert seat is not None
        if eng.phase == "play":
            led = eng.trick.led
            pile = eng._pile_step()
            source = eng._tops(seat) if pile else eng.hands[seat]
            legal = [str(a["card"]) for a in eng.legal_actions(seat)]
            for c in rng.sample(DECK52, 12) + source[:3] + rng.sample(legal, len(legal)):
                allowed = c in source and follow_reason(source, c, led) is None
                before = (list(map(list, eng.hands)), len(eng.trick))
                try:
                    eng.apply(seat, {"type": "play", "card": c})
                except IllegalActionError:
                    assert not allowed, c
                    assert (list(map(list, eng.hands)), len(eng.trick)) == before
                    continue
                assert allowed, c
                plays += 1
                break
            else:
                raise AssertionError("no card was accepted")
            continue
        eng.apply(seat, rng.choice(eng.bot_actions(seat)))
    assert plays > 0


class _OneByOne(Replayer):
    """The replay loop without its inline path for action events: each event through
    ``_one`` (the full checks), as before that path."""

    def feed(self, events: Sequence[Any]) -> Replayer:
        for ev in events:
            self._one(ev)
        return self


def _mutations(ev: dict[str, Any], rng: random.Random) -> list[Any]:
    action = ev.get("action")
    return [
        {**ev, "seat": (ev["seat"] + 1) % 4},
        {**ev, "seat": True},
        {**ev, "seat": "0"},
        {**ev, "seq": ev["seq"] + 1},
        {**ev, "seq": float(ev["seq"])},
        {**ev, "sig": 5},
        {**ev, "sig": "x"},
        {**ev, "extra": 1},
        {**ev, "action": None},
        {**ev, "action": {**action, "type": "nope"}} if isinstance(action, dict) else ev,
        {**ev, "action": {**action, "junk": []}} if isinstance(action, dict) else ev,
        {k: v for k, v in ev.items() if k != "seq"},
        {**ev, "type": "chance"},
        [ev],
        rng.choice([None, 3, "action"]),
    ]


def _run(cls: type[Replayer], doc: dict[str, Any], events: list[Any]) -> Any:
    seen: list[Any] = []
    eng = transcript_engine(doc)
    rep = cls(
        eng,
        pending=eng.chance.take_events(),
        on_event=lambda ev, e: seen.append((ev.get("seq"), e.turn)),
    )
    try:
        rep.feed(events)
    except ReplayError as exc:
        return ("error", str(exc), exc.kind, exc.seq, exc.expected, exc.found, seen)
    return ("ok", canonical_json(eng.view(None)), rep.pos, rep.pending, seen)


@pytest.mark.parametrize("protocol", [PROTOCOL, PROTOCOL_V2])
@pytest.mark.parametrize("game", ["tawla", "mahbusa", "shelem", "hokm"])
def test_the_inline_action_path_replays_as_the_full_checks(game: str, protocol: str) -> None:
    """Genuine matches, cut at random action events that are then changed in ways the
    checks refuse (or accept): the replay loop gives the same error, the same events
    seen and the same engine state as feeding every event through the full checks."""
    doc, _ = simulate_match(game, seed=2, protocol=protocol, resign_at=150, max_actions=20_000)
    events = doc["events"]
    assert _run(Replayer, doc, events) == _run(_OneByOne, doc, events)
    rng = random.Random(f"{game}{protocol}")
    actions = [i for i, e in enumerate(events) if e.get("type") == "action"]
    for i in rng.sample(actions, 8):
        for bad in _mutations(events[i], rng):
            cut = [*events[:i], bad, *events[i + 1 : i + 3]]
            assert _run(Replayer, doc, cut) == _run(_OneByOne, doc, cut), (i, bad)
    chances = [i for i, e in enumerate(events) if e.get("type") == "chance" and i > 0]
    for i in rng.sample(chances, min(8, len(chances))):
        ev = events[i]
        for bad in (
            {**ev, "seq": ev["seq"] + 1},
            {**ev, "extra": 1},
            {**ev, "result": None},
            {**ev, "label": "x"},
            {k: v for k, v in ev.items() if k != "seq"},
            {k: v for k, v in ev.items() if k != "kind"},
            {**ev, "type": "action"},
            [ev],
            None,
            events[i - 1],
        ):
            cut = [*events[:i], bad, *events[i + 1 : i + 3]]
            assert _run(Replayer, doc, cut) == _run(_OneByOne, doc, cut), (i, bad)
