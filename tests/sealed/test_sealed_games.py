"""Sealed matches (qahwa-fair/3, docs/spec/fairness-v3.md §9a) played whole by simulated
seats (games/sealed_sim.py): honest matches end as the rules say and replay; every cheat is
refused with nothing changed, or caught at the hand's end and forfeited."""

from __future__ import annotations

import base64
import copy
import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import canonical_ruleset
from games.base import Chance, MatchContext
from games.errors import ActionError, IllegalActionError, ReplayError, RulesetError
from games.registry import deal_of, engine_class, find_engine
from games.replay import replay
from games.sealed_base import SealedGame
from games.sealed_hand import LOG_HELD, verify_hand
from games.sealed_hokm import SealedHokmEngine
from games.sealed_iraqi_domino import CALL_ORDER
from games.sealed_seat import SeatRefused
from games.sealed_sim import SimSeat
from tests.support import examples
from tests.support.sealed_play import SimResult, play_match


def sealed_engine(r: SimResult) -> SealedHokmEngine:
    assert isinstance(r.engine, SealedHokmEngine)
    return r.engine


def replayed(r: SimResult) -> Any:
    return replay(type(r.engine), canonical_ruleset(r.ruleset), r.key, r.events, ctx=r.ctx)


def honest(game: str, ruleset: dict[str, Any], seed: str, house: tuple[int, ...] = ()) -> SimResult:
    """A match of honest seats: it ends as the rules say, nothing refused, and replays."""
    r = play_match(game, ruleset, seed=seed, house=house)
    out = r.engine.outcome
    assert out is not None and out.reason == "finished" and not r.refused
    assert replayed(r).outcome == out
    return r


def forfeits(game: str, ruleset: dict[str, Any], seed: str, seat: int, cheat: str) -> SimResult:
    """``seat`` cheats once (``cheat``): the rules catch it at the hand's end, it forfeits,
    and the match replays to the same outcome."""
    r = play_match(game, ruleset, seed=seed, cheats={seat: cheat})
    out = r.engine.outcome
    assert out is not None and out.reason == "rule" and out.forfeited == (seat,)
    assert replayed(r).outcome == out
    return r


def steps(r: SimResult, step: str) -> list[dict[str, Any]]:
    return [
        e
        for e in r.events
        if e["type"] == "action" and e["action"]["type"] == "sealed" and e["action"]["step"] == step
    ]


# -- the registry and the ruleset ------------------------------------------------------------
def test_the_ruleset_selects_the_sealed_engine() -> None:
    assert find_engine("hokm", {"deal": "sealed"}) is SealedHokmEngine
    assert find_engine("hokm", {}) is engine_class("hokm")
    assert find_engine("hokm", {"deal": "seeded"}) is engine_class("hokm")
    assert deal_of(None) == "seeded"
    with pytest.raises(RulesetError, match="'deal' must be one of"):
        deal_of({"deal": "secret"})


@pytest.mark.parametrize("game", ["tawla", "mahbusa"])
def test_dice_games_refuse_a_sealed_deal(game: str) -> None:
    with pytest.raises(RulesetError, match=f"{game} has no sealed deal"):
        find_engine(game, {"deal": "sealed"})


def test_a_seeded_ruleset_stays_as_it_was() -> None:
    plain = engine_class("hokm").parse_ruleset({})
    assert engine_class("hokm").parse_ruleset({"deal": "seeded"}) == plain
    assert "deal" not in plain
    sealed = SealedHokmEngine.parse_ruleset({"deal": "sealed"})
    assert sealed["deal"] == "sealed" and "cut" not in sealed
    assert '"deal":"sealed"' in canonical_ruleset(sealed)


def test_a_sealed_match_needs_its_match_id() -> None:
    rs = SealedHokmEngine.parse_ruleset({"deal": "sealed"})
    with pytest.raises(RulesetError, match="match context"):
        SealedHokmEngine(rs, Chance(bytes(64)))
    with pytest.raises(RulesetError, match="qahwa-fair/2 match key"):
        SealedHokmEngine(rs, Chance(bytes(32)), MatchContext("m"))


# -- honest matches --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ruleset", "house"),
    [({"target": 1}, ()), ({"target": 1}, (1, 3)), ({"players": 3, "target": 1}, (0,))],
)
def test_an_honest_sealed_hokm_match_plays_and_replays(
    ruleset: dict[str, Any], house: tuple[int, ...]
) -> None:
    r = honest("hokm", ruleset, seed=f"honest{house}", house=house)
    out = r.engine.outcome
    n = r.engine.n_seats
    # the shuffles: house seats first, then the others
    assert [e["seat"] for e in steps(r, "shuffle")][:n] == [*house] + [
        s for s in range(n) if s not in house
    ]
    assert len(steps(r, "key")) == len(steps(r, "reveal_key")) == n * len(sealed_engine(r).history)
    again = replayed(r)
    assert again.outcome == out
    assert again.sealed_hands == sealed_engine(r).sealed_hands


def test_two_player_sealed_hokm_draws_and_discards() -> None:
    r = play_match("hokm", {"players": 2, "target": 1}, seed="two")
    assert r.engine.outcome is not None and r.engine.outcome.reason == "finished"
    kinds = {e["action"]["type"] for e in r.events if e["type"] == "action"}
    assert {"draw", "discard", "play", "sealed", "trump"} <= kinds
    assert replayed(r).outcome == r.engine.outcome


def test_the_whole_record_verifies_with_the_sealed_library() -> None:
    r = play_match("hokm", {"target": 1}, seed="record", house=(2,))
    for entry in sealed_engine(r).sealed_hands:
        v = verify_hand(r.ctx.match_id, entry, 4, house=(2,))  # type: ignore[union-attr]
        assert v.order is not None
        for item, code in v.opened.items():
            assert v.order[item] == code


def test_a_seat_learns_only_its_own_items_from_the_view() -> None:
    """The public view and another seat's view carry nothing that opens a seat's items: the
    codes the seat learns are not derivable without its secret (the shares lack its own)."""
    r = play_match("hokm", {"target": 1}, seed="views")
    e = r.engine
    public = e.view(None)["sealed"]
    assert public["revealed"] == [True] * 4  # the hand is over: everything is public now
    assert all(isinstance(i, int) for i in e.view(0)["hand"])


# -- cheats ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cheat", "message"),
    [
        ("bad_key", "proof of knowledge does not verify"),
        ("bad_shuffle", "shuffle proof of seat 1"),
        ("bad_share", "share of seat 1: the proof does not verify"),
        ("bad_open", "the shares do not open item"),
        ("bad_reveal", "revealed key of seat 1 does not match"),
    ],
)
def test_a_bad_step_is_refused_and_changes_nothing(cheat: str, message: str) -> None:
    r = play_match("hokm", {"target": 1}, seed=f"cheat-{cheat}", cheats={1: cheat})
    assert [(s, type(e)) for s, _, e in r.refused] == [(1, type(r.refused[0][2]))]
    seat, _action, exc = r.refused[0]
    assert isinstance(exc, IllegalActionError) and message in str(exc)
    assert r.engine.outcome is not None and r.engine.outcome.reason == "finished"
    assert replayed(r).outcome == r.engine.outcome


def test_a_refused_step_leaves_the_engine_unchanged() -> None:
    cls = find_engine("hokm", {"deal": "sealed"})
    e = cls(cls.parse_ruleset({"deal": "sealed"}), Chance(bytes(range(64))), MatchContext("m1"))
    seats = [SimSeat(s, "unchanged") for s in range(4)]
    for _ in range(4):  # the keys
        e.apply(e.turn, seats[e.turn].act(e.view(e.turn), e))  # type: ignore[arg-type,index]
    seat = e.turn
    assert seat == 0 and e.view(0)["legal_actions"] == [{"type": "sealed", "step": "shuffle"}]
    good = seats[0].act(e.view(0), e)
    assert good is not None

    def state() -> Any:
        return copy.deepcopy(
            (
                {k: v for k, v in e.__dict__.items() if k != "chance"},
                e.chance.labels,
                e.chance._pending,
            )
        )

    before = state()
    bad_deck = {**good, "deck": e.view(None)["sealed"]["deck"]}  # the input deck, unshuffled
    for bad in (
        bad_deck,
        {**good, "proof": good["proof"][:-4]},
        {**good, "step": "key"},
        {**good, "extra": 1},
        {"type": "play", "item": 0},
    ):
        with pytest.raises(ActionError):
            e.apply(0, bad)
        assert state() == before
    with pytest.raises(ActionError):
        e.apply(1, good)  # not seat 1's step
    e.apply(0, good)
    assert e.turn == 1


def test_a_revoke_is_caught_at_the_hands_end_and_forfeits() -> None:
    r = play_match("hokm", {"target": 1}, seed="revoke", cheats={2: "revoke"})
    out = r.engine.outcome
    assert out is not None and out.reason == "rule" and out.forfeited == (2,)
    assert out.winners == (1, 3)
    assert r.events[-1] == {"seq": len(r.events) - 1, "type": "end", "reason": "rule", "seat": 2}
    assert r.events[-2]["action"]["step"] == "reveal_key"
    assert replayed(r).outcome == out
    # a transcript without the rule's end, or with another seat in it, does not replay
    with pytest.raises(ReplayError, match="the end event"):
        replay(type(r.engine), canonical_ruleset(r.ruleset), r.key, r.events[:-1], ctx=r.ctx)
    wrong = [*r.events[:-1], {**r.events[-1], "seat": 0}]
    with pytest.raises(ReplayError):
        replay(type(r.engine), canonical_ruleset(r.ruleset), r.key, wrong, ctx=r.ctx)


def test_a_stalled_deal_is_a_timeout_of_the_seat_that_owes_the_step() -> None:
    r = play_match("hokm", {"target": 1}, seed="stall", cheats={3: "stall"})
    out = r.engine.outcome
    assert out is not None and out.reason == "timeout" and out.forfeited == (3,)
    assert r.events[-1]["type"] == "end" and r.events[-1]["seat"] == 3


def test_the_owed_step_is_visible_to_every_seat() -> None:
    cls = find_engine("hokm", {"deal": "sealed"})
    e = cls(
        cls.parse_ruleset({"deal": "sealed"}), Chance(bytes(64)), MatchContext("m2", house=(1,))
    )
    assert isinstance(e, SealedGame)
    assert e.view(None)["sealed"]["owed"] == {"seat": 0, "step": "key"}
    assert e.view(2)["sealed"]["owed"] == {"seat": 0, "step": "key"}
    assert e.view(2)["legal_actions"] == [] and e.turn == 0


# -- Iraqi dominoes --------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 4])
def test_an_honest_sealed_domino_match_plays_and_replays(players: int) -> None:
    r = honest("iraqi_domino", {"players": players, "target": 30}, seed=f"dom{players}")
    # the first round opens by the call: the first tile laid is the highest tile dealt
    first = next(e for e in r.events if e["type"] == "action" and e["action"]["type"] == "play")
    assert isinstance(r.engine, SealedGame) and r.ctx is not None
    order = verify_hand(r.ctx.match_id, r.engine.sealed_hands[0], players).order
    assert order is not None
    dealt = set(order[: 7 * players])
    assert first["action"]["tile"] == next(t for t in CALL_ORDER if t in dealt)
    if players == 4:
        assert not any(e["type"] == "action" and e["action"]["type"] == "draw" for e in r.events)


def test_a_boneyard_draw_is_opened_to_the_drawer_alone() -> None:
    r = play_match("iraqi_domino", {"players": 2, "target": 30}, seed="boneyard")
    draws = [
        i for i, e in enumerate(r.events) if e["type"] == "action" and e["action"]["type"] == "draw"
    ]
    assert draws, "this seed's match draws from the boneyard"
    for i in draws:
        drawer = r.events[i]["seat"]
        share = r.events[i + 1]
        # the next event is the other seat's share of the drawn tile, and only that
        assert share["seat"] != drawer and share["action"]["step"] == "share"
        assert len(share["action"]["shares"]) == 1


@pytest.mark.parametrize("players", [2, 4])
def test_a_domino_seat_that_draws_or_passes_when_it_could_play_forfeits(players: int) -> None:
    r = forfeits("iraqi_domino", {"players": players, "target": 30}, "lie", 1, "revoke")
    assert r.events[-1]["type"] == "end" and r.events[-1]["reason"] == "rule"


def test_an_illegal_tile_is_refused_at_once() -> None:
    r = play_match(
        "iraqi_domino", {"players": 2, "target": 30}, seed="misfit", cheats={0: "illegal_tile"}
    )
    assert [s for s, _, _ in r.refused] == [0]
    assert "does not match" in str(r.refused[0][2])
    assert r.engine.outcome is not None and r.engine.outcome.reason == "finished"


# -- Mexican Train ---------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 4])
def test_an_honest_sealed_mexican_train_match_plays_and_replays(players: int) -> None:
    r = honest("mexican_train", {"players": players, "rounds": 1}, seed=f"mt{players}")
    assert isinstance(r.engine, SealedGame) and len(r.engine.sealed_hands[0]["items"]) == 90


def test_a_mexican_train_draw_while_able_to_play_forfeits_at_the_rounds_end() -> None:
    forfeits("mexican_train", {"players": 2, "rounds": 1}, "m2", 1, "revoke")


# -- qahve -----------------------------------------------------------------------------------
def test_an_honest_sealed_qahve_match_plays_and_replays() -> None:
    honest("qahve", {"target": 30}, seed="qahve", house=(0, 2))


def test_a_qahve_revoke_forfeits_at_the_hands_end() -> None:
    forfeits("qahve", {"target": 30}, "q", 1, "revoke")


# -- shelem ----------------------------------------------------------------------------------
def test_an_honest_sealed_shelem_match_plays_and_replays() -> None:
    r = honest("shelem", {"target": 100}, seed="shelem", house=(3,))
    # the widow goes to the bid winner alone: one share step by each of the three others
    kitty = [e for e in r.events if e["type"] == "action" and e["action"].get("step") == "share"]
    assert any(len(e["action"]["shares"]) == 4 for e in kitty)


def test_a_shelem_revoke_forfeits_and_two_player_shelem_has_no_sealed_form() -> None:
    forfeits("shelem", {"target": 100}, "s", 1, "revoke")
    with pytest.raises(RulesetError, match="four players"):
        find_engine("shelem", {"deal": "sealed"}).parse_ruleset({"deal": "sealed", "players": 2})


# -- tampering, property-tested --------------------------------------------------------------
@functools.cache
def _at_step(step: str) -> tuple[Any, SimSeat, dict[str, Any]]:
    """A sealed hokm engine at the first ``step`` owed, the seat owing it and its honest step."""
    cls = find_engine("hokm", {"deal": "sealed"})
    e = cls(cls.parse_ruleset({"deal": "sealed"}), Chance(bytes(range(64))), MatchContext("tp"))
    seats = [SimSeat(s, "tamper") for s in range(4)]
    while True:
        seat = e.turn
        action = seats[seat].act(e.view(seat), e)
        assert action is not None
        if action.get("step") == step:
            return e, seats[seat], action
        e.apply(seat, action)


def _flip_field(action: dict[str, Any], field: str, at: int, bit: int) -> dict[str, Any]:
    if field in ("deck", "proof") and action.get("step") == "shuffle":
        raw = bytearray(base64.b64decode(action[field]))
        raw[at % len(raw)] ^= 1 << bit
        return {**action, field: base64.b64encode(bytes(raw)).decode("ascii")}
    shares = [dict(x) for x in action["shares"]]
    which = shares[at % len(shares)]
    raw = bytearray(bytes.fromhex(which[field]))
    raw[(at // len(shares)) % len(raw)] ^= 1 << bit
    which[field] = raw.hex()
    return {**action, "shares": shares}


def _refused_unchanged(step: str, field: str, at: int, bit: int) -> None:
    """The first ``step`` owed with one bit of its ``field`` flipped is refused, changing
    neither the deck, the shares nor the steps owed."""
    e, _seat, action = _at_step(step)
    trial = copy.deepcopy(e)
    with pytest.raises(ActionError):
        trial.apply(e.turn, _flip_field(action, field, at, bit))
    assert trial.sealed.deck == e.sealed.deck and trial.sealed.shares == e.sealed.shares
    assert trial.owed == e.owed


@pytest.mark.parametrize("step", ["shuffle", "share"])
@settings(max_examples=examples(20), deadline=None, derandomize=True)
@given(
    proof=st.booleans(),
    at=st.integers(min_value=0, max_value=20_000),
    bit=st.integers(min_value=0, max_value=7),
)
def test_any_flipped_bit_of_a_shuffle_or_a_share_is_refused(
    step: str, proof: bool, at: int, bit: int
) -> None:
    """One bit of the shuffle's deck or proof, or of a share or its proof."""
    field = "proof" if proof else ("deck" if step == "shuffle" else "share")
    _refused_unchanged(step, field, at, bit)


# -- the seat's own machine (games/sealed_seat.py) ----------------------------------------------
def test_a_seat_learns_its_hand_from_the_log_and_refuses_a_forged_step() -> None:
    """The client's seat (games.sealed_seat.SealedSeat with the client's errors) runs its own
    deal machine over the public log, which checks every key, shuffle and share before the
    seat relies on it: from an honest log it learns the same hand as the simulated seat that
    holds its key; a log with one shuffle proof changed is refused, and so is a view whose
    deck is not the log's; each refusal is reported as a dispute."""
    from qahwa_client.errors import ClientError
    from qahwa_client.sealed import SealedSeat, SealedStepRefused

    cls = find_engine("hokm", {"deal": "sealed"})
    parsed = cls.parse_ruleset({"deal": "sealed"})
    e = cls(parsed, Chance(bytes(range(64))), MatchContext("log"))
    seats = [SimSeat(s, "log") for s in range(4)]
    events: list[dict[str, Any]] = [{"seq": i, **ev} for i, ev in enumerate(e.chance.take_events())]
    while e.owed:  # keys, shuffles and the shares of the first five cards of every seat
        seat = e.turn
        assert seat is not None
        action = seats[seat].act(e.view(seat), e)
        events += [{"seq": len(events), **ev} for ev in e.apply(seat, action)]  # type: ignore[arg-type]
    raw = e.view(0)
    side = seats[0].side
    assert side is not None
    disputes: list[tuple[str, str]] = []

    def follow() -> SealedSeat:
        def on_dispute(kind: str, message: str, evidence: dict[str, Any]) -> None:
            disputes.append((kind, message))

        seat = SealedSeat.follow(
            "log", 0, "hokm", canonical_ruleset(parsed), keys=side.keys, on_dispute=on_dispute
        )
        assert isinstance(seat, SealedSeat)
        return seat

    honest = follow()
    honest.take_events(events)
    hand = honest.view(dict(raw))["hand"]
    assert len(hand) == 5 and hand == side.view(dict(raw))["hand"]
    assert disputes == []
    forged = copy.deepcopy(events)
    shuffle = next(ev for ev in forged if ev.get("action", {}).get("step") == "shuffle")
    proof = bytearray(base64.b64decode(shuffle["action"]["proof"]))
    proof[-40] ^= 1
    shuffle["action"]["proof"] = base64.b64encode(bytes(proof)).decode("ascii")
    with pytest.raises(SealedStepRefused, match="shuffle of seat"):
        follow().take_events(forged)
    assert [k for k, _ in disputes] == ["sealed_log"]
    other = copy.deepcopy(raw)
    other["sealed"]["deck"] = e.view(None)["sealed"]["deck"][::-1]
    assert other["turn"] == 0
    with pytest.raises(SealedStepRefused, match="sealed.deck"):
        honest.view(other)
    assert [k for k, _ in disputes] == ["sealed_log", "sealed_view"]
    # a brief view (sealed=brief) leaves out the deck and the shares, which the machine holds:
    # nothing to compare; what it does send is compared, as in a full view
    brief = copy.deepcopy(raw)
    for k in LOG_HELD:
        del brief["sealed"][k]
    assert honest.view(dict(brief))["hand"] == hand
    assert [k for k, _ in disputes] == ["sealed_log", "sealed_view"]
    brief["sealed"]["dealt"] = brief["sealed"]["dealt"][::-1]
    with pytest.raises(SealedStepRefused, match="sealed.dealt"):
        honest.view(brief)
    assert [k for k, _ in disputes] == ["sealed_log", "sealed_view", "sealed_view"]
    assert issubclass(SealedStepRefused, ClientError)


def test_a_sealed_qahve_seat_suggests_the_lowest_bids_and_every_legal_play() -> None:
    """What a sealed seat's view suggests comes from its machine, as its legal actions do:
    the game's bot choices (``bot_actions``), so that random bots end a match. At qahve's bids
    that is the two lowest (bids up to 13 make contracts no side can make, and a match
    wanders below zero: a sealed harness once ran 6,000 reads without an end); at the plays,
    every card its hidden hand may play. A server suggesting otherwise is refused."""
    cls = find_engine("qahve", {"deal": "sealed"})
    parsed = cls.parse_ruleset({"deal": "sealed"})
    e = cls(parsed, Chance(bytes(range(64))), MatchContext("bids"))
    seats = [SimSeat(s, "bids") for s in range(4)]
    while e.owed:
        seat = e.turn
        assert seat is not None
        e.apply(seat, seats[seat].act(e.view(seat), e))  # type: ignore[arg-type]
    bidder = e.turn
    assert bidder is not None
    raw = e.view(bidder)
    side = seats[bidder].side
    assert side is not None
    legal = [{"type": "bid", "tricks": n} for n in range(parsed["min_bid"], 14)]
    assert raw["legal_actions"] == legal
    seen = side.view(copy.deepcopy(raw))
    assert seen["legal_actions"] == legal
    assert seen["suggested_actions"] == [{"type": "bid", "tricks": 2}, {"type": "bid", "tricks": 3}]
    assert seen["suggested_actions"] == e.bot_actions(bidder)
    lied = {**copy.deepcopy(raw), "suggested_actions": legal[-1:]}  # a server suggesting 13
    with pytest.raises(SeatRefused, match="suggested_actions"):
        side.view(lied)
    while e.phase == "bid" or e.owed:  # the bids (the lowest each time), then any step
        seat = e.turn
        assert seat is not None
        if e.owed:
            e.apply(seat, seats[seat].act(e.view(seat), e))  # type: ignore[arg-type]
        else:
            e.apply(seat, e.bot_actions(seat)[0])
    player = e.turn
    assert player is not None
    side = seats[player].side
    assert side is not None
    seen = side.view(e.view(player))
    assert seen["suggested_actions"] == seen["legal_actions"] != []
    assert all(a["type"] == "play" and "card" in a for a in seen["suggested_actions"])
